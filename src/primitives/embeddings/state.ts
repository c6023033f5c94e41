/**
 * state, state_multi, state_diff (docs/embeddings.md): the dense embedding of a cell. The served
 * encoders are the registry's real-valued vector bands (binary `.bin128` codes are search keys, not
 * states). Reads go through recall, so a missing vector is fetched and signed like any band, and an
 * encoder that has no vector at the cell is named in a typed `missing[]` entry — never a zero
 * vector. The `cube` view stacks 14 years of an annual encoder (1792 values for geotessera; see
 * cube.ts), with a null slot and a typed miss for each year without a vector.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { BandEntry } from '../../registry/registry.js';
import type { ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import { recall, type RecallRequest, type SignedResponse } from '../reads/recall.js';
import { requireBand, isVec, maxAbs, norm, round } from '../reads/common.js';
import { diff } from '../reads/series.js';
import { isBinaryBand } from './vector-index.js';
import { cubeDiff, cubeLayout, readCubes, requireCubeEncoder, type MissingState } from './cube.js';

export type { MissingState } from './cube.js';
export const STATE_VIEWS = ['encoder', 'cube'] as const;
export type StateView = (typeof STATE_VIEWS)[number];
export const DEFAULT_ENCODER = 'geotessera';

/** Encoders this responder serves: real-valued vector bands. */
export function servedEncoders(ctx: ServiceContext): BandEntry[] {
  return ctx.registry.bandList.filter((b) => b.value_kind === 'vector' && !isBinaryBand(b.key));
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
  const enc = encoderBand(ctx, req.encoder, 'encoder');
  if (req.view === 'cube') return stateCube(ctx, req, enc, opts);
  const r = await recall(ctx, { cell: req.cell, bands: [enc.key], ...recallOptions(req) }, { primitive: 'state', deadline: opts.deadline });
  const { states, missing } = statesOf(r, [enc]);
  const s = states[0];
  return {
    cell: r.cell,
    view: 'encoder' as StateView,
    encoder: enc.key,
    dim: enc.dim ?? null,
    vector: (s?.vector ?? null) as Array<number | null> | null,
    tslot: s?.tslot ?? null,
    fact_cid: s?.fact_cid ?? null,
    missing,
    ...envelope(r),
  };
}

/** The cube of one encoder: 14 annual slots, a null slot and a typed miss for each year without a vector. */
async function stateCube(ctx: ServiceContext, req: StateRequest, enc: BandEntry, opts: { deadline?: number }) {
  const { cubes, response } = await readCubes(ctx, req, [enc], { primitive: 'state', field: 'encoder', deadline: opts.deadline });
  const c = cubes[0];
  return {
    cell: response.cell,
    view: 'cube' as StateView,
    encoder: enc.key,
    dim: c.dim,
    vector: c.vector,
    tslot: c.anchor,
    fact_cid: null,
    slots: c.slots,
    missing: c.missing,
    ...envelope(response),
  };
}

/** One vector per served encoder (or those asked for), with a typed miss for each encoder without one. */
export async function stateMulti(ctx: ServiceContext, req: StateRequest & { encoders?: string[] }, opts: { deadline?: number } = {}) {
  const cube = req.view === 'cube';
  let encoders = req.encoders === undefined ? servedEncoders(ctx) : [...new Map(req.encoders.map((k, i) => [k, encoderBand(ctx, k, `encoders[${i}]`)])).values()];
  // By default the cube view stacks every annual encoder; one asked for by name must be annual.
  if (cube && req.encoders === undefined) encoders = encoders.filter((e) => e.tempo === 'slow' && e.dim);
  if (encoders.length === 0) throw invalidArgument('encoders', cube ? 'no annual encoder is served for the cube view' : 'expected at least one encoder');
  if (cube) {
    encoders.forEach((e, i) => requireCubeEncoder(e, req.encoders === undefined ? 'encoders' : `encoders[${i}]`));
    const { cubes, response } = await readCubes(ctx, req, encoders, { primitive: 'state_multi', field: 'encoders', deadline: opts.deadline });
    const states = cubes.filter((c) => c.vector !== null).map((c) => ({ encoder: c.encoder, dim: c.dim, vector: c.vector, tslot: c.anchor, slots: c.slots }));
    return { cell: response.cell, view: 'cube' as StateView, encoders: encoders.map((e) => e.key), states, missing: cubes.flatMap((c) => c.missing), ...envelope(response) };
  }
  const r = await recall(ctx, { cell: req.cell, bands: encoders.map((e) => e.key), ...recallOptions(req) }, { primitive: 'state_multi', deadline: opts.deadline });
  const { states, missing } = statesOf(r, encoders);
  return { cell: r.cell, view: 'encoder' as StateView, encoders: encoders.map((e) => e.key), states, missing, ...envelope(r) };
}

/** The cube layout GET /v1/bands publishes (cube_layout): the default encoder's, or null when it cannot be stacked here. */
export function publishedCubeLayout(ctx: ServiceContext) {
  const enc = servedEncoders(ctx).find((b) => b.key === DEFAULT_ENCODER);
  return enc && enc.tempo === 'slow' && enc.dim ? cubeLayout(enc) : null;
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
 * explain (orthogonal to a) — with its L2 norm. Stored vectors only, like diff. The cube view
 * compares the two cubes anchored at tslot_a and tslot_b slot by slot (cube.ts, cubeDiff).
 */
export async function stateDiff(ctx: ServiceContext, req: { cell: string; encoder?: string; view?: StateView; tslot_a: number; tslot_b: number; scope?: Record<string, string> }) {
  const enc = encoderBand(ctx, req.encoder ?? DEFAULT_ENCODER, 'encoder');
  if (req.view === 'cube') return cubeDiff(ctx, enc, req);
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
