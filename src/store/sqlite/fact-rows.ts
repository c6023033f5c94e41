/**
 * Index rows back to StoredFacts. A row holds no body and no proof (schema.ts): the body is read
 * out of the fact's log entry at (body_at, body_len) and must hash to the fact's leaf in its
 * batch tree (so a read never serves bytes other than the ones the cid names), and the proof
 * and fact_cid come from that tree. Trees of recently touched entries stay in memory.
 */
import { b32encode } from '../../protocol/base32.js';
import { decodeTrusted } from '../../protocol/cbor.js';
import { SvcError } from '../../protocol/errors.js';
import { blake3 } from '../../protocol/hash.js';
import type { Scope } from '../../protocol/receipt.js';
import type { AppendOnlyLog, StoredFact } from '../contract.js';
import type { FactRow, Queries } from './queries.js';
import { KIND_CODES, PROVENANCE_CODES, unpackAcceptedAt } from './schema.js';

/** A log that can read part of an entry (DiskLog.entryRange). */
interface RangeReader {
  entryRange(index: number, start: number, end: number): Uint8Array | null;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class FactRows {
  private readonly range: RangeReader['entryRange'] | undefined;

  constructor(
    private readonly q: Queries,
    private readonly log: AppendOnlyLog,
  ) {
    const r = (log as Partial<RangeReader>).entryRange;
    this.range = typeof r === 'function' ? r.bind(log) : undefined;
  }

  /**
   * The body bytes of a row: from the row (a body not logged verbatim), else a positional read
   * of the log; null when only the whole-entry read of a log without ranges can give them.
   */
  private bodyNow(r: FactRow): Uint8Array | null {
    if (r.body !== null) return new Uint8Array(r.body.buffer, r.body.byteOffset, r.body.byteLength);
    if (!this.range) return null;
    return this.range(r.log_index, r.body_at, r.body_at + r.body_len) ?? this.missing(r);
  }

  private async bodyLater(r: FactRow): Promise<Uint8Array> {
    const whole = await this.log.entry(r.log_index);
    const end = r.body_at + r.body_len;
    return whole !== null && end <= whole.length ? whole.slice(r.body_at, end) : this.missing(r);
  }

  private missing(r: FactRow): never {
    throw new SvcError('internal', `index.sqlite: log entry ${r.log_index} has no bytes [${r.body_at}, ${r.body_at + r.body_len})`);
  }

  /** StoredFacts of `rows`, in order. `cell` names the cell when the query fixed it. */
  async facts(rows: FactRow[], cell?: string, cid?: string): Promise<StoredFact[]> {
    const out: StoredFact[] = [];
    for (const r of rows) out.push(this.build(r, this.bodyNow(r) ?? (await this.bodyLater(r)), cell, cid));
    return out;
  }

  private build(r: FactRow, bytes: Uint8Array, cell: string | undefined, cid: string | undefined): StoredFact {
    const { attester, tree } = this.q.trees.get(r.log_index);
    const digest = tree.leaf(r.leaf);
    if (!sameBytes(blake3(bytes), digest)) {
      throw new SvcError('internal', `index.sqlite: the body read for fact ${b32encode(digest)} (log entry ${r.log_index}) does not hash to its cid`);
    }
    let supersedes: string | null = null;
    if (r.sup_log_index !== null && r.sup_leaf !== null) supersedes = b32encode(this.q.trees.digest(r.sup_log_index, r.sup_leaf));
    const scopeKey = this.q.scopes.name(r.scope_id);
    return {
      // A caller's cid names this digest (getFact looked it up), so it is its text already.
      fact_cid: cid ?? b32encode(digest),
      body: decodeTrusted(bytes) as Record<string, unknown>,
      cell: cell ?? this.q.cells.name(r.cell_id),
      band: this.q.bands.name(r.band_id),
      tslot: r.tslot,
      kind: KIND_CODES[r.kind],
      provenance_class: PROVENANCE_CODES[r.provenance],
      attester,
      scope: scopeKey === '' ? null : (JSON.parse(scopeKey) as Scope),
      accepted_at: unpackAcceptedAt(r.accepted_at),
      proof: tree.proof(r.leaf),
      log_index: r.log_index,
      supersedes,
    };
  }
}
