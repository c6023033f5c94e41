/**
 * The owner's end of the worker channels (docs/deploy.md, "Worker processes"): one process opens
 * the store and answers every worker's calls on it (remote-store.ts), so the log has one writer
 * and the index one connection that writes.
 *
 * Hot caches. Without Redis each worker keeps its cache in its own memory, where a write through
 * another worker would not end it. So an append is answered only after every worker has given
 * the touched cells new generations (and said so): once a client holds the acknowledgement, no
 * worker can serve it an answer from before the write. A worker that does not confirm within
 * `bumpTimeoutMs` is stopped (its supervisor starts a fresh one, with an empty cache) before the
 * append is answered. With Redis the cache is shared and the asking worker bumps it, as a single
 * process does, so nothing is broadcast.
 */
import { SvcError } from '../../protocol/errors.js';
import type { AppendBatch, AppendResult, Store } from '../contract.js';
import type { StorageHealth } from '../disk-full.js';
import type { HealthMessage, HelloMessage, RemotePart } from './remote-store.js';
import { REMOTE_METHODS, remotePath } from './remote-store.js';
import { isMessage, toWire, type CallMessage, type Channel, type ReplyMessage } from './rpc.js';

/** Owner → worker: give these cells new generations, then answer `bumped` with the same id. */
export interface BumpMessage {
  svc: 'bump';
  id: number;
  cells: string[];
}

export interface BumpedMessage {
  svc: 'bumped';
  id: number;
}

/** A worker as the host sees it: its channel and how to stop it. */
export interface HostedWorker extends Channel {
  readonly id: number;
  /** Stop the worker at once (it failed to confirm an invalidation). */
  kill(signal?: string): unknown;
}

export interface StoreHostOptions {
  /** Whether workers keep their own hot caches (no Redis): appends then wait for their bumps. */
  broadcastBumps: boolean;
  /** How long an append waits for a worker's confirmation before that worker is stopped (default 5 s). */
  bumpTimeoutMs?: number;
  /** Fault lines (default stderr). */
  logger?: (line: string) => void;
  /**
   * Calls beyond the store contract that workers may make (`owner.attest` …): work the owning
   * process does itself, answered like a store call.
   */
  calls?: Record<string, (args: unknown[]) => Promise<unknown>>;
}

const ALLOWED = new Map<string, [RemotePart, string]>(
  (Object.entries(REMOTE_METHODS) as Array<[RemotePart, readonly string[]]>).flatMap(([part, methods]) => methods.map((m) => [remotePath(part, m), [part, m]] as [string, [RemotePart, string]])),
);

export class StoreHost {
  private readonly workers = new Map<number, HostedWorker>();
  /**
   * Workers whose cache follows the bumps (they said `subscribed` once their handler was in
   * place). A worker that has not yet subscribed has served nothing from a cache, so it is not
   * waited for: a worker starting while writes go on is never stopped for missing them.
   */
  private readonly subscribed = new Set<number>();
  private readonly bumps = new Map<number, { left: Set<number>; done: () => void }>();
  private nextBump = 1;
  private health: string;
  private readonly healthTimer: NodeJS.Timeout;
  private readonly logger: (line: string) => void;

  constructor(
    private readonly store: Store,
    private readonly opts: StoreHostOptions,
  ) {
    this.logger = opts.logger ?? ((l) => process.stderr.write(`${l}\n`));
    this.health = JSON.stringify(this.currentHealth());
    // Storage health is synchronous in the contract: workers keep the last value pushed.
    this.healthTimer = setInterval(() => {
      const now = this.currentHealth();
      const text = JSON.stringify(now);
      if (text === this.health) return;
      this.health = text;
      for (const w of this.workers.values()) safeSend(w, { svc: 'health', health: now } satisfies HealthMessage);
    }, 500);
    this.healthTimer.unref();
  }

  private currentHealth(): StorageHealth | null {
    return this.store.storageHealth ? this.store.storageHealth() : null;
  }

  /** Serve `worker`'s calls until it leaves (`detach`). */
  attach(worker: HostedWorker): void {
    this.workers.set(worker.id, worker);
    worker.on('message', (m) => {
      if (isMessage<{ svc: 'ready' }>(m, 'ready')) {
        const hello: HelloMessage = {
          svc: 'hello',
          driver: this.store.driver,
          artifactMaxBytes: this.store.artifacts.maxBytes,
          geocacheDriver: this.store.geocache.driver,
          health: this.currentHealth(),
        };
        safeSend(worker, hello);
      } else if (isMessage<CallMessage>(m, 'call')) {
        void this.answer(worker, m);
      } else if (isMessage<BumpedMessage>(m, 'bumped')) {
        this.confirmed(m.id, worker.id);
      } else if (isMessage<{ svc: 'subscribed' }>(m, 'subscribed')) {
        this.subscribed.add(worker.id);
      }
    });
  }

  /** The worker is gone: nothing waits for it any more. */
  detach(workerId: number): void {
    this.workers.delete(workerId);
    this.subscribed.delete(workerId);
    for (const id of [...this.bumps.keys()]) this.confirmed(id, workerId);
  }

  private async answer(worker: HostedWorker, m: CallMessage): Promise<void> {
    let reply: ReplyMessage;
    try {
      const value = await this.dispatch(m.path, Array.isArray(m.args) ? m.args : []);
      reply = { svc: 'reply', id: m.id, value };
    } catch (err) {
      reply = { svc: 'reply', id: m.id, error: toWire(err) };
    }
    safeSend(worker, reply);
  }

  private async dispatch(path: string, args: unknown[]): Promise<unknown> {
    const at = ALLOWED.get(path);
    if (!at) {
      const calls = this.opts.calls;
      if (calls && Object.hasOwn(calls, path)) return calls[path](args);
      throw new SvcError('internal', `store: no such method ${path}`);
    }
    const [part, method] = at;
    if (part === '' && method === 'append') return this.append(args[0] as AppendBatch);
    const target = (part ? (this.store as unknown as Record<string, unknown>)[part] : this.store) as Record<string, (...a: unknown[]) => Promise<unknown>>;
    return target[method].apply(target, args);
  }

  /** An append, resolved once every worker's cache has moved past it (without Redis). */
  private async append(batch: AppendBatch): Promise<AppendResult> {
    const res = await this.store.append(batch);
    if (this.opts.broadcastBumps) await this.broadcast(cellsOf(batch));
    return res;
  }

  /**
   * The store as this process's own code should use it: an append resolves, as a worker's does,
   * only once every worker's cache has moved past it.
   */
  localStore<S extends Store>(): S {
    const append = (batch: AppendBatch) => this.append(batch);
    return new Proxy(this.store, {
      get(target, prop, receiver) {
        if (prop === 'append') return append;
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as S;
  }

  /** Every worker gives `cells` new generations before this resolves (or is stopped). */
  private broadcast(cells: string[]): Promise<void> {
    if (cells.length === 0 || this.subscribed.size === 0) return Promise.resolve();
    const id = this.nextBump++;
    return new Promise<void>((resolve) => {
      const left = new Set(this.subscribed);
      const timer = setTimeout(() => {
        for (const wid of left) {
          this.logger(`worker ${wid} did not confirm a cache invalidation within ${this.opts.bumpTimeoutMs ?? 5000} ms; stopping it (a fresh one starts with an empty cache)`);
          this.workers.get(wid)?.kill('SIGKILL');
        }
        this.bumps.delete(id);
        resolve();
      }, this.opts.bumpTimeoutMs ?? 5000);
      this.bumps.set(id, {
        left,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      for (const wid of [...left]) {
        const w = this.workers.get(wid)!;
        if (!safeSend(w, { svc: 'bump', id, cells } satisfies BumpMessage)) this.confirmed(id, wid);
      }
    });
  }

  private confirmed(bumpId: number, workerId: number): void {
    const b = this.bumps.get(bumpId);
    if (!b) return;
    b.left.delete(workerId);
    if (b.left.size === 0) {
      this.bumps.delete(bumpId);
      b.done();
    }
  }

  close(): void {
    clearInterval(this.healthTimer);
    for (const b of this.bumps.values()) b.done();
    this.bumps.clear();
  }
}

function cellsOf(batch: AppendBatch | undefined): string[] {
  if (!batch || !Array.isArray(batch.facts)) return [];
  return [...new Set(batch.facts.map((f) => f.cell))];
}

/** Send if the channel is still open; false when it is not (the worker left). */
function safeSend(ch: Channel, message: unknown): boolean {
  try {
    ch.send(message);
    return true;
  } catch {
    return false;
  }
}
