/** Lucene's DocIdSetIterator.NO_MORE_DOCS: what `nextSetBit` and iterators answer past the last set bit. */
export const NO_MORE_DOCS = 0x7fffffff;

/**
 * Lucene's FixedBitSet: `numBits` bits in 32-bit words, bit d in word `d >>> 5` at position
 * `d & 31` (the layout of FilterLeaf's live docs and present bitsets, so those combine word by
 * word). Bits at and beyond `numBits` in the last word are always zero (every operation keeps
 * it so), which lets `cardinality` and the set operations run over whole words.
 *
 * Filters answer one per segment (the docs that match and are live); a bitset a filter or the
 * FilterCache hands out may be shared, so callers treat it as read-only and `clone()` before
 * changing it.
 */
export class FixedBitSet {
  readonly bits: Uint32Array;

  constructor(
    readonly numBits: number,
    bits?: Uint32Array,
  ) {
    if (!(numBits >= 0 && Number.isInteger(numBits))) throw new RangeError(`numBits must be a non-negative integer, got ${numBits}`);
    const words = FixedBitSet.bits2words(numBits);
    if (bits === undefined) {
      // Shared memory: a filter's bitset goes to the workers searching its segments as it is.
      this.bits = new Uint32Array(new SharedArrayBuffer(4 * words));
    } else {
      if (bits.length < words) throw new RangeError(`${bits.length} words cannot hold ${numBits} bits`);
      this.bits = bits;
    }
  }

  /** Words needed for `numBits` bits. */
  static bits2words(numBits: number): number {
    return (numBits + 31) >>> 5;
  }

  /** The live docs of a segment as a bitset (every doc when `liveDocs` is null); a copy. */
  static fromLive(liveDocs: Uint32Array | null, maxDoc: number): FixedBitSet {
    const set = new FixedBitSet(maxDoc);
    if (liveDocs === null) set.setAll();
    else {
      set.bits.set(liveDocs.subarray(0, set.bits.length));
      set.clearGhostBits();
    }
    return set;
  }

  /** Lucene's `length()`: the number of bits. */
  length(): number {
    return this.numBits;
  }

  get(index: number): boolean {
    return ((this.bits[index >>> 5] >>> index) & 1) !== 0;
  }

  set(index: number): void {
    this.bits[index >>> 5] |= 1 << index;
  }

  clear(index: number): void {
    this.bits[index >>> 5] &= ~(1 << index);
  }

  /** Sets every bit in [0, numBits). */
  setAll(): this {
    this.bits.fill(0xffffffff);
    this.clearGhostBits();
    return this;
  }

  /** Number of set bits (a SWAR popcount per word: ~0.1 ms per million docs). */
  cardinality(): number {
    const bits = this.bits;
    let n = 0;
    for (let i = 0; i < bits.length; i++) n += bitCount(bits[i]);
    return n;
  }

  /** this &= other (other may be shorter: the missing words count as zero). */
  and(other: FixedBitSet): this {
    andWords(this.bits, other.bits);
    return this;
  }

  /** this |= other; other must not have more bits than this. */
  or(other: FixedBitSet): this {
    if (other.numBits > this.numBits) throw new RangeError(`cannot or ${other.numBits} bits into ${this.numBits}`);
    const a = this.bits,
      b = other.bits;
    for (let i = 0; i < b.length; i++) a[i] |= b[i];
    return this;
  }

  /** this &= ~other. */
  andNot(other: FixedBitSet): this {
    const a = this.bits,
      b = other.bits;
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) a[i] &= ~b[i];
    return this;
  }

  /** The first set bit at or after `from`, or NO_MORE_DOCS. */
  nextSetBit(from: number): number {
    if (from >= this.numBits) return NO_MORE_DOCS;
    const bits = this.bits;
    let i = from >>> 5;
    let word = bits[i] & (0xffffffff << (from & 31));
    while (word === 0) {
      if (++i >= bits.length) return NO_MORE_DOCS;
      word = bits[i];
    }
    return (i << 5) + numberOfTrailingZeros(word);
  }

  /** The last set bit at or before `from`, or -1. */
  prevSetBit(from: number): number {
    const last = Math.min(from, this.numBits - 1);
    if (last < 0) return -1;
    const bits = this.bits;
    let i = last >>> 5;
    const shift = 31 - (last & 31);
    let word = (bits[i] << shift) >>> shift;
    while (word === 0) {
      if (--i < 0) return -1;
      word = bits[i];
    }
    return (i << 5) + 31 - Math.clz32(word);
  }

  /** Whether no bit is set (stops at the first non-zero word). */
  isEmpty(): boolean {
    const bits = this.bits;
    for (let i = 0; i < bits.length; i++) if (bits[i] !== 0) return false;
    return true;
  }

  /** The set bits in increasing order, written into `out` (allocated when absent); returns the count. */
  toDocs(out?: Int32Array): { docs: Int32Array; count: number } {
    const docs = out ?? new Int32Array(this.cardinality());
    const bits = this.bits;
    let n = 0;
    for (let i = 0; i < bits.length; i++) {
      let word = bits[i];
      while (word !== 0) {
        if (n === docs.length) throw new RangeError(`out holds ${docs.length} docs; more bits are set`);
        docs[n++] = (i << 5) + numberOfTrailingZeros(word);
        word &= word - 1;
      }
    }
    return { docs, count: n };
  }

  /** Calls `visit(doc)` for each set bit in increasing order (no allocation). */
  forEachSetBit(visit: (doc: number) => void): void {
    const bits = this.bits;
    for (let i = 0; i < bits.length; i++) {
      let word = bits[i];
      while (word !== 0) {
        visit((i << 5) + numberOfTrailingZeros(word));
        word &= word - 1;
      }
    }
  }

  *[Symbol.iterator](): IterableIterator<number> {
    for (let doc = this.nextSetBit(0); doc !== NO_MORE_DOCS; doc = this.nextSetBit(doc + 1)) yield doc;
  }

  clone(): FixedBitSet {
    const copy = new FixedBitSet(this.numBits);
    copy.bits.set(this.bits);
    return copy;
  }

  equals(other: FixedBitSet): boolean {
    if (other.numBits !== this.numBits) return false;
    const a = this.bits,
      b = other.bits;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** Bytes held (the FilterCache's budget counts these). */
  ramBytesUsed(): number {
    return this.bits.byteLength + 64;
  }

  /** Lucene's `intersectionCount`: |a & b| without materialising it. */
  static intersectionCount(a: FixedBitSet, b: FixedBitSet): number {
    const x = a.bits,
      y = b.bits;
    const n = Math.min(x.length, y.length);
    let c = 0;
    for (let i = 0; i < n; i++) c += bitCount(x[i] & y[i]);
    return c;
  }

  toString(): string {
    const docs: number[] = [];
    for (let d = this.nextSetBit(0); d !== NO_MORE_DOCS && docs.length < 32; d = this.nextSetBit(d + 1)) docs.push(d);
    const more = this.cardinality() - docs.length;
    return `FixedBitSet(${this.numBits})[${docs.join(', ')}${more > 0 ? `, ... ${more} more` : ''}]`;
  }

  /** Zeroes the bits at and past numBits in the last word (the class invariant). */
  clearGhostBits(): void {
    const rem = this.numBits & 31;
    if (rem !== 0) this.bits[this.bits.length - 1] &= (1 << rem) - 1;
  }
}

/** a[i] &= b[i] over a's words (missing words of b count as zero). */
export function andWords(a: Uint32Array, b: Uint32Array): void {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) a[i] &= b[i];
  if (n < a.length) a.fill(0, n);
}

/** Population count of a 32-bit word (Hacker's Delight 5-2). */
export function bitCount(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Index of the lowest set bit of a non-zero word. */
export function numberOfTrailingZeros(word: number): number {
  return 31 - Math.clz32(word & -word);
}
