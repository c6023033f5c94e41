/**
 * `svc serve` with SVC_WORKERS above 1 (docs/deploy.md, "Worker processes"): this process opens
 * the store and the log, then starts that many worker processes (node:cluster), which share the
 * listening port and serve every request. Workers reach the store through calls to this process
 * (store/remote/), so the log keeps one writer and every acknowledged write is durable here
 * before any worker answers it; batch attestations are handed over whole and accepted here, by
 * a service of this process over the same store (primitives/write/forwarded.ts). The responder
 * key is the one file in the data directory, which every worker loads (this process creates it
 * first).
 *
 * A worker that dies is started again after a second; one that fails before it ever listened
 * (a port in use, a bad configuration) stops the whole responder with exit status 1. SIGINT or
 * SIGTERM here drains every worker (each finishes what it has in flight), then closes the store.
 * When this process is killed outright the workers lose the channel and exit at once.
 */
import cluster, { type Worker } from 'node:cluster';
import { mkdirSync } from 'node:fs';
import type { Config } from './config.js';
import { installFastBlake3 } from './crypto/fast-blake3.js';
import { currentSigner, loadResponderKeys, watchResponderKeys } from './keys.js';
import { acceptForwarded } from './primitives/write/forwarded.js';
import { closeOnSignals, drainGraceMs, startServer } from './server.js';
import { openService, storeConfigOf, type Service } from './service.js';
import { openRemoteStore, openStore, type CachedStore } from './store/index.js';
import { batchingChannel } from './store/remote/batching.js';
import { RpcClient, type Channel } from './store/remote/rpc.js';
import { StoreHost, type HostedWorker } from './store/remote/store-host.js';

/** The call that hands a batch attestation to the owner. */
const OWNER_ATTEST = 'owner.attest';
/** How long a worker that died waits before it is started again. */
const RESTART_DELAY_MS = 1000;
/** Beyond the drain grace, how long the owner waits for workers before it stops them outright. */
const EXIT_SLACK_MS = 5000;

/** Run `svc serve` as this process's part: the owner (primary) or one worker. */
export async function serveWithWorkers(config: Config): Promise<void> {
  if (cluster.isPrimary) await runOwner(config);
  else await runWorker(config);
}

async function runWorker(config: Config): Promise<void> {
  const channel = batchingChannel(process as unknown as Channel);
  // The owner is gone (killed, or crashed): nothing here can read or write any more.
  process.on('disconnect', () => process.exit(1));
  const store = await openRemoteStore(storeConfigOf(config), channel);
  // Batch attestations are accepted in full by the owner (primitives/write/forwarded.ts).
  const writes = new RpcClient(channel);
  const server = await startServer(config, { store, owner: { attest: (req) => writes.call(OWNER_ATTEST, [req]) } });
  closeOnSignals(server);
}

async function runOwner(config: Config): Promise<void> {
  const say = (line: string) => process.stderr.write(`svc: ${line}\n`);
  installFastBlake3();
  mkdirSync(config.dataDir, { recursive: true });
  // Done once here, before any worker starts: the key file and (by openService below) the
  // manifest record are written at most once, and every worker then finds them as they are.
  const keys = loadResponderKeys(config.dataDir);
  const stopKeyWatch = watchResponderKeys(config.dataDir, keys, say);
  // Behind the same hot cache a single process would have: with Redis its generations are the
  // deployment's (other PostgreSQL responders write too); without it this process is the only
  // writer of its store and its in-process cache stays exact. Workers keep their own in front.
  const store = await openStore(storeConfigOf(config), currentSigner(keys));
  // Batch attestations forwarded by workers are accepted here in full, by a service over the
  // same store whose appends also wait for the workers' caches (StoreHost.localStore).
  let service: Service | undefined;
  const host = new StoreHost(store, {
    broadcastBumps: !config.redisUrl,
    logger: say,
    calls: { [OWNER_ATTEST]: (args) => acceptForwarded(service!, args[0] as Parameters<typeof acceptForwarded>[1]) },
  });
  service = await openService(config, { store: host.localStore<CachedStore>(), keys, vectorIndex: false });

  cluster.setupPrimary({ serialization: 'advanced' });
  const running = new Map<number, Worker>();
  let stopping = false;
  let listening = 0;
  let ready: () => void = () => {};
  let failed: (err: Error) => void = () => {};
  const allListening = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });

  const start = (n: number) => {
    const w = cluster.fork({ SVC_WORKER_ID: String(n) });
    let listened = false;
    running.set(n, w);
    // A send on a channel that just closed reports here; the exit handler does the rest.
    w.on('error', () => undefined);
    host.attach(hosted(n, w));
    w.on('listening', () => {
      if (listened) return;
      listened = true;
      if (++listening === config.workers) ready();
    });
    w.on('exit', (code, signal) => {
      host.detach(n);
      if (running.get(n) === w) running.delete(n);
      if (stopping) return;
      if (!listened) {
        failed(new Error(`worker ${n} exited (${signal ?? `status ${code}`}) before it listened`));
        return;
      }
      say(`worker ${n} exited (${signal ?? `status ${code}`}); starting it again`);
      setTimeout(() => {
        if (!stopping) start(n);
      }, RESTART_DELAY_MS).unref();
    });
  };

  const stop = async (status: number) => {
    if (stopping) return;
    stopping = true;
    const exits = [...running.values()].map((w) => new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r()))));
    for (const w of running.values()) w.process.kill('SIGTERM');
    const hard = setTimeout(() => {
      for (const w of running.values()) w.process.kill('SIGKILL');
    }, drainGraceMs(config) + EXIT_SLACK_MS);
    await Promise.all(exits);
    clearTimeout(hard);
    host.close();
    stopKeyWatch();
    // Every worker is gone and every append it asked for has been answered: close the log.
    await service!.close();
    process.exit(status);
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void stop(0));

  for (let n = 1; n <= config.workers; n++) start(n);
  try {
    await allListening;
  } catch (err) {
    say((err as Error).message);
    await stop(1);
    return;
  }
  say(`${config.workers} workers serve http://${config.host}:${config.port}; this process (pid ${process.pid}) owns the store`);
}

function hosted(n: number, w: Worker): HostedWorker {
  const channel = batchingChannel({ send: (m) => w.send(m as never), on: (event, listener) => w.on(event, (m: unknown) => listener(m)) });
  return {
    id: n,
    send: (m) => channel.send(m),
    on: (event, listener) => channel.on(event, listener),
    kill: (signal) => w.process.kill((signal ?? 'SIGTERM') as NodeJS.Signals),
  };
}
