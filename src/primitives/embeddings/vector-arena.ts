/**
 * The vectors of one band, one slot per cell, in flat typed arrays: a million 128-D vectors are
 * one 512 MB Float32Array rather than a million small objects, which keeps the heap small, makes
 * an exact scan a walk over contiguous memory and lets the whole band be written to disk and read
 * back in one piece (docs/embeddings.md, "The index on disk").
 *
 * Real-valued vectors are held in float32. A vector that float32 does not hold exactly (dequantized
 * embeddings always fit) keeps its exact float64 values beside, so scores never change. Binary
 * bands keep their bits packed, 32 per word. A cell keeps its slot when its vector is superseded,
 * so slots never leave holes.
 */
import { b32decode, b32encode } from '../../protocol/base32.js';

export interface IndexedVector {
  readonly cell: string;
  readonly tslot: number;
  readonly fact_cid: string;
  /** Number of values. */
  readonly dim: number;
  /** Real-valued bands: the fact's values (float32 when that is exact). */
  readonly values?: Float32Array | Float64Array;
  /** Euclidean norm of values (0 for a zero vector, and for codes: no cosine). */
  readonly norm: number;
  /** Binary bands: the packed bits (bit i in word i >> 5). */
  readonly bits?: Uint32Array;
}

const FILE_MAGIC = 'svc-vector-arena';
const FILE_VERSION = 2;

export class BandArena {
  /** Slots in use. */
  count = 0;
  private capacity = 0;
  readonly cells: string[] = [];
  /** fact_cids as their 32 raw bytes (a third of the memory of the base32 text), by slot. */
  cidBytes = new Uint8Array(0);
  /** 1 while the slot holds a vector; 0 once withdrawn. */
  alive = new Uint8Array(0);
  tslots = new Int32Array(0);
  norms = new Float64Array(0);
  /** count × dim float32 (real-valued bands). */
  data = new Float32Array(0);
  /** count × words packed bits (binary bands). */
  bits = new Uint32Array(0);
  /** Exact values of the vectors float32 does not hold exactly, by slot. */
  readonly exact = new Map<number, Float64Array>();
  readonly slotOf = new Map<string, number>();
  readonly words: number;
  /** Slots whose vector was withdrawn (a later fact at the same tslot that is no vector). */
  dead = 0;

  constructor(
    readonly band: string,
    readonly dim: number,
    readonly binary: boolean,
  ) {
    this.words = Math.ceil(dim / 32);
  }

  private grow(min: number): void {
    if (min <= this.capacity) return;
    const cap = Math.max(min, this.capacity * 2, 1024);
    const widen = <T extends Int32Array | Float64Array | Float32Array | Uint32Array | Uint8Array>(old: T, make: (n: number) => T, per: number): T => {
      const next = make(cap * per);
      next.set(old);
      return next;
    };
    this.tslots = widen(this.tslots, (n) => new Int32Array(n), 1);
    this.norms = widen(this.norms, (n) => new Float64Array(n), 1);
    this.cidBytes = widen(this.cidBytes, (n) => new Uint8Array(n), 32);
    this.alive = widen(this.alive, (n) => new Uint8Array(n), 1);
    if (this.binary) this.bits = widen(this.bits, (n) => new Uint32Array(n), this.words);
    else this.data = widen(this.data, (n) => new Float32Array(n), this.dim);
    this.capacity = cap;
  }

  /** Stores `v` as the cell's vector (a new slot, or the cell's own slot); returns the slot. */
  put(v: IndexedVector): number {
    let slot = this.slotOf.get(v.cell);
    if (slot === undefined) {
      slot = this.count++;
      this.grow(this.count);
      this.slotOf.set(v.cell, slot);
      this.cells[slot] = v.cell;
    } else if (this.alive[slot] === 0) this.dead--;
    this.alive[slot] = 1;
    this.cidBytes.set(b32decode(v.fact_cid), slot * 32);
    this.tslots[slot] = v.tslot;
    this.norms[slot] = v.norm;
    if (this.binary) this.bits.set(v.bits!, slot * this.words);
    else {
      const values = v.values!;
      this.data.set(values, slot * this.dim);
      if (values instanceof Float64Array) this.exact.set(slot, values);
      else this.exact.delete(slot);
    }
    return slot;
  }

  /** Withdraws a cell's vector; its slot stays reserved for the cell and scans skip it. */
  clear(slot: number): void {
    if (this.alive[slot] === 0) return;
    this.alive[slot] = 0;
    this.norms[slot] = 0;
    this.exact.delete(slot);
    this.dead++;
  }

  isLive(slot: number): boolean {
    return this.alive[slot] === 1;
  }

  /** Vectors held (slots minus withdrawn ones). */
  get live(): number {
    return this.count - this.dead;
  }

  cidOf(slot: number): string {
    return b32encode(this.cidBytes.subarray(slot * 32, (slot + 1) * 32));
  }

  /** A slot's values as float32 (the exact ones may differ in the last bits: see valuesOf). */
  f32(slot: number): Float32Array {
    return this.data.subarray(slot * this.dim, (slot + 1) * this.dim);
  }

  valuesOf(slot: number): Float32Array | Float64Array {
    return this.exact.get(slot) ?? this.f32(slot);
  }

  codeOf(slot: number): Uint32Array {
    return this.bits.subarray(slot * this.words, (slot + 1) * this.words);
  }

  /** The slot as an IndexedVector (its arrays are views into the arena: copy before keeping). */
  view(slot: number): IndexedVector {
    const base = { cell: this.cells[slot]!, tslot: this.tslots[slot]!, fact_cid: this.cidOf(slot), dim: this.dim, norm: this.norms[slot]! };
    return this.binary ? { ...base, bits: this.codeOf(slot) } : { ...base, values: this.valuesOf(slot) };
  }

  get(cell: string): IndexedVector | undefined {
    const slot = this.slotOf.get(cell);
    return slot === undefined || !this.isLive(slot) ? undefined : this.view(slot);
  }

  /**
   * The arena as bytes: a JSON header (magic, version, band, dim, binary, count, the byte length
   * of the cells text and the slots holding exact float64 values) behind its u32 length, then
   * tslots (i32), norms (f64), the live flags (u8), fact_cids (32 raw bytes each), the cells
   * ('\n'-joined UTF-8), the vectors (f32, or packed u32 bits) and the exact float64 values; all
   * little-endian.
   */
  serialize(): Uint8Array[] {
    const n = this.count;
    const cellsText = new TextEncoder().encode(this.cells.slice(0, n).join('\n'));
    const exactSlots = [...this.exact.keys()].sort((a, b) => a - b);
    const header = new TextEncoder().encode(
      JSON.stringify({ magic: FILE_MAGIC, version: FILE_VERSION, band: this.band, dim: this.dim, binary: this.binary, count: n, cells_bytes: cellsText.length, exact_slots: exactSlots }),
    );
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, header.length, true);
    const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const vectors = this.binary ? bytesOf(this.bits.subarray(0, n * this.words)) : bytesOf(this.data.subarray(0, n * this.dim));
    const exact = new Float64Array(exactSlots.length * this.dim);
    exactSlots.forEach((s, i) => exact.set(this.exact.get(s)!, i * this.dim));
    return [len, header, bytesOf(this.tslots.subarray(0, n)), bytesOf(this.norms.subarray(0, n)), this.alive.subarray(0, n), this.cidBytes.subarray(0, n * 32), cellsText, vectors, bytesOf(exact)];
  }

  /** An arena from serialize()'s bytes; throws on any inconsistency (the caller rebuilds). */
  static deserialize(buf: Uint8Array, expect: { band: string; dim: number; binary: boolean }): BandArena {
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const hlen = view.getUint32(0, true);
    const h = JSON.parse(new TextDecoder().decode(buf.subarray(4, 4 + hlen)));
    if (h.magic !== FILE_MAGIC || h.version !== FILE_VERSION || h.band !== expect.band || h.dim !== expect.dim || h.binary !== expect.binary) {
      throw new Error(`arena header does not match ${expect.band}`);
    }
    const a = new BandArena(expect.band, expect.dim, expect.binary);
    const n: number = h.count;
    a.grow(n);
    a.count = n;
    let off = 4 + hlen;
    // Copies, not views: typed arrays need aligned offsets, and the file's buffer is then released.
    const take = (bytes: number) => {
      if (off + bytes > buf.length) throw new Error('arena file truncated');
      const out = new Uint8Array(buf.subarray(off, off + bytes)); // a copy (Buffer#slice would be a view)
      off += bytes;
      return out;
    };
    a.tslots.set(new Int32Array(take(n * 4).buffer));
    a.norms.set(new Float64Array(take(n * 8).buffer));
    a.alive.set(take(n));
    a.cidBytes.set(take(n * 32));
    const cells = n === 0 ? [] : new TextDecoder().decode(take(h.cells_bytes)).split('\n');
    if (cells.length !== n) throw new Error('arena cells do not match its count');
    for (let i = 0; i < n; i++) {
      a.cells[i] = cells[i]!;
      a.slotOf.set(cells[i]!, i);
      if (a.alive[i] === 0) a.dead++;
    }
    if (expect.binary) a.bits.set(new Uint32Array(take(n * a.words * 4).buffer));
    else a.data.set(new Float32Array(take(n * expect.dim * 4).buffer));
    const exactSlots: number[] = h.exact_slots;
    const exact = new Float64Array(take(exactSlots.length * expect.dim * 8).buffer);
    exactSlots.forEach((s, i) => a.exact.set(s, exact.slice(i * expect.dim, (i + 1) * expect.dim)));
    if (off !== buf.length) throw new Error('arena file has trailing bytes');
    return a;
  }
}
