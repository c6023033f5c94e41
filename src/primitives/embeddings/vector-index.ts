/**
 * The index of the public embedding vectors, for find_similar. It follows the transparency log
 * (the source of truth, shared by every responder of a deployment) entry by entry, so it never
 * disagrees with what was acknowledged and needs no hook into the write path: a follower reads new
 * entries shortly after they are appended, and each query first reads whatever is still unread.
 *
 * Per vector band and cell it keeps the newest primary vector (highest tslot, later log entry on
 * a tie: a supersession) in a BandArena; real-valued bands also feed an approximate HNSW graph
 * (ann.ts). Absences are not vectors and scoped facts are private to their scope, so neither is
 * indexed. With a directory, the index is saved there (every few minutes while it changes, and
 * at close) and loaded at start, then only the log entries after the saved position are read
 * (docs/embeddings.md, "The index on disk").
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { b32encode } from '../../protocol/base32.js';
import { encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { blake3 } from '../../protocol/hash.js';
import type { BandEntry } from '../../registry/registry.js';
import type { LogReader } from '../../store/contract.js';
import { bodyScope, decodeLogEntry } from '../../store/entry.js';
import { isVec, maxAbs } from '../reads/common.js';
import { ANN_PARAMS, AnnGraph } from './ann.js';
import { BandArena, type IndexedVector } from './vector-arena.js';

export type { IndexedVector } from './vector-arena.js';

/** A binary sibling band (sign bits for Hamming triage) ends with this suffix. */
export const BINARY_SUFFIX = '.bin128';

export function isBinaryBand(key: string): boolean {
  return key.endsWith(BINARY_SUFFIX);
}

export interface IndexState {
  /** Log entries read so far, and the log's size when the query began. */
  entries_read: number;
  log_size: number;
  /** True when every entry up to log_size has been read. */
  complete: boolean;
}

/** Time spent reading entries before yielding to other work (an entry holds up to 4096 facts). */
const SLICE_MS = 10;
/** How often the follower looks for new entries, and how often a changed index is saved. */
const FOLLOW_MS = 1000;
const SAVE_EVERY_MS = 5 * 60_000;
const STATE_FILE = 'state.json';
const STATE_VERSION = 1;

/** Pack 0/1 values into 32-bit words; undefined when a value is not 0 or 1. */
export function packBits(values: ArrayLike<number>): Uint32Array | undefined {
  const words = new Uint32Array(Math.ceil(values.length / 32));
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === 1) words[i >> 5] |= 1 << (i & 31);
    else if (v !== 0) return undefined;
  }
  return words;
}

/** Number of differing bits between two packed codes of equal length. */
export function hammingDistance(a: Uint32Array, b: Uint32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = a[i]! ^ b[i]!;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    d += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return d;
}

/**
 * Magnitudes within which 128-term dot products and squared norms stay finite and normal
 * (128 · 1e150² < 1.8e308; 1e-150² > 2.2e-308).
 */
const SAFE_MAX = 1e150;
const SAFE_MIN = 1e-150;

/** An IndexedVector from raw values, or undefined when they do not fit the band. */
export function indexedVector(band: BandEntry, cell: string, tslot: number, factCid: string, value: unknown): IndexedVector | undefined {
  if (!isVec(value, band.dim)) return undefined;
  if (isBinaryBand(band.key)) {
    const bits = packBits(value);
    return bits ? { cell, tslot, fact_cid: factCid, dim: value.length, norm: 0, bits } : undefined;
  }
  // Cosine ignores scale, so a vector whose magnitude could overflow a dot product or underflow
  // its norm is kept divided by its largest |value|: the direction, and so every score, is unchanged.
  const m = maxAbs(value);
  const src = m === 0 || (m >= SAFE_MIN && m <= SAFE_MAX) ? value : value.map((x) => x / m);
  // Values that float32 holds exactly (dequantized embeddings are) are kept in half the memory;
  // arithmetic stays in float64 either way, so scores do not change.
  const values = src.every((x) => Math.fround(x) === x) ? Float32Array.from(src) : Float64Array.from(src);
  let sq = 0;
  for (let i = 0; i < values.length; i++) sq += values[i]! * values[i]!;
  return { cell, tslot, fact_cid: factCid, dim: values.length, values, norm: Math.sqrt(sq) };
}

/** Where the index was saved, and the log position it covers. */
interface SavedState {
  version: number;
  entries_read: number;
  /** Log root at entries_read: a different log (or a rewritten one) makes the saved index stale. */
  root: string;
  ann: typeof ANN_PARAMS;
  bands: Record<string, { count: number; pending: number[] }>;
  capped: string[];
}

export interface VectorIndexOptions {
  /** Cells held per band; past it a band indexes no new cell (updates still apply) and says so. */
  maxPerBand: number;
  /** Directory to save the index in and load it from; none: memory only. */
  dir?: string;
  /**
   * Whether this process writes the saved index (default true). Worker processes share one data
   * directory: all load the saved index at start, only the first saves it (docs/deploy.md).
   */
  save?: boolean;
}

export class VectorIndex {
  private readonly arenas = new Map<string, BandArena>();
  /** The vector bands' names as UTF-8 bytes (mayHoldVectors). */
  private needles: Buffer[] | undefined;
  private readonly graphs = new Map<string, AnnGraph>();
  private readonly capped = new Set<string>();
  private next = 0;
  private reading: Promise<void> | undefined;
  private background: Promise<void> | undefined;
  private loaded: Promise<void> | undefined;
  private follower: NodeJS.Timeout | undefined;
  private tick: Promise<void> | undefined;
  private dirty = false;
  private savedAt = Date.now();
  private closed = false;
  /** How the index began: loaded from its directory (and at which entry), or read from the log. */
  start: { from: 'disk' | 'log'; entries: number; ms: number; reason?: string } = { from: 'log', entries: 0, ms: 0 };

  constructor(
    private readonly log: LogReader,
    private readonly bands: ReadonlyMap<string, BandEntry>,
    private readonly opts: VectorIndexOptions,
  ) {
    this.reset();
  }

  private reset(): void {
    this.arenas.clear();
    this.graphs.clear();
    this.capped.clear();
    this.next = 0;
    for (const [key, b] of this.bands) {
      if (b.value_kind !== 'vector' || b.dim === undefined) continue;
      this.arenas.set(key, new BandArena(key, b.dim, isBinaryBand(key)));
      if (!isBinaryBand(key)) this.graphs.set(key, new AnnGraph(b.dim));
    }
  }

  /** Loads the saved index once (a stale or unreadable one is discarded: the log is read again). */
  private ensureLoaded(): Promise<void> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  private async load(): Promise<void> {
    const dir = this.opts.dir;
    if (!dir || !existsSync(join(dir, STATE_FILE))) return;
    const t0 = performance.now();
    try {
      const s = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')) as SavedState;
      if (s.version !== STATE_VERSION) throw new Error(`saved format ${s.version}, this responder writes ${STATE_VERSION}`);
      if (JSON.stringify(s.ann) !== JSON.stringify(ANN_PARAMS)) throw new Error('saved with other graph parameters');
      const size = await this.log.size();
      if (s.entries_read > size) throw new Error(`saved at log entry ${s.entries_read}, the log holds ${size}`);
      if (s.entries_read > 0 && b32encode(await this.log.root(s.entries_read)) !== s.root) throw new Error('the log differs from the one the index was saved from');
      for (const [key, arena] of this.arenas) {
        const saved = s.bands[key];
        if (!saved) throw new Error(`no saved arena for ${key}`);
        const a = BandArena.deserialize(readFileSync(join(dir, `${key}.vec`)), { band: key, dim: arena.dim, binary: arena.binary });
        if (a.count !== saved.count) throw new Error(`${key}: arena holds ${a.count} vectors, state says ${saved.count}`);
        this.arenas.set(key, a);
        if (this.graphs.has(key)) {
          const g = a.count > 0 ? AnnGraph.load(join(dir, `${key}.hnsw`), a.dim) : new AnnGraph(a.dim);
          for (const p of saved.pending) g.pending.add(p);
          this.graphs.set(key, g);
        }
      }
      for (const c of s.capped) this.capped.add(c);
      this.next = s.entries_read;
      this.start = { from: 'disk', entries: s.entries_read, ms: performance.now() - t0 };
    } catch (e) {
      this.reset();
      this.start = { from: 'log', entries: 0, ms: performance.now() - t0, reason: `saved index not used: ${(e as Error).message}` };
    }
  }

  /** Saves the index to its directory (files first, the state last, each by rename). */
  async save(): Promise<void> {
    const dir = this.opts.dir;
    if (!dir || this.opts.save === false) return;
    await this.ensureLoaded();
    await this.reading;
    mkdirSync(dir, { recursive: true });
    const entries = this.next;
    const state: SavedState = {
      version: STATE_VERSION,
      entries_read: entries,
      root: entries > 0 ? b32encode(await this.log.root(entries)) : '',
      ann: ANN_PARAMS,
      bands: {},
      capped: [...this.capped],
    };
    // The state names the position; anything written before it under an older state is replaced
    // first, so a crash between the files leaves a state that disagrees with its files (discarded).
    rmSync(join(dir, STATE_FILE), { force: true });
    for (const [key, a] of this.arenas) {
      const tmp = join(dir, `${key}.vec.tmp`);
      writeFileSync(tmp, Buffer.concat(a.serialize()));
      renameSync(tmp, join(dir, `${key}.vec`));
      const g = this.graphs.get(key);
      if (g && a.count > 0) {
        g.save(join(dir, `${key}.hnsw.tmp`));
        renameSync(join(dir, `${key}.hnsw.tmp`), join(dir, `${key}.hnsw`));
      }
      state.bands[key] = { count: a.count, pending: g ? [...g.pending] : [] };
    }
    writeFileSync(join(dir, `${STATE_FILE}.tmp`), JSON.stringify(state));
    renameSync(join(dir, `${STATE_FILE}.tmp`), join(dir, STATE_FILE));
    this.dirty = false;
    this.savedAt = Date.now();
  }

  /** Starts following the log in the background (new facts indexed about a second after they land). */
  follow(): void {
    if (this.follower || this.closed) return;
    this.follower = setInterval(() => {
      if (this.tick) return;
      this.tick = (async () => {
        await this.refresh(Date.now() + SLICE_MS * 5);
        if (this.dirty && Date.now() - this.savedAt > SAVE_EVERY_MS) await this.save();
      })()
        .catch(() => {
          // A closed store or an unreadable entry: the next query reads again and reports it.
        })
        .finally(() => (this.tick = undefined));
    }, FOLLOW_MS);
    this.follower.unref();
  }

  /** Stops following and saves what was read. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.follower) clearInterval(this.follower);
    this.follower = undefined;
    await this.tick;
    await this.background;
    if (this.dirty) await this.save();
  }

  /**
   * Reads the log up to its current size, or until `until` (ms since epoch) passes; what is
   * left is read in the background, a slice per turn of the event loop, so a large log does
   * not keep the first queries waiting nor block other requests.
   */
  async refresh(until: number): Promise<IndexState> {
    await this.ensureLoaded();
    const size = await this.log.size();
    for (let first = true; this.next < size && Date.now() < until; first = false) {
      if (!first) await new Promise((resolve) => setImmediate(resolve)); // let other requests run between slices
      await this.step(size);
    }
    if (this.next < size || this.hasPending()) this.continueInBackground();
    return { entries_read: Math.min(this.next, size), log_size: size, complete: this.next >= size };
  }

  private hasPending(): boolean {
    for (const g of this.graphs.values()) if (g.pending.size > 0) return true;
    return false;
  }

  /** One slice of reading; concurrent callers share it (one reader at a time). */
  private step(size: number): Promise<void> {
    this.reading ??= this.readSlice(size).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** Reads the rest of the log and moves pending vectors into the graphs, a slice per turn. */
  private continueInBackground(): void {
    if (this.background || this.closed) return;
    this.background = (async () => {
      try {
        for (;;) {
          await new Promise((resolve) => setImmediate(resolve));
          if (this.closed) return;
          const size = await this.log.size();
          if (this.next < size) {
            await this.step(size);
            continue;
          }
          let added = 0;
          for (const [key, g] of this.graphs) if (g.pending.size > 0) added += g.addPending(this.arenas.get(key)!);
          if (added === 0) return;
        }
      } catch {
        // A closed store or an unreadable entry: the next query reads again and reports it.
      } finally {
        this.background = undefined;
      }
    })();
  }

  /** The band's vectors (undefined for a band that is not a vector band). */
  arena(band: string): BandArena | undefined {
    return this.arenas.get(band);
  }

  /** The band's approximate graph (real-valued bands only). */
  graph(band: string): AnnGraph | undefined {
    return this.graphs.get(band);
  }

  /** The newest indexed vector of a cell under a band. */
  get(band: string, cell: string): IndexedVector | undefined {
    return this.arenas.get(band)?.get(cell);
  }

  /** True when the band reached the cell cap and stopped indexing new cells. */
  isCapped(band: string): boolean {
    return this.capped.has(band);
  }

  /** Entries from `next` on, for about SLICE_MS (at least one entry). */
  private async readSlice(size: number): Promise<void> {
    const t0 = performance.now();
    do {
      const bytes = await this.log.entry(this.next);
      if (bytes) this.apply(bytes);
      this.next++;
    } while (this.next < size && performance.now() - t0 < SLICE_MS);
  }

  /**
   * Whether the entry may hold a vector band's fact: a band name is a CBOR text string, its UTF-8
   * bytes verbatim in the entry. Most entries name no vector band (notes, ordinary facts), and a
   * byte search over them costs a fraction of decoding them (about 3.6 µs per fact, measured on
   * the write bench); a false positive (the name inside some other text) only decodes for nothing.
   */
  private mayHoldVectors(bytes: Uint8Array): boolean {
    this.needles ??= [...this.arenas.keys()].map((k) => Buffer.from(k, 'utf8'));
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return this.needles.some((n) => b.indexOf(n) >= 0);
  }

  private apply(bytes: Uint8Array): void {
    if (!this.mayHoldVectors(bytes)) return;
    const entry = decodeLogEntry(bytes);
    entry.facts.forEach((body, i) => {
      const arena = this.arenas.get(body.band as string);
      if (!arena || body.kind !== 'primary' || bodyScope(body) !== null) return;
      const band = this.bands.get(body.band as string)!;
      const cell = body.cell as string;
      const tslot = entry.meta[i]!.tslot;
      const slot = arena.slotOf.get(cell);
      if (slot !== undefined && arena.tslots[slot]! > tslot) return;
      if (slot === undefined && arena.count >= this.opts.maxPerBand) {
        this.capped.add(band.key);
        return;
      }
      // checkLogEntry (in decodeLogEntry) refused fact_cid/receipt members: these are the hashed bytes.
      const cid = b32encode(blake3(encodeCanonical(body as CborValue)));
      const v = indexedVector(band, cell, tslot, cid, body.value);
      if (!v) {
        // A value that is no vector at the same tslot supersedes the cell's vector: withdrawn.
        if (slot !== undefined && arena.tslots[slot] === tslot && arena.isLive(slot)) {
          arena.clear(slot);
          this.graphs.get(band.key)?.touch(slot);
          this.dirty = true;
        }
        return;
      }
      const s = arena.put(v);
      this.graphs.get(band.key)?.touch(s);
      this.dirty = true;
    });
  }
}
