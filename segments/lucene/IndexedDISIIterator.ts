import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import { DISI_BLOCK_SIZE, DISI_DENSE_BLOCK_LONGS, DISI_MAX_ARRAY_LENGTH } from './IndexedDISI.js';
import { popcount32 } from './IndexedDISIWriter.js';

/** Lucene's DocIdSetIterator.NO_MORE_DOCS: the doc id an exhausted iterator is on. */
export const NO_MORE_DOCS = 0x7fffffff;

const SPARSE = 0;
const DENSE = 1;
const ALL = 2;
const DENSE_BITMAP_BYTES = DISI_DENSE_BLOCK_LONGS * 8;

/**
 * Iterates an IndexedDISI doc set (layout in IndexedDISI.ts) in place, reading only the block
 * headers, shorts and bitmap words it passes through `bytes` (a mapping or positioned reads), as
 * Lucene's IndexedDISI does; `index()` is the rank of the current doc in the set, which is where
 * doc values store that doc's value. Long forward jumps take the jump table (to the right 65536-doc
 * block) and, inside a DENSE block, the rank table (to the right 2^denseRankPower-doc run).
 *
 * Targets must not decrease. `advanceExact(target)` leaves `docID()` on the target whether or not
 * it is in the set, and a following `nextDoc()` returns the first doc after the target, as in
 * Lucene. The sentinel block makes the last doc NO_MORE_DOCS without a special case: its single
 * entry 0xFFFF in block 0x7FFF is that doc id.
 *
 * State is a few numbers plus, for positioned reads only, a private copy of the current DENSE
 * block (rank table + 8 KiB bitmap), so that other reads through the same `bytes` cannot
 * overwrite it. Structural surprises (a block id going backwards, counts past `cost`) throw
 * CorruptIndexException naming the file; the full check of a DISI is IndexedDISI.decode.
 */
export class IndexedDISIIterator {
  private readonly blocksEnd: number;
  private readonly rankBytes: number;
  private readonly wordsPerRank: number;

  /** The public doc: the last target of advanceExact, or the cursor's doc. */
  private doc = -1;
  /** The cursor: the last doc of the set reached, and its rank. */
  private pos = -1;
  private posIndex = -1;

  private blockId = -1;
  private blockBase = 0;
  private method = SPARSE;
  private cardinality = 0;
  /** Rank of the block's first doc. */
  private blockIndex = 0;
  /** Offset (relative to the file) of the block's payload and of the next block header. */
  private payload = 0;
  private nextHeader: number;
  private nextBlockIndex = 0;

  // SPARSE: entries consumed.
  private sparseNext = 0;
  // DENSE: 32-bit word under the cursor and the set bits in the words before it.
  private wordIndex = 0;
  private onesBefore = 0;
  private dense: Uint8Array = new Uint8Array(0);
  /** Where word 0 of the bitmap sits in `dense`. */
  private denseWords = 0;
  /** Where the rank table sits in `dense`. */
  private denseRank = 0;

  constructor(
    private readonly bytes: RandomAccessBytes,
    /** Offset of the first block, relative to the file. */
    private readonly offset: number,
    /** Blocks + jump table. */
    length: number,
    private readonly jumpTableEntryCount: number,
    denseRankPower: number,
    readonly cost: number,
  ) {
    if (denseRankPower !== -1 && (denseRankPower < 7 || denseRankPower > 15)) {
      throw new CorruptIndexException(`invalid denseRankPower ${denseRankPower} (7..15 or -1)`, bytes.name);
    }
    this.blocksEnd = offset + length - Math.max(0, jumpTableEntryCount) * 8;
    if (this.blocksEnd < offset + 6 || offset + length > bytes.length) {
      throw new CorruptIndexException(`IndexedDISI [${offset}, +${length}) does not fit its ${jumpTableEntryCount} jump-table entries or the file`, bytes.name);
    }
    this.rankBytes = denseRankPower === -1 ? 0 : DISI_DENSE_BLOCK_LONGS >> (denseRankPower - 7);
    this.wordsPerRank = denseRankPower === -1 ? 0 : 1 << (denseRankPower - 5);
    this.nextHeader = offset;
  }

  docID(): number {
    return this.doc;
  }

  /** Rank of the current doc in the set (valid when the doc is in the set). */
  index(): number {
    return this.posIndex;
  }

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    if (this.pos < target) this.moveCursor(target);
    this.doc = this.pos;
    return this.doc;
  }

  /** Positions on `target` and says whether it is in the set. */
  advanceExact(target: number): boolean {
    if (this.pos < target) this.moveCursor(target);
    this.doc = target;
    return this.pos === target;
  }

  private moveCursor(target: number): void {
    if (target >= NO_MORE_DOCS) {
      this.pos = NO_MORE_DOCS;
      return;
    }
    const targetBlock = target >>> 16;
    if (this.blockId < targetBlock) this.seekBlock(targetBlock);
    for (;;) {
      if (this.withinBlock(this.blockId === targetBlock ? target : this.blockBase)) return;
      this.readHeader();
    }
  }

  /** Moves to the first written block whose id is >= targetBlock (the sentinel at worst). */
  private seekBlock(targetBlock: number): void {
    if (this.jumpTableEntryCount > 0 && targetBlock >= this.blockId + 2) {
      const entry = Math.min(targetBlock, this.jumpTableEntryCount - 1);
      const p = this.bytes.load(this.blocksEnd + entry * 8, 8);
      const b = this.bytes.bytes;
      this.nextBlockIndex = readInt(b, p);
      this.nextHeader = this.offset + readInt(b, p + 4);
      this.readHeader();
    }
    while (this.blockId < targetBlock) this.readHeader();
  }

  private readHeader(): void {
    const at = this.nextHeader;
    if (at + 4 > this.blocksEnd) throw new CorruptIndexException(`IndexedDISI runs past its blocks at ${at} (no sentinel?)`, this.bytes.name);
    const p = this.bytes.load(at, 4);
    const b = this.bytes.bytes;
    const id = b[p] | (b[p + 1] << 8);
    const cardinality = (b[p + 2] | (b[p + 3] << 8)) + 1;
    if (id <= this.blockId) throw new CorruptIndexException(`IndexedDISI block ${id} after block ${this.blockId}`, this.bytes.name);
    this.blockId = id;
    this.blockBase = id * DISI_BLOCK_SIZE;
    this.cardinality = cardinality;
    this.blockIndex = this.nextBlockIndex;
    this.nextBlockIndex += cardinality;
    this.payload = at + 4;
    if (cardinality <= DISI_MAX_ARRAY_LENGTH) {
      this.method = SPARSE;
      this.sparseNext = 0;
      this.nextHeader = this.payload + 2 * cardinality;
    } else if (cardinality < DISI_BLOCK_SIZE) {
      this.method = DENSE;
      this.wordIndex = 0;
      this.onesBefore = 0;
      const size = this.rankBytes + DENSE_BITMAP_BYTES;
      this.nextHeader = this.payload + size;
      const q = this.bytes.load(this.payload, size);
      if (this.bytes.mapping !== null) {
        this.dense = this.bytes.bytes; // a mapping's view stays valid: no copy
        this.denseRank = q;
      } else {
        if (this.dense.length < size || this.dense === this.bytes.bytes) this.dense = new Uint8Array(size);
        this.dense.set(this.bytes.bytes.subarray(q, q + size));
        this.denseRank = 0;
      }
      this.denseWords = this.denseRank + this.rankBytes;
    } else {
      this.method = ALL;
      this.nextHeader = this.payload;
    }
    if (this.nextHeader > this.blocksEnd) throw new CorruptIndexException(`IndexedDISI block ${id} runs past the blocks`, this.bytes.name);
    if (id !== 0x7fff && this.nextBlockIndex > this.cost) {
      throw new CorruptIndexException(`IndexedDISI holds more docs than its cost ${this.cost}`, this.bytes.name);
    }
  }

  /** The first doc >= t in the current block (t inside the block), if any. */
  private withinBlock(t: number): boolean {
    switch (this.method) {
      case SPARSE: {
        while (this.sparseNext < this.cardinality) {
          const p = this.bytes.load(this.payload + 2 * this.sparseNext, 2);
          const b = this.bytes.bytes;
          const doc = this.blockBase + (b[p] | (b[p + 1] << 8));
          this.sparseNext++;
          if (doc >= t) {
            this.pos = doc;
            this.posIndex = this.blockIndex + this.sparseNext - 1;
            return true;
          }
        }
        return false;
      }
      case ALL:
        this.pos = t;
        this.posIndex = this.blockIndex + (t - this.blockBase);
        return true;
      default:
        return this.withinDense(t);
    }
  }

  private withinDense(t: number): boolean {
    // A mapping's view is re-read from `bytes` (not kept across calls), so a closed file throws
    // there instead of faulting on unmapped memory.
    if (this.bytes.mapping !== null) this.dense = this.bytes.bytes;
    const d = this.dense;
    const low = t - this.blockBase;
    const targetWord = low >>> 5;
    if (this.wordsPerRank !== 0 && targetWord - this.wordIndex >= this.wordsPerRank) {
      const r = Math.floor(targetWord / this.wordsPerRank);
      const q = this.denseRank + 2 * r;
      this.onesBefore = (d[q] << 8) | d[q + 1];
      this.wordIndex = r * this.wordsPerRank;
    }
    while (this.wordIndex < targetWord) this.onesBefore += popcount32(this.word(d, this.wordIndex++));
    let w = this.word(d, this.wordIndex) & (-1 << (low & 31));
    while (w === 0) {
      this.onesBefore += popcount32(this.word(d, this.wordIndex));
      if (++this.wordIndex === DISI_DENSE_BLOCK_LONGS * 2) return false;
      w = this.word(d, this.wordIndex);
    }
    const bit = 31 - Math.clz32(w & -w);
    this.pos = this.blockBase + (this.wordIndex << 5) + bit;
    const below = bit === 0 ? 0 : this.word(d, this.wordIndex) & (0xffffffff >>> (32 - bit));
    this.posIndex = this.blockIndex + this.onesBefore + popcount32(below);
    return true;
  }

  private word(d: Uint8Array, i: number): number {
    const q = this.denseWords + 4 * i;
    return d[q] | (d[q + 1] << 8) | (d[q + 2] << 16) | (d[q + 3] << 24);
  }
}

function readInt(b: Uint8Array, p: number): number {
  return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
}
