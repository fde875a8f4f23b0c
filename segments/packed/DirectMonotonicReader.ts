import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { DirectReader } from './DirectReader.js';
import { isSupportedBitsPerValue } from './DirectWriter.js';

/** One block's entry in the meta file (the same shape flat/OrdToDoc.ts reads). */
export interface MonotonicBlock {
  readonly min: number;
  readonly avg: number;
  /** Offset of the block's packed deltas, relative to the start of this sequence's data. */
  readonly offset: number;
  readonly bitsPerValue: number;
}

/** Lucene's DirectMonotonicReader.Meta: the per-block models, read from the meta file. */
export class DirectMonotonicMeta {
  constructor(
    readonly numValues: number,
    readonly blockShift: number,
    readonly blocks: readonly MonotonicBlock[],
  ) {
    const expected = numBlocks(numValues, blockShift);
    if (blocks.length !== expected) throw new RangeError(`expected ${expected} blocks for ${numValues} values, got ${blocks.length}`);
  }

  /** Reads ceil(numValues / 2^blockShift) block entries: int64 min, int32 float bits, int64 offset, int8 bpv. */
  static load(input: ByteArrayDataInput, numValues: number, blockShift: number): DirectMonotonicMeta {
    const r = input.resource;
    if (!Number.isInteger(blockShift) || blockShift < 0 || blockShift > 30) {
      throw new CorruptIndexException(`invalid DirectMonotonic blockShift ${blockShift}`, r);
    }
    const n = numBlocks(numValues, blockShift);
    // each block entry is 21 bytes: refuse counts the input cannot hold before allocating
    if (n * 21 > input.remaining) throw new CorruptIndexException(`DirectMonotonic meta for ${numValues} values exceeds the file`, r);
    const blocks: MonotonicBlock[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const min = input.readLong();
      const avg = input.readFloat();
      const offset = input.readLong();
      const bitsPerValue = input.readByte();
      if (bitsPerValue !== 0 && !isSupportedBitsPerValue(bitsPerValue)) {
        throw new CorruptIndexException(`invalid bitsPerValue ${bitsPerValue} in DirectMonotonic block ${i}`, r);
      }
      if (offset < 0) throw new CorruptIndexException(`negative DirectMonotonic block offset ${offset}`, r);
      blocks[i] = { min, avg, offset, bitsPerValue };
    }
    return new DirectMonotonicMeta(numValues, blockShift, blocks);
  }
}

function numBlocks(numValues: number, blockShift: number): number {
  return numValues === 0 ? 0 : Math.floor((numValues - 1) / 2 ** blockShift) + 1;
}

/**
 * Decodes a DirectMonotonic sequence held in memory: value(i) = min_b + (long)(avg_b * j) + delta_b[j],
 * with b = i >>> blockShift and j the index within the block (float product, truncated toward zero).
 */
export class DirectMonotonicReader {
  private readonly readers: (DirectReader | null)[];
  private readonly mask: number;

  constructor(
    readonly meta: DirectMonotonicMeta,
    bytes: Uint8Array,
    /** Absolute position in `bytes` where this sequence's data starts (Lucene's slice start). */
    dataOffset = 0,
    /** Length of the data slice (block reads may not go past it). */
    dataLength = bytes.length - dataOffset,
    readonly resource = 'DirectMonotonic',
  ) {
    if (dataOffset < 0 || dataLength < 0 || dataOffset + dataLength > bytes.length) {
      throw new CorruptIndexException(`DirectMonotonic data [${dataOffset}, ${dataOffset + dataLength}) outside the file`, resource);
    }
    const end = dataOffset + dataLength;
    this.readers = meta.blocks.map((b) => {
      if (b.bitsPerValue === 0) return null;
      if (b.offset > dataLength) throw new CorruptIndexException(`DirectMonotonic block offset ${b.offset} beyond data length ${dataLength}`, resource);
      return new DirectReader(bytes, b.bitsPerValue, dataOffset + b.offset, end, resource);
    });
    this.mask = 2 ** meta.blockShift - 1;
  }

  get(index: number): number {
    if (!(index >= 0 && index < this.meta.numValues)) throw new RangeError(`index ${index} out of [0, ${this.meta.numValues})`);
    const block = Math.floor(index / 2 ** this.meta.blockShift);
    const j = index & this.mask;
    const b = this.meta.blocks[block];
    const r = this.readers[block];
    return b.min + Math.trunc(Math.fround(b.avg * j)) + (r === null ? 0 : r.get(j));
  }

  /** All values, in order. */
  decodeAll(out: Float64Array = new Float64Array(this.meta.numValues)): Float64Array {
    const blockSize = 2 ** this.meta.blockShift;
    const n = this.meta.numValues;
    for (let block = 0, i = 0; i < n; block++) {
      const b = this.meta.blocks[block];
      const r = this.readers[block];
      const end = Math.min(n, i + blockSize);
      for (let j = 0; i < end; i++, j++) out[i] = b.min + Math.trunc(Math.fround(b.avg * j)) + (r === null ? 0 : r.get(j));
    }
    return out;
  }

  /** Like Arrays.binarySearch over [from, to): the index of key, or -1 - insertionPoint. */
  binarySearch(from: number, to: number, key: number): number {
    let lo = from;
    let hi = to - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.get(mid);
      if (v < key) lo = mid + 1;
      else if (v > key) hi = mid - 1;
      else return mid;
    }
    return -1 - lo;
  }
}
