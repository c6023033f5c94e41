/**
 * NASA FIRMS active-fire CSV files: a strict parser of the published column layouts (VIIRS
 * 375 m: `bright_ti4`/`bright_ti5`; MODIS 1 km: `brightness`/`bright_t31`; both with latitude,
 * longitude, scan, track, acq_date, acq_time, satellite, confidence, version, frp, daynight and,
 * in newer files, instrument) into compact typed arrays, and a 1° grid index over them that
 * answers the detections within a great-circle radius of a point.
 *
 * Strict on purpose: a missing column, a row with another number of fields, a coordinate out of
 * range or a time that is not HHMM is a `FormatMismatch` naming the line — a truncated download
 * or an HTML error page is never read as "fewer fires".
 */
import { FormatMismatch } from './json-helpers.js';

/** Mean Earth radius (IUGG), km. */
const EARTH_KM = 6371.0088;
/** Kilometres per degree of latitude on that sphere. */
const KM_PER_DEG = (Math.PI * EARTH_KM) / 180;

/** The detections of one or more feeds, column-wise. */
export interface Detections {
  readonly n: number;
  readonly lat: Float64Array;
  readonly lng: Float64Array;
  /** Fire radiative power, MW. */
  readonly frp: Float64Array;
  /** Acquisition time, ms since the epoch (UTC). */
  readonly acquired: Float64Array;
  /** Index of the feed each detection came from. */
  readonly feed: Uint8Array;
  /** Newest acquisition time, ms (NaN when there is none). */
  readonly newest: number;
}

const REQUIRED = ['latitude', 'longitude', 'acq_date', 'acq_time', 'frp'] as const;

/** The sensor family a header belongs to (its brightness columns differ). */
export function sensorOfHeader(columns: readonly string[]): 'viirs' | 'modis' {
  if (columns.includes('bright_ti4')) return 'viirs';
  if (columns.includes('brightness')) return 'modis';
  throw new FormatMismatch('the header has neither bright_ti4 (VIIRS) nor brightness (MODIS): not a FIRMS active-fire CSV');
}

/** UTC ms of a FIRMS `acq_date` (YYYY-MM-DD) and `acq_time` (HHMM, leading zeros optional). */
export function acquisitionMs(date: string, time: string, where: string): number {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!d) throw new FormatMismatch(`${where}: acq_date ${JSON.stringify(date.slice(0, 20))} is not YYYY-MM-DD`);
  if (!/^\d{1,4}$/.test(time)) throw new FormatMismatch(`${where}: acq_time ${JSON.stringify(time.slice(0, 20))} is not HHMM`);
  const hhmm = Number(time);
  const hh = Math.floor(hhmm / 100);
  const mm = hhmm % 100;
  if (hh > 23 || mm > 59) throw new FormatMismatch(`${where}: acq_time ${time} is not a time of day`);
  const ms = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), hh, mm);
  if (new Date(ms).toISOString().slice(0, 10) !== date) throw new FormatMismatch(`${where}: acq_date ${date} is not a calendar day`);
  return ms;
}

function numberField(text: string, name: string, where: string): number {
  const v = text === '' ? NaN : Number(text);
  if (!Number.isFinite(v)) throw new FormatMismatch(`${where}: ${name} ${JSON.stringify(text.slice(0, 20))} is not a number`);
  return v;
}

/**
 * Parses one FIRMS CSV text (header line first). `feed` is recorded on each detection;
 * `maxRows` bounds the memory one file may take.
 */
export function parseFirmsCsv(text: string, feed: number, maxRows: number): Detections {
  const lines = text.split('\n');
  const header = (lines[0] ?? '').replace(/\r$/, '').trim();
  const columns = header.split(',').map((c) => c.trim().toLowerCase());
  for (const c of REQUIRED) if (!columns.includes(c)) throw new FormatMismatch(`the header has no ${c} column: not a FIRMS active-fire CSV (got ${JSON.stringify(header.slice(0, 60))})`);
  sensorOfHeader(columns);
  const at = Object.fromEntries(REQUIRED.map((c) => [c, columns.indexOf(c)])) as Record<(typeof REQUIRED)[number], number>;
  let rows = 0;
  for (let i = 1; i < lines.length; i++) if (lines[i]!.trim() !== '') rows++;
  if (rows > maxRows) throw new FormatMismatch(`${rows} rows exceed the ${maxRows} this reader holds per file`);
  const lat = new Float64Array(rows);
  const lng = new Float64Array(rows);
  const frp = new Float64Array(rows);
  const acquired = new Float64Array(rows);
  let newest = NaN;
  let k = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const where = `line ${i + 1}`;
    const f = line.split(',');
    if (f.length !== columns.length) throw new FormatMismatch(`${where} has ${f.length} fields, the header ${columns.length} (truncated or not a FIRMS CSV)`);
    const y = numberField(f[at.latitude]!.trim(), 'latitude', where);
    const x = numberField(f[at.longitude]!.trim(), 'longitude', where);
    if (y < -90 || y > 90 || x < -180 || x > 180) throw new FormatMismatch(`${where}: ${y},${x} is not a WGS 84 coordinate`);
    const p = numberField(f[at.frp]!.trim(), 'frp', where);
    if (p < 0) throw new FormatMismatch(`${where}: frp ${p} is negative`);
    const t = acquisitionMs(f[at.acq_date]!.trim(), f[at.acq_time]!.trim(), where);
    lat[k] = y;
    lng[k] = x;
    frp[k] = p;
    acquired[k] = t;
    if (!(t <= newest)) newest = t;
    k++;
  }
  return { n: rows, lat, lng, frp, acquired, feed: new Uint8Array(rows).fill(feed), newest };
}

/** The detections of several parsed files as one set (in the files' order). */
export function concatDetections(parts: readonly Detections[]): Detections {
  const n = parts.reduce((s, p) => s + p.n, 0);
  const out = { n, lat: new Float64Array(n), lng: new Float64Array(n), frp: new Float64Array(n), acquired: new Float64Array(n), feed: new Uint8Array(n), newest: NaN };
  let o = 0;
  for (const p of parts) {
    out.lat.set(p.lat, o);
    out.lng.set(p.lng, o);
    out.frp.set(p.frp, o);
    out.acquired.set(p.acquired, o);
    out.feed.set(p.feed, o);
    if (!(p.newest <= out.newest)) out.newest = p.newest;
    o += p.n;
  }
  return out;
}

/** Great-circle distance in km (haversine on the mean sphere). */
export function distanceKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const r = Math.PI / 180;
  const dLat = (lat2 - lat1) * r;
  const dLng = (lng2 - lng1) * r;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** A detection near a point. */
export interface Near {
  index: number;
  km: number;
}

const COLS = 360;
const ROWS = 180;

/** 1° grid cell of a coordinate (row 0 is 90°S..89°S, column 0 is 180°W..179°W). */
function cellOf(lat: number, lng: number): number {
  const row = Math.min(ROWS - 1, Math.floor(lat + 90));
  const col = Math.min(COLS - 1, Math.floor(lng + 180));
  return row * COLS + col;
}

/**
 * A 1° grid over a set of detections (compressed rows: `start[c]..start[c+1]` of `order` are
 * the detections of cell c). Built once per feed refresh; a query scans only the cells the
 * radius can reach.
 */
export class FireGrid {
  private readonly start = new Int32Array(COLS * ROWS + 1);
  private readonly order: Int32Array;

  constructor(readonly d: Detections) {
    const cells = new Int32Array(d.n);
    for (let i = 0; i < d.n; i++) {
      cells[i] = cellOf(d.lat[i]!, d.lng[i]!);
      this.start[cells[i]! + 1]!++;
    }
    for (let c = 0; c < COLS * ROWS; c++) this.start[c + 1]! += this.start[c]!;
    const fill = this.start.slice(0, COLS * ROWS);
    this.order = new Int32Array(d.n);
    for (let i = 0; i < d.n; i++) this.order[fill[cells[i]!]!++] = i;
  }

  /** Detections within `radiusKm` of (lat, lng), nearest first (ties in file order). */
  within(lat: number, lng: number, radiusKm: number): Near[] {
    const out: Near[] = [];
    const dLat = radiusKm / KM_PER_DEG;
    const lat0 = Math.max(-90, lat - dLat);
    const lat1 = Math.min(90, lat + dLat);
    // The widest circle of latitude the radius reaches sets the longitude span.
    const widest = Math.max(Math.abs(lat0), Math.abs(lat1));
    const cos = Math.cos((widest * Math.PI) / 180);
    const dLng = lat0 <= -90 || lat1 >= 90 || cos <= 0 ? 180 : Math.min(180, radiusKm / (KM_PER_DEG * cos));
    const row0 = Math.floor(lat0 + 90);
    const row1 = Math.min(ROWS - 1, Math.floor(lat1 + 90));
    let col0 = Math.floor(lng - dLng + 180);
    let col1 = Math.floor(lng + dLng + 180);
    // A span reaching round the globe visits every column once.
    if (dLng >= 180 || col1 - col0 + 1 >= COLS) [col0, col1] = [0, COLS - 1];
    for (let row = row0; row <= row1; row++) {
      for (let c = col0; c <= col1; c++) {
        const col = ((c % COLS) + COLS) % COLS;
        const cell = row * COLS + col;
        for (let k = this.start[cell]!; k < this.start[cell + 1]!; k++) {
          const i = this.order[k]!;
          const km = distanceKm(lat, lng, this.d.lat[i]!, this.d.lng[i]!);
          if (km <= radiusKm) out.push({ index: i, km });
        }
      }
    }
    return out.sort((a, b) => a.km - b.km || a.index - b.index);
  }
}
