/**
 * The store as a worker process sees it (docs/deploy.md, "Worker processes"): every method of the
 * contract is a call to the process that owns the store (store-host.ts), which runs it on the real
 * driver and answers. Workers do the rest of a request — parsing, validation, ranking, receipts,
 * signatures, JSON — so the owner's one thread spends its time on the index and the log alone,
 * and a warm read answered from the worker's hot cache makes no call at all. (Batch attestations
 * go to the owner whole, beside these calls: primitives/write/forwarded.ts.)
 *
 * The few synchronous parts of the contract are values the owner sends once (`hello`: the
 * driver, the artifact bound, the geocoder cache's kind) or pushes as they change (storage
 * health, about twice a second).
 */
import type { GeoCache } from '../../geo/geocache.js';
import type { StorageHealth } from '../disk-full.js';
import type { ArtifactStore, DocumentStore, LogReader, Store, TransientStore } from '../contract.js';
import type { MemoryReader } from '../memory.js';
import { isMessage, RpcClient, type Channel } from './rpc.js';

/** Sent by the owner when a worker connects: the contract's synchronous values. */
export interface HelloMessage {
  svc: 'hello';
  driver: Store['driver'];
  artifactMaxBytes: number;
  geocacheDriver: GeoCache['driver'];
  health: StorageHealth | null;
}

/** Pushed by the owner whenever the store's storage health changes. */
export interface HealthMessage {
  svc: 'health';
  health: StorageHealth | null;
}

/** Method names of each part of the contract, as the owner dispatches them (store-host.ts). */
export const REMOTE_METHODS = {
  '': ['getFact', 'latest', 'history', 'bandsAt', 'cellsWithPrefix', 'stats', 'attesterFactsOn', 'publicFactsByAttester', 'append', 'addWitness', 'witnesses', 'claimScope'],
  log: ['size', 'root', 'entry', 'leafIndexOf', 'inclusionProof', 'consistencyProof', 'latestTreeHead'],
  transients: ['claimOnce', 'put', 'get'],
  documents: ['putOnce', 'get'],
  artifacts: ['put', 'read', 'info', 'evict', 'usage'],
  geocache: ['get', 'put'],
  memory: ['searchNotes', 'noteCandidates', 'notesAt', 'noteStats', 'noteNeighbours', 'edges', 'aliases', 'derivedBy', 'sharedSlots'],
} as const satisfies Record<string, readonly string[]>;

export type RemotePart = keyof typeof REMOTE_METHODS;

/** How a call names a method: `latest`, `log.inclusionProof`, `memory.edges` … */
export function remotePath(part: RemotePart, method: string): string {
  return part ? `${part}.${method}` : method;
}

/** Wait for the owner's hello on `channel`, then build the store that forwards to it. */
export function connectRemoteStore(channel: Channel, timeoutMs = 30_000): Promise<Store> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from the store's owner within ${timeoutMs} ms`)), timeoutMs);
    const onHello = (m: unknown) => {
      if (!isMessage<HelloMessage>(m, 'hello')) return;
      clearTimeout(timer);
      channel.off?.('message', onHello);
      resolve(remoteStore(channel, m));
    };
    channel.on('message', onHello);
    channel.send({ svc: 'ready' });
  });
}

/** A Store whose every method is a call over `channel`; `hello` carries the synchronous values. */
export function remoteStore(channel: Channel, hello: HelloMessage): Store {
  const rpc = new RpcClient(channel);
  let health = hello.health;
  channel.on('message', (m) => {
    if (isMessage<HealthMessage>(m, 'health')) health = m.health;
  });
  const part = <T>(name: RemotePart): T => Object.fromEntries(REMOTE_METHODS[name].map((method) => [method, (...args: unknown[]) => rpc.call(remotePath(name, method), args)])) as T;
  const top = part<Omit<Store, 'driver' | 'log' | 'transients' | 'documents' | 'artifacts' | 'geocache' | 'memory' | 'close' | 'storageHealth'>>('');
  return {
    ...top,
    driver: hello.driver,
    log: part<LogReader>('log'),
    transients: part<TransientStore>('transients'),
    documents: part<DocumentStore>('documents'),
    artifacts: { ...part<Omit<ArtifactStore, 'maxBytes'>>('artifacts'), maxBytes: hello.artifactMaxBytes },
    geocache: { ...part<Omit<GeoCache, 'driver'>>('geocache'), driver: hello.geocacheDriver },
    memory: part<MemoryReader>('memory'),
    storageHealth: () => health ?? { status: 'ok' },
    // The owner closes the store once every worker has drained; a worker only stops asking.
    close: async () => rpc.close('store: this worker is closing'),
  };
}
