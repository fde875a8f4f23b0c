import { describe, expect, it } from 'vitest';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { FastCompressionHashTable, MAX_DISTANCE, compress, compressWithDictionary, decompress, maxCompressedLength } from '../segments/compress/LZ4.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { mulberry32 } from '../src/gen/Rng.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Byte equality without vitest's element-by-element diff (slow on 100 KB arrays): the first difference. */
function firstDifference(a: Uint8Array, b: Uint8Array): string {
  if (Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length))) return 'equal';
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `differ at ${i} (lengths ${a.length}, ${b.length})`;
}

function lz4(input: Uint8Array, ht = new FastCompressionHashTable()): Uint8Array {
  const out = new ByteArrayDataOutput();
  compress(input, 0, input.length, out, ht);
  return out.toBytes().slice();
}

function unlz4(block: Uint8Array, length: number): Uint8Array {
  const dest = new Uint8Array(length);
  expect(decompress(block, 0, block.length, dest, 0, length)).toBe(block.length);
  return dest;
}

/** Inputs of one size in three kinds: random bytes, text-like (few symbols, repeats), and runs. */
function inputs(size: number, seed: number): Record<string, Uint8Array> {
  const rnd = mulberry32(seed);
  const random = new Uint8Array(size).map(() => Math.floor(rnd() * 256));
  const words = ['{"title":"', 'lucene ', 'vector ', 'search', '","id":', '0123', '}\n', 'prescore '];
  const text = new Uint8Array(size);
  for (let i = 0; i < size; ) {
    const w = new TextEncoder().encode(words[Math.floor(rnd() * words.length)]);
    for (let j = 0; j < w.length && i < size; j++) text[i++] = w[j];
  }
  const runs = new Uint8Array(size);
  for (let i = 0; i < size; i++) runs[i] = Math.floor(i / 300) & 3;
  return { random, text, runs };
}

const SIZES = [0, 1, 4, 5, 9, 10, 11, 12, 13, 16, 17, 100, 255, 256, 1000, 4096, 65535, 65536, 65540, 65541, 70_000, 200_000];

describe('LZ4 (Lucene block format)', () => {
  it('writes the bytes Lucene writes for a small input (a fresh table points every hash at byte 0)', () => {
    // 20 zero bytes: position 1 matches position 0 (offset 1) for 14 bytes, up to the 5 last literals.
    // token 0x1A = 1 literal, match length 4 + 10; literal 00; offset 01 00; token 0x50 = 5 literals.
    expect(hex(lz4(new Uint8Array(20)))).toBe('1a000100' + '50' + '0000000000');
    // up to 9 bytes: one literal run
    expect(hex(lz4(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9)))).toBe('90' + '010203040506070809');
    // empty input: a lone zero token
    expect(hex(lz4(new Uint8Array(0)))).toBe('00');
    // 15+ literals: the nibble saturates and a length byte follows (15 + 2 = 17 literals)
    const seventeen = Uint8Array.from({ length: 17 }, (_, i) => i + 1);
    expect(hex(lz4(seventeen))).toBe('f002' + hex(seventeen));
  });

  it('round-trips random, text-like and run-length inputs of many sizes, without a dictionary', () => {
    const ht = new FastCompressionHashTable(); // one table for every call, as Lucene's compressor keeps it
    for (const size of SIZES) {
      for (const [kind, input] of Object.entries(inputs(size, size + 1))) {
        const block = lz4(input, ht);
        expect(block.length, `${kind} ${size}`).toBeLessThanOrEqual(maxCompressedLength(size));
        expect(firstDifference(unlz4(block, size), input), `${kind} ${size}`).toBe('equal');
        if (kind !== 'random' && size >= 4096) expect(block.length, `${kind} ${size} compresses`).toBeLessThan(size / 2);
      }
    }
  });

  it('round-trips with a preset dictionary in front, and matches reach into the dictionary', () => {
    const ht = new FastCompressionHashTable();
    for (const dictLen of [0, 1, 10, 1000, 8192, MAX_DISTANCE]) {
      for (const size of [0, 5, 9, 10, 64, 8192, 70_000]) {
        for (const [kind, data] of Object.entries(inputs(dictLen + size, dictLen * 7 + size))) {
          const out = new ByteArrayDataOutput();
          compressWithDictionary(data, 0, dictLen, size, out, ht);
          const block = out.toBytes().slice();
          const dest = new Uint8Array(dictLen + size);
          dest.set(data.subarray(0, dictLen)); // the decoder is given the dictionary in front
          expect(decompress(block, 0, block.length, dest, dictLen, size), `${kind} ${dictLen}+${size}`).toBe(block.length);
          expect(firstDifference(dest, data), `${kind} ${dictLen}+${size}`).toBe('equal');
        }
      }
    }
    // a block that repeats the dictionary is almost all one match into it
    const dict = inputs(4096, 3).random;
    const data = new Uint8Array(8192);
    data.set(dict);
    data.set(dict, 4096);
    const out = new ByteArrayDataOutput();
    compressWithDictionary(data, 0, 4096, 4096, out, new FastCompressionHashTable());
    expect(out.length).toBeLessThan(40);
    const dest = new Uint8Array(8192);
    dest.set(dict);
    decompress(out.toBytes(), 0, out.length, dest, 4096, 4096);
    expect(firstDifference(dest.subarray(4096), dict)).toBe('equal');
  });

  it('a reused table gives output that still decodes, whatever the earlier inputs left in it', () => {
    const ht = new FastCompressionHashTable();
    const rnd = mulberry32(42);
    for (let i = 0; i < 200; i++) {
      const size = Math.floor(rnd() ** 3 * 100_000);
      const input = inputs(size, i)[['random', 'text', 'runs'][i % 3]];
      expect(firstDifference(unlz4(lz4(input, ht), size), input)).toBe('equal');
    }
  });

  it('refuses a dictionary larger than the window and ranges outside the array', () => {
    const b = new Uint8Array(MAX_DISTANCE + 20);
    expect(() => compressWithDictionary(b, 0, MAX_DISTANCE + 1, 10, new ByteArrayDataOutput(), new FastCompressionHashTable())).toThrow(/exceeds/);
    expect(() => compress(b, 10, b.length, new ByteArrayDataOutput(), new FastCompressionHashTable())).toThrow(RangeError);
  });

  describe('corrupt blocks throw CorruptIndexException naming the resource', () => {
    const expectCorrupt = (block: number[], length: number, message: RegExp, dictLen = 0) => {
      const dest = new Uint8Array(dictLen + length + 64);
      const run = () => decompress(Uint8Array.from(block), 0, block.length, dest, dictLen, length, '_0.fdt');
      expect(run).toThrow(CorruptIndexException);
      expect(run).toThrow(message);
      expect(run).toThrow(/resource=_0\.fdt/);
    };

    it('offset 0', () => expectCorrupt([0x10, 0x41, 0x00, 0x00, 0x50, 1, 2, 3, 4, 5], 10, /offset 0 is invalid/));
    it('a match reaching before the output (and its dictionary)', () => expectCorrupt([0x10, 0x41, 0x05, 0x00], 20, /reaches before/, 3));
    it('literals past the end of the input', () => expectCorrupt([0x50, 1, 2], 5, /past the end/));
    it('a length byte past the end of the input', () => expectCorrupt([0xf0, 0xff], 300, /past the end/));
    it('a match offset past the end of the input', () => expectCorrupt([0x10, 0x41, 0x01], 20, /past the end/));
    it('no token at all', () => expectCorrupt([], 0, /past the end/));
    it('literals beyond the expected length', () => expectCorrupt([0x50, 1, 2, 3, 4, 5], 4, /output overflow/));
    it('a match beyond the expected length', () => expectCorrupt([0x1f, 0x41, 0x01, 0x00, 0x10], 20, /output overflow/));

    it('random garbage either decodes within bounds or throws, and never hangs', () => {
      const rnd = mulberry32(7);
      const dest = new Uint8Array(4096);
      let thrown = 0;
      for (let i = 0; i < 2000; i++) {
        const garbage = new Uint8Array(1 + Math.floor(rnd() * 64)).map(() => Math.floor(rnd() * 256));
        try {
          decompress(garbage, 0, garbage.length, dest, 16, Math.floor(rnd() * 2000));
        } catch (e) {
          expect(e).toBeInstanceOf(CorruptIndexException);
          thrown++;
        }
      }
      expect(thrown).toBeGreaterThan(1900);
    });

    it('a truncated real block', () => {
      const input = inputs(10_000, 5).text;
      const block = lz4(input);
      for (const cut of [1, 2, block.length >> 1, block.length - 1]) {
        expect(() => decompress(block, 0, cut, new Uint8Array(input.length), 0, input.length)).toThrow(CorruptIndexException);
      }
    });
  });
});
