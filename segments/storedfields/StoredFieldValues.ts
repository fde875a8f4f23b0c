import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { DataOutput } from '../store/DataOutput.js';

/**
 * The value encodings of Lucene90StoredFieldsFormat's numeric field records. Each favours the
 * values stored most often: small integers in one byte, timestamps in a few.
 *
 * | encoding | first byte                         | then                                                    |
 * |----------|------------------------------------|---------------------------------------------------------|
 * | ZInt     | (a vint)                           | zig-zag int32 ((i << 1) ^ (i >> 31)) as a vint           |
 * | ZFloat   | 0x80 \| (v + 1) for an integer v in -1..125 (not -0.0) | nothing                        |
 * |          | 0xFF for a negative float (sign bit set, -0.0 and negative NaNs included) | the float32 bits, int32 LE |
 * |          | otherwise the top byte of the float32 bits (< 0x80: the sign is 0) | bits 8..15, bits 16..23, bits 0..7 (a LE short of bits 8..23, then the low byte) |
 * | ZDouble  | 0x80 \| (v + 1) for an integer v in -1..124 (not -0.0) | nothing                        |
 * |          | 0xFE when the double is exactly a float32 (infinities included) | the float32 bits, int32 LE |
 * |          | 0xFF for another negative double    | the float64 bits, int64 LE                                |
 * |          | otherwise the top byte of the float64 bits | bits 24..55 as int32 LE, bits 8..23 as int16 LE, bits 0..7 |
 * | TLong    | header: bits 7-6 unit (00 = 1, 01 = 1,000 (second), 10 = 3,600,000 (hour), 11 = 86,400,000 (day)), bit 5 = more bits follow, bits 4-0 = low 5 bits of z | a vlong of z >>> 5 when bit 5 is set |
 *
 * TLong: the value is divided by the largest unit that divides it exactly (day first, then hour,
 * then second; any value not a multiple of 1,000 has unit 1), zig-zag encoded as an int64 (z), and
 * split as in the header. A millisecond timestamp at day precision costs 2-3 bytes.
 *
 * Floats and doubles keep their exact bits (NaN is written as Java's canonical NaN,
 * 0x7FC00000 / 0x7FF8000000000000, as Float.floatToIntBits / Double.doubleToLongBits give them).
 */

const NEGATIVE_ZERO_FLOAT_BITS = 0x80000000;
const CANONICAL_NAN_FLOAT_BITS = 0x7fc00000;
const SECOND = 1000n;
const HOUR = 60n * 60n * SECOND;
const DAY = 24n * HOUR;
const SECOND_ENCODING = 0x40;
const HOUR_ENCODING = 0x80;
const DAY_ENCODING = 0xc0;

const scratch = new DataView(new ArrayBuffer(8));

/** Java's (int) cast of a float or double: truncation toward zero, saturating, NaN -> 0. */
function javaIntCast(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v >= 2147483647) return 2147483647;
  if (v <= -2147483648) return -2147483648;
  return Math.trunc(v);
}

function floatBits(f: number): number {
  if (Number.isNaN(f)) return CANONICAL_NAN_FLOAT_BITS;
  scratch.setFloat32(0, f, true);
  return scratch.getUint32(0, true);
}

function writeIntLE(out: DataOutput, v: number): void {
  out.writeByte(v & 0xff);
  out.writeByte((v >>> 8) & 0xff);
  out.writeByte((v >>> 16) & 0xff);
  out.writeByte((v >>> 24) & 0xff);
}

export function writeZInt(out: DataOutput, i: number): void {
  out.writeVInt((i << 1) ^ (i >> 31));
}

export function readZInt(input: ByteArrayDataInput): number {
  const z = input.readVInt();
  return (z >>> 1) ^ -(z & 1);
}

/** `f` is taken as a float32 (rounded with Math.fround). */
export function writeZFloat(out: DataOutput, value: number): void {
  const f = Math.fround(value);
  const intVal = javaIntCast(f);
  const bits = floatBits(f);
  if (f === intVal && intVal >= -1 && intVal <= 0x7d && bits !== NEGATIVE_ZERO_FLOAT_BITS) {
    out.writeByte(0x80 | (1 + intVal));
  } else if (bits >>> 31 === 0) {
    out.writeByte(bits >>> 24);
    out.writeByte((bits >>> 8) & 0xff);
    out.writeByte((bits >>> 16) & 0xff);
    out.writeByte(bits & 0xff);
  } else {
    out.writeByte(0xff);
    writeIntLE(out, bits);
  }
}

export function readZFloat(input: ByteArrayDataInput): number {
  const b = input.readByte();
  let bits: number;
  if (b === 0xff) {
    bits = input.readInt();
  } else if ((b & 0x80) !== 0) {
    return (b & 0x7f) - 1;
  } else {
    const s = input.readShort() & 0xffff;
    bits = (b << 24) | (s << 8) | input.readByte();
  }
  scratch.setInt32(0, bits, true);
  return scratch.getFloat32(0, true);
}

export function writeZDouble(out: DataOutput, d: number): void {
  const intVal = javaIntCast(d);
  if (Number.isNaN(d)) {
    scratch.setUint32(0, 0, true);
    scratch.setUint32(4, 0x7ff80000, true);
  } else {
    scratch.setFloat64(0, d, true);
  }
  const lo = scratch.getUint32(0, true);
  const hi = scratch.getUint32(4, true);
  const negativeZero = hi === 0x80000000 && lo === 0;
  if (d === intVal && intVal >= -1 && intVal <= 0x7c && !negativeZero) {
    out.writeByte(0x80 | (intVal + 1));
  } else if (d === Math.fround(d)) {
    out.writeByte(0xfe);
    writeIntLE(out, floatBits(d));
  } else if (hi >>> 31 === 0) {
    out.writeByte(hi >>> 24);
    writeIntLE(out, ((lo >>> 24) | (hi << 8)) >>> 0);
    out.writeByte((lo >>> 8) & 0xff);
    out.writeByte((lo >>> 16) & 0xff);
    out.writeByte(lo & 0xff);
  } else {
    out.writeByte(0xff);
    writeIntLE(out, lo);
    writeIntLE(out, hi);
  }
}

export function readZDouble(input: ByteArrayDataInput): number {
  const b = input.readByte();
  if (b === 0xff) {
    const lo = input.readInt();
    const hi = input.readInt();
    scratch.setInt32(0, lo, true);
    scratch.setInt32(4, hi, true);
    return scratch.getFloat64(0, true);
  }
  if (b === 0xfe) {
    scratch.setInt32(0, input.readInt(), true);
    return scratch.getFloat32(0, true);
  }
  if ((b & 0x80) !== 0) return (b & 0x7f) - 1;
  const i = input.readInt() >>> 0;
  const s = input.readShort() & 0xffff;
  const last = input.readByte();
  scratch.setUint32(4, ((b << 24) | (i >>> 8)) >>> 0, true);
  scratch.setUint32(0, ((i << 24) | (s << 8) | last) >>> 0, true);
  return scratch.getFloat64(0, true);
}

const MIN_LONG = -(1n << 63n);
const MAX_LONG = (1n << 63n) - 1n;

/** A Java long from a bigint or a safe-integer number; anything else is refused. */
export function toLong(value: bigint | number): bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`long must be a bigint or a safe integer, got ${value}`);
    return BigInt(value);
  }
  if (value < MIN_LONG || value > MAX_LONG) throw new RangeError(`long out of the int64 range: ${value}`);
  return value;
}

export function writeTLong(out: DataOutput, value: bigint): void {
  let l = value;
  let header: number;
  if (l % SECOND !== 0n) {
    header = 0;
  } else if (l % DAY === 0n) {
    header = DAY_ENCODING;
    l /= DAY;
  } else if (l % HOUR === 0n) {
    header = HOUR_ENCODING;
    l /= HOUR;
  } else {
    header = SECOND_ENCODING;
    l /= SECOND;
  }
  const zigZag = BigInt.asUintN(64, (l << 1n) ^ (l >> 63n));
  header |= Number(zigZag & 0x1fn);
  let upper = zigZag >> 5n;
  if (upper !== 0n) header |= 0x20;
  out.writeByte(header);
  // a vlong of up to 59 bits: 7 bits per byte, low groups first
  while (upper !== 0n) {
    const low = Number(upper & 0x7fn);
    upper >>= 7n;
    out.writeByte(upper !== 0n ? low | 0x80 : low);
  }
}

export function readTLong(input: ByteArrayDataInput): bigint {
  const header = input.readByte();
  let bits = BigInt(header & 0x1f);
  if ((header & 0x20) !== 0) {
    let shift = 5n;
    for (let i = 0; ; i++) {
      if (i === 9) throw new CorruptIndexException('invalid vlong (more than 9 bytes) in a long field', input.resource);
      const b = input.readByte();
      bits |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) break;
    }
    bits = BigInt.asUintN(64, bits);
  }
  let l = (bits >> 1n) ^ -(bits & 1n);
  switch (header & DAY_ENCODING) {
    case SECOND_ENCODING:
      l *= SECOND;
      break;
    case HOUR_ENCODING:
      l *= HOUR;
      break;
    case DAY_ENCODING:
      l *= DAY;
      break;
  }
  // Java's long arithmetic wraps; a corrupt multiplier must not produce a value outside int64
  return BigInt.asIntN(64, l);
}
