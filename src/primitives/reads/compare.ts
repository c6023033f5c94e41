/**
 * compare (two cells over the bands both carry) and compare_bands (two band readings at one cell,
 * with an optional predicate). Both read stored facts only. Cosine is only defined inside one
 * embedding space, so two DIFFERENT vector bands are refused with 400 (docs/errors.md, "Another
 * status than the catalogue's").
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { resolveCell } from './recall.js';
import type { Scope } from '../../protocol/receipt.js';
import { cosine, l2, optionalTslot, requireBand, round, usableValue } from './common.js';
import { requestScope } from '../scopes/request.js';

const FAMILY_RE = /^[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)*$/;

function inFamily(key: string, family: string | undefined): boolean {
  return family === undefined || key === family || key.startsWith(`${family}.`);
}

/** Similarity of two cells over shared bands: mean cosine when a vector band is shared, else mean scalar delta (b − a). */
export async function compare(ctx: ServiceContext, req: { a: string; b: string; family?: string; scope?: Scope }) {
  const { cell: ca } = await resolveCell(ctx, req.a, 'a');
  const { cell: cb } = await resolveCell(ctx, req.b, 'b');
  const family = req.family;
  if (family !== undefined) {
    if (!FAMILY_RE.test(family)) throw invalidArgument('family', 'expected a band namespace such as indices or geotessera');
    if (!ctx.registry.bandList.some((b) => inFamily(b.key, family))) throw invalidArgument('family', `no registered band is in the family ${family} (see /v1/bands)`);
  }
  const scope = requestScope(req.scope);
  const [la, lb] = await Promise.all([ctx.store.latest({ cell: ca, scope: scope ?? null }), ctx.store.latest({ cell: cb, scope: scope ?? null })]);
  const byB = new Map(lb.map((f) => [f.band, f]));
  const cosines: Record<string, number> = {};
  const deltas: Record<string, number> = {};
  const skipped: string[] = [];
  const usedVec: StoredFact[] = [];
  const usedNum: StoredFact[] = [];
  for (const fa of [...la].sort((x, y) => (x.band < y.band ? -1 : 1))) {
    const fb = byB.get(fa.band);
    const band = ctx.registry.bands.get(fa.band);
    if (!fb || !band || !inFamily(fa.band, family)) continue;
    const va = usableValue(fa, band);
    const vb = usableValue(fb, band);
    if (band.value_kind === 'categorical' || va === undefined || vb === undefined) {
      skipped.push(fa.band);
      continue;
    }
    if (Array.isArray(va) && Array.isArray(vb)) {
      const c = cosine(va, vb);
      if (c === null) {
        skipped.push(fa.band);
        continue;
      }
      cosines[fa.band] = round(c);
      usedVec.push(fa, fb);
    } else {
      deltas[fa.band] = round((vb as number) - (va as number));
      usedNum.push(fa, fb);
    }
  }
  const mean = (xs: number[]) => (xs.length === 0 ? null : round(xs.reduce((s, x) => s + x, 0) / xs.length));
  // Vector similarity answers the question when a vector band is shared; scalar deltas would mix
  // units into it, so they are left out of the answer and of the receipt.
  const vectorScore = usedVec.length > 0;
  const used = vectorScore ? usedVec : usedNum;
  const receipt = issueReceipt(ctx, 'compare', [...new Set([ca, cb])], [...new Set(used.map((f) => f.fact_cid))], {
    scope,
    merkle_proof: used[0]?.proof,
    cost: { credits: 0, was_cached: false },
  });
  const base = { a: ca, b: cb, ...(family !== undefined ? { family } : {}), skipped_bands: skipped };
  if (vectorScore) return { ...base, score: mean(Object.values(cosines)), score_kind: 'cosine' as const, cosines, receipt };
  const d = Object.values(deltas);
  return { ...base, score: mean(d), score_kind: d.length > 0 ? ('mean_scalar_delta' as const) : null, deltas, receipt };
}

export const PREDICATE_KINDS = ['abs_diff_le', 'abs_diff_lt', 'cosine_ge', 'cosine_gt', 'l2_distance_le'] as const;
type PredicateKind = (typeof PREDICATE_KINDS)[number];

/** A band comparison, as the operation's schema admits it (cell/cell64 and the kinds are checked here). */
export interface CompareBandsRequest {
  cell?: string;
  cell64?: string;
  a: string;
  b: string;
  tslot_a?: number;
  tslot_b?: number;
  predicate?: { kind: PredicateKind; threshold: number };
  scope?: Scope;
}

/** The predicate, if it fits the pair: vector kinds for a vector band, the others for scalars. */
function parsePredicate(p: CompareBandsRequest['predicate'], vector: boolean): { kind: PredicateKind; threshold: number } | undefined {
  if (p === undefined) return undefined;
  const kind = p.kind;
  const forVectors = kind === 'cosine_ge' || kind === 'cosine_gt' || kind === 'l2_distance_le';
  if (forVectors !== vector) throw invalidArgument('predicate.kind', `${kind} applies to ${forVectors ? 'a vector' : 'a scalar'} pair; these bands are ${vector ? 'vectors' : 'not vectors'}`);
  return { kind, threshold: p.threshold };
}

async function reading(ctx: ServiceContext, cell: string, band: BandEntry, tslot: number | undefined, scope: ReturnType<typeof requestScope>): Promise<StoredFact | undefined> {
  // No tslot: the latest attested tslot at the cell for that band.
  const [f] = await ctx.store.latest({ cell, bands: [band.key], tslot, scope: scope ?? null });
  return f;
}

/** Two band readings at one cell: delta and percent change for scalars, cosine and L2 for one vector band at two tslots. */
export async function compareBands(ctx: ServiceContext, req: CompareBandsRequest) {
  if (req.cell !== undefined && req.cell64 !== undefined && req.cell !== req.cell64) throw invalidArgument('cell64', 'alias of cell; give one of them');
  const cellIn = req.cell ?? req.cell64;
  if (cellIn === undefined) throw invalidArgument('cell', 'is required (alias cell64)');
  const { cell } = await resolveCell(ctx, cellIn, req.cell !== undefined ? 'cell' : 'cell64');
  const ba = requireBand(ctx, req.a, 'a');
  const bb = requireBand(ctx, req.b, 'b');
  const vector = ba.value_kind === 'vector' || bb.value_kind === 'vector';
  if (ba.value_kind === 'vector' && bb.value_kind === 'vector' && ba.key !== bb.key) {
    throw new SvcError(
      'invalid_argument',
      `b: cosine between two different vector bands (${ba.key}, ${bb.key}) is undefined: they live in different embedding spaces; compare one band at two tslots`,
      { field: 'b', a: ba.key, b: bb.key },
      { status: 400 },
    );
  }
  if (vector && ba.value_kind !== bb.value_kind) throw invalidArgument('b', `${ba.key} is ${ba.value_kind} and ${bb.key} is ${bb.value_kind}: a vector compares only with itself at another tslot`);
  const ta = optionalTslot(ctx, req.tslot_a, ba, 'tslot_a');
  const tb = optionalTslot(ctx, req.tslot_b, bb, 'tslot_b');
  if (vector && ta !== undefined && ta === tb) throw invalidArgument('tslot_b', 'a vector band compares with itself at two different tslots');
  const predicate = parsePredicate(req.predicate, vector);
  const scope = requestScope(req.scope);

  const [fa, fb] = await Promise.all([reading(ctx, cell, ba, ta, scope), reading(ctx, cell, bb, tb, scope)]);
  if (vector && fa && fb && fa.tslot === fb.tslot) {
    throw invalidArgument(ta === undefined ? 'tslot_a' : 'tslot_b', `both readings resolve to tslot ${fa.tslot}; name two different tslots for one vector band`);
  }
  const show = (band: BandEntry, t: number | undefined, f: StoredFact | undefined) => ({
    band: band.key,
    tslot: f?.tslot ?? t ?? null,
    fact_cid: f?.fact_cid ?? null,
    kind: f?.kind ?? null,
    value: f && f.kind !== 'absence' ? (f.body.value ?? null) : null,
  });
  const out: Record<string, unknown> = { cell, a: show(ba, ta, fa), b: show(bb, tb, fb), delta: null, percent_change: null, cosine: null, l2: null };
  const notes: string[] = [];
  const va = fa ? usableValue(fa, ba) : undefined;
  const vb = fb ? usableValue(fb, bb) : undefined;
  let metric: number | null = null;
  if (va === undefined || vb === undefined) {
    notes.push(`not computable: ${[va === undefined ? `a (${ba.key})` : '', vb === undefined ? `b (${bb.key})` : ''].filter(Boolean).join(' and ')} has no usable stored value`);
  } else if (ba.value_kind === 'categorical' || bb.value_kind === 'categorical') {
    notes.push('categorical class ids have no arithmetic delta');
  } else if (Array.isArray(va) && Array.isArray(vb)) {
    const c = cosine(va, vb);
    out.cosine = c === null ? null : round(c);
    out.l2 = round(l2(va, vb));
    if (predicate) metric = predicate.kind === 'l2_distance_le' ? (out.l2 as number) : (out.cosine as number | null);
  } else {
    const d = (vb as number) - (va as number);
    out.delta = round(d);
    out.percent_change = (va as number) === 0 ? null : round((d / Math.abs(va as number)) * 100);
    if (ba.unit !== bb.unit) notes.push(`units differ (${ba.unit} vs ${bb.unit}): the delta mixes units`);
    metric = Math.abs(d);
  }
  if (predicate) {
    const t = predicate.threshold;
    const holds =
      metric === null
        ? false
        : predicate.kind === 'abs_diff_le'
          ? metric <= t
          : predicate.kind === 'abs_diff_lt'
            ? metric < t
            : predicate.kind === 'cosine_ge'
              ? metric >= t
              : predicate.kind === 'cosine_gt'
                ? metric > t
                : metric <= t;
    out.predicate_verdict = { holds, kind: predicate.kind, threshold: t, decidable: metric !== null, ...(metric === null ? { reason: notes[0] ?? 'not computable' } : {}) };
  } else {
    out.predicate_verdict = null;
  }
  out.notes = notes;
  const used = [fa, fb].filter((f): f is StoredFact => !!f);
  out.receipt = issueReceipt(ctx, 'compare_bands', [cell], [...new Set(used.map((f) => f.fact_cid))], { scope, merkle_proof: used[0]?.proof, cost: { credits: 0, was_cached: false } });
  return out;
}
