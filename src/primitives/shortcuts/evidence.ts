/**
 * Shared plumbing of the derived shortcuts (terrain, spi, burn_severity, deforestation_alert,
 * sar_forest_disturbance, rice_ch4): collect the facts a computation used, then sign one receipt
 * over exactly those cells and fact_cids. A derived number is only as good as its inputs, so the
 * inputs travel with it.
 */
import type { Receipt } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { recall, type RecallResult } from '../reads/recall.js';
import { trajectory, type TrajectoryPoint } from '../reads/series.js';
import { invalidArgument } from '../../protocol/errors.js';
import { READ_CONCURRENCY, mapLimit, optionalTslot, requireBand } from '../reads/common.js';
import { parseLocation, placeBlock, placeCaveats, resolvePlace, type LocateFn, type PlaceBlock, type PlaceInput, type ResolvedPlace } from './place.js';

/** Options every derived shortcut takes from its operation. */
export interface DerivedOpts {
  deadline?: number;
  locate?: LocateFn;
}

/** The envelope of a derived shortcut answer. */
export interface DerivedEnvelope {
  shortcut: string;
  cell: string | null;
  place: PlaceBlock | null;
  /** Facts read through recall (each with its own receipt). */
  facts: ServedFact[];
  /** Stored series points used (fact_cid, tslot, value); their cids are in the receipt too. */
  series_inputs?: Array<{ band: string; tslot: number; value: unknown; fact_cid: string }>;
  receipt: Receipt;
  bands_already_attested_at_cell: string[];
  caveats: string[];
  materialize_notes: MaterializeNote[];
}

/** What a computation read, in order. */
export class Evidence {
  readonly facts: ServedFact[] = [];
  readonly series: Array<{ band: string; tslot: number; value: unknown; fact_cid: string }> = [];
  readonly notes: MaterializeNote[] = [];
  readonly caveats: string[] = [];
  readonly cells: string[] = [];
  private cids = new Set<string>();

  constructor(
    readonly ctx: ServiceContext,
    readonly name: string,
    readonly opts: DerivedOpts,
  ) {}

  caveat(c: string): void {
    if (!this.caveats.includes(c)) this.caveats.push(c);
  }

  private cell(c: string): void {
    if (!this.cells.includes(c)) this.cells.push(c);
  }

  /** recall one band at a cell (materializes on a miss); the fact, or undefined when none came back. */
  async read(cell: string, band: string, tslot?: number): Promise<ServedFact | undefined> {
    return this.record(cell, band, await this.recallOne(cell, band, tslot));
  }

  /** recall one band at many cells concurrently; recorded in input order (a stable receipt). */
  async readMany(cells: readonly string[], band: string): Promise<Array<ServedFact | undefined>> {
    const rs = await mapLimit(cells, READ_CONCURRENCY, (c) => this.recallOne(c, band));
    return cells.map((c, i) => this.record(c, band, rs[i]!));
  }

  private recallOne(cell: string, band: string, tslot?: number): Promise<RecallResult> {
    return recall(this.ctx, { cell, bands: [band], ...(tslot !== undefined ? { tslot } : {}) }, { primitive: this.name, deadline: this.opts.deadline });
  }

  private record(cell: string, band: string, r: RecallResult): ServedFact | undefined {
    this.cell(cell);
    this.notes.push(...r.materialize_notes);
    for (const c of r.caveats) this.caveat(c);
    const f = r.facts.find((x) => x.band === band);
    if (f && !this.cids.has(f.fact_cid)) {
      this.cids.add(f.fact_cid);
      this.facts.push(f);
    }
    return f;
  }

  /** The stored series of a band at a cell (never fetches), newest version per tslot, oldest first. */
  async history(cell: string, band: string): Promise<TrajectoryPoint[]> {
    const nowS = Math.floor(this.ctx.now().getTime() / 1000);
    const t = await trajectory(this.ctx, { cell, band, window: [0, nowS] });
    for (const c of t.caveats) if (!/trajectory never fetches/.test(c)) this.caveat(c);
    return t.points;
  }

  /** Record series points a computation used (their cids join the receipt). */
  use(band: string, points: readonly TrajectoryPoint[], cell: string): void {
    this.cell(cell);
    for (const p of points) {
      if (this.cids.has(p.fact_cid)) continue;
      this.cids.add(p.fact_cid);
      this.series.push({ band, tslot: p.tslot, value: p.value, fact_cid: p.fact_cid });
    }
  }

  /** Sign the receipt over every cell and fact_cid used and build the envelope. */
  async envelope(place: ResolvedPlace | undefined, cell: string | undefined): Promise<DerivedEnvelope> {
    for (const c of place ? placeCaveats(place) : []) this.caveat(c);
    const cids = [...this.facts.map((f) => f.fact_cid), ...this.series.map((s) => s.fact_cid)];
    const receipt = issueReceipt(this.ctx, this.name, cell && !this.cells.includes(cell) ? [cell, ...this.cells] : [...this.cells], cids, {
      merkle_proof: this.facts[0]?.receipt?.merkle_proof,
      cost: { credits: 0, was_cached: this.notes.length === 0 },
    });
    const out: DerivedEnvelope = {
      shortcut: this.name,
      cell: cell ?? null,
      place: place ? placeBlock(place) : null,
      facts: this.facts,
      receipt,
      bands_already_attested_at_cell: cell ? await this.ctx.store.bandsAt(cell, null) : [],
      caveats: this.caveats,
      materialize_notes: this.notes,
    };
    if (this.series.length > 0) out.series_inputs = this.series;
    return out;
  }
}

/** Resolve the location of a derived shortcut (a place name reads its centroid cell). */
export async function derivedPlace(ctx: ServiceContext, input: PlaceInput, opts: DerivedOpts): Promise<ResolvedPlace> {
  return resolvePlace(ctx, input, { allowCell64: true, locate: opts.locate });
}

/** Like derivedPlace, but a location is optional (rice_ch4 computes without one). */
export async function parsePlaceOptional(ctx: ServiceContext, input: PlaceInput, opts: DerivedOpts): Promise<ResolvedPlace | undefined> {
  if (!parseLocation(input, { allowCell64: true, optional: true, prefix: ctx.config.prefix })) return undefined;
  return derivedPlace(ctx, input, opts);
}

/** A numeric value of a served fact, or undefined (absence, null, wrong shape). */
export function numericValue(f: ServedFact | undefined): number | undefined {
  if (!f || f.kind === 'absence') return undefined;
  return typeof f.value === 'number' && Number.isFinite(f.value) ? f.value : undefined;
}

/** A primary numeric point of a series, or undefined. */
export function pointValue(p: TrajectoryPoint | undefined): number | undefined {
  if (!p || p.kind === 'absence') return undefined;
  return typeof p.value === 'number' && Number.isFinite(p.value) ? p.value : undefined;
}

/** Validate a pair of optional tslots for one band (both or neither). */
export function tslotPair(ctx: ServiceContext, band: string, a: number | undefined, b: number | undefined, fa: string, fb: string): [number, number] | undefined {
  if (a === undefined && b === undefined) return undefined;
  if (a === undefined) throw invalidArgument(fa, `is required with ${fb}`);
  if (b === undefined) throw invalidArgument(fb, `is required with ${fa}`);
  const entry = requireBand(ctx, band, 'band');
  const ta = optionalTslot(ctx, a, entry, fa)!;
  const tb = optionalTslot(ctx, b, entry, fb)!;
  if (ta === tb) throw invalidArgument(fb, `must differ from ${fa}`);
  if (ta > tb) throw invalidArgument(fa, `must be earlier than ${fb} (${ta} > ${tb})`);
  return [ta, tb];
}

/**
 * Two readings of one band at a cell: at the given tslots (through recall, which may fetch them),
 * else the two newest stored primary values. Returns the pair or a reason why there is none.
 */
export async function twoReadings(
  ev: Evidence,
  cell: string,
  band: string,
  tslots: [number, number] | undefined,
): Promise<{ ok: true; a: { tslot: number; value: number; fact_cid: string }; b: { tslot: number; value: number; fact_cid: string } } | { ok: false; reason: string; observed: number }> {
  if (tslots) {
    const fa = await ev.read(cell, band, tslots[0]);
    const fb = await ev.read(cell, band, tslots[1]);
    const va = numericValue(fa);
    const vb = numericValue(fb);
    if (va === undefined || vb === undefined) {
      const missing = [va === undefined ? tslots[0] : null, vb === undefined ? tslots[1] : null].filter((x) => x !== null);
      return {
        ok: false,
        reason: `no usable ${band} value at tslot ${missing.join(' and ')} (signed absence or skipped upstream; see materialize_notes)`,
        observed: [va, vb].filter((x) => x !== undefined).length,
      };
    }
    // An upstream may serve the scene nearest the asked slot: the slots actually used are reported.
    const sa = Number(fa!.tslot);
    const sb = Number(fb!.tslot);
    if (sa === sb) return { ok: false, reason: `both tslots were served by the same ${band} observation (tslot ${sa}); pick slots further apart`, observed: 1 };
    if (sa !== tslots[0] || sb !== tslots[1]) ev.caveat(`${band}: asked tslots ${tslots[0]} and ${tslots[1]}, served ${sa} and ${sb} (the nearest observations upstream).`);
    return { ok: true, a: { tslot: sa, value: va, fact_cid: fa!.fact_cid }, b: { tslot: sb, value: vb, fact_cid: fb!.fact_cid } };
  }
  const pts = (await ev.history(cell, band)).filter((p) => pointValue(p) !== undefined);
  if (pts.length < 2) return { ok: false, reason: `fewer than two stored ${band} values at the cell (found ${pts.length}); give both tslots to fetch them, or backfill`, observed: pts.length };
  const [pa, pb] = pts.slice(-2);
  ev.use(band, [pa, pb], cell);
  return { ok: true, a: { tslot: pa.tslot, value: pointValue(pa)!, fact_cid: pa.fact_cid }, b: { tslot: pb.tslot, value: pointValue(pb)!, fact_cid: pb.fact_cid } };
}
