import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as EsClient } from '@elastic/elasticsearch';
import { Client as OsClient } from '@opensearch-project/opensearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/api/buildIndex.js';
import { openIndex } from '../src/api/openIndex.js';
import type { VectorIndex } from '../src/api/types.js';
import { startServer, type RunningServer } from '../src/http/server.js';
import { Mapping } from '../segments/document/Mapping.js';

/**
 * The official Elasticsearch 9 and OpenSearch 3 JavaScript clients, unmodified, against the
 * server: documents with their source, filtered kNN in every request shape those clients send,
 * filter-only queries, counts, gets and mappings.
 */
const root = mkdtempSync(join(tmpdir(), 'prescore-clients-'));
const DIMS = 24;
const N = 900;
let idx: VectorIndex;
let server: RunningServer;

const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.sin(i * 0.11 + j * 0.7) + (j === i % DIMS ? 0.3 : 0)));
const doc = (i: number) => ({
  id: `sku-${i}`,
  vector: vector(i),
  title: `Item ${i}`,
  brand: ['acme', 'globex', 'initech'][i % 3]!,
  price: (i % 50) * 2 + 0.5,
  released: `2024-${String((i % 12) + 1).padStart(2, '0')}-15`,
});

beforeAll(async () => {
  const input = join(root, 'products.jsonl');
  writeFileSync(input, Array.from({ length: N }, (_, i) => JSON.stringify(doc(i))).join('\n'));
  const mapping = Mapping.parse({
    properties: { vector: { type: 'dense_vector', dims: DIMS, similarity: 'cosine' }, title: { type: 'text' }, price: { type: 'double' }, released: { type: 'date' } },
  });
  await buildIndex({ input, out: join(root, 'idx'), mapping, segmentDocs: 400, flatThreshold: 100, progress: false });
  idx = await openIndex(join(root, 'idx'), { name: 'products' });
  server = await startServer(idx, { host: '127.0.0.1', port: 0 }, { log: () => {} });
}, 120_000);

afterAll(async () => {
  await server?.close({ force: true });
  await idx?.close();
  rmSync(root, { recursive: true, force: true });
});

const brandOf = (id: string) => doc(Number(id.slice(4))).brand;
const priceOf = (id: string) => doc(Number(id.slice(4))).price;

describe('the Elasticsearch 9 JavaScript client', () => {
  const es = () => new EsClient({ node: server.url });

  it('accepts the server (product check) and reads its identity, the index and its mapping', async () => {
    const client = es();
    const info = await client.info();
    expect(info.version.number).toMatch(/^9\./);
    expect(await client.indices.exists({ index: 'products' })).toBe(true);
    expect(await client.indices.exists({ index: 'nope' })).toBe(false);
    const mapping = await client.indices.getMapping({ index: 'products' });
    expect(mapping.products!.mappings.properties!.brand).toEqual({ type: 'keyword', ignore_above: 256 });
    await client.close();
  });

  it('searches with a knn section and its filter, hits carrying the source asked for', async () => {
    const client = es();
    const r = await client.search<{ title: string; brand: string }>({
      index: 'products',
      knn: { field: 'vector', query_vector: vector(17), k: 5, num_candidates: 50, filter: [{ term: { brand: 'globex' } }, { range: { price: { lt: 60 } } }] },
      _source: ['title', 'brand'],
    });
    expect(r.hits.hits).toHaveLength(5);
    for (const h of r.hits.hits) {
      expect(brandOf(h._id!)).toBe('globex');
      expect(priceOf(h._id!)).toBeLessThan(60);
      expect(h._source).toEqual({ title: `Item ${h._id!.slice(4)}`, brand: 'globex' });
    }
    await client.close();
  });

  it('searches with the knn query, alone and as the kNN clause of a bool that filters it', async () => {
    const client = es();
    const knnQuery = await client.search({ index: 'products', query: { knn: { field: 'vector', query_vector: vector(3), k: 8, filter: { term: { brand: 'acme' } } } }, size: 4 });
    expect(knnQuery.hits.hits).toHaveLength(4);
    for (const h of knnQuery.hits.hits) expect(brandOf(h._id!)).toBe('acme');
    const bool = await client.search({
      index: 'products',
      query: {
        bool: {
          must: [{ knn: { field: 'vector', query_vector: vector(3), k: 6 } }],
          filter: [{ range: { released: { gte: '2024-06-01' } } }],
          must_not: [{ term: { brand: 'initech' } }],
        },
      },
      _source: false,
    });
    expect(bool.hits.hits).toHaveLength(6);
    for (const h of bool.hits.hits) {
      const d = doc(Number(h._id!.slice(4)));
      expect(d.released >= '2024-06-01').toBe(true);
      expect(d.brand).not.toBe('initech');
      expect(h._source).toBeUndefined();
    }
    await client.close();
  });

  it('answers a filter-only query, counts, gets and multi-gets documents', async () => {
    const client = es();
    const filtered = await client.search({ index: 'products', query: { term: { brand: 'initech' } }, size: 3 });
    expect(filtered.hits.total).toEqual({ value: N / 3, relation: 'eq' });
    expect(filtered.hits.hits.map((h) => h._id)).toEqual(['sku-2', 'sku-5', 'sku-8']);
    expect((await client.count({ index: 'products' })).count).toBe(N);
    expect((await client.count({ index: 'products', query: { range: { price: { gte: 90 } } } })).count).toBe(
      Array.from({ length: N }, (_, i) => doc(i).price).filter((p) => p >= 90).length,
    );
    const got = await client.get<Record<string, unknown>>({ index: 'products', id: 'sku-42' });
    const { vector: _v, ...source } = doc(42);
    expect(got).toMatchObject({ _id: 'sku-42', found: true, _source: source });
    expect(await client.exists({ index: 'products', id: 'sku-42' })).toBe(true);
    expect(await client.exists({ index: 'products', id: 'sku-x' })).toBe(false);
    const many = await client.mget({ index: 'products', ids: ['sku-1', 'missing'] });
    expect(many.docs.map((d) => ('found' in d ? d.found : undefined))).toEqual([true, false]);
    await client.close();
  });

  it('gets an Elasticsearch error shape for a bad filter, naming the field', async () => {
    const client = es();
    await expect(
      client.search({ index: 'products', knn: { field: 'vector', query_vector: vector(1), k: 3, filter: { range: { price: { lt: 'cheap' } } } } }),
    ).rejects.toMatchObject({
      meta: { statusCode: 400, body: { error: { type: 'validation_error', path: 'knn.filter.range.price.lt' } } },
    });
    await client.close();
  });
});

describe('the OpenSearch 3 JavaScript client', () => {
  const os = () => new OsClient({ node: server.url });

  it("searches with OpenSearch's knn query and its filter", async () => {
    const client = os();
    const r = await client.search({
      index: 'products',
      body: { size: 5, query: { knn: { vector: { vector: vector(11), k: 5, filter: { bool: { must: [{ term: { brand: 'acme' } }] } } } } } },
    });
    const hits = r.body.hits.hits;
    expect(hits).toHaveLength(5);
    for (const h of hits) expect(brandOf(h._id as string)).toBe('acme');
    await client.close();
  });

  it('searches with the top-level knn section, gets and counts', async () => {
    const client = os();
    const r = await client.search({ index: 'products', body: { knn: { field: 'vector', query_vector: vector(5), k: 3 } } as never });
    expect(r.body.hits.hits).toHaveLength(3);
    expect((await client.get({ index: 'products', id: 'sku-7' })).body._source).toMatchObject({ brand: doc(7).brand });
    expect((await client.count({ index: 'products', body: { query: { term: { brand: 'globex' } } } })).body.count).toBe(N / 3);
    await client.close();
  });
});
