import type { DataOutput } from '../store/DataOutput.js';
import { DISI_BLOCK_SIZE, DISI_DEFAULT_DENSE_RANK_POWER, DISI_DENSE_BLOCK_LONGS, DISI_MAX_ARRAY_LENGTH } from './IndexedDISI.js';

/** What a reader needs besides the bytes: the meta file stores both (doc values, sparse vectors). */
export interface WrittenDISI {
  /** Jump-table entries after the blocks (0: none). */
  readonly jumpTableEntryCount: number;
  /** Bytes written: blocks, sentinel and jump table. */
  readonly length: number;
}

/**
 * Writes a doc set in Lucene's IndexedDISI layout (documented in IndexedDISI.ts), byte for byte as
 * Lucene's writer does, so that Lucene's reader reads it: one block per non-empty range of 65536
 * docs (SPARSE shorts up to 4095 docs, DENSE rank table + bitmap up to 65535, ALL for a full
 * block), the NO_MORE_DOCS sentinel block, then the jump table, which a set whose only block is
 * block 0 does without.
 *
 * `docs` holds the first `count` docs of the set, strictly increasing.
 */
export function writeIndexedDISI(docs: ArrayLike<number>, count: number, out: DataOutput, denseRankPower: number = DISI_DEFAULT_DENSE_RANK_POWER): WrittenDISI {
  if (denseRankPower !== -1 && (denseRankPower < 7 || denseRankPower > 15)) {
    throw new RangeError(`denseRankPower must be 7-15 or -1, got ${denseRankPower}`);
  }
  let written = 0;
  const short = (v: number) => {
    out.writeShort(v);
    written += 2;
  };
  // jump[b] = (docs in blocks before b, offset of the first written block >= b), filled up to the
  // last real block + 1, which points at the sentinel.
  const jumpIndex: number[] = [];
  const jumpOffset: number[] = [];
  const words = new Uint32Array(DISI_DENSE_BLOCK_LONGS * 2);
  let i = 0;
  let total = 0;
  let prevBlock = -1;
  while (i < count) {
    const block = docs[i] >>> 16;
    if (block <= prevBlock) throw new RangeError(`docs must increase: ${docs[i]} after block ${prevBlock}`);
    let end = i;
    let last = -1;
    while (end < count && docs[end] >>> 16 === block) {
      if (docs[end] <= last) throw new RangeError(`docs must increase: ${docs[end]} after ${last}`);
      last = docs[end++];
    }
    for (let b = prevBlock + 1; b <= block; b++) {
      jumpIndex[b] = total;
      jumpOffset[b] = written;
    }
    const cardinality = end - i;
    short(block);
    short(cardinality - 1);
    if (cardinality <= DISI_MAX_ARRAY_LENGTH) {
      for (let k = i; k < end; k++) short(docs[k] & 0xffff);
    } else if (cardinality < DISI_BLOCK_SIZE) {
      words.fill(0);
      for (let k = i; k < end; k++) {
        const low = docs[k] & 0xffff;
        words[low >>> 5] |= 1 << (low & 31);
      }
      if (denseRankPower !== -1) {
        const rank = denseRank(words, denseRankPower);
        out.writeBytes(rank);
        written += rank.length;
      }
      // 1024 little-endian longs are the 2048 little-endian 32-bit words, in order.
      const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
      out.writeBytes(bytes);
      written += bytes.length;
    }
    total += cardinality;
    prevBlock = block;
    i = end;
  }
  const lastBlock = prevBlock + 1; // the logical empty block after the real ones (0 for an empty set)
  jumpIndex[lastBlock] = total;
  jumpOffset[lastBlock] = written;
  short(0x7fff); // NO_MORE_DOCS >>> 16
  short(0);
  short(0xffff);
  // A single real block plus the sentinel gets no table: jumping could only land on block 0.
  const entries = lastBlock + 1 === 2 ? 0 : lastBlock + 1;
  for (let b = 0; b < entries; b++) {
    out.writeInt(jumpIndex[b]);
    out.writeInt(jumpOffset[b]);
    written += 8;
  }
  return { jumpTableEntryCount: entries, length: written };
}

/** The DENSE rank table: the set bits before every 2^power docs of the block, as big-endian shorts. */
function denseRank(words: Uint32Array, power: number): Uint8Array {
  const wordsPerRank = 1 << (power - 5);
  const rank = new Uint8Array((DISI_BLOCK_SIZE >>> power) * 2);
  let bits = 0;
  for (let w = 0; w < words.length; w++) {
    if (w % wordsPerRank === 0) {
      const r = (w / wordsPerRank) * 2;
      rank[r] = bits >>> 8;
      rank[r + 1] = bits & 0xff;
    }
    bits += popcount32(words[w]);
  }
  return rank;
}

export function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}
