/**
 * The shape shared by the tile-per-area raster connectors (WorldCover, JRC GSW, Hansen GFC,
 * JRC GFC2020, CHIRPS): find the file that covers the cell centre, read one pixel, and turn
 * missing tiles, nodata and out-of-extent points into the band's typed absence. Failures are
 * mapped by failureOutcome; nothing here ever invents a value.
 */
import type { AbsenceReason, Materializer, MaterializeOutcome, MaterializeRequest, Provenance, ConnectorDeps } from '../contract.js';
import { failureOutcome } from './outcome.js';
import { CogReader } from './reader.js';

/** Where the band's value for a request lives, or why no file can hold it. */
export type Located = { url: string; ref: string; captured_at?: string; tslot?: number } | { absence: AbsenceReason; detail: string };

/** What distinguishes one tile-per-area connector from another. */
export interface PointSampleSpec {
  /** Registry source key. */
  key: string;
  bands: readonly string[];
  history: boolean;
  /** Product version recorded in provenance (source_versions). */
  version: string;
  locate(req: MaterializeRequest, base: string): Located;
  /** Values that mean no data besides the file's GDAL_NODATA and NaN. */
  nodata?: (band: string) => readonly number[];
  /** What a missing file means: a confirmed absence (tile grid with holes) or not yet published. */
  missing: { absence: AbsenceReason; detail: string } | { skip: string };
  /** Absence reason for a nodata pixel. */
  nodataReason: AbsenceReason;
  /** Turns the raw sample into the fact value (default: the sample itself). */
  value?: (raw: number, req: MaterializeRequest) => number;
}

/** A Materializer over `spec`, with its own COG reader (header and block caches). */
export function pointSampleConnector(deps: ConnectorDeps, spec: PointSampleSpec, reader = new CogReader(deps.client)): Materializer & { reader: CogReader } {
  const base = deps.baseUrl(spec.key);
  return {
    key: spec.key,
    bands: spec.bands,
    history: spec.history,
    reader,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const fn = req.band.function;
      const where = spec.locate(req, base);
      if ('absence' in where) return { status: 'absence', reason: where.absence, detail: where.detail, provenance: { source: spec.key, version: spec.version }, fn };
      const provenance: Provenance = { source: spec.key, ref: where.ref, version: spec.version, captured_at: where.captured_at };
      const extra = where.tslot === undefined ? {} : { tslot: where.tslot };
      try {
        const r = await reader.readPoint(where.url, req.center.lat, req.center.lng, {
          deadline: req.deadline,
          signal: req.signal,
          missingOk: true,
          nodata: spec.nodata?.(req.band.key),
        });
        if (r.kind === 'missing') {
          if ('skip' in spec.missing) return { status: 'error', reason: `source_fetch_failed: ${spec.missing.skip} (${where.ref}: HTTP 404)` };
          return { status: 'absence', reason: spec.missing.absence, detail: `${spec.missing.detail} (${where.ref})`, provenance, fn, ...extra };
        }
        if (r.kind === 'outside') return { status: 'absence', reason: 'outside_coverage', detail: `the cell centre lies outside ${where.ref}`, provenance, fn, ...extra };
        if (r.kind === 'nodata') return { status: 'absence', reason: spec.nodataReason, detail: `pixel ${r.col},${r.row} is nodata (${r.raw})`, provenance, fn, ...extra };
        const value = spec.value ? spec.value(r.value, req) : r.value;
        const classes = req.band.classes;
        if (req.band.value_kind === 'categorical' && classes && !(String(value) in classes)) {
          return { status: 'error', reason: `source_format_mismatch: ${where.ref} pixel ${r.col},${r.row} holds ${value}, not a class of ${req.band.key}`, format_mismatch: true };
        }
        return { status: 'value', value, provenance, fn, args: { pixel: [r.col, r.row], epsg: r.epsg }, ...extra };
      } catch (e) {
        return failureOutcome(e, where.ref);
      }
    },
  };
}
