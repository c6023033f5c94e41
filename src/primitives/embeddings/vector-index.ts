/**
 * An in-memory index of the public embedding vectors, for find_similar. It follows the
 * transparency log (the source of truth, shared by every responder instance of a deployment)
 * entry by entry, so it never disagrees with what was acknowledged and needs no hook into the
 * write path: each query first reads the entries appended since the last one.
 *
 * Per vector band and cell it keeps the newest primary vector (highest tslot, later log entry on
 * a tie: a supersession). Absences are not vectors and scoped facts are private to their scope,
 * so neither is indexed. Binary bands (`*.bin128`) keep their bits packed for Hamming distance.
 * Memory is bounded: past `maxPerBand` cells a band indexes no new cell (updates still apply)
 * and says so.
 */
import { b32encode } from '../../protocol/base32.js';
import { encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { blake3 } from '../../protocol/hash.js';
import type { BandEntry } from '../../registry/registry.js';
import type { LogReader } from '../../store/contract.js';
import { bodyScope, decodeLogEntry } from '../../store/entry.js';
import { isVec, maxAbs } from '../reads/common.js';

/** A binary sibling band (sign bits for Hamming triage) ends with this suffix. */
export const BINARY_SUFFIX = '.bin128';

export function isBinaryBand(key: string): boolean {
  return key.endsWith(BINARY_SUFFIX);
}

export interface IndexedVector {
  readonly cell: string;
  readonly tslot: number;
  readonly fact_cid: string;
  /** Number of values. */
  readonly dim: number;
  /** Real-valued bands: the fact's values exactly as signed (float32 storage when that is exact). */
  readonly values?: Float32Array | Float64Array;
  /** Euclidean norm of values (0 for a zero vector, and for codes: no cosine). */
  readonly norm: number;
  /** Binary bands: the packed bits (bit i in word i >> 5); their values are not kept twice. */
  readonly bits?: Uint32Array;
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
    let x = a[i] ^ b[i];
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
  // Values that float32 holds exactly (dequantized embeddings are) are kept in half the memory,
  // which also halves what a scan reads; arithmetic stays in float64 either way, so scores do not change.
  const values = src.every((x) => Math.fround(x) === x) ? Float32Array.from(src) : Float64Array.from(src);
  let sq = 0;
  for (let i = 0; i < values.length; i++) sq += values[i] * values[i];
  return { cell, tslot, fact_cid: factCid, dim: values.length, values, norm: Math.sqrt(sq) };
}

export class VectorIndex {
  private readonly byBand = new Map<string, Map<string, IndexedVector>>();
  private readonly capped = new Set<string>();
  private next = 0;
  private reading: Promise<void> | undefined;
  private background: Promise<void> | undefined;

  constructor(
    private readonly log: LogReader,
    private readonly bands: ReadonlyMap<string, BandEntry>,
    private readonly maxPerBand: number,
  ) {
    for (const [key, b] of bands) if (b.value_kind === 'vector') this.byBand.set(key, new Map());
  }

  /**
   * Reads the log up to its current size, or until `until` (ms since epoch) passes; what is
   * left is read in the background, a slice per turn of the event loop, so a large log does
   * not keep the first queries waiting nor block other requests.
   */
  async refresh(until: number): Promise<IndexState> {
    const size = await this.log.size();
    for (let first = true; this.next < size && Date.now() < until; first = false) {
      if (!first) await new Promise((resolve) => setImmediate(resolve)); // let other requests run between slices
      await this.step(size);
    }
    if (this.next < size) this.continueInBackground();
    return { entries_read: Math.min(this.next, size), log_size: size, complete: this.next >= size };
  }

  /** One slice of reading; concurrent callers share it (one reader at a time). */
  private step(size: number): Promise<void> {
    this.reading ??= this.readSlice(size).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private continueInBackground(): void {
    if (this.background) return;
    this.background = (async () => {
      try {
        for (;;) {
          await new Promise((resolve) => setImmediate(resolve));
          const size = await this.log.size();
          if (this.next >= size) return;
          await this.step(size);
        }
      } catch {
        // A closed store or an unreadable entry: the next query reads again and reports it.
      } finally {
        this.background = undefined;
      }
    })();
  }

  /** Indexed vectors of a band by cell (empty for a band that is not a vector band). */
  vectors(band: string): ReadonlyMap<string, IndexedVector> {
    return this.byBand.get(band) ?? new Map();
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

  private apply(bytes: Uint8Array): void {
    const entry = decodeLogEntry(bytes);
    entry.facts.forEach((body, i) => {
      const index = this.byBand.get(body.band as string);
      if (!index || body.kind !== 'primary' || bodyScope(body) !== null) return;
      const band = this.bands.get(body.band as string)!;
      const cell = body.cell as string;
      const tslot = entry.meta[i].tslot;
      const held = index.get(cell);
      if (held && held.tslot > tslot) return;
      if (!held && index.size >= this.maxPerBand) {
        this.capped.add(band.key);
        return;
      }
      // checkLogEntry (in decodeLogEntry) refused fact_cid/receipt members: these are the hashed bytes.
      const cid = b32encode(blake3(encodeCanonical(body as CborValue)));
      const v = indexedVector(band, cell, tslot, cid, body.value);
      if (v) index.set(cell, v);
      else if (held && held.tslot === tslot) index.delete(cell); // superseded by a value that is no vector
    });
  }
}
