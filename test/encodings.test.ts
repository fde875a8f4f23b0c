import { describe, expect, it } from 'vitest';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { ByteArrayDataInput } from '../segments/store/DataInput.js';
import { appendFooter, indexHeaderLength, openChecksummed, writeIndexHeader, checkIndexHeader } from '../segments/codec/CodecUtil.js';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase().match(/../g)!.join(' ');

describe('Lucene DataOutput encodings (segments/store/DataOutput.ts)', () => {
  it('writes vint 300 as AC 02 and 768 as 80 06', () => {
    const out = new ByteArrayDataOutput();
    out.writeVInt(300);
    expect(hex(out.toBytes())).toBe('AC 02');
    out.reset();
    out.writeVInt(768);
    expect(hex(out.toBytes())).toBe('80 06');
  });

  it('writes group-varint [3, 300, 70000, 1] as 18 03 2C 01 70 11 01 01', () => {
    const out = new ByteArrayDataOutput();
    out.writeGroupVInts([3, 300, 70000, 1]);
    expect(hex(out.toBytes())).toBe('18 03 2C 01 70 11 01 01');
  });

  it('round-trips every encoding, including group-varint tails written as vints', () => {
    const out = new ByteArrayDataOutput();
    out.writeInt(-7);
    out.writeLong(-1);
    out.writeLong(2 ** 40 + 3);
    out.writeVLong(2 ** 50 + 1);
    out.writeVInt(-1);
    out.writeString('héllo');
    out.writeMapOfStrings({ a: 'b' });
    out.writeSetOfStrings(['x', 'y']);
    out.writeGroupVInts([1, 2, 3, 4, 5, 600000]);
    out.writeBELong(-2);
    const input = new ByteArrayDataInput(out.toBytes());
    expect(input.readInt()).toBe(-7);
    expect(input.readLong()).toBe(-1);
    expect(input.readLong()).toBe(2 ** 40 + 3);
    expect(input.readVLong()).toBe(2 ** 50 + 1);
    expect(input.readVInt()).toBe(-1);
    expect(input.readString()).toBe('héllo');
    expect([...input.readMapOfStrings()]).toEqual([['a', 'b']]);
    expect([...input.readSetOfStrings()]).toEqual(['x', 'y']);
    const g = new Int32Array(6);
    input.readGroupVInts(g, 6);
    expect([...g]).toEqual([1, 2, 3, 4, 5, 600000]);
    expect(input.readBELong()).toBe(-2);
    expect(input.eof()).toBe(true);
  });

  it('refuses to read past the end, naming the resource', () => {
    const input = new ByteArrayDataInput(new Uint8Array([1, 2]), 'tiny.bin');
    expect(() => input.readInt()).toThrow(/tiny\.bin/);
  });
});

describe('CodecUtil header and footer (segments/codec/CodecUtil.ts)', () => {
  const id = new Uint8Array(16).map((_, i) => i);

  it('starts with codec magic 3F D7 6C 17 and ends with footer magic C0 28 93 E8, algorithm 0, 8-byte BE CRC', () => {
    const out = new ByteArrayDataOutput();
    writeIndexHeader(out, 'Lucene99FlatVectorsFormatData', 0, id, 'Lucene99HnswVectorsFormat_0');
    out.writeInt(42);
    appendFooter(out);
    const bytes = out.toBytes();
    expect(hex(bytes.subarray(0, 4))).toBe('3F D7 6C 17');
    const footer = bytes.subarray(bytes.length - 16);
    expect(hex(footer.subarray(0, 4))).toBe('C0 28 93 E8');
    expect(hex(footer.subarray(4, 8))).toBe('00 00 00 00');
    expect(hex(footer.subarray(8, 12))).toBe('00 00 00 00');
    const input = openChecksummed(bytes, 'x.vec');
    expect(checkIndexHeader(input, 'Lucene99FlatVectorsFormatData', 0, 0, id, 'Lucene99HnswVectorsFormat_0').version).toBe(0);
    expect(input.readInt()).toBe(42);
  });

  it('has Lucene header length arithmetic: 82 bytes for the .vec header, so the first 4-aligned vector offset is 84', () => {
    const len = indexHeaderLength('Lucene99FlatVectorsFormatData', 'Lucene99HnswVectorsFormat_0');
    expect(len).toBe(4 + 1 + 29 + 4 + 16 + 1 + 27);
    expect(len).toBe(82);
    const out = new ByteArrayDataOutput();
    writeIndexHeader(out, 'Lucene99FlatVectorsFormatData', 0, id, 'Lucene99HnswVectorsFormat_0');
    expect(out.length).toBe(82);
    expect(Math.ceil(82 / 4) * 4).toBe(84);
  });

  it('detects a flipped byte anywhere in a checksummed file, naming the file', () => {
    const out = new ByteArrayDataOutput();
    writeIndexHeader(out, 'C', 0, id, '');
    out.writeString('payload');
    appendFooter(out);
    const good = out.toBytes();
    for (let i = 0; i < good.length; i++) {
      const bad = good.slice();
      bad[i] ^= 0x10;
      expect(() => checkIndexHeader(openChecksummed(bad, 'meta.vemf'), 'C', 0, 0, id, ''), `byte ${i}`).toThrow(CorruptIndexException);
      expect(() => openChecksummed(bad, 'meta.vemf')).toThrow(/meta\.vemf/);
    }
  });
});
