import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/api/buildIndex.js';
import { openIndex } from '../src/api/openIndex.js';
import type { VectorIndex } from '../src/api/types.js';
import { Mapping } from '../segments/document/Mapping.js';
import { filterSource } from '../segments/document/SourceFilter.js';
import { BooleanQuery, FieldExistsQuery, SortedNumericDocValuesRangeQuery, TermInSetQuery, TermQuery } from '../query/filter/index.js';
import { shortestFloat32 } from '../query/fetch/FetchPhase.js';

/**
 * The library's documents: filtered searches with Lucene's query classes, hits carrying their
 * source and fields, get by id, count, and Lucene's storedFields(), on an index built from
 * JSON Lines documents.
 */
const root = mkdtempSync(join(tmpdir(), 'prescore-documents-'));
const DIMS = 16;
const N = 1200;
let idx: VectorIndex;

const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.cos(i * 0.37 + j * 1.3) + (j === i % DIMS ? 0.5 : 0)));
const doc = (i: number) => ({
  id: `p${i}`,
  vector: vector(i),
  title: `Product ${i}`,
  brand: ['acme', 'globex', 'initech'][i % 3],
  tags: i % 10 === 0 ? ['sale', 'new'] : ['regular'],
  price: Math.round((i % 97) * 1.5 * 100) / 100,
  in_stock: i % 4 !== 0,
  updated: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
  meta: { warehouse: i % 2 ? 'north' : 'south', shelf: i % 13 },
});

beforeAll(async () => {
  const input = join(root, 'docs.jsonl');
  writeFileSync(input, Array.from({ length: N }, (_, i) => JSON.stringify(doc(i))).join('\n'));
  const mapping = Mapping.parse({
    properties: { vector: { type: 'dense_vector', dims: DIMS, similarity: 'cosine' }, title: { type: 'text' }, price: { type: 'double' }, updated: { type: 'date' } },
  });
  await buildIndex({ input, out: join(root, 'idx'), mapping, segmentDocs: 500, flatThreshold: 100, progress: false });
  idx = await openIndex(join(root, 'idx'));
}, 120_000);

afterAll(async () => {
  await idx?.close();
  rmSync(root, { recursive: true, force: true });
});

const q = (i: number) => Float32Array.from(vector(i));

describe('documents in the library', () => {
  it('returns hits that pass the filter, with their source (the vector left out) when asked', async () => {
    const filter = new BooleanQuery({
      filter: [new TermQuery('brand', 'globex'), new SortedNumericDocValuesRangeQuery('price', 10, 50)],
      mustNot: [new TermQuery('in_stock', false)],
    });
    const r = await idx.search(q(7), { k: 10, filter, source: true });
    expect(r.hits).toHaveLength(10);
    for (const h of r.hits) {
      const i = Number(h.id.slice(1));
      expect(doc(i).brand).toBe('globex');
      expect(doc(i).price).toBeGreaterThanOrEqual(10);
      expect(doc(i).price).toBeLessThanOrEqual(50);
      expect(doc(i).in_stock).toBe(true);
      const { vector: _v, ...rest } = doc(i);
      expect(h.source).toEqual(rest);
    }
    // Without `source`, hits are Lucene's: ids and scores.
    const plain = await idx.search(q(7), { k: 3, filter });
    expect(plain.hits.every((h) => h.source === undefined)).toBe(true);
  });

  it('filters the source by includes and excludes, and puts the vector back on request', async () => {
    const r = await idx.search(q(3), { k: 2, source: { includes: ['meta.*', 'brand', 'vector'], excludes: ['meta.shelf'], excludeVectors: false } });
    for (const h of r.hits) {
      const i = Number(h.id.slice(1));
      expect(h.source).toEqual({ brand: doc(i).brand, meta: { warehouse: doc(i).meta.warehouse }, vector: doc(i).vector.map(shortestFloat32) });
    }
  });

  it('gives fields from the source by the mapping and docvalue_fields from doc values', async () => {
    const r = await idx.search(q(20), {
      k: 1,
      filter: new TermQuery('tags', 'sale'),
      fields: ['price', 'updated', 'meta.*'],
      docvalueFields: ['tags', 'in_stock', { field: 'updated', format: 'epoch_millis' }],
    });
    const i = Number(r.hits[0]!.id.slice(1));
    expect(r.hits[0]!.fields).toEqual({
      price: [doc(i).price],
      updated: [String(Date.parse(doc(i).updated))],
      'meta.shelf': [doc(i).meta.shelf],
      'meta.warehouse': [doc(i).meta.warehouse],
      tags: ['new', 'sale'],
      in_stock: [doc(i).in_stock],
    });
  });

  it('gets a document by id, counts what a filter accepts, and reads by doc number (storedFields)', async () => {
    const got = await idx.get!('p42');
    const { vector: _v, ...rest } = doc(42);
    expect(got).toMatchObject({ id: 'p42', source: rest });
    expect(await idx.get!('nope')).toBeNull();
    expect(idx.storedFields!().document(got!.doc).source).toEqual(rest);
    expect(await idx.count!()).toBe(N);
    const brands = Array.from({ length: N }, (_, i) => doc(i).brand);
    expect(await idx.count!(new TermQuery('brand', 'acme'))).toBe(brands.filter((b) => b === 'acme').length);
    expect(await idx.count!(new TermInSetQuery('brand', ['acme', 'initech']))).toBe(brands.filter((b) => b !== 'globex').length);
    expect(await idx.count!(new FieldExistsQuery('meta.shelf'))).toBe(N);
  });

  it('refuses a search option it does not know, naming it, rather than running the default search', async () => {
    await expect(idx.search(q(1), { k: 3, recall_target: 0.95 } as never)).rejects.toThrow(/unknown search option "recall_target"; known: k, numCandidates/);
    await expect(idx.search(q(1), { k: 3, _source: true } as never)).rejects.toThrow(/unknown search option "_source"/);
    expect((await idx.search(q(1), { k: 3, oversample: 2, source: false })).hits).toHaveLength(3);
  });

  it('shows the mapping as Elasticsearch does, dynamic fields included', () => {
    const m = idx.mapping!()!;
    expect((m.properties as Record<string, unknown>).brand).toEqual({ type: 'keyword', ignore_above: 256 });
    expect((m.properties as Record<string, unknown>).title).toEqual({ type: 'text' });
  });
});

describe('source filtering', () => {
  const src = { a: 1, b: { c: 2, d: { e: 3 } }, list: [{ x: 1, y: 2 }, { x: 3 }], 'dotted.key': 4, empty: {} };

  it('includes whole objects, dotted paths and wildcards, excludes win, arrays keep their elements', () => {
    expect(filterSource(src, { includes: ['b'], excludes: [] })).toEqual({ b: { c: 2, d: { e: 3 } } });
    expect(filterSource(src, { includes: ['b.d.e', 'a'], excludes: [] })).toEqual({ a: 1, b: { d: { e: 3 } } });
    expect(filterSource(src, { includes: ['*.x'], excludes: [] })).toEqual({ list: [{ x: 1 }, { x: 3 }] });
    expect(filterSource(src, { includes: [], excludes: ['b.d', 'list.y'] })).toEqual({ a: 1, b: { c: 2 }, list: [{ x: 1 }, { x: 3 }], 'dotted.key': 4, empty: {} });
    expect(filterSource(src, { includes: ['b*'], excludes: ['b.c'] })).toEqual({ b: { d: { e: 3 } } });
    expect(filterSource(src, { includes: ['dotted.key'], excludes: [] })).toEqual({ 'dotted.key': 4 });
    expect(filterSource(src, { includes: ['nothing'], excludes: [] })).toEqual({});
  });
});
