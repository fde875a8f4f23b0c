import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLuceneIndex } from '../src/api/openLuceneIndex.js';
import type { VectorIndex } from '../src/api/types.js';
import { TermQuery, SortedNumericDocValuesRangeQuery } from '../query/filter/index.js';
import { FieldInfos, type FieldInfo } from '../segments/lucene/FieldInfos.js';
import { liveDocBits, softDeletedDocs } from '../segments/lucene/SoftDeletes.js';
import { unzipLuceneFixture } from './support/luceneFixtures.js';

/**
 * A real Lucene 10 index served with its documents: stored fields read in place as each hit's
 * source, doc values as `docvalue_fields` and as filters, deleted docs never counted or returned;
 * and soft deletes applied as Lucene's SoftDeletesDirectoryReaderWrapper applies them.
 */
let dir: string;
let sidecars: string;
let idx: VectorIndex;

beforeAll(async () => {
  dir = unzipLuceneFixture('index.10.0.0-cfs.zip');
  sidecars = mkdtempSync(join(tmpdir(), 'prescore-lucene-docs-'));
  // The mapping Lucene's files do not hold: the backward-compat test stores dvDouble as raw double bits.
  idx = await openLuceneIndex(dir, { field: 'knn_field', sidecarDir: sidecars, mapping: { properties: { dvLong: { type: 'long' }, id: { type: 'keyword' } } } });
}, 60_000);

afterAll(async () => {
  await idx?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(sidecars, { recursive: true, force: true });
});

describe('a Lucene index with its documents', () => {
  it("reads each doc's stored fields as its source, and doc values as docvalue_fields", () => {
    for (const doc of [0, 12, 33]) {
      const d = idx.storedFields!().document(doc, { source: true, docvalueFields: ['dvLong', 'dvSortedSet'] });
      expect(d.source).toMatchObject({ id: String(doc), content2: 'here is more content with aaa aaa aaa', fieⱷld: 'field with non-ascii name' });
      expect(d.fields).toEqual({ dvLong: [doc], dvSortedSet: [String.fromCharCode(doc >>> 24, (doc >>> 16) & 255, (doc >>> 8) & 255, doc & 255)] });
    }
  });

  it('counts and filters on its doc values, never returning the deleted doc', async () => {
    expect(await idx.count!()).toBe(35);
    expect(await idx.count!(new SortedNumericDocValuesRangeQuery('dvLong', 10, 19))).toBe(10);
    // Doc 7 of segment _0 is deleted (`_0_1.liv`).
    expect(await idx.count!(new SortedNumericDocValuesRangeQuery('dvLong', 0, 9))).toBe(9);
    const r = await idx.search(Float32Array.of(0.2, -0.1, 0.5), { k: 5, filter: new SortedNumericDocValuesRangeQuery('dvLong', 20, 29), source: ['id'] });
    expect(r.hits).toHaveLength(5);
    for (const h of r.hits) {
      expect(h.doc).toBeGreaterThanOrEqual(20);
      expect(h.doc).toBeLessThanOrEqual(29);
      expect(h.source).toEqual({ id: String(h.doc) });
    }
    expect((await idx.search(Float32Array.of(0.2, -0.1, 0.8), { k: 3, filter: new TermQuery('dvLong', 7) })).hits).toEqual([]);
  });
});

describe('soft deletes', () => {
  const field = (over: Partial<FieldInfo>): FieldInfo =>
    ({
      name: 'f',
      number: 0,
      flags: 0,
      storeTermVector: false,
      omitNorms: false,
      storePayloads: false,
      isSoftDeletesField: false,
      isParentField: false,
      indexOptions: 'NONE',
      docValuesType: 'NONE',
      docValuesSkipIndexType: 'NONE',
      dvGen: -1,
      attributes: new Map(),
      pointDimensionCount: 0,
      pointIndexDimensionCount: 0,
      pointNumBytes: 0,
      vectorDimension: 0,
      vectorEncoding: 'FLOAT32',
      vectorSimilarity: 'EUCLIDEAN',
      vectorSimilarityOrdinal: 0,
      ...over,
    }) as FieldInfo;
  const docs = (set: number[] | null) => ({
    docValues: {
      producer: () => ({ docsWithField: () => (set === null ? null : Uint32Array.from([set.reduce((w, d) => w | (1 << d), 0)])) }) as never,
      checkIntegrity() {},
      close() {},
    },
  });
  const infos = new FieldInfos([field({ name: 'id' }), field({ name: '__soft_deletes', number: 1, isSoftDeletesField: true, docValuesType: 'NUMERIC' })], 2, 'test');

  it('hides every doc with a value in the soft-deletes field, beside the hard deletions', () => {
    const soft = softDeletedDocs({ fieldInfos: infos, maxDoc: 8 }, docs([1, 4]));
    expect([...soft!]).toEqual([(1 << 1) | (1 << 4)]);
    const live = liveDocBits({ maxDoc: 8, liveDocs: { isLive: (d: number) => d !== 6 } as never }, soft);
    expect([...live!]).toEqual([0b10101101]);
    // Every doc has a value: every doc is deleted.
    expect(liveDocBits({ maxDoc: 8, liveDocs: null }, softDeletedDocs({ fieldInfos: infos, maxDoc: 8 }, docs(null)))).toEqual(Uint32Array.of(0));
  });

  it('changes nothing for a segment without a soft-deletes field', () => {
    const plain = new FieldInfos([field({ name: 'id' })], 2, 'test');
    expect(softDeletedDocs({ fieldInfos: plain, maxDoc: 8 }, docs([1]))).toBeNull();
    expect(liveDocBits({ maxDoc: 8, liveDocs: null }, null)).toBeNull();
  });
});
