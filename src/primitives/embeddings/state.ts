/**
 * state, state_multi, state_diff (docs/embeddings.md): the dense embedding of a cell. The served
 * encoders are the registry's real-valued vector bands (binary `.bin128` codes are search keys, not
 * states). Reads go through recall, so a missing vector is fetched and signed like any band, and an
 * encoder that has no vector at the cell is named in a typed `missing[]` entry — never a zero
 * vector. The `cube` view (1792-D) has no encoder on this responder and is refused with the served
 * views named.
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { BandEntry } from '../../registry/registry.js';
import type { ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import { recall, type RecallRequest, type SignedResponse } from '../reads/recall.js';
import { requireBand, isVec, maxAbs, norm, round } from '../reads/common.js';
import { diff } from '../reads/series.js';
import { isBinaryBand } from './vector-index.js';

export const STATE_VIEWS = ['encoder', 'cube'] as const;
export type StateView = (typeof STATE_VIEWS)[number];
export const DEFAULT_ENCODER = 'geotessera';

/** Encoders this responder serves: real-valued vector bands. */
export function servedEncoders(ctx: ServiceContext): BandEntry[] {
  return ctx.registry.bandList.filter((b) => b.value_kind === 'vector' && !isBinaryBand(b.key));
}

function checkView(view: StateView): 'encoder' {
  if (view === 'cube') {
    throw new SvcError('invalid_argument', 'view: the cube view (1792-D) is not served by this responder (no cube encoder is registered); served views: encoder', {
      field: 'view',
      served_views: ['encoder'],
    });
  }
  return 'encoder';
}

function encoderBand(ctx: ServiceContext, key: unknown, field: string): BandEntry {
  const band = requireBand(ctx, key, field);
  if (!servedEncoders(ctx).includes(band)) {
    throw invalidArgument(
      field,
      `${band.key} is not an encoder; served encoders: ${servedEncoders(ctx)
        .map((b) => b.key)
        .join(', ')}`,
    );
  }
  return band;
}

export interface EncoderState {
  encoder: string;
  dim: number;
  vector: number[];
  tslot: number;
  fact_cid: string;
}

export interface MissingState {
  encoder: string;
  /** absence: a signed absence fact says there is no vector; not_materialized: the fetch did not produce one; not_stored: nothing stored and nothing fetched. */
  reason: 'absence' | 'not_materialized' | 'not_stored';
  detail: string;
  fact_cid?: string;
  retryable?: boolean;
}

/** Split a recall answer into one state per encoder that has a vector and a typed miss for each other. */
function statesOf(r: SignedResponse, encoders: readonly BandEntry[]): { states: EncoderState[]; missing: MissingState[] } {
  const states: EncoderState[] = [];
  const missing: MissingState[] = [];
  for (const enc of encoders) {
    const f: ServedFact | undefined = r.facts.find((x) => x.band === enc.key);
    if (f && f.kind === 'primary' && isVec(f.value, enc.dim)) {
      states.push({ encoder: enc.key, dim: (f.value as number[]).length, vector: f.value as number[], tslot: f.tslot as number, fact_cid: f.fact_cid });
      continue;
    }
    if (f) {
      const why = f.kind === 'absence' ? `signed absence (${String(f.absence_reason ?? 'no reason given')})` : "the stored value is not a vector of the encoder's dimension";
      missing.push({ encoder: enc.key, reason: 'absence', detail: why, fact_cid: f.fact_cid });
      continue;
    }
    const note = r.materialize_notes.find((n) => n.band === enc.key);
    missing.push(
      note
        ? { encoder: enc.key, reason: 'not_materialized', detail: note.reason, retryable: note.retryable }
        : { encoder: enc.key, reason: 'not_stored', detail: 'no vector is stored for this cell and none was fetched for this request' },
    );
  }
  return { states, missing };
}

/** A state read, as the operation's schema admits it (view filled in, default encoder). */
interface StateRequest {
  cell: string;
  view: StateView;
  tslot?: number;
  scope?: RecallRequest['scope'];
}

function recallOptions(req: StateRequest): Omit<RecallRequest, 'cell' | 'bands'> {
  return { ...(req.tslot !== undefined ? { tslot: req.tslot } : {}), ...(req.scope !== undefined ? { scope: req.scope } : {}) };
}

function envelope(r: SignedResponse) {
  return {
    facts: r.facts,
    receipt: r.receipt,
    bands_already_attested_at_cell: r.bands_already_attested_at_cell,
    caveats: r.caveats,
    materialize_notes: r.materialize_notes,
    ...(r.place ? { place: r.place } : {}),
  };
}

/** One encoder's vector at a cell (default geotessera); `vector` is null with a typed `missing` entry when there is none. */
export async function state(ctx: ServiceContext, req: StateRequest & { encoder: string }, opts: { deadline?: number } = {}) {
  const view = checkView(req.view);
  const enc = encoderBand(ctx, req.encoder, 'encoder');
  const r = await recall(ctx, { cell: req.cell, bands: [enc.key], ...recallOptions(req) }, { primitive: 'state', deadline: opts.deadline });
  const { states, missing } = statesOf(r, [enc]);
  const s = states[0];
  return {
    cell: r.cell,
    view,
    encoder: enc.key,
    dim: enc.dim ?? null,
    vector: s?.vector ?? null,
    tslot: s?.tslot ?? null,
    fact_cid: s?.fact_cid ?? null,
    missing,
    ...envelope(r),
  };
}

/** One vector per served encoder (or those asked for), with a typed miss for each encoder without one. */
export async function stateMulti(ctx: ServiceContext, req: StateRequest & { encoders?: string[] }, opts: { deadline?: number } = {}) {
  const view = checkView(req.view);
  const encoders = req.encoders === undefined ? servedEncoders(ctx) : [...new Map(req.encoders.map((k, i) => [k, encoderBand(ctx, k, `encoders[${i}]`)])).values()];
  if (encoders.length === 0) throw invalidArgument('encoders', 'expected at least one encoder');
  const r = await recall(ctx, { cell: req.cell, bands: encoders.map((e) => e.key), ...recallOptions(req) }, { primitive: 'state_multi', deadline: opts.deadline });
  const { states, missing } = statesOf(r, encoders);
  return { cell: r.cell, view, encoders: encoders.map((e) => e.key), states, missing, ...envelope(r) };
}

/**
 * b − (a·b / a·a)·a, computed on a and b divided by their largest |value| (the projection does
 * not depend on a's scale and scales with b's), so no sum overflows or underflows.
 */
export function residualOf(a: readonly number[], b: readonly number[]): number[] {
  const sa = maxAbs(a);
  const sb = maxAbs(b);
  if (sb === 0) return b.map(() => 0);
  if (sa === 0) return [...b];
  let aa = 0;
  let ab = 0;
  for (let i = 0; i < a.length; i++) {
    aa += (a[i] / sa) ** 2;
    ab += (a[i] / sa) * (b[i] / sb);
  }
  const k = ab / aa;
  return b.map((x, i) => sb * (x / sb - k * (a[i] / sa)));
}

/**
 * The change of one encoder's vector between two tslots: delta = b − a, its L2 norm, the cosine
 * of a and b, and the residual r = b − (a·b / a·a)·a — the part of b that a rescaled a does not
 * explain (orthogonal to a) — with its L2 norm. Stored vectors only, like diff.
 */
export async function stateDiff(ctx: ServiceContext, req: { cell: string; encoder?: string; tslot_a: number; tslot_b: number; scope?: Record<string, string> }) {
  const enc = encoderBand(ctx, req.encoder ?? DEFAULT_ENCODER, 'encoder');
  const d = await diff(ctx, { cell: req.cell, band: enc.key, tslot_a: req.tslot_a, tslot_b: req.tslot_b, scope: req.scope }, { primitive: 'state_diff' });
  const a = (d.a as { value?: unknown }).value;
  const b = (d.b as { value?: unknown }).value;
  let residual: number[] | null = null;
  let residualL2: number | null = null;
  if (isVec(a, enc.dim) && isVec(b, enc.dim)) {
    const r = residualOf(a, b);
    residual = r.map((x) => round(x));
    residualL2 = round(norm(r));
  }
  const { receipt, ...rest } = d;
  return { ...rest, encoder: enc.key, view: 'encoder' as const, residual, residual_l2: residualL2, receipt };
}
