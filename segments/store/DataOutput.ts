/**
 * Lucene's DataOutput encodings, the primitives every file layout in segments/ is written in
 * (see segments/FORMATS.md for the map of files):
 *
 * | type            | bytes                                                                          |
 * |-----------------|--------------------------------------------------------------------------------|
 * | byte            | 1 byte (signed where Java reads a byte: readSignedByte)                         |
 * | short/int/long  | 2/4/8 bytes, little-endian (a number int64 is limited to +-2^53; a bigint is exact) |
 * | float           | the IEEE-754 float32 bits, 4 bytes little-endian                               |
 * | BE int / BE long| 4/8 bytes big-endian: the CodecUtil header/footer and most of segments_N       |
 * | vint            | 1-5 bytes, 7 bits each, low-order group first, high bit = "more follows"; a     |
 * |                 | negative int is its unsigned 32-bit pattern (5 bytes). e.g. 300 = AC 02        |
 * | vlong           | the same over a non-negative int64, 1-9 bytes                                  |
 * | string          | vint byte length, then UTF-8 bytes                                             |
 * | map of strings  | vint count, then count (key string, value string) pairs                        |
 * | set of strings  | vint count, then count strings                                                 |
 * | group-varints   | per full group of 4 values a flag byte (2 bits per value = byte length - 1,    |
 * |                 | first value in bits 7-6), then each value in 1-4 LE bytes; a tail of < 4       |
 * |                 | values as plain vints. e.g. [3, 300, 70000, 1] = 18 03 2C 01 70 11 01 01       |
 *
 * Readers (ByteArrayDataInput) reject a vint longer than 5 bytes or with bits beyond 32, a vlong
 * beyond 2^53, and any read past the end, naming the file.
 */
export abstract class DataOutput {
  private readonly scratch = new DataView(new ArrayBuffer(8));
  private readonly scratchBytes = new Uint8Array(this.scratch.buffer);

  abstract writeByte(b: number): void;
  abstract writeBytes(bytes: Uint8Array, offset?: number, length?: number): void;

  writeShort(v: number): void {
    this.scratch.setInt16(0, v, true);
    this.writeBytes(this.scratchBytes, 0, 2);
  }

  writeInt(v: number): void {
    this.scratch.setInt32(0, v, true);
    this.writeBytes(this.scratchBytes, 0, 4);
  }

  writeFloat(v: number): void {
    this.scratch.setFloat32(0, v, true);
    this.writeBytes(this.scratchBytes, 0, 4);
  }

  /**
   * int64. A number must be a safe integer (±2^53, which covers every offset and length); a bigint
   * carries any int64 exactly (doc values: minimums, GCDs, table entries).
   */
  writeLong(v: number | bigint): void {
    if (typeof v === 'number') checkSafeInteger(v, 'long');
    else if (v !== BigInt.asIntN(64, v)) throw new RangeError(`long out of the int64 range: ${v}`);
    this.scratch.setBigInt64(0, BigInt(v), true);
    this.writeBytes(this.scratchBytes, 0, 8);
  }

  writeBEInt(v: number): void {
    this.scratch.setInt32(0, v, false);
    this.writeBytes(this.scratchBytes, 0, 4);
  }

  writeBELong(v: number | bigint): void {
    if (typeof v === 'number') checkSafeInteger(v, 'long');
    this.scratch.setBigInt64(0, BigInt(v), false);
    this.writeBytes(this.scratchBytes, 0, 8);
  }

  writeVInt(v: number): void {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0xffffffff) throw new RangeError(`vint out of range: ${v}`);
    let i = v >>> 0; // negative ints are written as their unsigned 32-bit pattern (5 bytes), as Lucene does
    while (i > 0x7f) {
      this.writeByte((i & 0x7f) | 0x80);
      i >>>= 7;
    }
    this.writeByte(i);
  }

  writeVLong(v: number): void {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`vlong must be a non-negative safe integer: ${v}`);
    while (v > 0x7f) {
      this.writeByte((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    this.writeByte(v);
  }

  writeString(s: string): void {
    const bytes = new TextEncoder().encode(s);
    this.writeVInt(bytes.length);
    this.writeBytes(bytes);
  }

  writeMapOfStrings(map: ReadonlyMap<string, string> | Record<string, string>): void {
    const entries = map instanceof Map ? [...map.entries()] : Object.entries(map);
    this.writeVInt(entries.length);
    for (const [k, v] of entries) {
      this.writeString(k);
      this.writeString(v);
    }
  }

  writeSetOfStrings(set: Iterable<string>): void {
    const values = [...set];
    this.writeVInt(values.length);
    for (const v of values) this.writeString(v);
  }

  /**
   * Group-varint: each full group of 4 values is a flag byte (2 bits per value: byte length - 1,
   * first value in the top bits) followed by the values in 1-4 little-endian bytes. A tail of
   * fewer than 4 values is written as plain vints.
   */
  writeGroupVInts(values: ArrayLike<number>, limit: number = values.length): void {
    let i = 0;
    for (; i + 4 <= limit; i += 4) {
      let flag = 0;
      for (let j = 0; j < 4; j++) flag |= (numBytes(values[i + j]) - 1) << (6 - 2 * j);
      this.writeByte(flag);
      for (let j = 0; j < 4; j++) {
        let v = values[i + j] >>> 0;
        const n = numBytes(v);
        for (let b = 0; b < n; b++) {
          this.writeByte(v & 0xff);
          v >>>= 8;
        }
      }
    }
    for (; i < limit; i++) this.writeVInt(values[i]);
  }
}

function numBytes(v: number): number {
  const u = v >>> 0;
  return u < 0x100 ? 1 : u < 0x10000 ? 2 : u < 0x1000000 ? 3 : 4;
}

function checkSafeInteger(v: number, what: string): void {
  if (!Number.isSafeInteger(v)) throw new RangeError(`${what} must be a safe integer: ${v}`);
}

/** A growable in-memory output; `toBytes()` returns the written bytes (a copy-free view). */
export class ByteArrayDataOutput extends DataOutput {
  private buf: Uint8Array;
  private len = 0;

  constructor(initialCapacity = 256) {
    super();
    this.buf = new Uint8Array(initialCapacity);
  }

  get length(): number {
    return this.len;
  }

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + extra) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  writeByte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b & 0xff;
  }

  writeBytes(bytes: Uint8Array, offset = 0, length = bytes.length - offset): void {
    this.ensure(length);
    this.buf.set(bytes.subarray(offset, offset + length), this.len);
    this.len += length;
  }

  toBytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  reset(): void {
    this.len = 0;
  }
}
