import { CorruptIndexException } from '../codec/CorruptIndexException.js';

/**
 * Reads Lucene's encodings (see DataOutput) from a byte array. Every read is bounds-checked: a
 * read past the end throws CorruptIndexException naming the resource, never returns garbage.
 */
export class ByteArrayDataInput {
  private readonly view: DataView;
  private pos: number;
  private readonly end: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly resource = 'input',
    offset = 0,
    length = bytes.length - offset,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = offset;
    this.end = offset + length;
  }

  get position(): number {
    return this.pos;
  }

  set position(p: number) {
    if (p < 0 || p > this.end) throw new CorruptIndexException(`seek to ${p} beyond end ${this.end}`, this.resource);
    this.pos = p;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  eof(): boolean {
    return this.pos >= this.end;
  }

  private need(n: number): number {
    const p = this.pos;
    if (p + n > this.end) throw new CorruptIndexException(`read past EOF (need ${n} bytes at ${p}, length ${this.end})`, this.resource);
    this.pos = p + n;
    return p;
  }

  skipBytes(n: number): void {
    this.need(n);
  }

  readByte(): number {
    return this.bytes[this.need(1)];
  }

  /** A signed byte, as Java's readByte returns it. */
  readSignedByte(): number {
    return (this.bytes[this.need(1)] << 24) >> 24;
  }

  readBytes(n: number): Uint8Array {
    const p = this.need(n);
    return this.bytes.subarray(p, p + n);
  }

  readShort(): number {
    return this.view.getInt16(this.need(2), true);
  }

  readInt(): number {
    return this.view.getInt32(this.need(4), true);
  }

  readFloat(): number {
    return this.view.getFloat32(this.need(4), true);
  }

  readLong(): number {
    const p = this.need(8);
    return toSafe(this.view.getBigInt64(p, true), this.resource);
  }

  /** An int64 exactly, as a bigint (for values that may exceed ±2^53: doc values minimums, GCDs, tables). */
  readLongAsBigInt(): bigint {
    return this.view.getBigInt64(this.need(8), true);
  }

  readBEInt(): number {
    return this.view.getInt32(this.need(4), false);
  }

  readBELong(): number {
    return toSafe(this.view.getBigInt64(this.need(8), false), this.resource);
  }

  readVInt(): number {
    let b = this.readByte();
    let v = b & 0x7f;
    for (let shift = 7; b & 0x80; shift += 7) {
      if (shift > 28) throw new CorruptIndexException('invalid vint (more than 5 bytes)', this.resource);
      b = this.readByte();
      // The 5th byte holds only the top 4 bits of an int; anything more is corruption (as Lucene rejects it).
      if (shift === 28 && (b & 0xf0) !== 0) throw new CorruptIndexException('invalid vint (bits beyond 32)', this.resource);
      v |= (b & 0x7f) << shift;
    }
    return v | 0;
  }

  readVLong(): number {
    let b = this.readByte();
    let v = b & 0x7f;
    let mul = 128;
    while (b & 0x80) {
      if (mul > 2 ** 56) throw new CorruptIndexException('invalid vlong (more than 9 bytes)', this.resource);
      b = this.readByte();
      v += (b & 0x7f) * mul;
      mul *= 128;
    }
    if (!Number.isSafeInteger(v)) throw new CorruptIndexException(`vlong ${v} exceeds 2^53`, this.resource);
    return v;
  }

  readString(): string {
    const len = this.readVInt();
    if (len < 0) throw new CorruptIndexException(`negative string length ${len}`, this.resource);
    return new TextDecoder('utf-8', { fatal: false }).decode(this.readBytes(len));
  }

  readMapOfStrings(): Map<string, string> {
    const n = this.readCount('map size');
    const m = new Map<string, string>();
    for (let i = 0; i < n; i++) m.set(this.readString(), this.readString());
    return m;
  }

  readSetOfStrings(): Set<string> {
    const n = this.readCount('set size');
    const s = new Set<string>();
    for (let i = 0; i < n; i++) s.add(this.readString());
    return s;
  }

  /** Reads `limit` group-varint encoded values into dst (see DataOutput.writeGroupVInts). */
  readGroupVInts(dst: Int32Array | number[], limit: number): void {
    let i = 0;
    for (; i + 4 <= limit; i += 4) {
      const flag = this.readByte();
      for (let j = 0; j < 4; j++) {
        const n = ((flag >>> (6 - 2 * j)) & 3) + 1;
        let v = 0;
        for (let b = 0; b < n; b++) v |= this.readByte() << (8 * b);
        dst[i + j] = v | 0;
      }
    }
    for (; i < limit; i++) dst[i] = this.readVInt();
  }

  private readCount(what: string): number {
    const n = this.readVInt();
    if (n < 0 || n > this.remaining) throw new CorruptIndexException(`invalid ${what} ${n}`, this.resource);
    return n;
  }
}

function toSafe(v: bigint, resource: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new CorruptIndexException(`int64 ${v} exceeds 2^53`, resource);
  }
  return Number(v);
}
