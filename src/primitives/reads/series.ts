/**
 * One band at one cell: fetch (a single fact by cid or by address), trajectory (the stored time
 * series) and diff (a delta between two tslots). Only fetch may materialize, and only through
 * recall; trajectory and diff read stored facts, because past slots have no guaranteed
 * upstream and a read must not invent history.
 */
import { isFactCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import { tslotOf, tslotRange } from '../../protocol/tslot.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { recall, resolveCell } from './recall.js';
import { mayReadScope, type Authorization } from '../scopes/access.js';
import { cosine, l2, newestPerTslot, optionalTslot, parseWindow, requireBand, round, usableValue } from './common.js';
import { requestScope } from '../scopes/request.js';

/** A fetch, as the operation's schema admits it (which fields go together is checked here). */
export interface FetchRequest {
  cid?: string;
  cell?: string;
  band?: string;
  tslot?: number;
  scope?: Scope;
}

export interface FetchResult {
  fact: ServedFact | null;
  receipt: Receipt;
  materialize_notes: MaterializeNote[];
  caveats: string[];
}

/**
 * A stored fact by cid, or cid_not_found naming the field. A scoped fact is found only with a
 * bearer for its scope (`authorization`); without one the answer is the same cid_not_found as
 * for a cid never stored, so a cid tells an outsider nothing of a scope.
 */
export async function factByCid(ctx: ServiceContext, cid: unknown, field = 'cid', authorization?: Authorization): Promise<{ fact: StoredFact; was_cached: boolean }> {
  if (!isFactCid(cid)) throw invalidArgument(field, 'expected a fact_cid (52 lowercase base32 characters)');
  const r = await ctx.store.readFact(cid);
  if (!r.fact || (r.fact.scope && !(await mayReadScope(ctx, authorization, r.fact.scope))))
    throw new SvcError('cid_not_found', `${field}: no fact stored under ${cid} here (fact_cids are per responder; the cross-responder key is cell, band, tslot)`, { field, cid });
  return { fact: r.fact, was_cached: r.was_cached };
}

/**
 * One fact: by `cid` (stored only; content ids name exact bytes, so no scope argument applies,
 * but a scoped fact needs a bearer for its scope: factByCid), or by
 * `cell` + `band` (+ `tslot`) through recall, which materializes on a miss. Without a tslot the
 * band's current slot is wanted, and an older stored fact is kept (with a caveat) if refreshing fails.
 */
export async function fetchFact(ctx: ServiceContext, req: FetchRequest, opts: { deadline?: number; authorization?: Authorization } = {}): Promise<FetchResult> {
  if ((req.cid === undefined) === (req.cell === undefined)) throw invalidArgument(req.cid === undefined ? 'cid' : 'cell', 'give exactly one of cid, cell');
  if (req.cid !== undefined) {
    for (const k of ['band', 'tslot', 'scope'] as const) if (req[k] !== undefined) throw invalidArgument(k, 'only with cell (a cid already names one fact)');
    const { fact, was_cached } = await factByCid(ctx, req.cid, 'cid', opts.authorization);
    return {
      fact: await serveFact(ctx, fact),
      // A scoped fact (served to its bearer) is bound to its scope here too, as by any scoped read.
      receipt: issueReceipt(ctx, 'fetch', [fact.cell], [fact.fact_cid], { scope: fact.scope ?? undefined, merkle_proof: fact.proof, cost: { credits: 0, was_cached } }),
      materialize_notes: [],
      caveats: [],
    };
  }
  if (req.band === undefined) throw invalidArgument('band', 'is required with cell');
  const band = requireBand(ctx, req.band, 'band');
  const tslot = optionalTslot(ctx, req.tslot, band, 'tslot');
  const r = await recall(ctx, { cell: req.cell!, bands: [band.key], tslot, scope: requestScope(req.scope) }, { primitive: 'fetch', deadline: opts.deadline });
  return { fact: r.facts[0] ?? null, receipt: r.receipt, materialize_notes: r.materialize_notes, caveats: r.caveats };
}

/** tslots of `band` touched by the inclusive Unix window. */
export function windowTslots(band: BandEntry, w: [number, number]): [number, number] {
  if (band.tempo === 'static') return [0, 0];
  return [tslotOf(w[0], band.tempo), tslotOf(w[1], band.tempo)];
}

export interface TrajectoryPoint {
  tslot: number;
  start_unix: number;
  end_unix: number | null;
  kind: string;
  value: unknown;
  fact_cid: string;
  absence_reason?: string;
}

/** The stored series of one band at one cell over a window: newest version per tslot, never fetched. */
export async function trajectory(ctx: ServiceContext, req: { cell: string; band: string; window: readonly number[]; scope?: Scope }) {
  const { cell } = await resolveCell(ctx, req.cell, 'cell');
  const band = requireBand(ctx, req.band, 'band');
  const window = parseWindow(req.window, 'window');
  const scope = requestScope(req.scope);
  const [from, to] = windowTslots(band, window);
  const limit = ctx.config.scanCellLimit;
  const rows = await ctx.store.history({ cell, bands: [band.key], tslot_from: from, tslot_to: to, scope: scope ?? null, limit: limit + 1 });
  const truncated = rows.length > limit;
  const facts = newestPerTslot(truncated ? rows.slice(0, limit) : rows);
  const points: TrajectoryPoint[] = facts.map((f) => {
    const r = tslotRange(f.tslot, band.tempo);
    const p: TrajectoryPoint = { tslot: f.tslot, start_unix: r.start_unix, end_unix: r.end_unix, kind: f.kind, value: f.kind === 'absence' ? null : (f.body.value ?? null), fact_cid: f.fact_cid };
    if (f.kind === 'absence' && typeof f.body.absence_reason === 'string') p.absence_reason = f.body.absence_reason;
    return p;
  });
  const caveats = ['Stored facts only: trajectory never fetches past tslots (use /v1/backfill to fill history).'];
  if (truncated) caveats.push(`More than ${limit} stored versions in the window: the newest tslots were cut; narrow the window.`);
  const receipt = issueReceipt(
    ctx,
    'trajectory',
    [cell],
    points.map((p) => p.fact_cid),
    { scope, merkle_proof: facts[0]?.proof, cost: { credits: 0, was_cached: false } },
  );
  return { cell, band: band.key, unit: band.unit, tempo: band.tempo, window, tslot_range: [from, to], points, n_points: points.length, truncated, caveats, receipt };
}

interface DiffSide {
  tslot: number;
  fact_cid: string | null;
  kind: string | null;
  value: unknown;
  note?: string;
}

function side(f: StoredFact | undefined, tslot: number, band: BandEntry): { side: DiffSide; usable: number | number[] | undefined } {
  if (!f) return { side: { tslot, fact_cid: null, kind: null, value: null, note: 'no stored fact at this tslot (diff never fetches)' }, usable: undefined };
  if (f.kind === 'absence') {
    return { side: { tslot, fact_cid: f.fact_cid, kind: f.kind, value: null, note: `signed absence (${String(f.body.absence_reason ?? 'no reason given')})` }, usable: undefined };
  }
  const v = band.value_kind === 'categorical' ? f.body.value : usableValue(f, band);
  const s: DiffSide = { tslot, fact_cid: f.fact_cid, kind: f.kind, value: f.body.value ?? null };
  if (v === undefined) s.note = `stored value does not have the band's ${band.value_kind} shape`;
  return { side: s, usable: v as number | number[] | undefined };
}

/** Signed delta b − a of one band between two tslots; a missing side gives null, never 0. */
export async function diff(ctx: ServiceContext, req: { cell: string; band: string; tslot_a: number; tslot_b: number; scope?: Scope }, opts: { primitive?: string } = {}) {
  const { cell } = await resolveCell(ctx, req.cell, 'cell');
  const band = requireBand(ctx, req.band, 'band');
  const ta = optionalTslot(ctx, req.tslot_a, band, 'tslot_a')!;
  const tb = optionalTslot(ctx, req.tslot_b, band, 'tslot_b')!;
  const scope = requestScope(req.scope);
  const [fa] = await ctx.store.latest({ cell, bands: [band.key], tslot: ta, scope: scope ?? null });
  const [fb] = await ctx.store.latest({ cell, bands: [band.key], tslot: tb, scope: scope ?? null });
  const a = side(fa, ta, band);
  const b = side(fb, tb, band);
  const out: Record<string, unknown> = { cell, band: band.key, unit: band.unit, value_kind: band.value_kind, a: a.side, b: b.side, delta: null };
  const notes: string[] = [];
  if (a.usable === undefined || b.usable === undefined) {
    notes.push('delta is null: one side has no usable stored value (a missing value is never read as 0)');
  } else if (band.value_kind === 'categorical') {
    out.changed = String(a.usable) !== String(b.usable);
    notes.push('categorical band: class ids have no arithmetic delta; see changed');
  } else if (Array.isArray(a.usable) && Array.isArray(b.usable)) {
    const va = a.usable;
    const vb = b.usable;
    out.delta = vb.map((x, i) => round(x - va[i]));
    out.l2 = round(l2(va, vb));
    out.cosine = (() => {
      const c = cosine(va, vb);
      return c === null ? null : round(c);
    })();
  } else {
    const d = (b.usable as number) - (a.usable as number);
    out.delta = round(d);
    out.percent_change = (a.usable as number) === 0 ? null : round((d / Math.abs(a.usable as number)) * 100);
  }
  out.notes = notes;
  const cids = [...new Set([fa?.fact_cid, fb?.fact_cid].filter((x): x is string => !!x))];
  const first = fa ?? fb;
  out.receipt = issueReceipt(ctx, opts.primitive ?? 'diff', [cell], cids, { scope, merkle_proof: first?.proof, cost: { credits: 0, was_cached: false } });
  return out;
}
