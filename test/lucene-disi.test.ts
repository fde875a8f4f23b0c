import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { wholeFile } from '../segments/store/FileSlice.js';
import { IndexedDISI } from '../segments/lucene/IndexedDISI.js';

/**
 * Builds an IndexedDISI image by hand from the documented layout (segments/lucene/IndexedDISI.ts and
 * Lucene's IndexedDISI.writeBitSet): per non-empty 65536-doc block a (block, cardinality-1) short
 * pair, then SPARSE shorts / DENSE rank + 1024 LE longs / nothing for ALL; a sentinel SPARSE block
 * (32767, one entry 0xFFFF); then the (index, offset) jump table.
 */
function buildDisi(docs: number[], denseRankPower = 9): { bytes: Uint8Array; jumpTableEntryCount: number; offsets: number[] } {
  const out = new ByteArrayDataOutput();
  const byBlock = new Map<number, number[]>();
  for (const d of docs) {
    const b = d >>> 16;
    if (!byBlock.has(b)) byBlock.set(b, []);
    byBlock.get(b)!.push(d & 0xffff);
  }
  const blocks = [...byBlock.keys()].sort((a, b) => a - b);
  const offsets: number[] = [];
  const indexes: number[] = [];
  let index = 0;
  const pos = () => out.toBytes().length;
  for (const b of blocks) {
    const lows = byBlock.get(b)!;
    offsets.push(pos());
    indexes.push(index);
    out.writeShort(b);
    out.writeShort(lows.length - 1);
    if (lows.length <= 4095) {
      for (const l of lows) out.writeShort(l);
    } else if (lows.length < 65536) {
      const bits = new Uint8Array(8192);
      for (const l of lows) bits[l >>> 3] |= 1 << (l & 7);
      if (denseRankPower !== -1) {
        const every = 1 << denseRankPower;
        const rank = new Uint8Array((65536 / every) * 2);
        let count = 0;
        for (let bit = 0; bit < 65536; bit++) {
          if (bit % every === 0) {
            rank[(bit / every) * 2] = count >>> 8;
            rank[(bit / every) * 2 + 1] = count & 0xff;
          }
          if (bits[bit >>> 3] & (1 << (bit & 7))) count++;
        }
        out.writeBytes(rank);
      }
      out.writeBytes(bits); // 1024 LE longs == these 8192 bytes
    }
    index += lows.length;
  }
  const sentinelOffset = pos();
  out.writeShort(32767);
  out.writeShort(0);
  out.writeShort(0xffff);
  // Jump table: block j -> (docs before block j, offset of the first written block >= j).
  const last = blocks.length === 0 ? -1 : blocks[blocks.length - 1];
  let entries = blocks.length === 0 ? 1 : last + 2;
  if (entries === 2) entries = 0;
  for (let j = 0; j < entries; j++) {
    const k = blocks.findIndex((b) => b >= j);
    out.writeInt(k === -1 ? index : indexes[k]);
    out.writeInt(k === -1 ? sentinelOffset : offsets[k]);
  }
  return { bytes: out.toBytes(), jumpTableEntryCount: entries, offsets };
}

function expectDocs(actual: Int32Array, expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  const same = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(Buffer.from(Int32Array.from(expected).buffer));
  expect(same).toBe(true);
}

function expectCorrupt(fn: () => unknown, message: RegExp): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CorruptIndexException);
  expect((err as Error).message).toMatch(message);
}

const tmp = mkdtempSync(join(tmpdir(), 'prescore-disi-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('IndexedDISI', () => {
  it('decodes a single SPARSE block (no jump table) byte for byte', () => {
    const docs = [0, 3, 4, 100, 65535];
    const { bytes, jumpTableEntryCount } = buildDisi(docs);
    expect(jumpTableEntryCount).toBe(0);
    // block 0, cardinality-1 = 4, five LE shorts, sentinel (ff 7f, 00 00, ff ff).
    expect(Buffer.from(bytes).toString('hex')).toBe('0000' + '0400' + '0000' + '0300' + '0400' + '6400' + 'ffff' + 'ff7f' + '0000' + 'ffff');
    const disi = IndexedDISI.decode(bytes, 'sparse', jumpTableEntryCount, 9, docs.length, 65536);
    expect([...disi.docs]).toEqual(docs);
    expect(disi.docToOrd(100)).toBe(3);
    expect(disi.docToOrd(101)).toBe(-1);
    expect(disi.ordToDoc(4)).toBe(65535);
  });

  it('decodes SPARSE, DENSE and ALL blocks with a jump table', () => {
    const docs: number[] = [1, 2, 65535]; // block 0 (SPARSE)
    for (let i = 0; i < 65536; i += 13) docs.push(2 * 65536 + i); // block 2 (DENSE): 5042 docs
    for (let i = 0; i < 65536; i++) docs.push(3 * 65536 + i); // block 3 (ALL)
    docs.push(5 * 65536 + 7); // block 5 (SPARSE)
    const { bytes, jumpTableEntryCount, offsets } = buildDisi(docs);
    expect(jumpTableEntryCount).toBe(7); // blocks 0..5 plus the one past the last
    const disi = IndexedDISI.decode(bytes, 'mixed', jumpTableEntryCount, 9, docs.length);
    expect(disi.size).toBe(docs.length);
    expectDocs(disi.docs, docs);
    for (const ord of [0, 2, 3, 1000, 5044, 5045, 70000, docs.length - 1]) {
      expect(disi.ordToDoc(ord)).toBe(docs[ord]);
      expect(disi.docToOrd(docs[ord])).toBe(ord);
    }
    expect(disi.docToOrd(65536)).toBe(-1); // block 1 is empty
    expect(disi.docToOrd(2 * 65536 + 1)).toBe(-1);
    // DENSE block layout: 4 header bytes + 256 rank bytes + 8192 bitset bytes.
    expect(offsets[2] - offsets[1]).toBe(4 + 256 + 8192);
    expect(offsets[3] - offsets[2]).toBe(4); // ALL: header only
  });

  it('handles DENSE blocks without a rank table and with a finer one', () => {
    const docs: number[] = [];
    for (let i = 0; i < 65536; i += 3) if (i % 7 !== 0) docs.push(65536 + i);
    for (const power of [-1, 7, 15]) {
      const { bytes, jumpTableEntryCount } = buildDisi(docs, power);
      const disi = IndexedDISI.decode(bytes, `power ${power}`, jumpTableEntryCount, power, docs.length);
      expectDocs(disi.docs, docs);
    }
  });

  it('decodes an empty set (sentinel only, one jump entry)', () => {
    const { bytes, jumpTableEntryCount } = buildDisi([]);
    expect(jumpTableEntryCount).toBe(1);
    const disi = IndexedDISI.decode(bytes, 'empty', jumpTableEntryCount, 9, 0);
    expect(disi.size).toBe(0);
    expect(disi.docToOrd(0)).toBe(-1);
  });

  it('reads from a file slice at an offset', () => {
    const docs = [5, 9, 70000, 70001];
    const { bytes, jumpTableEntryCount } = buildDisi(docs);
    const path = join(tmp, 'disi.bin');
    const file = new Uint8Array(100 + bytes.length + 20);
    file.set(bytes, 100);
    writeFileSync(path, file);
    const disi = IndexedDISI.read(wholeFile(path, '_0_X.vec'), 100, bytes.length, jumpTableEntryCount, 9, docs.length, 80000);
    expect([...disi.docs]).toEqual(docs);
    expectCorrupt(() => IndexedDISI.read(wholeFile(path, '_0_X.vec'), 100, bytes.length, jumpTableEntryCount, 9, docs.length, 70001), /doc 70001 >= maxDoc 70001.*_0_X\.vec/);
  });

  it('rejects inconsistent structures', () => {
    const docs: number[] = [];
    for (let i = 0; i < 65536; i += 2) docs.push(i); // DENSE block 0
    docs.push(65536 * 2 + 1);
    const good = buildDisi(docs);
    const decode = (bytes: Uint8Array, entries = good.jumpTableEntryCount, cost = docs.length) => IndexedDISI.decode(bytes, 'bad', entries, 9, cost);
    expect(decode(good.bytes).size).toBe(docs.length);

    const badRank = good.bytes.slice();
    badRank[4 + 3] ^= 1; // rank entry 1, low byte
    expectCorrupt(() => decode(badRank), /rank entry 1/);

    const badJump = good.bytes.slice();
    badJump[badJump.length - 8 * 2] ^= 1; // index of the jump entry for block 2
    expectCorrupt(() => decode(badJump), /jump table entry 2/);

    expectCorrupt(() => decode(good.bytes, good.jumpTableEntryCount, docs.length + 1), /decoded, expected/);
    expectCorrupt(() => decode(good.bytes, good.jumpTableEntryCount, docs.length - 1), /more docs than the expected/);
    expectCorrupt(() => decode(good.bytes, good.jumpTableEntryCount - 1), /./);

    const noSentinel = buildDisi([1, 2]).bytes.slice(0, 8);
    expectCorrupt(() => IndexedDISI.decode(noSentinel, 'bad', 0, 9, 2), /sentinel/);

    const unsorted = buildDisi([1, 2]).bytes.slice();
    unsorted[4] = 3; // first doc 3 > second doc 2
    expectCorrupt(() => IndexedDISI.decode(unsorted, 'bad', 0, 9, 2), /SPARSE block 0: doc 2 after 3/);

    expectCorrupt(() => IndexedDISI.decode(good.bytes, 'bad', good.jumpTableEntryCount, 5, docs.length), /denseRankPower 5/);
  });
});
