/**
 * Open-Meteo elevation API (Copernicus DEM GLO-90) → `copdem30m.elevation_mean` (static, m_msl):
 * `GET /v1/elevation?latitude=<lat>&longitude=<lng>` at the cell centre, answer `{"elevation":[v]}`.
 *
 * Batching: requests arriving within a short window (5 ms) are sent as one call with
 * comma-separated latitude/longitude lists (the API takes up to 100 points) and the answers are
 * fanned back by position.
 *
 * Sea level, decided: a value of exactly 0 is a signed absence `outside_coverage` ("open water:
 * the DEM has no land value"), not a measurement. Why: the Copernicus DEM has no land value
 * over the sea: its editing flattens ocean pixels to exactly 0 m (water-body mask), and
 * Open-Meteo passes that 0 through for any coordinate offshore. A land surface at exactly
 * 0.0 m after interpolation from 90 m pixels is vanishingly rare (it would need every
 * neighbouring pixel at exactly 0, which is what flattened water looks like), whereas signing
 * "0 m" for every sea cell would publish a land elevation the source does not have. The cost
 * of the rule (a rare land cell at exactly 0 m reads as "no data") is the honest failure
 * direction: an absence claims less than a value. Negative values (Dead Sea, polders) and
 * small positive ones are kept as real values. null (or NaN) from the API is an absence too.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps } from './contract.js';
import { arrayAt, coord, failureOutcome, FormatMismatch, measurementAt, objectAt } from './json-helpers.js';
import { withOpenMeteoKey } from './open-meteo-key.js';

const BAND = 'copdem30m.elevation_mean';
const SOURCE = 'open_meteo';
const VERSION = 'copernicus-dem-glo90';
/** Points per call the API accepts. */
export const ELEVATION_MAX_POINTS = 100;
/** How long a first request waits for companions before the batch goes out. */
export const ELEVATION_WINDOW_MS = 5;

type Answer = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Waiter {
  lat: string;
  lng: string;
  signal: AbortSignal;
  deadline: number;
  resolve(a: Answer): void;
}

/** Collects points for `windowMs` (or until `max`) and asks for them in one call. */
class PointBatcher {
  private queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Batches sent (tests and benchmarks read it). */
  batches = 0;

  constructor(
    private readonly send: (points: Array<{ lat: string; lng: string }>, deadline: number, signal: AbortSignal) => Promise<unknown[]>,
    private readonly windowMs: number,
    private readonly max: number,
  ) {}

  ask(lat: string, lng: string, signal: AbortSignal, deadline: number): Promise<Answer> {
    return new Promise((resolve) => {
      this.queue.push({ lat, lng, signal, deadline, resolve });
      if (new Set(this.queue.map((w) => `${w.lat},${w.lng}`)).size >= this.max) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // Take waiters until `max` distinct points; the rest go out in the next batch.
    const distinct = new Map<string, { lat: string; lng: string }>();
    let take = 0;
    for (const w of this.queue) {
      const k = `${w.lat},${w.lng}`;
      if (!distinct.has(k)) {
        if (distinct.size === this.max) break;
        distinct.set(k, { lat: w.lat, lng: w.lng });
      }
      take++;
    }
    const batch = this.queue.splice(0, take);
    if (this.queue.length > 0) this.timer = setTimeout(() => this.flush(), 0);
    if (batch.length === 0) return;
    const points = [...distinct.values()];
    const index = new Map(points.map((p, i) => [`${p.lat},${p.lng}`, i]));
    // The shared call lives as long as the most patient waiter and stops when all gave up.
    const ac = new AbortController();
    let live = batch.length;
    for (const w of batch) {
      const leave = () => {
        if (--live === 0) ac.abort();
      };
      if (w.signal.aborted) leave();
      else w.signal.addEventListener('abort', leave, { once: true });
    }
    this.batches++;
    this.send(points, Math.max(...batch.map((w) => w.deadline)), ac.signal).then(
      (values) => {
        for (const w of batch) {
          if (values.length !== points.length) {
            w.resolve({ ok: false, error: new FormatMismatch(`elevation has ${values.length} entries for ${points.length} points`) });
          } else {
            w.resolve({ ok: true, value: values[index.get(`${w.lat},${w.lng}`)!] });
          }
        }
      },
      (error) => {
        for (const w of batch) w.resolve({ ok: false, error });
      },
    );
  }
}

/** The elevation connector with its batcher exposed (tests count batches). */
export interface ElevationConnector extends Materializer {
  readonly batcher: { readonly batches: number };
}

/** Factory of the Open-Meteo elevation connector. */
export function openMeteoElevation(deps: ConnectorDeps): ElevationConnector {
  const base = deps.baseUrl(SOURCE);
  const batcher = new PointBatcher(
    async (points, deadline, signal) => {
      const url = `${base}/v1/elevation?latitude=${points.map((p) => p.lat).join(',')}&longitude=${points.map((p) => p.lng).join(',')}`;
      const { data } = await deps.client.json(withOpenMeteoKey(url, deps.config), { deadline, signal });
      return arrayAt(objectAt(data, 'body').elevation, 'elevation');
    },
    ELEVATION_WINDOW_MS,
    ELEVATION_MAX_POINTS,
  );

  return {
    key: SOURCE,
    bands: [BAND],
    history: false,
    batcher,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const lat = coord(req.center.lat);
      const lng = coord(req.center.lng);
      // The ref is the single-point question, not the batch URL: it is what a verifier asks,
      // and a batch URL would publish other callers' coordinates inside this signed fact.
      const provenance = { source: SOURCE, ref: `/v1/elevation?latitude=${lat}&longitude=${lng}`, version: VERSION };
      const fn = req.band.function;
      const answer = await batcher.ask(lat, lng, req.signal, req.deadline);
      if (!answer.ok) return failureOutcome(SOURCE, answer.error);
      let v: number | null;
      try {
        v = measurementAt(answer.value, 'elevation[i]');
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
      if (v === null) return { status: 'absence', reason: 'outside_coverage', provenance, fn, tslot: 0, detail: 'the DEM has no value at this point' };
      if (v === 0) return { status: 'absence', reason: 'outside_coverage', provenance, fn, tslot: 0, detail: 'open water: the DEM has no land value' };
      return { status: 'value', value: v, unit: req.band.unit, provenance, fn, tslot: 0 };
    },
  };
}
