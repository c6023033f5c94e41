/**
 * Reading a token's text (docs/memory.md, "Tokens and bundles"): which kind it names and its parts,
 * checked before anything is looked up. Kept apart from resolving tokens (tokens.ts) so that
 * modules resolving one kind (entities) can parse without depending on every resolver.
 */
import { isCell } from './cell64.js';
import { invalidArgument } from './errors.js';
import { directCell } from './cell-token.js';

/** Readable tokens need at least this many decimals per coordinate (about 1 m; docs/memory.md, "Tokens and bundles"). */
export const MIN_TOKEN_DECIMALS = 5;
const ENTITY_SUBJECT = /^[a-z][a-z0-9_-]*:entity:[a-z2-7]{26}$/;
/** entity_cid (docs/protocol-notes.md §4): the first 16 bytes of a BLAKE3 digest, base32 lowercase, 26 characters. */
const ENTITY_CID = /^[a-z2-7]{26}$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const COORD_RE = /^(-?\d{1,3})(?:\.(\d+))?$/;
/** Token kinds other primitives resolve, with where (so a caller is pointed, not refused blankly). */
const ELSEWHERE: Record<string, string> = {
  raster: 'POST /v1/raster/resolve',
  cube: 'POST /v1/cube/resolve',
  rasterset: 'POST /v1/raster_bundle/resolve',
  state: 'GET /v1/state/<cid>',
  trace: 'POST /v1/trace_resolve',
  attestation: '/v1/device_platforms',
  tessera: 'POST /v1/tessera_field/resolve',
  archetypes: 'POST /v1/region_archetype_map/resolve',
};

export type ParsedToken =
  | { kind: 'fact'; form: 'cell'; subject: string; fact_cid: string; legacy: boolean }
  | { kind: 'fact'; form: 'readable'; lat: number; lng: number; date: string; band: string; fact_cid: string; legacy: boolean }
  | { kind: 'bundle'; rest: string; legacy: boolean }
  | { kind: 'entity'; entity_cid: string; legacy: boolean }
  | { kind: 'cell'; cell: string; legacy: false };

export function validDate(s: string): boolean {
  if (!DATE_RE.test(s)) return false;
  const t = Date.parse(`${s}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === s;
}

function coord(text: string, what: 'lat' | 'lng', max: number): number {
  const m = COORD_RE.exec(text);
  if (!m) throw invalidArgument('token', `${what} ${JSON.stringify(text)} is not a decimal number`);
  if ((m[2]?.length ?? 0) < MIN_TOKEN_DECIMALS) {
    throw invalidArgument('token', `${what} ${text} has fewer than ${MIN_TOKEN_DECIMALS} decimals; readable tokens carry cell-precise coordinates (mint one with POST /v1/memory_token)`, 400);
  }
  const v = Number(text);
  if (Math.abs(v) > max) throw invalidArgument('token', `${what} ${text} is outside [-${max}, ${max}]`);
  return v;
}

/** Parse any token this primitive understands (current `<prefix>:` and legacy `memt:`/`memb:`/`meme:` forms). */
export function parseToken(prefix: string, token: unknown): ParsedToken {
  if (typeof token !== 'string' || token.length === 0 || token.length > 400) throw invalidArgument('token', 'expected a token string such as svc:fact:<cell64>:<fact_cid>');
  let kind: string;
  let rest: string;
  let legacy = false;
  const legacyKinds: Record<string, string> = { memt: 'fact', memb: 'bundle', meme: 'entity' };
  const head = token.slice(0, token.indexOf(':'));
  if (legacyKinds[head]) {
    kind = legacyKinds[head];
    rest = token.slice(head.length + 1);
    legacy = true;
  } else if (head === prefix) {
    const second = token.indexOf(':', prefix.length + 1);
    if (second < 0) throw invalidArgument('token', `expected ${prefix}:<kind>:…`);
    kind = token.slice(prefix.length + 1, second);
    rest = token.slice(second + 1);
  } else {
    throw invalidArgument('token', `unknown token prefix; expected ${prefix}:fact:, ${prefix}:bundle:, ${prefix}:entity:, ${prefix}:cell: or a legacy memt:/memb:/meme: token`);
  }
  if (kind === 'bundle') return { kind, rest, legacy };
  if (kind === 'entity') {
    // Both spellings name the same id, so both are checked the same way before anything else.
    if (!ENTITY_CID.test(rest)) {
      throw invalidArgument('token', `expected ${legacy ? 'meme:' : `${prefix}:entity:`}<entity_cid> with a 26-character lowercase base32 entity_cid`);
    }
    return { kind, entity_cid: rest, legacy };
  }
  // Here the token starts with `<prefix>:cell:`, so directCell returns its cell or throws invalid_cell.
  if (kind === 'cell') return { kind, cell: directCell(prefix, token, 'token')!, legacy: false };
  if (kind !== 'fact') {
    const where = ELSEWHERE[kind];
    throw invalidArgument('token', where ? `${prefix}:${kind}: tokens resolve at ${where}` : `unknown token kind ${JSON.stringify(kind)}`);
  }
  const cut = rest.lastIndexOf(':');
  const subject = cut < 0 ? '' : rest.slice(0, cut);
  const fact_cid = rest.slice(cut + 1);
  if (cut < 0 || fact_cid.length !== 52) throw invalidArgument('token', 'expected …:<subject>:<fact_cid> with a 52-character fact_cid');
  if (isCell(subject as unknown) || ENTITY_SUBJECT.test(subject)) return { kind: 'fact', form: 'cell', subject, fact_cid, legacy };
  const parts = subject.split('@');
  if (parts.length !== 3) throw invalidArgument('token', 'subject is neither a cell64 nor <lat>,<lng>@<YYYY-MM-DD>@<band>');
  const [coords, date, band] = parts;
  const ll = coords.split(',');
  if (ll.length !== 2) throw invalidArgument('token', `coordinates ${JSON.stringify(coords)} are not <lat>,<lng>`);
  const lat = coord(ll[0], 'lat', 90);
  const lng = coord(ll[1], 'lng', 180);
  if (!validDate(date)) throw invalidArgument('token', `date ${JSON.stringify(date)} is not a calendar date YYYY-MM-DD`);
  if (band.length === 0) throw invalidArgument('token', 'band is empty');
  return { kind: 'fact', form: 'readable', lat, lng, date, band, fact_cid, legacy };
}

/** The parts of a raster token (docs/rasters.md, "Tokens"). */
export interface RasterToken {
  aoi_cid: string;
  band: string;
  tslot: number;
  derivation_cid: string;
}

const RASTER_BAND = /^[a-z0-9][A-Za-z0-9_.-]{0,99}$/;
const TSLOT_TEXT = /^(0|[1-9]\d{0,15})$/;

/** `<prefix>:raster:<aoi_cid>:<band>:<tslot>:<derivation_cid>`: the area, the band, its tslot and the signed derivation record's fact_cid. */
export function rasterToken(prefix: string, t: RasterToken): string {
  return `${prefix}:raster:${t.aoi_cid}:${t.band}:${t.tslot}:${t.derivation_cid}`;
}

/** Parse a raster token (checked before anything is looked up; every refusal is invalid_argument on `token`). */
export function parseRasterToken(prefix: string, token: unknown): RasterToken {
  const head = `${prefix}:raster:`;
  const shape = `expected ${head}<aoi_cid>:<band>:<tslot>:<derivation_cid>`;
  if (typeof token !== 'string' || token.length > 400 || !token.startsWith(head)) throw invalidArgument('token', shape);
  const parts = token.slice(head.length).split(':');
  if (parts.length !== 4) throw invalidArgument('token', `${shape} (4 parts after ${head}, got ${parts.length})`);
  const [aoi, band, tslot, derivation] = parts;
  if (!ENTITY_CID.test(aoi)) throw invalidArgument('token', `aoi_cid ${JSON.stringify(aoi.slice(0, 40))} is not 26 lowercase base32 characters`);
  if (!RASTER_BAND.test(band)) throw invalidArgument('token', `band ${JSON.stringify(band.slice(0, 40))} is not a band key`);
  if (!TSLOT_TEXT.test(tslot) || !Number.isSafeInteger(Number(tslot))) throw invalidArgument('token', `tslot ${JSON.stringify(tslot.slice(0, 40))} is not a non-negative integer`);
  if (!/^[a-z2-7]{52}$/.test(derivation)) throw invalidArgument('token', 'derivation_cid is not 52 lowercase base32 characters (the fact_cid of the derivation record)');
  return { aoi_cid: aoi, band, tslot: Number(tslot), derivation_cid: derivation };
}

/** The parts of a cube token (docs/rasters.md, "band_cube"). */
export interface CubeToken {
  aoi_cid: string;
  band: string;
  /** The tslot range asked for, both ends included. */
  lo: number;
  hi: number;
  derivation_cid: string;
}

/** `<prefix>:cube:<aoi_cid>:<band>:<lo>..<hi>:<derivation_cid>`: the area, the band, the tslot range and the signed cube record's fact_cid. */
export function cubeToken(prefix: string, t: CubeToken): string {
  return `${prefix}:cube:${t.aoi_cid}:${t.band}:${t.lo}..${t.hi}:${t.derivation_cid}`;
}

/** Parse a cube token (every refusal is invalid_argument on `token`). */
export function parseCubeToken(prefix: string, token: unknown): CubeToken {
  const head = `${prefix}:cube:`;
  const shape = `expected ${head}<aoi_cid>:<band>:<lo>..<hi>:<derivation_cid>`;
  if (typeof token !== 'string' || token.length > 400 || !token.startsWith(head)) throw invalidArgument('token', shape);
  const parts = token.slice(head.length).split(':');
  if (parts.length !== 4) throw invalidArgument('token', `${shape} (4 parts after ${head}, got ${parts.length})`);
  const [aoi, band, range, derivation] = parts;
  if (!ENTITY_CID.test(aoi)) throw invalidArgument('token', `aoi_cid ${JSON.stringify(aoi.slice(0, 40))} is not 26 lowercase base32 characters`);
  if (!RASTER_BAND.test(band)) throw invalidArgument('token', `band ${JSON.stringify(band.slice(0, 40))} is not a band key`);
  const ends = range.split('..');
  if (ends.length !== 2 || !ends.every((e) => TSLOT_TEXT.test(e) && Number.isSafeInteger(Number(e))) || Number(ends[0]) > Number(ends[1])) {
    throw invalidArgument('token', `tslot range ${JSON.stringify(range.slice(0, 40))} is not <lo>..<hi> with lo <= hi`);
  }
  if (!/^[a-z2-7]{52}$/.test(derivation)) throw invalidArgument('token', 'derivation_cid is not 52 lowercase base32 characters (the fact_cid of the cube record)');
  return { aoi_cid: aoi, band, lo: Number(ends[0]), hi: Number(ends[1]), derivation_cid: derivation };
}

/** The parts of a raster set token (docs/rasters.md, "raster_bundle"). */
export interface RastersetToken {
  /** The 26-character anchor of the members' sorted derivation_cids: the same set has the same set_cid. */
  set_cid: string;
  derivation_cid: string;
}

/** `<prefix>:rasterset:<set_cid>:<derivation_cid>`. */
export function rastersetToken(prefix: string, t: RastersetToken): string {
  return `${prefix}:rasterset:${t.set_cid}:${t.derivation_cid}`;
}

/** Parse a raster set token (every refusal is invalid_argument on `token`). */
export function parseRastersetToken(prefix: string, token: unknown): RastersetToken {
  const head = `${prefix}:rasterset:`;
  const shape = `expected ${head}<set_cid>:<derivation_cid>`;
  if (typeof token !== 'string' || token.length > 400 || !token.startsWith(head)) throw invalidArgument('token', shape);
  const parts = token.slice(head.length).split(':');
  if (parts.length !== 2) throw invalidArgument('token', `${shape} (2 parts after ${head}, got ${parts.length})`);
  const [set, derivation] = parts;
  if (!ENTITY_CID.test(set)) throw invalidArgument('token', `set_cid ${JSON.stringify(set.slice(0, 40))} is not 26 lowercase base32 characters`);
  if (!/^[a-z2-7]{52}$/.test(derivation)) throw invalidArgument('token', 'derivation_cid is not 52 lowercase base32 characters (the fact_cid of the set record)');
  return { set_cid: set, derivation_cid: derivation };
}
