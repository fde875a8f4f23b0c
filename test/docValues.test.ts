import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lucene90DocValuesConsumer } from '../segments/docvalues/Lucene90DocValuesConsumer.js';
import type { Lucene90DocValuesProducer } from '../segments/docvalues/Lucene90DocValuesProducer.js';
import { NO_MORE_DOCS } from '../segments/docvalues/DocValuesIterators.js';
import { SegmentDocValues } from '../segments/docvalues/SegmentDocValues.js';
import type { LuceneSegment } from '../segments/lucene/LuceneIndex.js';
import { LuceneIndex } from '../segments/lucene/LuceneIndex.js';
import { readSliceBytes } from '../segments/store/FileSlice.js';
import { unzipLuceneFixture } from './support/luceneFixtures.js';

/**
 * Lucene's backward-compatibility indexes (TestBasicBackwardsCompatibility.addDoc): 35 docs, doc
 * id i holds in every doc-values field a value made of i, segments of 10, 10, 10 and 5 docs (the
 * global doc equals the id), and a 5th segment whose single doc has no doc values. Doc 7 is
 * deleted; its values are still there (deletions do not touch doc values).
 */
const ZIPS = ['index.9.12.3-cfs.zip', 'index.10.0.0-cfs.zip'] as const;

const NUMERIC_AS_ID = ['dvByte', 'dvInt', 'dvLong', 'dvPacked', 'dvShort'];
const BINARY_AS_ID_BYTES = ['dvBytesDerefFixed', 'dvBytesDerefVar', 'dvBytesStraightFixed', 'dvBytesStraightVar'];
const SORTED_AS_ID_BYTES = ['dvBytesSortedFixed', 'dvBytesSortedVar'];
const ALL_FIELDS = [...NUMERIC_AS_ID, ...BINARY_AS_ID_BYTES, ...SORTED_AS_ID_BYTES, 'dvDouble', 'dvFloat', 'dvSortedSet', 'dvSortedNumeric'];

/** The 4-byte big-endian id Lucene's test stores as bytes. */
const idBytes = (id: number) => Uint8Array.of(id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff);
/** DoubleDocValuesField / FloatDocValuesField store raw IEEE bits. */
const doubleBits = (v: number) => new BigInt64Array(new Float64Array([v]).buffer)[0];
const floatBits = (v: number) => BigInt(new Int32Array(new Float32Array([v]).buffer)[0]);

describe('Lucene90DocValuesFormat reader on the real Lucene 9.12.3 and 10.0.0 indexes', () => {
  const dirs: Record<string, string> = {};
  beforeAll(() => {
    for (const zip of ZIPS) dirs[zip] = unzipLuceneFixture(zip);
  });
  afterAll(() => {
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  });

  function withSegments(zip: string, fn: (seg: LuceneSegment, dv: SegmentDocValues, index: LuceneIndex) => void, readPath: 'mmap' | 'pread' = 'mmap'): void {
    const index = LuceneIndex.open(dirs[zip]);
    expect(index.segments.map((s) => s.maxDoc)).toEqual([10, 10, 10, 5, 1]);
    for (const seg of index.segments) {
      const dv = SegmentDocValues.open(index.directory, seg, { readPath });
      try {
        fn(seg, dv, index);
      } finally {
        dv.close();
      }
    }
  }

  for (const zip of ZIPS) {
    describe(zip, () => {
      it('has the 15 doc-values fields of addDoc in the first four segments (.dvm version 0, suffix Lucene90_0), none in the no-prox segment', () => {
        withSegments(zip, (seg, dv) => {
          if (seg.name === '_4') {
            expect(dv.fieldNames).toEqual([]);
            return;
          }
          expect(dv.fieldNames.sort()).toEqual([...ALL_FIELDS].sort());
          const p = dv.producer('dvByte');
          expect(p.version).toBe(0);
          expect(p.fields.map((f) => f.name).sort()).toEqual([...ALL_FIELDS].sort());
        });
      });

      for (const readPath of ['mmap', 'pread'] as const) {
        it(`every field of every doc reads what addDoc wrote, through the iterators (${readPath})`, () => {
          let docs = 0;
          withSegments(
            zip,
            (seg, dv) => {
              if (seg.name === '_4') return;
              const ids = Array.from({ length: seg.maxDoc }, (_, d) => seg.docBase + d);
              for (const name of NUMERIC_AS_ID) {
                const it = dv.producer(name).getNumeric(name);
                for (const id of ids) {
                  expect(it.nextDoc()).toBe(id - seg.docBase);
                  expect(it.longValue()).toBe(BigInt(id));
                  expect(it.numberValue()).toBe(id);
                }
                expect(it.nextDoc()).toBe(NO_MORE_DOCS);
              }
              const dbl = dv.producer('dvDouble').getNumeric('dvDouble');
              const flt = dv.producer('dvFloat').getNumeric('dvFloat');
              for (const id of ids) {
                expect(dbl.advanceExact(id - seg.docBase)).toBe(true);
                expect(dbl.longValue()).toBe(doubleBits(id));
                expect(flt.advanceExact(id - seg.docBase)).toBe(true);
                expect(flt.longValue()).toBe(floatBits(id));
              }
              for (const name of BINARY_AS_ID_BYTES) {
                const it = dv.producer(name).getBinary(name);
                for (const id of ids) {
                  expect(it.nextDoc()).toBe(id - seg.docBase);
                  expect(it.binaryValue()).toEqual(idBytes(id));
                }
                expect(it.nextDoc()).toBe(NO_MORE_DOCS);
              }
              for (const name of SORTED_AS_ID_BYTES) {
                const it = dv.producer(name).getSorted(name);
                expect(it.valueCount).toBe(seg.maxDoc);
                for (const id of ids) {
                  expect(it.nextDoc()).toBe(id - seg.docBase);
                  // Big-endian ids sort like the ids: the ord is the doc's position in the segment.
                  expect(it.ordValue()).toBe(id - seg.docBase);
                  expect(it.lookupOrd(it.ordValue())).toEqual(idBytes(id));
                }
              }
              const set = dv.producer('dvSortedSet').getSortedSet('dvSortedSet');
              for (const id of ids) {
                expect(set.nextDoc()).toBe(id - seg.docBase);
                expect(set.docValueCount()).toBe(1);
                const ord = set.nextOrd();
                expect(set.lookupOrd(ord)).toEqual(idBytes(id));
              }
              const sn = dv.producer('dvSortedNumeric').getSortedNumeric('dvSortedNumeric');
              for (const id of ids) {
                expect(sn.advanceExact(id - seg.docBase)).toBe(true);
                expect(sn.docValueCount()).toBe(1);
                expect(sn.nextValue()).toBe(BigInt(id));
              }
              docs += ids.length;
            },
            readPath,
          );
          expect(docs).toBe(35);
        });
      }

      it('every field of every doc reads what addDoc wrote, through the bulk columns', () => {
        withSegments(zip, (seg, dv) => {
          if (seg.name === '_4') return;
          const ids = Float64Array.from({ length: seg.maxDoc }, (_, d) => seg.docBase + d);
          for (const name of NUMERIC_AS_ID) {
            const c = dv.producer(name).numericColumn(name);
            expect(c.kind).toBe('number');
            expect(c.values).toEqual(ids);
            expect(c.docsWithField).toBeNull();
            expect(c.docCount).toBe(seg.maxDoc);
          }
          expect(dv.producer('dvDouble').numericColumn('dvDouble', 'double').values).toEqual(ids);
          expect(dv.producer('dvFloat').numericColumn('dvFloat', 'float').values).toEqual(ids);
          const rawDoubles = dv.producer('dvDouble').numericColumn('dvDouble');
          // Raw double bits of 1.0.. are beyond 2^53: the 'long' column keeps them exact as bigints.
          expect(rawDoubles.kind).toBe('bigint');
          expect([...(rawDoubles.values as BigInt64Array)]).toEqual([...ids].map(doubleBits));
          for (const name of BINARY_AS_ID_BYTES) {
            const c = dv.producer(name).binaryColumn(name);
            expect(c.docsWithField).toBeNull();
            for (let d = 0; d < seg.maxDoc; d++) expect(c.bytes.subarray(c.offsets[d], c.offsets[d + 1])).toEqual(idBytes(ids[d]));
          }
          for (const name of [...SORTED_AS_ID_BYTES, 'dvSortedSet']) {
            const c = dv.producer(name).sortedColumn(name);
            expect(c.valueCount).toBe(seg.maxDoc);
            expect([...c.ords]).toEqual([...ids].map((_, d) => d));
            const set = dv.producer(name).sortedSetColumn(name);
            expect([...set.offsets]).toEqual(Array.from({ length: seg.maxDoc + 1 }, (_, d) => d));
            expect([...set.ords]).toEqual([...c.ords]);
          }
          const sn = dv.producer('dvSortedNumeric').sortedNumericColumn('dvSortedNumeric');
          expect(sn.values).toEqual(ids);
          expect([...sn.offsets]).toEqual(Array.from({ length: seg.maxDoc + 1 }, (_, d) => d));
          expect(dv.producer('dvInt').docsWithField('dvInt')).toBeNull();
        });
      });

      it('looks terms up: present terms give their ord, absent ones -1 - their insertion point', () => {
        withSegments(zip, (seg, dv) => {
          if (seg.name === '_4') return;
          for (const name of [...SORTED_AS_ID_BYTES, 'dvSortedSet']) {
            const dict = dv.producer(name).termsDict(name);
            for (let d = 0; d < seg.maxDoc; d++) expect(dict.lookupTerm(idBytes(seg.docBase + d))).toBe(d);
            expect(dict.lookupTerm(new Uint8Array(0))).toBe(-1);
            expect(dict.lookupTerm(idBytes(seg.docBase + seg.maxDoc))).toBe(-1 - seg.maxDoc);
            // Between two ids: 3 bytes of an id sort before the full id.
            expect(dict.lookupTerm(idBytes(seg.docBase + 1).subarray(0, 3))).toBe(-1);
            expect(dict.lookupTerm(Uint8Array.of(0, 0, 0, (seg.docBase + 1) & 0xff, 0))).toBe(-1 - 2);
          }
        });
      });

      it('verifies every byte of .dvd with checkIntegrity()', () => {
        withSegments(zip, (_seg, dv) => expect(() => dv.checkIntegrity()).not.toThrow());
      });

      it('rewriting the fixture values with the writer reproduces .dvm and .dvd byte for byte (same segment id, so the footers too)', () => {
        withSegments(zip, (seg, dv) => {
          if (seg.name === '_4') return;
          const p = dv.producer('dvByte');
          const dir = mkdtempSync(join(tmpdir(), 'prescore-dv-rewrite-'));
          try {
            const w = new Lucene90DocValuesConsumer(dir, seg, 'Lucene90_0');
            for (const fi of p.fields) rewriteField(p, w, fi.name, fi.number, fi.docValuesType, seg.maxDoc);
            w.close();
            for (const ext of ['dvm', 'dvd']) {
              const name = `${seg.name}_Lucene90_0.${ext}`;
              const ours = readFileSync(join(dir, name));
              const lucene = readSliceBytes(seg.directory.openSlice(name));
              expect(Buffer.compare(ours, lucene), `${zip} ${name}`).toBe(0);
            }
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        });
      });
    });
  }
});

/** Reads a field back through the columns and hands the values to the writer, in `.dvm` order. */
function rewriteField(p: Lucene90DocValuesProducer, w: Lucene90DocValuesConsumer, name: string, number: number, type: string, maxDoc: number): void {
  const spec = { number, name };
  const docs = Array.from({ length: maxDoc }, (_, d) => d);
  switch (type) {
    case 'NUMERIC': {
      const c = p.numericColumn(name);
      w.addNumericField(spec, c.kind === 'number' ? Array.from(c.values) : Array.from(c.values));
      break;
    }
    case 'BINARY': {
      const c = p.binaryColumn(name);
      w.addBinaryField(
        spec,
        docs.map((d) => c.bytes.slice(c.offsets[d], c.offsets[d + 1])),
      );
      break;
    }
    case 'SORTED': {
      const c = p.sortedColumn(name);
      const dict = p.termsDict(name);
      w.addSortedField(
        spec,
        docs.map((d) => (c.ords[d] < 0 ? null : dict.lookupOrd(c.ords[d]).slice())),
      );
      break;
    }
    case 'SORTED_SET': {
      const c = p.sortedSetColumn(name);
      const dict = p.termsDict(name);
      w.addSortedSetField(
        spec,
        docs.map((d) => Array.from(c.ords.subarray(c.offsets[d], c.offsets[d + 1]), (o) => dict.lookupOrd(o).slice())),
      );
      break;
    }
    default: {
      const c = p.sortedNumericColumn(name);
      w.addSortedNumericField(
        spec,
        docs.map((d) => (c.kind === 'number' ? Array.from(c.values.subarray(c.offsets[d], c.offsets[d + 1])) : Array.from(c.values.subarray(c.offsets[d], c.offsets[d + 1])))),
      );
    }
  }
}
