import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as EsClient } from '@elastic/elasticsearch';
import { Client as OsClient } from '@opensearch-project/opensearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { createApp } from '../src/http/app.js';
import { IndexWrites } from '../src/http/IndexWrites.js';
import { ReopeningIndex } from '../src/http/ReopeningIndex.js';
import { startServer, type RunningServer } from '../src/http/server.js';
import { Mapping } from '../segments/document/Mapping.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';

/**
 * Elasticsearch's document write API on a served prescore index: index, create, update, delete
 * and bulk, with `_seq_no`/`_version`, conflicts as 409, bad documents as 400 naming the field,
 * `refresh=true` making writes searchable before the answer, and the official Elasticsearch and
 * OpenSearch clients' write calls working unmodified.
 */
const root = mkdtempSync(join(tmpdir(), 'prescore-http-writes-'));
const dir = join(root, 'books');
const DIMS = 8;
let served: ReopeningIndex;
let writes: IndexWrites;
let server: RunningServer;

const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.cos(i * 0.9 + j * 1.7) + 1.2));

beforeAll(async () => {
  const mapping = Mapping.parse({ properties: { vector: { type: 'dense_vector', dims: DIMS, similarity: 'cosine' }, genre: { type: 'keyword' }, pages: { type: 'integer' } } });
  const writer = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE, mapping } });
  await writer.close();
  const reopen = () => openIndex(dir, { name: 'books' });
  served = await ReopeningIndex.wrap(await reopen(), reopen);
  writes = new IndexWrites('books', served, () => openIndexWriter(dir));
  server = await startServer(served, { host: '127.0.0.1', port: 0, warmUpRequests: 0, name: 'books' }, { log: () => {}, writes });
}, 60_000);

afterAll(async () => {
  await server?.close({ force: true });
  await writes?.close();
  await served?.close();
  rmSync(root, { recursive: true, force: true });
});

const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: res.status === 204 || method === 'HEAD' ? null : ((await res.json()) as Record<string, any>) };
};
const search = async (i: number, k = 5) =>
  (await call('POST', '/books/_search', { knn: { field: 'vector', query_vector: vector(i), k, num_candidates: 50 } })).body!.hits.hits as { _id: string; _score: number }[];

describe('the document write API', () => {
  it('indexes, re-indexes, updates and deletes a document, answering with its _seq_no and _version', async () => {
    const created = await call('PUT', '/books/_doc/b1?refresh=true', { vector: vector(1), title: 'Dune', genre: 'sf', pages: 412 });
    expect(created).toMatchObject({ status: 201, body: { _index: 'books', _id: 'b1', _version: 1, result: 'created', _primary_term: 1, forced_refresh: true } });
    expect((await search(1))[0]).toMatchObject({ _id: 'b1' });

    const again = await call('PUT', '/books/_doc/b1', { vector: vector(1), title: 'Dune', genre: 'sf', pages: 412 });
    expect(again).toMatchObject({ status: 200, body: { _version: 2, result: 'updated' } });
    expect(again.body!._seq_no).toBeGreaterThan(created.body!._seq_no);

    // Realtime GET: the unrefreshed write with its version.
    expect((await call('GET', '/books/_doc/b1')).body).toMatchObject({ found: true, _version: 2, _source: { title: 'Dune', pages: 412 } });

    const updated = await call('POST', '/books/_update/b1?refresh=wait_for', { doc: { pages: 896, extra: { note: 'hardcover' } } });
    expect(updated).toMatchObject({ status: 200, body: { _version: 3, result: 'updated' } });
    expect((await call('GET', '/books/_doc/b1?_source_includes=pages,extra')).body!._source).toEqual({ pages: 896, extra: { note: 'hardcover' } });
    // The update kept the vector: the doc is still its own nearest neighbour, at similarity 1.
    const top = (await search(1))[0]!;
    expect(top._id).toBe('b1');
    expect(top._score).toBeCloseTo(1, 5);
    expect((await call('POST', '/books/_update/b1', { doc: { pages: 896 } })).body).toMatchObject({ result: 'noop', _version: 3 });

    expect((await call('DELETE', '/books/_doc/b1?refresh=true')).body).toMatchObject({ result: 'deleted', _version: 4 });
    expect(await call('DELETE', '/books/_doc/b1')).toMatchObject({ status: 404, body: { result: 'not_found' } });
    expect(await call('GET', '/books/_doc/b1')).toMatchObject({ status: 404, body: { found: false } });
    expect((await search(1)).map((h) => h._id)).not.toContain('b1');
  });

  it('answers conflicts with 409, bad documents with 400 naming the field, and a missing doc to update with 404', async () => {
    await call('PUT', '/books/_doc/c1', { vector: vector(2), title: 'Emma' });
    const conflict = await call('PUT', '/books/_create/c1', { vector: vector(2) });
    expect(conflict).toMatchObject({ status: 409, body: { error: { type: 'version_conflict_engine_exception' } } });
    expect((await call('PUT', '/books/_doc/c1?op_type=create', { vector: vector(2) })).status).toBe(409);
    const seq = (await call('GET', '/books/_doc/c1')).body!._seq_no as number;
    expect((await call('PUT', `/books/_doc/c1?if_seq_no=${seq + 7}&if_primary_term=1`, { vector: vector(2) })).status).toBe(409);
    expect((await call('PUT', `/books/_doc/c1?if_seq_no=${seq}&if_primary_term=1`, { vector: vector(2), title: 'Emma (2)' })).status).toBe(200);

    const badDims = await call('PUT', '/books/_doc/x', { vector: [1, 2, 3] });
    expect(badDims).toMatchObject({ status: 400, body: { error: { type: 'document_parsing_exception', field: 'vector' } } });
    expect((await call('PUT', '/books/_doc/x', { vector: vector(3), pages: 'many' })).body!.error).toMatchObject({ field: 'pages' });
    expect(await call('POST', '/books/_update/nope', { doc: { a: 1 } })).toMatchObject({ status: 404, body: { error: { type: 'document_missing_exception' } } });
    expect((await call('POST', '/books/_update/up1', { doc: { vector: vector(4), title: 'Upserted' }, doc_as_upsert: true })).status).toBe(201);
    expect((await call('PUT', '/other/_doc/1', { vector: vector(1) })).status).toBe(404);
    expect((await call('GET', '/books/_doc/x')).body!.found).toBe(false); // nothing of the failed writes was kept
  });

  it('applies a _bulk body item by item: a bad item fails alone, the rest are written once and synced together', async () => {
    const lines = [
      { index: { _id: 'k1' } },
      { vector: vector(10), genre: 'poetry', pages: 90 },
      { create: { _index: 'books', _id: 'k2' } },
      { vector: vector(11), genre: 'poetry', pages: 120 },
      { index: { _id: 'k3' } },
      { vector: [0, 1], genre: 'poetry' },
      { update: { _id: 'k1' } },
      { doc: { pages: 91 } },
      { delete: { _id: 'k2' } },
      { create: { _id: 'k1' } },
      { vector: vector(12) },
      { index: { _index: 'elsewhere', _id: 'z' } },
      { vector: vector(13) },
      { index: {} },
      { vector: vector(14), genre: 'poetry' },
    ];
    const r = await call('POST', '/books/_bulk?refresh=true', `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`, 'application/x-ndjson');
    expect(r.status).toBe(200);
    expect(r.body!.errors).toBe(true);
    const items = r.body!.items as Record<string, { status: number; result?: string; _id?: string; error?: { type: string } }>[];
    expect(items.map((i) => Object.keys(i)[0])).toEqual(['index', 'create', 'index', 'update', 'delete', 'create', 'index', 'index']);
    expect(items.map((i) => Object.values(i)[0]!.status)).toEqual([201, 201, 400, 200, 200, 409, 404, 201]);
    expect(items[2]!.index!.error!.type).toBe('document_parsing_exception');
    expect(items[7]!.index!._id).toMatch(/^[\w-]{20}$/);
    const count = await call('POST', '/books/_count', { query: { term: { genre: 'poetry' } } });
    expect(count.body!.count).toBe(2); // k1 and the generated one; k2 was deleted, k3 refused
    expect((await call('GET', '/books/_doc/k1')).body!._source).toMatchObject({ pages: 91 });
    const mget = await call('POST', '/books/_mget', { ids: ['k1', 'k2'] });
    expect(mget.body!.docs).toMatchObject([
      { _id: 'k1', found: true, _version: 2, _source: { pages: 91 } },
      { _id: 'k2', found: false },
    ]);

    const malformed = await call('POST', '/_bulk', '{"index": \n', 'application/x-ndjson');
    expect(malformed).toMatchObject({ status: 400, body: { error: { type: 'illegal_argument_exception' } } });
  });

  it('force-merges the segments down to one, and searches find the same docs', async () => {
    const before = (await call('POST', '/books/_count', {})).body!.count as number;
    const merged = await call('POST', '/books/_forcemerge?max_num_segments=1');
    expect(merged).toMatchObject({ status: 200, body: { _shards: { successful: 1 } } });
    await call('POST', '/books/_refresh');
    const segments = ((await call('GET', '/v1/indexes')).body!.indexes as { segments: unknown[] }[])[0]!.segments;
    expect(segments).toHaveLength(1);
    expect((await call('POST', '/books/_count', {})).body!.count).toBe(before);
    expect((await call('GET', '/books/_doc/k1')).body!._source).toMatchObject({ pages: 91 });
    expect((await call('POST', '/books/_forcemerge?max_num_segments=0')).status).toBe(400);
    const cat = await (await fetch(`${server.url}/_cat/indices?v`)).text();
    expect(cat.split('\n')[0]).toBe('health status index uuid pri rep docs.count docs.deleted store.size pri.store.size');
    expect(cat.split('\n')[1]).toMatch(new RegExp(`^green open books books 1 0 ${before} 0 \\d+b \\d+b$`));
  });

  it('refuses writes on an index served read-only', async () => {
    const app = createApp(served, { warmUpRequests: 0, name: 'books' });
    const res = await app.request('/books/_doc/1', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ vector: vector(1) }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { reason: string } }).error.reason).toMatch(/read-only/);
  });
});

describe('the official clients write', () => {
  it('Elasticsearch 9: index, get, update, delete, bulk and helpers.bulk, then a knn search sees them', async () => {
    const client = new EsClient({ node: server.url });
    const r = await client.index({ index: 'books', id: 'es1', document: { vector: vector(20), title: 'Ulysses', genre: 'novel' }, refresh: true });
    expect(r.result).toBe('created');
    expect((await client.get<{ title: string }>({ index: 'books', id: 'es1' }))._source!.title).toBe('Ulysses');
    expect((await client.update({ index: 'books', id: 'es1', doc: { pages: 730 } })).result).toBe('updated');
    const bulk = await client.bulk({
      refresh: true,
      operations: [{ index: { _index: 'books', _id: 'es2' } }, { vector: vector(21), genre: 'novel' }, { delete: { _index: 'books', _id: 'es1' } }],
    });
    expect(bulk.errors).toBe(false);
    const stats = await client.helpers.bulk({
      datasource: Array.from({ length: 50 }, (_, i) => ({ id: `h${i}`, vector: vector(100 + i), genre: 'helper' })),
      onDocument: (d) => ({ index: { _index: 'books', _id: d.id } }),
      refreshOnCompletion: 'books',
    });
    expect(stats.successful).toBe(50);
    expect(stats.failed).toBe(0);
    const hits = await client.search({ index: 'books', knn: { field: 'vector', query_vector: vector(120), k: 3, num_candidates: 50 } });
    expect(hits.hits.hits[0]!._id).toBe('h20');
    await expect(client.get({ index: 'books', id: 'es1' })).rejects.toMatchObject({ meta: { statusCode: 404 } });
    expect((await client.delete({ index: 'books', id: 'es2', refresh: true })).result).toBe('deleted');
    expect((await client.cluster.health()).status).toBe('green');
    // A flush commits what only the translog holds: a reader opened now at the newest commit sees it.
    await client.index({ index: 'books', id: 'es3', document: { vector: vector(22), genre: 'novel' } });
    expect((await client.indices.flush({ index: 'books' }))._shards).toMatchObject({ failed: 0 });
    const reader = await openIndex(dir);
    expect(await reader.get!('es3')).toMatchObject({ id: 'es3', source: { genre: 'novel' } });
    await reader.close();
    const [row] = await client.cat.indices({ format: 'json' });
    expect(row).toMatchObject({ health: 'green', index: 'books', 'docs.count': String((await client.count({ index: 'books' })).count) });
    await client.close();
  });

  it('OpenSearch 3: index, get, update, delete and bulk', async () => {
    const client = new OsClient({ node: server.url });
    expect((await client.index({ index: 'books', id: 'os1', body: { vector: vector(30), genre: 'essay' }, refresh: true })).body.result).toBe('created');
    expect((await client.get({ index: 'books', id: 'os1' })).body._source).toMatchObject({ genre: 'essay' });
    expect((await client.update({ index: 'books', id: 'os1', body: { doc: { pages: 12 } } })).body.result).toBe('updated');
    const bulk = await client.bulk({ refresh: true, body: [{ index: { _index: 'books', _id: 'os2' } }, { vector: vector(31), genre: 'essay' }] });
    expect(bulk.body.errors).toBe(false);
    expect((await client.delete({ index: 'books', id: 'os1' })).body.result).toBe('deleted');
    await client.close();
  });
});
