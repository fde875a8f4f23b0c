import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { NO_MORE_DOCS } from '../segments/docvalues/DocValuesIterators.js';
import { Lucene90DocValuesConsumer } from '../segments/docvalues/Lucene90DocValuesConsumer.js';
import { SegmentDocValues } from '../segments/docvalues/SegmentDocValues.js';
import { FieldInfos } from '../segments/lucene/FieldInfos.js';
import { IndexDirectory } from '../segments/lucene/LuceneDirectory.js';
import type { LuceneSegment } from '../segments/lucene/LuceneIndex.js';
import type { Lucene90DocValuesProducer } from '../segments/docvalues/Lucene90DocValuesProducer.js';
import { LONG_MAX, LONG_MIN } from '../segments/docvalues/Lucene90DocValuesFormat.js';
import { decodeLong, encodeLong } from '../segments/docvalues/NumericEncodings.js';
import { mulberry32 } from '../src/gen/Rng.js';
import { SEGMENT_ID, docValuesFieldInfo as field, writeSegment } from './support/docValuesFixtures.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function segment(...args: Parameters<typeof writeSegment>) {
  const s = writeSegment(...args);
  dirs.push(s.dir);
  return s;
}

/**
 * Which docs of a 5 x 65536-doc segment have a value, so that the IndexedDISI gets every block
 * kind: block 0 ALL (every doc), block 1 DENSE (about half), block 2 SPARSE (300 docs), block 3
 * empty, block 4 SPARSE (a few docs, the last one maxDoc - 1).
 */
const SPARSE_MAX_DOC = 5 * 65536;
function sparseLayout(seed: number): boolean[] {
  const rnd = mulberry32(seed);
  const has = new Array<boolean>(SPARSE_MAX_DOC).fill(false);
  for (let d = 0; d < 65536; d++) has[d] = true;
  for (let d = 65536; d < 2 * 65536; d++) has[d] = rnd() < 0.5;
  for (let i = 0; i < 300; i++) has[2 * 65536 + Math.floor(rnd() * 65536)] = true;
  for (const d of [4 * 65536, 4 * 65536 + 7, SPARSE_MAX_DOC - 1]) has[d] = true;
  return has;
}

const randomLong = (rnd: () => number) => BigInt.asIntN(64, (BigInt(Math.floor(rnd() * 2 ** 32)) << 32n) | BigInt(Math.floor(rnd() * 2 ** 32)));

/** Reads a NUMERIC field back every way there is and compares with `expected` (null = no value). */
function expectNumeric(p: Lucene90DocValuesProducer, name: string, expected: readonly (bigint | null)[]): void {
  const maxDoc = expected.length;
  // nextDoc over every doc with a value.
  const it = p.getNumeric(name);
  let mismatches = 0;
  let seen = 0;
  for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) {
    seen++;
    if (expected[d] === null || it.longValue() !== expected[d]) mismatches++;
  }
  expect(mismatches, `${name}: nextDoc values`).toBe(0);
  expect(seen).toBe(expected.filter((v) => v !== null).length);
  // advanceExact on every third doc, advance on a sparse walk.
  const exact = p.getNumeric(name);
  for (let d = 0; d < maxDoc; d += 3) {
    const has = exact.advanceExact(d);
    if (has !== (expected[d] !== null) || (has && exact.longValue() !== expected[d])) mismatches++;
  }
  expect(mismatches, `${name}: advanceExact`).toBe(0);
  const adv = p.getNumeric(name);
  for (let target = 0; target < maxDoc; target += 9973) {
    const d = adv.advance(target);
    const want = expected.findIndex((v, i) => i >= target && v !== null);
    expect(d).toBe(want === -1 ? NO_MORE_DOCS : want);
    if (d === NO_MORE_DOCS) break;
  }
  // The column.
  const c = p.numericColumn(name);
  const safe = expected.every((v) => v === null || (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER)));
  expect(c.kind).toBe(safe ? 'number' : 'bigint');
  expect(c.docCount).toBe(seen);
  for (let d = 0; d < maxDoc; d++) {
    const has = c.docsWithField === null || ((c.docsWithField[d >>> 5] >>> (d & 31)) & 1) === 1;
    if (has !== (expected[d] !== null)) mismatches++;
    else if (has && BigInt(c.values[d]) !== expected[d]) mismatches++;
  }
  expect(mismatches, `${name}: column`).toBe(0);
}

describe('Lucene90DocValuesConsumer -> Lucene90DocValuesProducer round trips', () => {
  it('NUMERIC: constant, GCD, table, delta, blocks and 64-bit extremes take the encoding Lucene chooses and read back exactly', () => {
    const maxDoc = 40_000;
    const rnd = mulberry32(1);
    const tableValues = Array.from({ length: 17 }, () => randomLong(rnd) >> 14n);
    const columns: Record<string, bigint[]> = {
      constant: Array.from({ length: maxDoc }, () => 42n),
      gcd: Array.from({ length: maxDoc }, () => 7n + 1_000_000n * BigInt(Math.floor(rnd() * 5000) - 2500)),
      table: Array.from({ length: maxDoc }, () => tableValues[Math.floor(rnd() * tableValues.length)]),
      delta: Array.from({ length: maxDoc }, () => 1000n + BigInt(Math.floor(rnd() * 2 ** 20))),
      deltaFromZero: Array.from({ length: maxDoc }, (_, d) => BigInt(5 + (d % 196))),
      blocks: Array.from({ length: maxDoc }, (_, d) => (d < 16384 ? BigInt(Math.floor(rnd() * 16)) : BigInt(Math.floor(rnd() * 2 ** 40)))),
      extremes: Array.from({ length: maxDoc }, (_, d) => [LONG_MIN, LONG_MAX, -1n, 0n][d % 4] ?? 0n).map((v, d) => (d % 5 === 4 ? randomLong(rnd) : v)),
      wideButSafe: Array.from({ length: maxDoc }, (_, d) => (d === 0 ? -(2n ** 52n) : d === 1 ? 2n ** 52n : BigInt(Math.floor(rnd() * 2 ** 40) - 2 ** 39))),
    };
    const names = Object.keys(columns);
    const { open } = segment(
      maxDoc,
      names.map((n, i) => field(n, i, 'NUMERIC')),
      (w) => {
        for (const [i, n] of names.entries()) w.addNumericField({ number: i, name: n }, columns[n]);
      },
    );
    const p = open();
    try {
      const numeric = (n: string) => {
        const e = p.entries.fields.get(names.indexOf(n))!;
        if (e.type !== 'NUMERIC') throw new Error(e.type);
        return e.numeric;
      };
      expect(numeric('constant')).toMatchObject({ bitsPerValue: 0, minValue: 42n, table: null, docsWithFieldOffset: -1 });
      expect(numeric('gcd')).toMatchObject({ gcd: 1_000_000n, table: null, blockShift: -1 });
      expect(numeric('table').table).toEqual(BigInt64Array.from([...new Set(columns.table)].sort((a, b) => (a < b ? -1 : 1))));
      expect(numeric('table').bitsPerValue).toBe(8);
      expect(numeric('delta')).toMatchObject({ gcd: 1n, minValue: columns.delta.reduce((m, v) => (v < m ? v : m)), bitsPerValue: 20 });
      // max and max - min need the same width: Lucene stores the values as they are (min 0).
      expect(numeric('deltaFromZero')).toMatchObject({ gcd: 1n, minValue: 0n, bitsPerValue: 8, table: null });
      expect(numeric('blocks').blockShift).toBe(14);
      expect(numeric('extremes').bitsPerValue).toBe(64);
      for (const n of names) expectNumeric(p, n, columns[n]);
      // Exact, never rounded: a number is refused beyond 2^53, the bigint is exact.
      const ext = p.getNumeric('extremes');
      ext.advanceExact(0);
      expect(ext.longValue()).toBe(LONG_MIN);
      expect(() => ext.numberValue()).toThrow(RangeError);
      ext.advanceExact(3);
      expect(ext.numberValue()).toBe(0);
    } finally {
      p.close();
    }
  });

  it("writes the same bytes whether the longs come as numbers or as bigints (the fast number path is Lucene's arithmetic too)", () => {
    const maxDoc = 50_000;
    const rnd = mulberry32(10);
    const columns: number[][] = [
      Array.from({ length: maxDoc }, () => 3 + 1000 * Math.floor(rnd() * 900)), // GCD
      Array.from({ length: maxDoc }, () => [-5, 17, 2 ** 40, -(2 ** 45)][Math.floor(rnd() * 4)]), // table
      Array.from({ length: maxDoc }, (_, d) => (d < 16384 ? d % 3 : Math.floor(rnd() * 2 ** 45))), // blocks
      Array.from({ length: maxDoc }, (_, d) => 100 + (d % 150)), // min dropped
    ];
    const files = (asBigInt: boolean) => {
      const { dir } = segment(
        maxDoc,
        [],
        (w) => {
          for (const [i, c] of columns.entries()) w.addNumericField({ number: i, skipIndex: i === 0 }, asBigInt ? c.map((v) => BigInt(v)) : c);
          w.addSortedNumericField(
            { number: 9 },
            columns[0].map((v, i) => (i % 3 === 0 ? [] : asBigInt ? [BigInt(v), BigInt(-v)] : [v, -v])),
          );
        },
        { skipIndexIntervalSize: 16 },
      );
      return ['dvm', 'dvd'].map((ext) => readFileSync(join(dir, `_0_Lucene90_0.${ext}`)));
    };
    const [numbers, bigints] = [files(false), files(true)];
    expect(Buffer.compare(numbers[0], bigints[0])).toBe(0);
    expect(Buffer.compare(numbers[1], bigints[1])).toBe(0);
  });

  it('sparse fields: the IndexedDISI gets ALL, DENSE and SPARSE blocks and a gap, read in place by nextDoc / advance / advanceExact and in bulk', () => {
    const has = sparseLayout(2);
    const rnd = mulberry32(3);
    const values = has.map((h) => (h ? BigInt(Math.floor(rnd() * 1e6) - 500_000) : null));
    const { open } = segment(SPARSE_MAX_DOC, [field('n', 0, 'NUMERIC')], (w) => w.addNumericField({ number: 0 }, values));
    for (const readPath of ['mmap', 'pread'] as const) {
      const p = open({ readPath });
      try {
        const e = p.entries.fields.get(0)!;
        if (e.type !== 'NUMERIC') throw new Error(e.type);
        expect(e.numeric.docsWithFieldOffset).toBeGreaterThan(0);
        expect(e.numeric.jumpTableEntryCount).toBe(6); // blocks 0..4 + the sentinel's
        expectNumeric(p, 'n', values);
        const bits = p.docsWithField('n')!;
        expect(has.every((h, d) => h === (((bits[d >>> 5] >>> (d & 31)) & 1) === 1))).toBe(true);
      } finally {
        p.close();
      }
    }
  });

  it('SORTED_NUMERIC: several values per doc (duplicates kept, ascending), docs without any, and the single-valued case', () => {
    const maxDoc = 20_000;
    const rnd = mulberry32(4);
    const multi = Array.from({ length: maxDoc }, () => {
      const n = Math.floor(rnd() * 4); // 0..3 values
      return Array.from({ length: n }, () => BigInt(Math.floor(rnd() * 10)) * (rnd() < 0.1 ? 2n ** 58n : 1n));
    });
    multi[5] = [3n, 3n, -1n];
    const single = Array.from({ length: maxDoc }, (_, d) => (d % 7 === 0 ? [] : [BigInt(d)]));
    const { open } = segment(maxDoc, [field('multi', 0, 'SORTED_NUMERIC'), field('single', 1, 'SORTED_NUMERIC')], (w) => {
      w.addSortedNumericField({ number: 0 }, multi);
      w.addSortedNumericField({ number: 1 }, single);
    });
    const p = open();
    try {
      const cases: [string, bigint[][]][] = [
        ['multi', multi],
        ['single', single],
      ];
      for (const [name, expected] of cases) {
        const sorted = expected.map((vs) => [...vs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        const it = p.getSortedNumeric(name);
        const got: bigint[][] = Array.from({ length: maxDoc }, () => []);
        for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) {
          const n = it.docValueCount();
          for (let i = 0; i < n; i++) got[d].push(it.nextValue());
        }
        expect(got).toEqual(sorted);
        const c = p.sortedNumericColumn(name);
        const fromColumn = Array.from({ length: maxDoc }, (_, d) => Array.from(c.values.subarray(c.offsets[d], c.offsets[d + 1]) as ArrayLike<number | bigint>, (v) => BigInt(v)));
        expect(fromColumn).toEqual(sorted);
      }
      expect(p.sortedNumericColumn('multi').kind).toBe('bigint');
      const singleEntry = p.entries.fields.get(1)!;
      expect(singleEntry.type === 'SORTED_NUMERIC' && singleEntry.values.addresses).toBeNull();
    } finally {
      p.close();
    }
  });

  it('SORTED: > 1024 unique terms (several LZ4 blocks, several reverse-index entries), the empty term and unicode; ord <-> term both ways', () => {
    const maxDoc = 30_000;
    const rnd = mulberry32(5);
    const vocabulary = ['', 'é', 'ß', '日本語', '\u{1F600}', 'a'.repeat(300), ...Array.from({ length: 5000 }, (_, i) => `term-${(i * 7919) % 100_003}-${'x'.repeat(i % 40)}`)];
    const column = Array.from({ length: maxDoc }, (_, d) => (d % 11 === 0 ? null : vocabulary[Math.floor(rnd() * vocabulary.length)]));
    for (let i = 0; i < vocabulary.length; i++) column[1 + i] = vocabulary[i]; // every term used
    const { open } = segment(maxDoc, [field('s', 0, 'SORTED')], (w) => w.addSortedField({ number: 0 }, column));
    const p = open();
    try {
      const enc = new TextEncoder();
      const sortedTerms = [...new Set(vocabulary)].map((t) => enc.encode(t)).sort((a, b) => Buffer.compare(a, b));
      const e = p.entries.fields.get(0)!;
      if (e.type !== 'SORTED') throw new Error(e.type);
      expect(e.terms.valueCount).toBe(sortedTerms.length);
      expect(e.terms.blockAddresses.meta.numValues).toBe(Math.ceil(sortedTerms.length / 64));
      expect(e.terms.indexAddresses.meta.numValues).toBe(1 + Math.ceil(sortedTerms.length / 1024));
      const dict = p.termsDict('s');
      // ord -> term in order, then backwards (each block decompressed again), then at random.
      for (let ord = 0; ord < sortedTerms.length; ord++) expect(dict.lookupOrd(ord)).toEqual(sortedTerms[ord]);
      for (let ord = sortedTerms.length - 1; ord >= 0; ord -= 37) expect(dict.lookupOrd(ord)).toEqual(sortedTerms[ord]);
      // term -> ord for every term, and for absent terms: before the first, between two, after the last.
      for (let ord = 0; ord < sortedTerms.length; ord++) expect(dict.lookupTerm(sortedTerms[ord])).toBe(ord);
      expect(dict.lookupTerm('')).toBe(0);
      expect(dict.lookupTerm('term-1-')).toBe(-1 - sortedTerms.findIndex((t) => Buffer.compare(t, enc.encode('term-1-')) > 0));
      expect(dict.lookupTerm(Uint8Array.of(0xff))).toBe(-1 - sortedTerms.length); // 0xFF is no UTF-8 byte: after every term
      const absentBetween = enc.encode('term-5000');
      expect(dict.lookupTerm(absentBetween)).toBe(-1 - sortedTerms.findIndex((t) => Buffer.compare(t, absentBetween) > 0));
      // Per doc, iterator and column.
      const it = p.getSorted('s');
      const col = p.sortedColumn('s');
      const dec = new TextDecoder();
      let mismatches = 0;
      for (let d = 0; d < maxDoc; d++) {
        const has = it.advanceExact(d);
        if (has !== (column[d] !== null)) mismatches++;
        else if (has && (dec.decode(it.lookupOrd(it.ordValue())) !== column[d] || col.ords[d] !== it.ordValue())) mismatches++;
        else if (!has && col.ords[d] !== -1) mismatches++;
      }
      expect(mismatches).toBe(0);
    } finally {
      p.close();
    }
  });

  it('SORTED_SET: several terms per doc (duplicates dropped, ords ascending), docs without any; a single-valued set is stored as SORTED', () => {
    const maxDoc = 10_000;
    const rnd = mulberry32(6);
    const vocabulary = Array.from({ length: 1500 }, (_, i) => `k${i.toString(36)}`);
    const multi = Array.from({ length: maxDoc }, () => Array.from({ length: Math.floor(rnd() * 4) }, () => vocabulary[Math.floor(rnd() * vocabulary.length)]));
    multi[0] = ['b', 'a', 'b'];
    const single = Array.from({ length: maxDoc }, (_, d) => (d % 3 === 0 ? null : [`v${d % 50}`]));
    const { open } = segment(maxDoc, [field('multi', 0, 'SORTED_SET'), field('single', 1, 'SORTED_SET')], (w) => {
      w.addSortedSetField({ number: 0 }, multi);
      w.addSortedSetField({ number: 1 }, single);
    });
    const p = open();
    try {
      const multiEntry = p.entries.fields.get(0)!;
      const singleEntry = p.entries.fields.get(1)!;
      expect(multiEntry.type === 'SORTED_SET' && multiEntry.singleValued).toBe(false);
      expect(singleEntry.type === 'SORTED_SET' && singleEntry.singleValued).toBe(true);
      const dec = new TextDecoder();
      for (const [name, expected] of [
        ['multi', multi],
        ['single', single],
      ] as const) {
        const want = expected.map((ts) => [...new Set(ts ?? [])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
        const it = p.getSortedSet(name);
        const got: string[][] = Array.from({ length: maxDoc }, () => []);
        for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) {
          const n = it.docValueCount();
          let prev = -1;
          for (let i = 0; i < n; i++) {
            const ord = it.nextOrd();
            expect(ord).toBeGreaterThan(prev);
            prev = ord;
            got[d].push(dec.decode(it.lookupOrd(ord)));
          }
        }
        expect(got).toEqual(want);
        const c = p.sortedSetColumn(name);
        const dict = p.termsDict(name);
        const fromColumn = Array.from({ length: maxDoc }, (_, d) => Array.from(c.ords.subarray(c.offsets[d], c.offsets[d + 1]), (o) => dec.decode(dict.lookupOrd(o))));
        expect(fromColumn).toEqual(want);
        expect(dict.lookupTerm('a')).toBe(name === 'multi' ? 0 : -1);
      }
      expect(() => p.sortedColumn('multi')).toThrow(/several values/);
      expect([...p.sortedColumn('single').ords.subarray(0, 4)]).toEqual([-1, p.termsDict('single').lookupTerm('v1'), p.termsDict('single').lookupTerm('v2'), -1]);
    } finally {
      p.close();
    }
  });

  it('BINARY: fixed and variable lengths, dense and sparse (IndexedDISI), empty values distinct from none', () => {
    const has = sparseLayout(7);
    const rnd = mulberry32(8);
    const fixed = has.map((h, d) => (h ? Uint8Array.of(d & 0xff, (d >>> 8) & 0xff, d >>> 16) : null));
    const variable = has.map((h) => (h ? Uint8Array.from({ length: Math.floor(rnd() * 6) }, () => Math.floor(rnd() * 256)) : null));
    const { open } = segment(SPARSE_MAX_DOC, [field('fixed', 0, 'BINARY'), field('var', 1, 'BINARY')], (w) => {
      w.addBinaryField({ number: 0 }, fixed);
      w.addBinaryField({ number: 1 }, variable);
    });
    const p = open();
    try {
      for (const [name, expected] of [
        ['fixed', fixed],
        ['var', variable],
      ] as const) {
        const it = p.getBinary(name);
        const c = p.binaryColumn(name);
        let mismatches = 0;
        for (let d = 0; d < SPARSE_MAX_DOC; d += 5) {
          const exists = it.advanceExact(d);
          const inColumn = ((c.docsWithField![d >>> 5] >>> (d & 31)) & 1) === 1;
          if (exists !== (expected[d] !== null) || inColumn !== exists) mismatches++;
          else if (exists && (Buffer.compare(it.binaryValue(), expected[d]!) !== 0 || Buffer.compare(c.bytes.subarray(c.offsets[d], c.offsets[d + 1]), expected[d]!) !== 0))
            mismatches++;
        }
        expect(mismatches, name).toBe(0);
      }
    } finally {
      p.close();
    }
  });

  it('fields no doc has a value for read as empty, of every type', () => {
    const maxDoc = 100;
    const none = new Array(maxDoc).fill(null);
    const { open } = segment(
      maxDoc,
      [field('n', 0, 'NUMERIC'), field('b', 1, 'BINARY'), field('s', 2, 'SORTED'), field('ss', 3, 'SORTED_SET'), field('sn', 4, 'SORTED_NUMERIC')],
      (w) => {
        w.addNumericField({ number: 0 }, none);
        w.addBinaryField({ number: 1 }, none);
        w.addSortedField({ number: 2 }, none);
        w.addSortedSetField({ number: 3 }, none);
        w.addSortedNumericField({ number: 4 }, none);
      },
    );
    const p = open();
    try {
      expect(p.getNumeric('n').nextDoc()).toBe(NO_MORE_DOCS);
      expect(p.getBinary('b').advanceExact(5)).toBe(false);
      expect(p.getSorted('s').nextDoc()).toBe(NO_MORE_DOCS);
      expect(p.getSortedSet('ss').nextDoc()).toBe(NO_MORE_DOCS);
      expect(p.getSortedNumeric('sn').nextDoc()).toBe(NO_MORE_DOCS);
      expect(p.numericColumn('n').docCount).toBe(0);
      expect(p.sortedColumn('s').ords.every((o) => o === -1)).toBe(true);
      expect(p.termsDict('s').lookupTerm('x')).toBe(-1);
      expect(p.sortedSetColumn('ss').ords.length).toBe(0);
      expect(p.docsWithField('sn')!.every((w) => w === 0)).toBe(true);
    } finally {
      p.close();
    }
  });

  it('doubles and floats are longs: the column decodes raw and sortable encodings exactly, negative values and -0 included', () => {
    const doubles = [0, -0, 1.5, -2.25, Number.MAX_VALUE, -Number.MIN_VALUE, 1e300, -1e-300];
    const floats = [0, -0, 1.5, -2.25, 3.4028234663852886e38, -1.401298464324817e-45];
    const encodings = ['double', 'sortableDouble', 'float', 'sortableFloat'] as const;
    const fields = encodings.map((e, i) => field(e, i, 'NUMERIC'));
    const data = { double: doubles, sortableDouble: doubles, float: floats, sortableFloat: floats };
    const { open } = segment(doubles.length, fields, (w) => {
      for (const [i, e] of encodings.entries())
        w.addNumericField(
          { number: i },
          doubles.map((_, d) => (d < data[e].length ? encodeLong(data[e][d], e) : null)),
        );
    });
    const p = open();
    try {
      for (const e of encodings) {
        const c = p.numericColumn(e, e);
        expect(c.kind).toBe('number');
        expect(Array.from(c.values as Float64Array).slice(0, data[e].length)).toEqual(data[e]);
        const it = p.getNumeric(e);
        it.advanceExact(1);
        expect(Object.is(decodeLong(it.longValue(), e), -0)).toBe(true);
      }
    } finally {
      p.close();
    }
  });

  for (const version of [0, 1, 2] as const) {
    it(`skip index, version ${version} (${version === 0 ? 'inside .dvd' : version === 1 ? 'in .dvs' : 'in .dvs, with maxValueCount'}): every interval and level summarises its docs, global bounds in .dvm; advance skips whole levels`, () => {
      const maxDoc = 6000;
      const rnd = mulberry32(9);
      const values = Array.from({ length: maxDoc }, (_, d) => (d % 10 === 3 ? null : BigInt(Math.floor(rnd() * 1000) - 500)));
      const multi = Array.from({ length: maxDoc }, (_, d) => (d % 4 === 0 ? [] : [`t${d % 97}`, `u${d % 13}`]));
      const fields = [field('n', 0, 'NUMERIC', 'RANGE'), field('ss', 1, 'SORTED_SET', 'RANGE')];
      // Intervals of 4 docs, so 6000 docs make runs of 512 intervals with all four levels.
      const { dir, open } = segment(
        maxDoc,
        fields,
        (w) => {
          w.addNumericField({ number: 0, skipIndex: true }, values);
          w.addSortedSetField({ number: 1, skipIndex: true }, multi);
        },
        { skipIndexIntervalSize: 4, version },
      );
      expect(existsSync(join(dir, '_0_Lucene90_0.dvs'))).toBe(version > 0);
      const p = open();
      try {
        expect(p.version).toBe(version);
        expectNumeric(p, 'n', values);
        const present = values.flatMap((v, d) => (v === null ? [] : [{ d, v }]));
        const s = p.getSkipper('n')!;
        expect(s.minValue()).toBe(present.reduce((m, x) => (x.v < m ? x.v : m), LONG_MAX));
        expect(s.maxValue()).toBe(present.reduce((m, x) => (x.v > m ? x.v : m), LONG_MIN));
        expect(s.docCount()).toBe(present.length);
        expect(s.maxValueCount()).toBe(1); // recorded from version 2, inferred before for a single-valued field
        const summary = (from: number, to: number) => {
          const inRange = present.filter((x) => x.d >= from && x.d <= to);
          return { count: inRange.length, min: inRange.reduce((m, x) => (x.v < m ? x.v : m), LONG_MAX), max: inRange.reduce((m, x) => (x.v > m ? x.v : m), LONG_MIN) };
        };
        let intervals = 0;
        let maxLevels = 0;
        for (let target = 0; ; ) {
          s.advance(target);
          if (s.minDocID(0) === NO_MORE_DOCS) break;
          intervals++;
          maxLevels = Math.max(maxLevels, s.numLevels());
          for (let level = 0; level < s.numLevels(); level++) {
            const sum = summary(s.minDocID(level), s.maxDocID(level));
            expect({ count: s.docCount(level), min: s.minValue(level), max: s.maxValue(level) }).toEqual(sum);
          }
          target = s.maxDocID(0) + 1;
        }
        expect(intervals).toBe(Math.ceil(present.length / 4));
        expect(maxLevels).toBe(4);
        // A far target skips whole groups and still lands on the interval holding it.
        const far = p.getSkipper('n')!;
        far.advance(5000);
        expect(far.minDocID(0)).toBeLessThanOrEqual(5000);
        expect(far.maxDocID(0)).toBeGreaterThanOrEqual(5000);
        const set = p.getSkipper('ss')!;
        expect(set.docCount()).toBe(multi.filter((t) => t.length > 0).length);
        expect(set.maxValueCount()).toBe(version >= 2 ? 2 : -1); // multi-valued: unknown before version 2
        expect(set.minValue()).toBe(0n);
        expect(set.maxValue()).toBe(BigInt(p.termsDict('ss').valueCount - 1));
        expect(p.getSkipper('ss')).not.toBeNull();
        expect(() => p.checkIntegrity()).not.toThrow();
      } finally {
        p.close();
      }
    });
  }

  it('a flipped byte is detected naming the file: .dvm at open (CRC), .dvd by checkIntegrity() or, in its header, at open', () => {
    const maxDoc = 3000;
    const { dir, open } = segment(maxDoc, [field('n', 0, 'NUMERIC'), field('s', 1, 'SORTED')], (w) => {
      w.addNumericField(
        { number: 0 },
        Array.from({ length: maxDoc }, (_, d) => d * 3),
      );
      w.addSortedField(
        { number: 1 },
        Array.from({ length: maxDoc }, (_, d) => `t${d}`),
      );
    });
    const flip = (name: string, at: (length: number) => number, fn: () => void) => {
      const path = join(dir, name);
      const original = readFileSync(path);
      const bad = Buffer.from(original);
      bad[at(bad.length)] ^= 0x40;
      writeFileSync(path, bad);
      try {
        fn();
      } finally {
        writeFileSync(path, original);
      }
    };
    const corruptNaming = (file: string) => (e: unknown) => {
      expect(e).toBeInstanceOf(CorruptIndexException);
      expect((e as CorruptIndexException).resource).toContain(file);
      return true;
    };
    const expectThrown = (fn: () => unknown, check: (e: unknown) => boolean) => {
      let thrown: unknown = null;
      try {
        fn();
      } catch (e) {
        thrown = e;
      }
      expect(thrown).not.toBeNull();
      check(thrown);
    };
    flip(
      '_0_Lucene90_0.dvm',
      (n) => n >> 1,
      () => expectThrown(() => open(), corruptNaming('_0_Lucene90_0.dvm')),
    );
    flip(
      '_0_Lucene90_0.dvd',
      (n) => n >> 1,
      () => {
        const p = open();
        try {
          expectThrown(() => p.checkIntegrity(), corruptNaming('_0_Lucene90_0.dvd'));
        } finally {
          p.close();
        }
      },
    );
    flip(
      '_0_Lucene90_0.dvd',
      () => 2,
      () => expectThrown(() => open(), corruptNaming('_0_Lucene90_0.dvd')),
    );
    flip(
      '_0_Lucene90_0.dvd',
      (n) => n - 3,
      () => expectThrown(() => open().checkIntegrity(), corruptNaming('_0_Lucene90_0.dvd')),
    );
    const p = open();
    expect(() => p.checkIntegrity()).not.toThrow();
    p.close();
  });

  it('a flipped byte in .dvs (version 1+) is detected naming .dvs', () => {
    const maxDoc = 500;
    const { dir, open } = segment(
      maxDoc,
      [field('n', 0, 'NUMERIC', 'RANGE')],
      (w) =>
        w.addNumericField(
          { number: 0, skipIndex: true },
          Array.from({ length: maxDoc }, (_, d) => d),
        ),
      {
        version: 2,
        skipIndexIntervalSize: 8,
      },
    );
    const path = join(dir, '_0_Lucene90_0.dvs');
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] ^= 1;
    writeFileSync(path, bytes);
    const p = open();
    try {
      expect(() => p.checkIntegrity()).toThrow(/_0_Lucene90_0\.dvs/);
    } finally {
      p.close();
    }
    bytes[3] ^= 1; // the header's magic
    writeFileSync(path, bytes);
    expect(() => open()).toThrow(/_0_Lucene90_0\.dvs/);
  });

  it('asking a field for the wrong type names the field and its type; NUMERIC and SORTED also read as their single-valued multi views', () => {
    const { open } = segment(3, [field('n', 0, 'NUMERIC'), field('s', 1, 'SORTED')], (w) => {
      w.addNumericField({ number: 0 }, [1, null, 3]);
      w.addSortedField({ number: 1 }, ['x', 'y', null]);
    });
    const p = open();
    try {
      expect(() => p.getSorted('n')).toThrow(/field "n" has NUMERIC doc values, not SORTED/);
      expect(() => p.getNumeric('missing')).toThrow(/no field "missing"/);
      const sn = p.getSortedNumeric('n');
      expect(sn.advanceExact(2) && sn.docValueCount()).toBe(1);
      expect(sn.nextValue()).toBe(3n);
      const ss = p.getSortedSet('s');
      expect(ss.advanceExact(1) && ss.nextOrd()).toBe(1);
      expect(p.sortedSetColumn('s').ords).toEqual(Int32Array.of(0, 1));
    } finally {
      p.close();
    }
  });

  it('the writer refuses what Lucene cannot store: a column of the wrong length, an unsafe number, a long beyond int64, a field twice', () => {
    expect(() => segment(3, [], (w) => w.addNumericField({ number: 0, name: 'n' }, [1, 2]))).toThrow(/2 docs in the column, the segment has 3/);
    expect(() => segment(1, [], (w) => w.addNumericField({ number: 0, name: 'n' }, [2 ** 60]))).toThrow(/not a safe integer/);
    expect(() => segment(1, [], (w) => w.addNumericField({ number: 0, name: 'n' }, [2n ** 63n]))).toThrow(/outside the int64 range/);
    expect(() =>
      segment(1, [], (w) => {
        w.addNumericField({ number: 0 }, [1]);
        w.addNumericField({ number: 0 }, [1]);
      }),
    ).toThrow(/written twice/);
  });
});

describe('after close()', () => {
  it('iterators, dictionaries and skippers throw instead of reading unmapped memory; columns stay valid', () => {
    const maxDoc = 70_000; // a DENSE block, whose bitmap an iterator would otherwise hold a view of
    const { open } = segment(maxDoc, [field('n', 0, 'NUMERIC', 'RANGE'), field('s', 1, 'SORTED')], (w) => {
      w.addNumericField(
        { number: 0, skipIndex: true },
        Array.from({ length: maxDoc }, (_, d) => (d % 3 === 0 ? null : d)),
      );
      w.addSortedField(
        { number: 1 },
        Array.from({ length: maxDoc }, (_, d) => `t${d % 100}`),
      );
    });
    const p = open();
    const it = p.getNumeric('n');
    expect(it.advanceExact(10)).toBe(true);
    const dict = p.termsDict('s');
    const skipper = p.getSkipper('n')!;
    const column = p.numericColumn('n');
    p.close();
    expect(() => it.advanceExact(11)).toThrow(/closed/);
    expect(() => dict.lookupOrd(5)).toThrow(/closed/);
    expect(() => skipper.advance(0)).toThrow(/closed/);
    expect(() => p.getNumeric('n')).toThrow(/closed/);
    expect(column.values[11]).toBe(11);
  });
});

describe("SegmentDocValues: a Lucene segment's fields across per-field formats and updates", () => {
  it('reads an updated field (dvGen 1) from `_N_1_Lucene90_0.*` and the others from the base files; another format is refused by name', () => {
    const maxDoc = 4;
    const base = segment(maxDoc, [], (w) => {
      w.addNumericField({ number: 0 }, [1, 2, 3, 4]);
      w.addNumericField({ number: 1 }, [10, 20, 30, 40]); // the values before the update
    });
    // The update generation's files sit next to the base files, with the generation in the suffix.
    const update = new Lucene90DocValuesConsumer(base.dir, { name: '_0', id: SEGMENT_ID, maxDoc }, '1_Lucene90_0');
    update.addNumericField({ number: 1 }, [11, null, 33, 44]);
    update.close();
    const fields = [
      field('kept', 0, 'NUMERIC'),
      { ...field('updated', 1, 'NUMERIC'), dvGen: 1 },
      {
        ...field('tsdb', 2, 'NUMERIC'),
        attributes: new Map([
          ['PerFieldDocValuesFormat.format', 'ES87TSDB'],
          ['PerFieldDocValuesFormat.suffix', '0'],
        ]),
      },
    ];
    const directory = new IndexDirectory(base.dir);
    const luceneSegment = { name: '_0', id: SEGMENT_ID, maxDoc, fieldInfos: new FieldInfos(fields, 2, 'test'), directory } as unknown as LuceneSegment;
    const dv = SegmentDocValues.open(directory, luceneSegment);
    try {
      expect(dv.fieldNames).toEqual(['kept', 'updated']);
      expect([...(dv.producer('kept').numericColumn('kept').values as Float64Array)]).toEqual([1, 2, 3, 4]);
      const updated = dv.producer('updated').numericColumn('updated');
      expect([...(updated.values as Float64Array)]).toEqual([11, 0, 33, 44]);
      expect(updated.docCount).toBe(3);
      expect(() => dv.producer('tsdb')).toThrow(/per-field doc-values format ES87TSDB/);
    } finally {
      dv.close();
    }
  });
});
