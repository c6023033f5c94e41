/**
 * COG readers compared on the same files: the in-house reader (src/sources/cog/, over the
 * UpstreamClient) and the `geotiff` package (v3). The files are 2048 × 2048 single-band COGs made
 * here by `gdal_translate -of COG` (512-pixel tiles, a Sentinel-2-like UInt16 field and a
 * Sentinel-1-RTC-like Float32 one) plus one from the test fixture writer, served from memory
 * by a 127.0.0.1 HTTP server that honours Range and counts requests and bytes.
 *
 * geotiff runs twice: as `fromUrl` makes it, and tuned (its blocked source with a byte cache
 * and coalesced ranges, plus its decoded-tile cache). Per file and reader (medians of
 * BENCH_ROUNDS rounds after one unmeasured round):
 * - open: header parse with georeferencing (a fresh reader each round);
 * - point_cold: open + one pixel (header + one block); point_warm: another pixel of the same
 *   block on the opened file;
 * - window_512: a 512 × 512 window across four tiles on an opened file (blocks cold);
 * requests and bytes are those of one such operation. A reader that cannot decode a file says
 * why instead of figures. The readers take turns within each round; ratios (geotiff ÷ in-house)
 * are medians of the per-round ratios. Then the ZSTD decoders on the same
 * tiles (@bokuweb/zstd-wasm, the one the reader uses, and fzstd). Prints JSON.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { decompress as fzstdDecompress } from 'fzstd';
import { decompress as wasmDecompress, init as wasmInit } from '@bokuweb/zstd-wasm';
import { fromUrl, type GeoTIFFImage } from 'geotiff';
import { CogReader, type CogHeader } from '../src/sources/cog/reader.js';
import { ByteSource, parseTiff } from '../src/sources/cog/tiff.js';
import { UpstreamClient } from '../src/sources/http.js';
import { gdalTranslate, writeGeoTiff, type RasterSpec } from '../test/sources/fixtures/raster-tiff.js';

const GEOTIFF_VERSION = (JSON.parse(readFileSync(new URL('../node_modules/geotiff/package.json', import.meta.url), 'utf8')) as { version: string }).version;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SIDE = 2048;
const TILE = 512;
/** The point of the point reads, and a second one in the same tile. */
const POINT: [number, number] = [1100, 900];
const POINT2: [number, number] = [1101, 903];
/** The window: 512 × 512 from (700, 300), over tiles (1, 0), (2, 0), (1, 1), (2, 1). */
const WINDOW = { col0: 700, row0: 300, width: 512, height: 512 };

/** A deterministic hash noise in [-1, 1) per pixel. */
function noise(c: number, r: number): number {
  let h = Math.imul(c + 0x9e3779b9, 0x85ebca6b) ^ Math.imul(r + 0x7f4a7c15, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x27d4eb2f);
  return ((h ^ (h >>> 13)) >>> 0) / 2 ** 31 - 1;
}

const grid = { width: SIDE, height: SIDE, epsg: 32633, origin: [500000, 5000000] as [number, number], pixel: [10, 10] as [number, number] };
/** Surface reflectance × 10000 with sensor-like noise (Sentinel-2 L2A band). */
const u16: RasterSpec = { ...grid, type: 'u16', nodata: 0, values: (c, r) => Math.round(1500 + 800 * Math.sin(c / 97) * Math.cos(r / 131) + 12 * noise(c, r)) };
/** Linear backscatter power (Sentinel-1 RTC gamma0). */
const f32: RasterSpec = { ...grid, type: 'f32', values: (c, r) => Math.fround(0.06 + 0.04 * Math.sin(c / 53) * Math.cos(r / 71) + 0.01 * noise(c, r)) };

interface Case {
  name: string;
  spec: RasterSpec;
  bytes: () => Uint8Array;
}

const cog =
  (spec: RasterSpec, ...co: string[]) =>
  () =>
    gdalTranslate(spec, ['-of', 'COG', '-co', `BLOCKSIZE=${TILE}`, '-co', 'OVERVIEWS=NONE', ...co.flatMap((c) => ['-co', c])]);
const CASES: Case[] = [
  { name: 'gdal u16 DEFLATE predictor 2', spec: u16, bytes: cog(u16, 'COMPRESS=DEFLATE', 'PREDICTOR=STANDARD') },
  { name: 'gdal f32 DEFLATE predictor 3', spec: f32, bytes: cog(f32, 'COMPRESS=DEFLATE', 'PREDICTOR=FLOATING_POINT') },
  { name: 'gdal u16 LZW predictor 2', spec: u16, bytes: cog(u16, 'COMPRESS=LZW', 'PREDICTOR=STANDARD') },
  { name: 'gdal u16 ZSTD predictor 2', spec: u16, bytes: cog(u16, 'COMPRESS=ZSTD', 'PREDICTOR=STANDARD') },
  { name: 'gdal f32 ZSTD predictor 3', spec: f32, bytes: cog(f32, 'COMPRESS=ZSTD', 'PREDICTOR=FLOATING_POINT') },
  { name: 'gdal f32 LERC (lossless)', spec: f32, bytes: cog(f32, 'COMPRESS=LERC', 'MAX_Z_ERROR=0') },
  { name: 'gdal f32 LERC_ZSTD (lossless)', spec: f32, bytes: cog(f32, 'COMPRESS=LERC_ZSTD', 'MAX_Z_ERROR=0') },
  { name: 'fixture writer u16 DEFLATE predictor 2', spec: u16, bytes: () => writeGeoTiff(u16, { block: TILE, compression: 8, predictor: 2 }) },
];

/** In-memory files over HTTP with Range support; counts requests and body bytes. */
interface FileServer {
  origin: string;
  files: Map<string, Uint8Array>;
  counter: { requests: number; bytes: number };
  close(): Promise<void>;
}

async function serve(): Promise<FileServer> {
  const files = new Map<string, Uint8Array>();
  const counter = { requests: 0, bytes: 0 };
  const server: Server = createServer((req, res) => {
    counter.requests++;
    const body = files.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (!m) {
      counter.bytes += body.length;
      res.writeHead(200, { 'content-length': body.length, 'accept-ranges': 'bytes' }).end(body);
      return;
    }
    const start = Number(m[1]);
    const end = Math.min(m[2] ? Number(m[2]) : body.length - 1, body.length - 1);
    if (start >= body.length) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return;
    }
    const part = body.subarray(start, end + 1);
    counter.bytes += part.length;
    res.writeHead(206, { 'content-length': part.length, 'content-range': `bytes ${start}-${end}/${body.length}`, 'accept-ranges': 'bytes' }).end(part);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    files,
    counter,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** One reader under test: open a file, read a pixel, read a window (first band). */
interface Subject {
  open(url: string): Promise<unknown>;
  pixel(file: unknown, col: number, row: number): Promise<number>;
  window(file: unknown): Promise<ArrayLike<number>>;
}

function inHouse(client: UpstreamClient): Subject {
  return {
    async open(url) {
      const reader = new CogReader(client);
      const h = await reader.header(url);
      if (!h) throw new Error(`${url}: 404`);
      h.geo();
      return { reader, h };
    },
    async pixel(f, col, row) {
      const { reader, h } = f as { reader: CogReader; h: CogHeader };
      const r = await reader.pixel(h, col, row, 32633);
      if (r.kind === 'value') return r.value;
      if (r.kind === 'nodata') return r.raw;
      throw new Error(`pixel ${col},${row}: ${r.kind}`);
    },
    async window(f) {
      const { reader, h } = f as { reader: CogReader; h: CogHeader };
      return (await reader.window(h, WINDOW, 32633)).values;
    },
  };
}

/**
 * geotiff as `fromUrl` makes it; `tuned` adds its BlockedSource (64 KiB blocks, 100 kept,
 * adjacent blocks fetched in one range) and its decoded-tile cache.
 */
const geotiff = (tuned: boolean): Subject => ({
  async open(url) {
    // The blocked-source options are passed through fromUrl although its type leaves them out.
    const tiff = await fromUrl(url, (tuned ? { blockSize: 65_536, cacheSize: 100 } : {}) as Parameters<typeof fromUrl>[1]);
    if (tuned) tiff.cache = true;
    const image = await tiff.getImage(0);
    image.getGeoKeys();
    image.getOrigin();
    image.getResolution();
    image.getGDALNoData();
    return image;
  },
  async pixel(f, col, row) {
    const r = await (f as GeoTIFFImage).readRasters({ window: [col, row, col + 1, row + 1], samples: [0], interleave: true });
    return (r as unknown as ArrayLike<number>)[0];
  },
  async window(f) {
    const { col0, row0, width, height } = WINDOW;
    return (await (f as GeoTIFFImage).readRasters({ window: [col0, row0, col0 + width, row0 + height], samples: [0], interleave: true })) as unknown as ArrayLike<number>;
  },
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => Number(x.toFixed(3));

interface Figures {
  open_ms: number;
  open: { requests: number; bytes: number };
  point_cold_ms: number;
  point_cold: { requests: number; bytes: number };
  point_warm_ms: number;
  point_warm: { requests: number; bytes: number };
  window_512_ms: number;
  window_512: { requests: number; bytes: number };
  window_checksum: number;
}

type Op = 'open' | 'cold' | 'warm' | 'window';
const OPS: readonly Op[] = ['open', 'cold', 'warm', 'window'];
type Count = { requests: number; bytes: number };

/** One reader's run on one file: times per round, counts of one operation, or why it failed. */
interface Run {
  t: Record<Op, number[]>;
  counts: Record<Op, Count>;
  checksum: number;
  refused?: string;
}

/** One round of the four operations; throws when the reader cannot read the file. */
async function round(s: Subject, srv: FileServer, url: string, spec: RasterSpec, run: Run): Promise<void> {
  const span = async <T>(op: Op, fn: () => Promise<T>) => {
    const before = { ...srv.counter };
    const t0 = performance.now();
    const v = await fn();
    run.t[op].push(performance.now() - t0);
    run.counts[op] = { requests: srv.counter.requests - before.requests, bytes: srv.counter.bytes - before.bytes };
    return v;
  };
  await span('open', () => s.open(url));
  const f = await span('cold', async () => {
    const opened = await s.open(url);
    const v = await s.pixel(opened, ...POINT);
    if (v !== Math.fround(spec.values(...POINT))) throw new Error(`pixel ${POINT}: read ${v}, wrote ${spec.values(...POINT)}`);
    return opened;
  });
  const v2 = await span('warm', () => s.pixel(f, ...POINT2));
  if (v2 !== Math.fround(spec.values(...POINT2))) throw new Error(`pixel ${POINT2}: read ${v2}`);
  const fresh = await s.open(url);
  const w = await span('window', () => s.window(fresh));
  run.checksum = 0;
  for (let k = 0; k < w.length; k += 97) run.checksum += w[k];
}

/**
 * All readers on one file, taking turns within each round (so a change in the machine's load
 * hits them alike); the first round is not counted.
 */
async function measure(subjects: Record<string, Subject>, srv: FileServer, url: string, spec: RasterSpec): Promise<Record<string, Run>> {
  const runs: Record<string, Run> = {};
  for (const name of Object.keys(subjects)) {
    runs[name] = {
      t: { open: [], cold: [], warm: [], window: [] },
      counts: { open: { requests: 0, bytes: 0 }, cold: { requests: 0, bytes: 0 }, warm: { requests: 0, bytes: 0 }, window: { requests: 0, bytes: 0 } },
      checksum: 0,
    };
  }
  for (let i = -1; i < ROUNDS; i++) {
    for (const [name, s] of Object.entries(subjects)) {
      const run = runs[name];
      if (run.refused !== undefined) continue;
      try {
        await round(s, srv, url, spec, run);
      } catch (e) {
        run.refused = (e as Error).message;
      }
      if (i < 0) for (const op of OPS) run.t[op].length = 0;
    }
  }
  return runs;
}

function figures(run: Run): Figures | { refused: string } {
  if (run.refused !== undefined) return { refused: run.refused };
  const m = (op: Op) => ms(median(run.t[op]));
  return {
    open_ms: m('open'),
    open: run.counts.open,
    point_cold_ms: m('cold'),
    point_cold: run.counts.cold,
    point_warm_ms: m('warm'),
    point_warm: run.counts.warm,
    window_512_ms: m('window'),
    window_512: run.counts.window,
    window_checksum: Number(run.checksum.toPrecision(12)),
  };
}

/**
 * geotiff ÷ in-house (> 1: in-house ahead): times as the median of the per-round ratios (both
 * readers ran in the same round), bytes of one operation.
 */
function ratios(a: Run, b: Run): Record<string, number> | null {
  if (a.refused !== undefined || b.refused !== undefined) return null;
  const r = (x: number) => Number(x.toFixed(2));
  const per = (op: Op) => r(median(b.t[op].map((x, i) => x / a.t[op][i])));
  return {
    open_ms: per('open'),
    point_cold_ms: per('cold'),
    point_warm_ms: per('warm'),
    window_512_ms: per('window'),
    point_cold_bytes: r(b.counts.cold.bytes / a.counts.cold.bytes),
    window_512_bytes: r(b.counts.window.bytes / a.counts.window.bytes),
  };
}

/** The compressed tiles of a file (for the decoder comparison). */
async function tilesOf(file: Uint8Array): Promise<Uint8Array[]> {
  const fetch = async (s: number, e: number) => file.subarray(s, e + 1);
  const h = await parseTiff(new ByteSource(file), fetch);
  const out: Uint8Array[] = [];
  for (let i = 0; i < h.offsets.count; i++) {
    const off = await h.offsets.get(i, h.source, fetch);
    out.push(file.subarray(off, off + (await h.byteCounts.get(i, h.source, fetch))));
  }
  return out;
}

/** ms per tile and MB/s of decompressed output for one ZSTD decoder. */
function decodeRate(tiles: Uint8Array[], decode: (b: Uint8Array) => Uint8Array): { ms_per_tile: number; mb_per_s: number } {
  for (const b of tiles.slice(0, 2)) decode(b);
  const runs: number[] = [];
  let bytes = 0;
  for (let r = 0; r < 3; r++) {
    bytes = 0;
    const t0 = performance.now();
    for (const b of tiles) bytes += decode(b).length;
    runs.push(performance.now() - t0);
  }
  const m = median(runs);
  return { ms_per_tile: ms(m / tiles.length), mb_per_s: Number((bytes / 1e6 / (m / 1000)).toFixed(1)) };
}

async function main(): Promise<void> {
  if (spawnSync('gdal_translate', ['--version'], { stdio: 'ignore' }).status !== 0) {
    console.error('cog-readers: gdal_translate is not on PATH (Debian package gdal-bin); the files are made with it');
    process.exit(1);
  }
  const srv = await serve();
  const client = new UpstreamClient({ userAgent: 'svc-bench', timeoutMs: 30_000, allowedBaseUrls: [srv.origin], retries: 0 });
  const subjects: Record<string, Subject> = { in_house: inHouse(client), geotiff: geotiff(false), geotiff_tuned: geotiff(true) };
  const files: Record<string, unknown> = {};
  const built = new Map<string, Uint8Array>();
  try {
    for (const c of CASES) {
      const bytes = c.bytes();
      built.set(c.name, bytes);
      const path = `/${c.name.replace(/[^a-z0-9]+/gi, '-')}.tif`;
      srv.files.set(path, bytes);
      const runs = await measure(subjects, srv, `${srv.origin}${path}`, c.spec);
      const per = Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, figures(run)]));
      const read = Object.values(runs).filter((run) => run.refused === undefined);
      const agree = read.length < 2 ? null : read.every((run) => run.checksum === read[0].checksum);
      const a = runs.in_house;
      files[c.name] = { file_bytes: bytes.length, ...per, geotiff_over_in_house: ratios(a, runs.geotiff), geotiff_tuned_over_in_house: ratios(a, runs.geotiff_tuned), same_window_values: agree };
    }
  } finally {
    await srv.close();
  }

  await wasmInit();
  const decoders: Record<string, unknown> = {};
  for (const name of ['gdal u16 ZSTD predictor 2', 'gdal f32 ZSTD predictor 3']) {
    const tiles = await tilesOf(built.get(name)!);
    decoders[name] = {
      tiles: tiles.length,
      '@bokuweb/zstd-wasm': decodeRate(tiles, (b) => wasmDecompress(b, { defaultHeapSize: TILE * TILE * 4 })),
      fzstd: decodeRate(tiles, (b) => fzstdDecompress(b)),
    };
  }
  console.log(
    JSON.stringify(
      {
        bench: 'cog-readers',
        rounds: ROUNDS,
        raster: `${SIDE}x${SIDE}, ${TILE}-pixel tiles, no overviews`,
        point: POINT,
        window: WINDOW,
        geotiff: {
          version: GEOTIFF_VERSION,
          geotiff: 'fromUrl defaults (no block cache: every read is its own range requests)',
          geotiff_tuned: 'fromUrl with blockSize 65536 and cacheSize 100 (BlockedSource: cached 64 KiB blocks, adjacent ones coalesced) and the decoded-tile cache on',
        },
        files,
        zstd_decoders: decoders,
      },
      null,
      2,
    ),
  );
}

await main();
