import { describe, expect, it } from 'vitest';
import { DirectMonotonicMeta, DirectMonotonicReader } from '../segments/packed/DirectMonotonicReader.js';
import { DirectMonotonicWriter } from '../segments/packed/DirectMonotonicWriter.js';
import { DirectReader } from '../segments/packed/DirectReader.js';
import { DirectWriter, SUPPORTED_BITS_PER_VALUE } from '../segments/packed/DirectWriter.js';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { ByteArrayDataInput } from '../segments/store/DataInput.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { mulberry32 } from '../src/gen/Rng.js';

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function writeDirect(values: number[], bpv: number): Uint8Array {
  const out = new ByteArrayDataOutput();
  const w = DirectWriter.getInstance(out, values.length, bpv);
  for (const v of values) w.add(v);
  w.finish();
  return out.toBytes().slice();
}

function monotonic(values: number[], blockShift: number): { meta: Uint8Array; data: Uint8Array } {
  const meta = new ByteArrayDataOutput();
  const data = new ByteArrayDataOutput();
  const w = DirectMonotonicWriter.getInstance(meta, data, values.length, blockShift);
  for (const v of values) w.add(v);
  w.finish();
  return { meta: meta.toBytes().slice(), data: data.toBytes().slice() };
}

function readMonotonic(enc: { meta: Uint8Array; data: Uint8Array }, n: number, blockShift: number): number[] {
  const meta = DirectMonotonicMeta.load(new ByteArrayDataInput(enc.meta, 'meta'), n, blockShift);
  return Array.from(new DirectMonotonicReader(meta, enc.data).decodeAll());
}

describe('DirectWriter / DirectReader (Lucene layout)', () => {
  it('packs a little-endian bit stream and pads for the widest read', () => {
    // 4 bits: value 0 in the low nibble of byte 0; no padding below 9 bits
    expect(hex(writeDirect([1, 2, 3], 4))).toBe('2103');
    // 1 bit: LSB first
    expect(hex(writeDirect([1, 0, 1, 1, 0, 0, 0, 0, 1], 1))).toBe('0d01');
    // 12 bits: 0xABC | 0x123 << 12 = 0x123ABC, plus 1 padding byte (16 - 12 bits)
    expect(hex(writeDirect([0xabc, 0x123], 12))).toBe('bc3a1200');
    // 20 bits: 3 bytes of padding-to-int: (32 - 20) bits -> 2 bytes
    expect(hex(writeDirect([0xfffff], 20))).toBe('ffff0f' + '0000');
    // 8/16 bits: plain LE bytes/shorts
    expect(hex(writeDirect([1, 255], 8))).toBe('01ff');
    expect(hex(writeDirect([0x1234], 16))).toBe('3412');
    // 40 bits: 5 LE bytes + 3 padding
    expect(hex(writeDirect([0x0102030405], 40))).toBe('0504030201000000');
  });

  it('bytesRequired matches what is written, for every supported width', () => {
    for (const bpv of SUPPORTED_BITS_PER_VALUE) {
      for (const n of [0, 1, 2, 3, 7, 64, 65, 200]) {
        const max = bpv >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** bpv - 1;
        const values = Array.from({ length: n }, (_, i) => (i * 2654435761) % (max + 1));
        expect(writeDirect(values, bpv).length, `bpv ${bpv} n ${n}`).toBe(DirectWriter.bytesRequired(n, bpv));
      }
    }
  });

  it('round-trips random values at every width, including the extremes', () => {
    const rnd = mulberry32(7);
    for (const bpv of SUPPORTED_BITS_PER_VALUE) {
      const max = bpv >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** bpv - 1;
      const values = Array.from({ length: 301 }, (_, i) => (i === 0 ? max : i === 1 ? 0 : Math.floor(rnd() * (max + 1))));
      const bytes = writeDirect(values, bpv);
      const r = new DirectReader(bytes, bpv);
      expect(
        values.map((_, i) => r.get(i)),
        `bpv ${bpv}`,
      ).toEqual(values);
    }
  });

  it('bitsRequired rounds up to a supported width', () => {
    expect(DirectWriter.bitsRequired(0)).toBe(1);
    expect(DirectWriter.bitsRequired(1)).toBe(1);
    expect(DirectWriter.bitsRequired(2)).toBe(2);
    expect(DirectWriter.bitsRequired(5)).toBe(4);
    expect(DirectWriter.bitsRequired(16)).toBe(8);
    expect(DirectWriter.bitsRequired(256)).toBe(12);
    expect(DirectWriter.bitsRequired(2 ** 28)).toBe(32);
    expect(DirectWriter.bitsRequired(2 ** 32)).toBe(40);
    expect(() => DirectWriter.getInstance(new ByteArrayDataOutput(), 1, 3)).toThrow(/Unsupported bitsPerValue 3/);
    const w = DirectWriter.getInstance(new ByteArrayDataOutput(), 1, 4);
    expect(() => w.add(16)).toThrow(RangeError);
  });

  it('a read past the packed range fails naming the resource', () => {
    const bytes = writeDirect([1, 2, 3], 8);
    const r = new DirectReader(bytes, 8, 0, 3, 'x.vex');
    expect(() => r.get(3)).toThrow(CorruptIndexException);
    expect(() => r.get(3)).toThrow(/x\.vex/);
  });
});

describe('DirectMonotonicWriter / Reader', () => {
  it('writes the per-block meta Lucene reads: int64 min, float avg, int64 offset, int8 bpv', () => {
    // a perfect line needs no packed deltas: bpv 0, nothing in data
    const enc = monotonic([0, 10, 20, 30], 2);
    expect(enc.data.length).toBe(0);
    expect(hex(enc.meta)).toBe('0000000000000000' + '00002041' + '0000000000000000' + '00');
    // [5, 6, 8]: avg = 1.5f; expected = (long)(1.5f * i) = 0, 1, 3; deltas 5, 5, 5 -> min 5, all zero
    const enc2 = monotonic([5, 6, 8], 2);
    expect(hex(enc2.meta)).toBe('0500000000000000' + '0000c03f' + '0000000000000000' + '00');
    // [0, 1, 1, 3]: avg 1f; residuals 0, 0, -1, 0 -> min -1, deltas 1, 1, 0, 1 at 1 bit = 0b1011
    const enc3 = monotonic([0, 1, 1, 3], 2);
    expect(hex(enc3.meta)).toBe('ffffffffffffffff' + '0000803f' + '0000000000000000' + '01');
    expect(hex(enc3.data)).toBe('0b');
  });

  it('round-trips several blocks, zero-width blocks, negative and large values', () => {
    const rnd = mulberry32(11);
    const cases: number[][] = [
      [],
      [42],
      Array.from({ length: 1000 }, (_, i) => i * 7), // zero-width every block
      Array.from({ length: 1000 }, () => 0), // constant
      (() => {
        let v = -5_000_000;
        return Array.from({ length: 3001 }, () => (v += Math.floor(rnd() * 1000)));
      })(),
      (() => {
        let v = 2 ** 45;
        return Array.from({ length: 777 }, (_, i) => (v += i % 100 === 0 ? 2 ** 33 : Math.floor(rnd() * 3)));
      })(),
    ];
    for (const values of cases) {
      for (const shift of [2, 4, 10, 16]) {
        const enc = monotonic(values, shift);
        expect(readMonotonic(enc, values.length, shift), `n=${values.length} shift=${shift}`).toEqual(values);
      }
    }
  });

  it('random access and binarySearch agree with the values', () => {
    let v = 0;
    const values = Array.from({ length: 5000 }, (_, i) => (v += (i * 37) % 11));
    const enc = monotonic(values, 6);
    const meta = DirectMonotonicMeta.load(new ByteArrayDataInput(enc.meta), values.length, 6);
    const r = new DirectMonotonicReader(meta, enc.data);
    for (const i of [0, 1, 63, 64, 65, 4999]) expect(r.get(i)).toBe(values[i]);
    expect(values[r.binarySearch(0, values.length, values[1234])]).toBe(values[1234]);
    expect(r.binarySearch(0, values.length, -1)).toBe(-1);
  });

  it('rejects decreasing input (a negative slope is not monotonic) and bad block shifts', () => {
    const w = DirectMonotonicWriter.getInstance(new ByteArrayDataOutput(), new ByteArrayDataOutput(), 3, 2);
    w.add(5);
    expect(() => w.add(4)).toThrow(/do not come in order/);
    expect(() => DirectMonotonicWriter.getInstance(new ByteArrayDataOutput(), new ByteArrayDataOutput(), 3, 1)).toThrow(/blockShift/);
    const short = DirectMonotonicWriter.getInstance(new ByteArrayDataOutput(), new ByteArrayDataOutput(), 3, 2);
    short.add(1);
    expect(() => short.finish()).toThrow(/Wrong number of values/);
  });

  it('a corrupt bitsPerValue in the meta is a CorruptIndexException naming the file', () => {
    const enc = monotonic([0, 1, 1, 3], 2);
    enc.meta[20] = 3;
    expect(() => DirectMonotonicMeta.load(new ByteArrayDataInput(enc.meta, '_0.vem'), 4, 2)).toThrow(/_0\.vem/);
  });
});
