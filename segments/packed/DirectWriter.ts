import type { DataOutput } from '../store/DataOutput.js';

/**
 * Lucene's DirectWriter layout (util/packed/DirectWriter.java): `numValues` unsigned integers of a
 * fixed width, packed back to back into a little-endian bit stream (value i occupies bits
 * [i*bpv, (i+1)*bpv), bit 0 being the low bit of byte 0), followed by 0-3 zero padding bytes so
 * that Lucene's readers can load any value with one short/int/long read: ceil(numValues x bpv / 8)
 * data bytes, then ceil(p / 8) bytes with p = 64 - bpv above 32 bits, 32 - bpv above 16,
 * 16 - bpv above 8, else 0 (paddingBytesNeeded). The width is not stored: the meta file that
 * points at the table gives it (e.g. a DirectMonotonic block's bitsPerValue).
 *
 * Only the widths in SUPPORTED_BITS_PER_VALUE exist on disk. Widths above 32 are multiples of 8.
 * A number value must be an integer below 2^53 (larger ones are rejected rather than silently
 * rounded); a bigint carries any unsigned value of the width, up to 2^64 - 1 (doc values).
 */
export const SUPPORTED_BITS_PER_VALUE: readonly number[] = [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64];

const TWO_32 = 0x1_0000_0000;

export class DirectWriter {
  private count = 0;
  private finished = false;
  /** Bits not yet emitted (fewer than 8 between calls), as a non-negative integer. */
  private pending = 0;
  private pendingBits = 0;
  private readonly max: number;

  private constructor(
    private readonly out: DataOutput,
    readonly numValues: number,
    readonly bitsPerValue: number,
  ) {
    this.max = bitsPerValue >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** bitsPerValue - 1;
  }

  static getInstance(out: DataOutput, numValues: number, bitsPerValue: number): DirectWriter {
    checkBitsPerValue(bitsPerValue);
    if (!Number.isSafeInteger(numValues) || numValues < 0) throw new RangeError(`invalid numValues ${numValues}`);
    return new DirectWriter(out, numValues, bitsPerValue);
  }

  add(v: number | bigint): void {
    if (this.finished) throw new Error('DirectWriter already finished');
    if (this.count >= this.numValues) throw new RangeError('Writing past end of stream');
    if (typeof v === 'bigint') {
      this.addBig(v);
      return;
    }
    if (!Number.isInteger(v) || v < 0 || v > this.max) {
      throw new RangeError(`value ${v} does not fit in ${this.bitsPerValue} unsigned bits`);
    }
    const bpv = this.bitsPerValue;
    if (bpv <= 32) {
      this.append(v, bpv);
    } else {
      const hi = Math.floor(v / TWO_32);
      this.append(v - hi * TWO_32, 32);
      this.append(hi, bpv - 32);
    }
    this.count++;
  }

  private addBig(v: bigint): void {
    const bpv = this.bitsPerValue;
    if (v < 0n || v >= 1n << BigInt(bpv)) throw new RangeError(`value ${v} does not fit in ${bpv} unsigned bits`);
    const lo = Number(v & 0xffffffffn);
    if (bpv <= 32) {
      this.append(lo, bpv);
    } else {
      this.append(lo, 32);
      this.append(Number(v >> 32n), bpv - 32);
    }
    this.count++;
  }

  /** Appends the low `bits` (<= 32) bits of x to the stream. */
  private append(x: number, bits: number): void {
    let acc = this.pending + x * 2 ** this.pendingBits; // < 2^40
    let n = this.pendingBits + bits;
    while (n >= 8) {
      const b = acc % 256;
      this.out.writeByte(b);
      acc = (acc - b) / 256;
      n -= 8;
    }
    this.pending = acc;
    this.pendingBits = n;
  }

  finish(): void {
    if (this.count !== this.numValues) {
      throw new Error(`Wrong number of values added, expected: ${this.numValues}, got: ${this.count}`);
    }
    if (this.finished) throw new Error('DirectWriter already finished');
    if (this.pendingBits > 0) {
      this.out.writeByte(this.pending);
      this.pending = 0;
      this.pendingBits = 0;
    }
    const pad = paddingBytesNeeded(this.bitsPerValue);
    for (let i = 0; i < pad; i++) this.out.writeByte(0);
    this.finished = true;
  }

  /** Bits needed for values in [0, maxValue], rounded up to a supported width (maxValue 0 needs 1 bit). */
  static bitsRequired(maxValue: number): number {
    if (!Number.isInteger(maxValue) || maxValue < 0) throw new RangeError(`maxValue must be a non-negative integer: ${maxValue}`);
    return roundBits(bitLength(maxValue));
  }

  /**
   * Same as bitsRequired; a bigint is read as the unsigned 64-bit pattern of an int64, as Lucene's
   * unsignedBitsRequired(long) does (a negative long, e.g. an overflowed max - min, needs 64 bits).
   */
  static unsignedBitsRequired(maxValue: number | bigint): number {
    if (typeof maxValue === 'number') return DirectWriter.bitsRequired(maxValue);
    const u = BigInt.asUintN(64, maxValue);
    return roundBits(u === 0n ? 1 : u.toString(2).length);
  }

  /** Bytes written for numValues values of bitsPerValue bits, including the trailing padding. */
  static bytesRequired(numValues: number, bitsPerValue: number): number {
    checkBitsPerValue(bitsPerValue);
    return Math.ceil((numValues * bitsPerValue) / 8) + paddingBytesNeeded(bitsPerValue);
  }
}

export function isSupportedBitsPerValue(bpv: number): boolean {
  return SUPPORTED_BITS_PER_VALUE.includes(bpv);
}

function checkBitsPerValue(bpv: number): void {
  if (!isSupportedBitsPerValue(bpv)) throw new RangeError(`Unsupported bitsPerValue ${bpv}. Did you use bitsRequired?`);
}

function roundBits(bits: number): number {
  for (const b of SUPPORTED_BITS_PER_VALUE) if (b >= bits) return b;
  throw new RangeError(`no supported width for ${bits} bits`);
}

/** max(1, number of significant bits), like PackedInts.bitsRequired. */
function bitLength(v: number): number {
  if (v === 0) return 1;
  if (v < TWO_32) return 32 - Math.clz32(v);
  return 32 + (32 - Math.clz32(Math.floor(v / TWO_32)));
}

/** Zero bytes after the data so the widest single read of Lucene's readers stays in bounds. */
export function paddingBytesNeeded(bpv: number): number {
  const paddingBits = bpv > 32 ? 64 - bpv : bpv > 16 ? 32 - bpv : bpv > 8 ? 16 - bpv : 0;
  return Math.ceil(paddingBits / 8);
}
