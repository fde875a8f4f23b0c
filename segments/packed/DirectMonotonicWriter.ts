import type { DataOutput } from '../store/DataOutput.js';
import { DirectWriter } from './DirectWriter.js';

export const MIN_BLOCK_SHIFT = 2;
export const MAX_BLOCK_SHIFT = 22;

/**
 * Lucene's DirectMonotonicWriter: a non-decreasing sequence split into blocks of 2^blockShift
 * values. Per block the meta output gets int64 min, int32 float bits of the average increment,
 * int64 offset of the block's packed data (relative to where this writer started writing data),
 * int8 bitsPerValue (0 = every delta is zero and nothing is written to data). The data output gets
 * the deltas from the linear model `min + (long)(avg * i)` as a DirectWriter block.
 *
 * The float arithmetic matches Java's: the average is a double quotient rounded to float, the
 * expected value is a float product truncated toward zero.
 */
export class DirectMonotonicWriter {
  private readonly buffer: Float64Array;
  private bufferSize = 0;
  private count = 0;
  private previous = -Infinity;
  private finished = false;
  /** Bytes written to `data` so far: Lucene's `data.getFilePointer() - baseDataPointer`. */
  private dataWritten = 0;

  private constructor(
    private readonly meta: DataOutput,
    private readonly data: DataOutput,
    readonly numValues: number,
    readonly blockShift: number,
  ) {
    this.buffer = new Float64Array(Math.min(numValues, 2 ** blockShift));
  }

  static getInstance(meta: DataOutput, data: DataOutput, numValues: number, blockShift: number): DirectMonotonicWriter {
    if (!Number.isInteger(blockShift) || blockShift < MIN_BLOCK_SHIFT || blockShift > MAX_BLOCK_SHIFT) {
      throw new RangeError(`blockShift must be in [${MIN_BLOCK_SHIFT}-${MAX_BLOCK_SHIFT}], got ${blockShift}`);
    }
    if (!Number.isSafeInteger(numValues) || numValues < 0) throw new RangeError(`numValues can't be negative, got ${numValues}`);
    return new DirectMonotonicWriter(meta, data, numValues, blockShift);
  }

  add(v: number): void {
    if (!Number.isSafeInteger(v)) throw new RangeError(`value must be a safe integer: ${v}`);
    if (v < this.previous) throw new RangeError(`Values do not come in order: ${this.previous}, ${v}`);
    if (this.count >= this.numValues) throw new RangeError(`more than ${this.numValues} values added`);
    if (this.bufferSize === this.buffer.length) this.flush();
    this.buffer[this.bufferSize++] = v;
    this.previous = v;
    this.count++;
  }

  finish(): void {
    if (this.count !== this.numValues) {
      throw new Error(`Wrong number of values added, expected: ${this.numValues}, got: ${this.count}`);
    }
    if (this.finished) throw new Error('#finish has been called already');
    if (this.bufferSize > 0) this.flush();
    this.finished = true;
  }

  private flush(): void {
    const buf = this.buffer;
    const n = this.bufferSize;
    const avgInc = Math.fround((buf[n - 1] - buf[0]) / Math.max(1, n - 1));
    let min = Infinity;
    for (let i = 0; i < n; i++) {
      buf[i] -= Math.trunc(Math.fround(avgInc * i));
      if (buf[i] < min) min = buf[i];
    }
    let maxDelta = 0;
    for (let i = 0; i < n; i++) {
      buf[i] -= min;
      if (buf[i] > maxDelta) maxDelta = buf[i];
    }
    this.meta.writeLong(min);
    this.meta.writeFloat(avgInc);
    this.meta.writeLong(this.dataWritten);
    if (maxDelta === 0) {
      this.meta.writeByte(0);
    } else {
      const bpv = DirectWriter.unsignedBitsRequired(maxDelta);
      const w = DirectWriter.getInstance(this.data, n, bpv);
      for (let i = 0; i < n; i++) w.add(buf[i]);
      w.finish();
      this.dataWritten += DirectWriter.bytesRequired(n, bpv);
      this.meta.writeByte(bpv);
    }
    this.bufferSize = 0;
  }
}
