/**
 * The cube view of an annual encoder (docs/embeddings.md, "The cube view"): a fixed stack of
 * CUBE_SLOTS years of the encoder's vector at one cell, oldest first. Slot j (0..13) holds the
 * vector at tslot `anchor − 13 + j` at offset j·dim, so geotessera's cube has 14 × 128 = 1792
 * values. `anchor` is the request's tslot, else the newest slot the encoder's declared coverage
 * reaches (its band's history_to_unix; the current slot when that is open, as for geotessera).
 *
 * A slot without a vector is 128 nulls and one typed `missing[]` entry, never zeros. A slot outside
 * the encoder's declared coverage (before history_from_unix, after history_to_unix or the current
 * slot) is never read upstream: it is `outside_coverage` at once. state reads the slots inside the
 * coverage through recall (stored first, fetched and signed on a miss, one recall per slot with
 * the request's budget), state_diff reads stored facts only.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { Scope } from '../../protocol/receipt.js';
import { scopeFieldsSet } from '../../protocol/receipt.js';
import { currentTslot, tslotOf } from '../../protocol/tslot.js';
import type { BandEntry } from '../../registry/registry.js';
import { yearOfSlowTslot } from '../../sources/annual.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { recall, resolveCell, type SignedResponse } from '../reads/recall.js';
import { cosine, isVec, norm, optionalTslot, round } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';

/** Years in a cube: slot j holds tslot anchor − (CUBE_SLOTS − 1) + j. */
export const CUBE_SLOTS = 14;

export interface MissingState {
  encoder: string;
  /** Cube view: the slot (0..13) and its tslot. */
  slot?: number;
  tslot?: number;
  /**
   * absence: a signed absence fact says there is no vector; not_materialized: the fetch did not
   * produce one; not_stored: nothing stored and nothing fetched; outside_coverage (cube view): the
   * slot's year is outside the encoder's declared coverage and was not read.
   */
  reason: 'absence' | 'not_materialized' | 'not_stored' | 'outside_coverage';
  detail: string;
  fact_cid?: string;
  retryable?: boolean;
}

/** The tslots an encoder's band declares data for (inclusive), on its own tempo grid. */
export interface Coverage {
  from: number;
  to: number;
}

/** The declared coverage: history_from_unix (else tslot 0) to history_to_unix or, when that is open, the current slot. */
export function coverageOf(band: BandEntry, nowMs: number): Coverage {
  const from = band.history_from_unix === null ? 0 : tslotOf(band.history_from_unix, band.tempo);
  const now = currentTslot(band.tempo, nowMs);
  const to = band.history_to_unix === null ? now : Math.min(now, tslotOf(band.history_to_unix, band.tempo));
  return { from, to };
}

/** An encoder the cube can stack: an annual (slow-tempo) vector band with a dimension. */
export function requireCubeEncoder(enc: BandEntry, field: string): void {
  if (enc.tempo !== 'slow' || !enc.dim) {
    throw invalidArgument(field, `${enc.key} is a ${enc.tempo} encoder: the cube view stacks annual (slow-tempo) encoders only; use view encoder`);
  }
}

/** The number of values in an encoder's cube. */
export function cubeDim(enc: BandEntry): number {
  return CUBE_SLOTS * (enc.dim ?? 0);
}

const ENCODING =
  'vector[offset + i] is value i of the encoder at tslot anchor + tslot_offset (oldest slot first). anchor = the request tslot, else the newest slot of the encoder coverage ' +
  '(coverage.to_tslot; null = open, the current slot). A slot without a vector is dim nulls (never zeros) with one missing[] entry {encoder, slot, tslot, reason: absence | not_materialized | not_stored | outside_coverage, detail, fact_cid?, retryable?}; ' +
  'slots outside the coverage are never fetched (outside_coverage). vector is null when no slot has a vector.';

/** The published layout of an encoder's cube (GET /v1/bands, cube_layout). */
export function cubeLayout(enc: BandEntry) {
  const dim = enc.dim ?? 0;
  const from = enc.history_from_unix === null ? 0 : tslotOf(enc.history_from_unix, enc.tempo);
  return {
    view: 'cube' as const,
    dim: CUBE_SLOTS * dim,
    encoder: enc.key,
    slots: Array.from({ length: CUBE_SLOTS }, (_, j) => ({ slot: j, offset: j * dim, dim, band: enc.key, tslot_offset: j - (CUBE_SLOTS - 1) })),
    coverage: {
      from_tslot: from,
      from_year: yearOfSlowTslot(from),
      to_tslot: enc.history_to_unix === null ? null : tslotOf(enc.history_to_unix, enc.tempo),
    },
    encoding: ENCODING,
  };
}

/** One slot of a cube answer. */
export interface CubeSlot {
  slot: number;
  tslot: number;
  /** The calendar year the annual slot stands for. */
  year: number;
  offset: number;
  fact_cid: string | null;
}

export interface EncoderCube {
  encoder: string;
  dim: number;
  anchor: number;
  /** CUBE_SLOTS × dim values, null for a missing slot's values; null when no slot has a vector. */
  vector: Array<number | null> | null;
  slots: CubeSlot[];
  missing: MissingState[];
  /** Per slot: its vector, or null (not in the answer). */
  values: Array<number[] | null>;
}

/** A fact read for a slot, in the fields the cube reads (served and stored facts alike). */
interface SlotFact {
  kind: unknown;
  value: unknown;
  tslot: unknown;
  fact_cid: string;
  absence_reason?: unknown;
}

/** What a slot inside the coverage read: a fact, or the note of a fetch that gave none. */
interface SlotRead {
  fact?: SlotFact;
  note?: { reason: string; retryable: boolean };
}

function yearText(enc: BandEntry, tslot: number): string {
  return enc.tempo === 'slow' ? `${yearOfSlowTslot(tslot)} (tslot ${tslot})` : `tslot ${tslot}`;
}

/** Lay out one encoder's cube from what each slot inside the coverage read. */
function buildCube(enc: BandEntry, anchor: number, cov: Coverage, read: (tslot: number) => SlotRead, notStored: string): EncoderCube {
  const dim = enc.dim ?? 0;
  const slots: CubeSlot[] = [];
  const missing: MissingState[] = [];
  const values: Array<number[] | null> = [];
  for (let j = 0; j < CUBE_SLOTS; j++) {
    const tslot = anchor - (CUBE_SLOTS - 1) + j;
    const at = { encoder: enc.key, slot: j, tslot };
    const slot: CubeSlot = { slot: j, tslot, year: yearOfSlowTslot(tslot), offset: j * dim, fact_cid: null };
    slots.push(slot);
    values.push(null);
    if (tslot < cov.from || tslot > cov.to) {
      const span = `${yearText(enc, cov.from)} to ${yearText(enc, cov.to)}`;
      missing.push({ ...at, reason: 'outside_coverage', detail: `${yearText(enc, tslot)} is outside the declared coverage of ${enc.key} (${span}); it was not read` });
      continue;
    }
    const { fact: f, note } = read(tslot);
    if (f && f.tslot === tslot) {
      if (f.kind === 'primary' && isVec(f.value, dim)) {
        slot.fact_cid = f.fact_cid;
        values[j] = f.value;
        continue;
      }
      const why = f.kind === 'absence' ? `signed absence (${String(f.absence_reason ?? 'no reason given')})` : "the stored value is not a vector of the encoder's dimension";
      missing.push({ ...at, reason: 'absence', detail: why, fact_cid: f.fact_cid });
    } else if (f) {
      missing.push({ ...at, reason: 'not_materialized', detail: `the fetch signed a fact at tslot ${String(f.tslot)}, not at the slot's tslot` });
    } else if (note) {
      missing.push({ ...at, reason: 'not_materialized', detail: note.reason, retryable: note.retryable });
    } else {
      missing.push({ ...at, reason: 'not_stored', detail: notStored });
    }
  }
  let vector: Array<number | null> | null = null;
  if (values.some((v) => v !== null)) {
    vector = [];
    for (const v of values) for (let i = 0; i < dim; i++) vector.push(v ? v[i] : null);
  }
  return { encoder: enc.key, dim: CUBE_SLOTS * dim, anchor, vector, slots, missing, values };
}

/** A cube read through recall: the cubes and the recall envelope over every slot read. */
export interface CubeRead {
  cubes: EncoderCube[];
  response: SignedResponse;
}

/**
 * The cube of each encoder at a cell: one recall per tslot inside some encoder's coverage (all
 * those encoders' bands at once), concurrently, so a miss is fetched and signed like any band
 * within the request's materialize budget. At most CUBE_SLOTS recalls per distinct anchor.
 * `primitive` names the receipt, which binds every fact the slots read, in slot order.
 */
export async function readCubes(
  ctx: ServiceContext,
  req: { cell: string; tslot?: number; scope?: Scope },
  encoders: readonly BandEntry[],
  opts: { primitive: string; field: string; deadline?: number },
): Promise<CubeRead> {
  const nowMs = ctx.now().getTime();
  const plans = encoders.map((enc) => {
    requireCubeEncoder(enc, opts.field);
    if (req.tslot !== undefined) optionalTslot(ctx, req.tslot, enc, 'tslot');
    const cov = coverageOf(enc, nowMs);
    return { enc, cov, anchor: req.tslot ?? cov.to };
  });
  const { cell, place } = await resolveCell(ctx, req.cell);
  const bandsAt = new Map<number, string[]>();
  for (const p of plans) {
    for (let j = 0; j < CUBE_SLOTS; j++) {
      const t = p.anchor - (CUBE_SLOTS - 1) + j;
      if (t < p.cov.from || t > p.cov.to) continue;
      const list = bandsAt.get(t) ?? [];
      if (!list.includes(p.enc.key)) list.push(p.enc.key);
      bandsAt.set(t, list);
    }
  }
  const tslots = [...bandsAt.keys()].sort((a, b) => a - b);
  const scope = req.scope;
  const reads = await Promise.all(
    tslots.map((t) => recall(ctx, { cell, bands: bandsAt.get(t), tslot: t, ...(scope !== undefined ? { scope } : {}) }, { primitive: opts.primitive, deadline: opts.deadline })),
  );
  const byTslot = new Map(tslots.map((t, i) => [t, reads[i]]));
  const cubes = plans.map((p) =>
    buildCube(
      p.enc,
      p.anchor,
      p.cov,
      (t) => {
        const r = byTslot.get(t);
        const f = r?.facts.find((x) => x.band === p.enc.key);
        const n: MaterializeNote | undefined = r?.materialize_notes.find((x) => x.band === p.enc.key);
        return { fact: f ? servedSlotFact(f) : undefined, note: n ? { reason: n.reason, retryable: n.retryable } : undefined };
      },
      'no vector is stored for this cell and tslot and none was fetched for this request',
    ),
  );

  const facts: ServedFact[] = reads.flatMap((r) => r.facts);
  const cids = facts.map((f) => f.fact_cid);
  const first = reads.find((r) => r.facts.length > 0);
  const caveats = [...new Set(reads.flatMap((r) => r.caveats))];
  const attested = reads.length > 0 ? [...new Set(reads.flatMap((r) => r.bands_already_attested_at_cell))].sort() : await ctx.store.bandsAt(cell, scopeFieldsSet(scope) ?? null);
  if (reads.length === 0) caveats.push('Every slot of the cube is outside the encoder coverage: nothing was read.');
  const receipt = issueReceipt(ctx, opts.primitive, [cell], cids, {
    scope: scopeFieldsSet(scope),
    merkle_proof: first && first.receipt.fact_cids[0] === cids[0] ? first.receipt.merkle_proof : undefined,
    cost: { credits: 0, was_cached: reads.length > 0 && reads.every((r) => r.receipt.cost?.was_cached === true) },
  });
  const response: SignedResponse = { cell, facts, receipt, bands_already_attested_at_cell: attested, caveats, materialize_notes: reads.flatMap((r) => r.materialize_notes) };
  if (place) response.place = place;
  return { cubes, response };
}

function servedSlotFact(f: ServedFact): SlotFact {
  return { kind: f.kind, value: f.value, tslot: f.tslot, fact_cid: f.fact_cid, absence_reason: f.absence_reason };
}

function storedSlotFact(f: StoredFact): SlotFact {
  return { kind: f.kind, value: f.body.value, tslot: f.tslot, fact_cid: f.fact_cid, absence_reason: f.body.absence_reason };
}

/** One side of a cube diff (the shape of state_diff's a and b, with the cube's slots and misses). */
function diffSide(c: EncoderCube) {
  return {
    tslot: c.anchor,
    fact_cid: null,
    kind: 'cube',
    value: c.vector,
    ...(c.vector === null ? { note: 'no slot of this cube has a stored vector' } : {}),
    slots: c.slots,
    missing: c.missing,
  };
}

/**
 * The change between the cubes anchored at tslot_a and tslot_b, slot by slot (stored facts
 * only, like the encoder view): delta = b − a where both sides have the slot's vector, null
 * elsewhere; l2 = |b − a| and cosine(a, b) over the concatenation of the slots present on both
 * sides (slots_compared of them). A missing slot is never read as zero.
 */
export async function cubeDiff(ctx: ServiceContext, enc: BandEntry, req: { cell: string; tslot_a: number; tslot_b: number; scope?: Record<string, string> }) {
  requireCubeEncoder(enc, 'encoder');
  const { cell } = await resolveCell(ctx, req.cell, 'cell');
  const ta = optionalTslot(ctx, req.tslot_a, enc, 'tslot_a')!;
  const tb = optionalTslot(ctx, req.tslot_b, enc, 'tslot_b')!;
  const scope = requestScope(req.scope);
  const cov = coverageOf(enc, ctx.now().getTime());
  const wanted = new Set<number>();
  for (const anchor of [ta, tb]) {
    for (let j = 0; j < CUBE_SLOTS; j++) {
      const t = anchor - (CUBE_SLOTS - 1) + j;
      if (t >= cov.from && t <= cov.to) wanted.add(t);
    }
  }
  const stored = new Map<number, StoredFact>();
  await Promise.all(
    [...wanted].map(async (t) => {
      const [f] = await ctx.store.latest({ cell, bands: [enc.key], tslot: t, scope: scope ?? null });
      if (f) stored.set(t, f);
    }),
  );
  const read = (t: number): SlotRead => {
    const f = stored.get(t);
    return f ? { fact: storedSlotFact(f) } : {};
  };
  const notStored = 'no vector is stored for this cell and tslot (state_diff never fetches)';
  const a = buildCube(enc, ta, cov, read, notStored);
  const b = buildCube(enc, tb, cov, read, notStored);

  const dim = enc.dim ?? 0;
  let delta: Array<number | null> | null = [];
  const va: number[] = [];
  const vb: number[] = [];
  let compared = 0;
  for (let j = 0; j < CUBE_SLOTS; j++) {
    const x = a.values[j];
    const y = b.values[j];
    if (x && y) {
      compared++;
      for (let i = 0; i < dim; i++) {
        delta.push(round(y[i] - x[i]));
        va.push(x[i]);
        vb.push(y[i]);
      }
    } else for (let i = 0; i < dim; i++) delta.push(null);
  }
  const notes = [
    `cube view: delta = b − a slot by slot (slot j of a is tslot ${ta - (CUBE_SLOTS - 1)} + j, of b tslot ${tb - (CUBE_SLOTS - 1)} + j); l2 and cosine over the ${compared} slot(s) present on both sides; a slot missing on either side is null in delta and left out (never read as 0)`,
    'residual and residual_l2 are computed in the encoder view only',
  ];
  const metrics: { l2?: number; cosine?: number | null } = {};
  if (compared === 0) {
    delta = null;
    notes.unshift('delta is null: no slot has a stored vector on both sides (a missing value is never read as 0)');
  } else {
    metrics.l2 = round(norm(vb.map((y, i) => y - va[i])));
    const c = cosine(va, vb);
    metrics.cosine = c === null ? null : round(c);
  }
  const cited = (c: EncoderCube) => [...c.slots.map((s) => s.fact_cid), ...c.missing.map((m) => m.fact_cid)];
  const cids = [...new Set([...cited(a), ...cited(b)].filter((x): x is string => !!x))];
  const firstFact = [...stored.values()].find((f) => f.fact_cid === cids[0]);
  const receipt = issueReceipt(ctx, 'state_diff', [cell], cids, { scope, merkle_proof: firstFact?.proof, cost: { credits: 0, was_cached: false } });
  return {
    cell,
    band: enc.key,
    unit: enc.unit,
    value_kind: enc.value_kind,
    a: diffSide(a),
    b: diffSide(b),
    delta,
    ...metrics,
    slots_compared: compared,
    notes,
    encoder: enc.key,
    view: 'cube' as const,
    residual: null,
    residual_l2: null,
    receipt,
  };
}
