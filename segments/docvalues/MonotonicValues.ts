import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { decodePacked, packedSpan, readPackedAt } from '../packed/DirectReader.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { MonotonicEntry } from './DocValuesEntries.js';

/**
 * A DirectMonotonic table (addresses of SORTED_SET / SORTED_NUMERIC / BINARY values, terms block
 * and reverse-index addresses) read in place from `.dvd`: value(i) = min + (long)(avg x j) +
 * packed(j) for j = i's position in its block, the models coming from `.dvm`
 * (packed/DirectMonotonicReader.ts documents the encoding and decodes tables held in memory).
 * Addresses are file offsets and value counts, far below 2^53, so they are numbers.
 */
export class MonotonicValues {
  private readonly mask: number;
  private readonly shift: number;

  constructor(
    private readonly entry: MonotonicEntry,
    private readonly data: RandomAccessBytes,
  ) {
    const { meta } = entry;
    this.shift = meta.blockShift;
    this.mask = 2 ** meta.blockShift - 1;
    const blockSize = 2 ** meta.blockShift;
    meta.blocks.forEach((b, i) => {
      const n = Math.min(blockSize, meta.numValues - i * blockSize);
      if (b.bitsPerValue !== 0 && b.offset + Math.ceil((n * b.bitsPerValue) / 8) > entry.length) {
        throw new CorruptIndexException(`DirectMonotonic block ${i} [${b.offset}, ...) runs past its ${entry.length} bytes`, data.name);
      }
    });
  }

  get size(): number {
    return this.entry.meta.numValues;
  }

  get(index: number): number {
    const meta = this.entry.meta;
    if (!(index >= 0 && index < meta.numValues)) throw new RangeError(`index ${index} out of [0, ${meta.numValues})`);
    const block = index >>> this.shift;
    const j = index & this.mask;
    const b = meta.blocks[block];
    let v = b.min + Math.trunc(Math.fround(b.avg * j));
    if (b.bitsPerValue !== 0) {
      const bit = j * b.bitsPerValue;
      const span = packedSpan(bit & 7, b.bitsPerValue);
      const p = this.data.load(this.entry.offset + b.offset + Math.floor(bit / 8), span);
      v += readPackedAt(this.data.bytes, p, bit & 7, b.bitsPerValue);
    }
    return v;
  }

  /** Every value, in order, into `out` (a block's packed deltas are read in one go). */
  decodeAll<T extends Int32Array | Float64Array>(out: T): T {
    const meta = this.entry.meta;
    const blockSize = 2 ** meta.blockShift;
    const n = meta.numValues;
    if (out.length < n) throw new RangeError(`output of ${out.length} for ${n} values`);
    const scratch = out instanceof Float64Array ? out : new Float64Array(Math.min(blockSize, n));
    for (let block = 0, start = 0; start < n; block++, start += blockSize) {
      const b = meta.blocks[block];
      const count = Math.min(blockSize, n - start);
      const base = scratch === out ? start : 0;
      if (b.bitsPerValue === 0) {
        scratch.fill(0, base, base + count);
      } else {
        const bytes = Math.ceil((count * b.bitsPerValue) / 8);
        const p = this.data.load(this.entry.offset + b.offset, bytes);
        decodePacked(this.data.bytes, p, b.bitsPerValue, count, scratch, base);
      }
      for (let j = 0; j < count; j++) out[start + j] = b.min + Math.trunc(Math.fround(b.avg * j)) + scratch[base + j];
    }
    return out;
  }
}
