/**
 * What the three solvers share on the service side: resolve the caller's cell, read the signed
 * facts of the initial condition through recall, and sign one receipt over exactly those facts.
 * A simulated number is only as good as the state it starts from, so that state travels with it.
 */
import type { Receipt } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import type { ServedFact } from '../facts/facts-view.js';
import { resolveCell } from '../reads/recall.js';
import type { SignedResponse } from '../reads/recall.js';
import { Evidence, numericValue } from '../shortcuts/evidence.js';

export interface SolverOpts {
  deadline?: number;
}

/** The fields every solver answer carries. */
export interface SolverEnvelope {
  cell: string;
  place?: SignedResponse['place'];
  /** Every fact_cid the answer rests on; the receipt cites exactly these. */
  initial_fact_cids: string[];
  caveats: string[];
  materialize_notes: MaterializeNote[];
  receipt: Receipt;
}

/** A solver run: the resolved cell and the facts read so far. */
export class SolverRun {
  readonly ev: Evidence;

  private constructor(
    readonly ctx: ServiceContext,
    readonly name: string,
    readonly cell: string,
    readonly place: SignedResponse['place'] | undefined,
    opts: SolverOpts,
  ) {
    this.ev = new Evidence(ctx, name, opts);
  }

  /** Resolve `cellText` (a cell64, a cell token or a place name) named by `field`. */
  static async start(ctx: ServiceContext, name: string, cellText: unknown, field: string, opts: SolverOpts): Promise<SolverRun> {
    const { cell, place } = await resolveCell(ctx, cellText, field);
    return new SolverRun(ctx, name, cell, place, opts);
  }

  /** Sign one receipt over every cell and fact read, and build the common fields. */
  envelope(): SolverEnvelope {
    const cids = this.ev.facts.map((f) => f.fact_cid);
    const cells = this.ev.cells.includes(this.cell) ? [...this.ev.cells] : [this.cell, ...this.ev.cells];
    const receipt = issueReceipt(this.ctx, this.name, cells, cids, {
      merkle_proof: this.ev.facts[0]?.receipt?.merkle_proof,
      cost: { credits: 0, was_cached: this.ev.notes.length === 0 },
    });
    if (this.place) this.ev.caveat('The place name is not signed: the receipt covers the cells read; check place.');
    const out: SolverEnvelope = { cell: this.cell, initial_fact_cids: cids, caveats: this.ev.caveats, materialize_notes: this.ev.notes, receipt };
    if (this.place) out.place = this.place;
    return out;
  }
}

export const TOPOBATHY_BAND = 'gebco.elevation_m';
export const DEM_BAND = 'copdem30m.elevation_mean';

export interface ElevationRead {
  cell: string;
  elevation_m: number | null;
  /** The band the value came from (null when neither had one). */
  band: string | null;
  fact_cid: string | null;
}

/**
 * Elevation at cells: topobathymetry first, since it goes below sea level; the land DEM only
 * where topobathymetry has no value. Each cell is read once per run.
 */
export class ElevationReader {
  private cache = new Map<string, Promise<ElevationRead>>();

  constructor(private readonly run: SolverRun) {}

  at(cell: string): Promise<ElevationRead> {
    let p = this.cache.get(cell);
    if (!p) {
      p = this.read(cell);
      this.cache.set(cell, p);
    }
    return p;
  }

  many(cells: readonly string[]): Promise<ElevationRead[]> {
    return Promise.all(cells.map((c) => this.at(c)));
  }

  private async read(cell: string): Promise<ElevationRead> {
    const topo = await this.run.ev.read(cell, TOPOBATHY_BAND);
    const v = numericValue(topo);
    if (v !== undefined) return { cell, elevation_m: v, band: TOPOBATHY_BAND, fact_cid: topo!.fact_cid };
    const dem: ServedFact | undefined = await this.run.ev.read(cell, DEM_BAND);
    const d = numericValue(dem);
    if (d !== undefined) return { cell, elevation_m: d, band: DEM_BAND, fact_cid: dem!.fact_cid };
    return { cell, elevation_m: null, band: null, fact_cid: null };
  }
}
