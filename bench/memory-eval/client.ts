/**
 * The bench's side of the HTTP API, over fastify inject on an in-process responder: writes turns
 * as scoped `memory.note` records (signed batches of up to 256), keeps a scope bearer fresh, and
 * runs POST /v1/memory/search, timing each call and mapping result fact_cids back to turn ids.
 * Only HTTP-level behaviour is used, so whatever ranking the service has is what gets measured.
 */
import * as P from '../../src/protocol/index.js';
import type { TestApp } from '../../test/support/app.js';
import type { TestAttester } from '../../test/support/attester.js';
import { bearerFor } from '../../test/support/scopes.js';
import type { Turn } from './corpus.js';

export const NOTES_PER_WRITE = 256;
/** Bearers live 300 s on the responder's clock; a new one is fetched well before. */
const BEARER_REFRESH_MS = 100_000;

export interface NoteInput {
  turn: Turn;
  vector?: number[];
}

export interface SearchOutcome {
  /** Turn ids, best first ('?' for a fact_cid the bench did not write). */
  ranked: string[];
  ms: number;
  status: number;
  code?: string;
  ranking?: string;
  engine?: string;
  vectorScanTruncated?: boolean;
}

export class MemoryClient {
  /** fact_cid → turn id, over every note written through this client. */
  readonly turnOf = new Map<string, string>();
  private readonly bearers = new Map<string, { header: string; at: number }>();

  constructor(
    readonly t: TestApp,
    readonly agent: TestAttester,
  ) {}

  /** The note body of a turn: its text, speaker, thread (session) and valid time, plus the caller's vector. */
  noteBody(n: NoteInput, scope: P.Scope, signedAt: string): Record<string, unknown> {
    const value: Record<string, unknown> = { text: n.turn.text, speaker: n.turn.speaker, thread: n.turn.session, observed_at: n.turn.observed_at };
    if (n.vector) value.vector = n.vector;
    return P.recordBody('memory.note', value, { signed_at: signedAt, scope });
  }

  /** Writes notes into `scope`, 256 per signed batch; returns the seconds it took. */
  async write(notes: NoteInput[], scope: P.Scope, onBatch?: (written: number) => void): Promise<number> {
    const started = performance.now();
    const signedAt = `${new Date(this.t.service.now().getTime() - 60_000).toISOString().slice(0, 19)}Z`;
    for (let i = 0; i < notes.length; i += NOTES_PER_WRITE) {
      const chunk = notes.slice(i, i + NOTES_PER_WRITE);
      const facts = chunk.map((n) => this.noteBody(n, scope, signedAt));
      const r = await this.t.app.inject({ method: 'POST', url: '/v1/memory/notes', payload: this.agent.batch(facts, this.t.service.manifests) });
      if (r.statusCode !== 200) throw new Error(`POST /v1/memory/notes: ${r.statusCode} ${r.body.slice(0, 400)}`);
      const cids: string[] = r.json().fact_cids;
      cids.forEach((cid, j) => {
        this.turnOf.set(cid, chunk[j].turn.id);
      });
      onBatch?.(i + chunk.length);
    }
    return (performance.now() - started) / 1000;
  }

  private async bearer(scope: P.Scope): Promise<string> {
    const key = JSON.stringify(scope);
    const have = this.bearers.get(key);
    if (have && performance.now() - have.at < BEARER_REFRESH_MS) return have.header;
    const header = await bearerFor(this.t, this.agent, scope);
    this.bearers.set(key, { header, at: performance.now() });
    return header;
  }

  /** One POST /v1/memory/search in `scope`; a refusal is returned (status, code) with no results. */
  async search(body: Record<string, unknown>, scope: P.Scope): Promise<SearchOutcome> {
    const authorization = await this.bearer(scope);
    const started = performance.now();
    const r = await this.t.app.inject({ method: 'POST', url: '/v1/memory/search', payload: { ...body, scope }, headers: { authorization } });
    const ms = performance.now() - started;
    const json = r.json();
    if (r.statusCode !== 200) return { ranked: [], ms, status: r.statusCode, code: json?.code ?? 'unknown' };
    return {
      ranked: (json.results as Array<{ fact_cid: string }>).map((x) => this.turnOf.get(x.fact_cid) ?? '?'),
      ms,
      status: 200,
      ranking: json.ranking,
      engine: json.engine,
      vectorScanTruncated: json.vector_scan_truncated,
    };
  }
}
