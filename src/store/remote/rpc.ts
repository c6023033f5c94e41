/**
 * Calls across a process boundary for the store (docs/deploy.md, "Worker processes"): a worker
 * asks, the process that owns the store answers. Messages travel over the cluster IPC channel
 * with Node's `advanced` serialization (structured clone), so byte arrays, nested objects and
 * `undefined` arrive as sent. Errors cross as their typed parts: an SvcError keeps its code,
 * message, details and status; a TypeError or RangeError (a caller's bad argument, by the store
 * contract) keeps its kind; anything else becomes the contract's `internal` fault.
 */
import { SvcError, type ErrorCode } from '../../protocol/errors.js';

/** One end of an IPC channel: `process` in a worker, a `cluster.Worker` in the owner. */
export interface Channel {
  send(message: unknown): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off?(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A call: `path` names the store method (`latest`, `log.inclusionProof`, `memory.edges` …). */
export interface CallMessage {
  svc: 'call';
  id: number;
  path: string;
  args: unknown[];
}

/** The answer to call `id`. */
export interface ReplyMessage {
  svc: 'reply';
  id: number;
  value?: unknown;
  error?: WireError;
}

export interface WireError {
  kind: 'svc' | 'type' | 'range' | 'other';
  message: string;
  code?: ErrorCode;
  details?: Record<string, unknown>;
  status?: number;
}

/** The error as it crosses the channel. */
export function toWire(err: unknown): WireError {
  if (err instanceof SvcError) return { kind: 'svc', message: err.message, code: err.code, details: err.details, status: err.httpStatus };
  if (err instanceof TypeError) return { kind: 'type', message: err.message };
  if (err instanceof RangeError) return { kind: 'range', message: err.message };
  return { kind: 'other', message: err instanceof Error ? err.message : String(err) };
}

/** The error as the caller sees it, typed as the store would have thrown it. */
export function fromWire(w: WireError, path: string): Error {
  if (w.kind === 'svc' && w.code) return new SvcError(w.code, w.message, w.details ?? {}, { status: w.status });
  if (w.kind === 'type') return new TypeError(w.message);
  if (w.kind === 'range') return new RangeError(w.message);
  return new SvcError('internal', `store (${path}): ${w.message}`);
}

export function isMessage<T extends { svc: string }>(m: unknown, kind: T['svc']): m is T {
  return typeof m === 'object' && m !== null && (m as { svc?: unknown }).svc === kind;
}

/**
 * Call ids are unique in the process, not per client: a worker may hold more than one client on
 * its channel (the store's, the forwarded writes'), and each takes only the replies it awaits.
 */
let nextCallId = 1;

/**
 * The asking end: `call(path, args)` resolves with the owner's answer. Every call in flight fails
 * with `internal` when the channel closes (the owner is gone: the worker exits next).
 */
export class RpcClient {
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void; path: string }>();
  private closed: SvcError | undefined;

  constructor(private readonly channel: Channel) {
    channel.on('message', (m) => {
      if (!isMessage<ReplyMessage>(m, 'reply')) return;
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.error) w.reject(fromWire(m.error, w.path));
      else w.resolve(m.value);
    });
  }

  call<T>(path: string, args: unknown[]): Promise<T> {
    if (this.closed) return Promise.reject(this.closed);
    const id = nextCallId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, path });
      try {
        this.channel.send({ svc: 'call', id, path, args } satisfies CallMessage);
      } catch (err) {
        this.waiting.delete(id);
        reject(new SvcError('internal', `store (${path}): the owning process cannot be reached`, {}, { cause: err }));
      }
    });
  }

  /** Fail every call in flight and refuse new ones. */
  close(reason: string): void {
    this.closed ??= new SvcError('internal', reason);
    for (const [, w] of this.waiting) w.reject(this.closed);
    this.waiting.clear();
  }
}
