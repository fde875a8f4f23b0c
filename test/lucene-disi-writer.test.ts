import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IndexedDISI } from '../segments/lucene/IndexedDISI.js';
import { IndexedDISIIterator, NO_MORE_DOCS } from '../segments/lucene/IndexedDISIIterator.js';
import { writeIndexedDISI } from '../segments/lucene/IndexedDISIWriter.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { wholeFile } from '../segments/store/FileSlice.js';
import { MappedBytes, PreadBytes, type RandomAccessBytes } from '../segments/store/RandomAccessBytes.js';
import { mulberry32 } from '../src/gen/Rng.js';

const dir = mkdtempSync(join(tmpdir(), 'prescore-disi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(docs: number[], denseRankPower = 9): { bytes: Uint8Array; jumpTableEntryCount: number } {
  const out = new ByteArrayDataOutput();
  const { jumpTableEntryCount, length } = writeIndexedDISI(Int32Array.from(docs), docs.length, out, denseRankPower);
  expect(length).toBe(out.length);
  return { bytes: out.toBytes().slice(), jumpTableEntryCount };
}

/** The set behind a file with 3 bytes in front, so offsets are exercised. */
function openBytes(bytes: Uint8Array, readPath: 'mmap' | 'pread'): RandomAccessBytes {
  const path = join(dir, `disi-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, Buffer.concat([Buffer.from([1, 2, 3]), bytes]));
  return readPath === 'mmap' ? new MappedBytes(wholeFile(path)) : new PreadBytes(wholeFile(path));
}

/** Docs whose 65536-doc blocks are ALL, DENSE, SPARSE, empty, SPARSE (the last doc near the end of block 5). */
function layout(seed: number): number[] {
  const rnd = mulberry32(seed);
  const docs: number[] = [];
  for (let d = 0; d < 65536; d++) docs.push(d);
  for (let d = 65536; d < 2 * 65536; d++) if (rnd() < 0.3) docs.push(d);
  for (let d = 2 * 65536; d < 3 * 65536; d++) if (rnd() < 0.01) docs.push(d);
  docs.push(4 * 65536 + 3, 5 * 65536 + 65000);
  return docs;
}

describe('IndexedDISI writer', () => {
  it('writes a one-block SPARSE set as Lucene does: block header, shorts, the NO_MORE_DOCS sentinel, no jump table', () => {
    const { bytes, jumpTableEntryCount } = write([1, 5]);
    expect(Buffer.from(bytes).toString('hex')).toBe('0000' + '0100' + '0100' + '0500' + 'ff7f' + '0000' + 'ffff');
    expect(jumpTableEntryCount).toBe(0);
  });

  it('writes an empty set as the sentinel and one jump-table entry (0 docs before, offset 0)', () => {
    const { bytes, jumpTableEntryCount } = write([]);
    expect(Buffer.from(bytes).toString('hex')).toBe('ff7f0000ffff' + '00000000' + '00000000');
    expect(jumpTableEntryCount).toBe(1);
  });

  for (const power of [9, 7, 15, -1]) {
    it(`ALL, DENSE (rank power ${power}) and SPARSE blocks with a gap pass the full structural check (ranks, jump table, counts)`, () => {
      const docs = layout(power + 20);
      const { bytes, jumpTableEntryCount } = write(docs, power);
      expect(jumpTableEntryCount).toBe(7); // blocks 0..5 and the one after, pointing at the sentinel
      const decoded = IndexedDISI.decode(bytes, 'test', jumpTableEntryCount, power, docs.length, 6 * 65536);
      expect(Buffer.from(decoded.docs.buffer).equals(Buffer.from(Int32Array.from(docs).buffer))).toBe(true);
    });
  }
});

describe('IndexedDISIIterator: the set read in place', () => {
  for (const readPath of ['mmap', 'pread'] as const) {
    it(`nextDoc, advance and advanceExact give the docs and their ranks (index) as the full decode does (${readPath})`, () => {
      const docs = layout(4);
      const { bytes, jumpTableEntryCount } = write(docs);
      const file = openBytes(bytes, readPath);
      const open = () => new IndexedDISIIterator(file, 3, bytes.length, jumpTableEntryCount, 9, docs.length);
      try {
        // Every doc by nextDoc, with its rank.
        const walk = open();
        let mismatches = 0;
        for (let i = 0; i < docs.length; i++) {
          if (walk.nextDoc() !== docs[i] || walk.index() !== i) mismatches++;
        }
        expect(walk.nextDoc()).toBe(NO_MORE_DOCS);
        expect(mismatches).toBe(0);
        // advanceExact on every 7th doc of the range: present or not, and the rank when present.
        const rank = new Map(docs.map((d, i) => [d, i]));
        const exact = open();
        for (let d = 0; d < 6 * 65536; d += 7) {
          const has = exact.advanceExact(d);
          if (has !== rank.has(d) || exact.docID() !== d || (has && exact.index() !== rank.get(d))) mismatches++;
        }
        expect(mismatches).toBe(0);
        // advance to random ascending targets (long jumps use the jump table and DENSE ranks), and
        // nextDoc after an advanceExact miss returns the next doc of the set.
        const rnd = mulberry32(5);
        const adv = open();
        for (let t = 0; t < 6 * 65536; t += 1 + Math.floor(rnd() * 40_000)) {
          const want = docs.find((d) => d >= t) ?? NO_MORE_DOCS;
          expect(adv.advance(t)).toBe(want);
          if (want === NO_MORE_DOCS) break;
          expect(adv.index()).toBe(rank.get(want));
        }
        const miss = open();
        expect(miss.advanceExact(3 * 65536 + 10)).toBe(false);
        expect(miss.nextDoc()).toBe(4 * 65536 + 3);
        expect(miss.index()).toBe(docs.length - 2);
      } finally {
        file.close();
      }
    });
  }
});
