import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as EsClient } from '@elastic/elasticsearch';
import { Client as OsClient } from '@opensearch-project/opensearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { packageRoot } from '../src/executor/packageRoot.js';
import { DataDirectory, type ServedIndexDeps } from '../src/http/DataDirectory.js';
import { defaultIndexSettings, parseCreateIndex } from '../src/http/IndexSettings.js';
import type { HttpError } from '../src/http/errors.js';
import { parseServeArgs } from '../src/http/serve.js';
import { startServer, type RunningServer } from '../src/http/server.js';

/**
 * A server of many indexes (`prescore serve --data DIR`): indexes created with Elasticsearch's
 * create-index body (mappings and settings), listed, described, written, searched and deleted
 * over HTTP, by the official Elasticsearch and OpenSearch clients; they survive a restart with
 * their settings; bad requests are 400s naming the field.
 */
const root = mkdtempSync(join(tmpdir(), 'prescore-http-indexes-'));
const DIMS = 8;
const logs: string[] = [];
const deps: ServedIndexDeps = {
  openIndex: (dir, name) => openIndex(dir, { name }),
  openWriter: openIndexWriter,
  defaults: defaultIndexSettings(1_000),
  maxTimeoutMs: 30_000,
  log: (line) => logs.push(line),
};
let data: DataDirectory;
let server: RunningServer;

const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.cos(i * 0.9 + j * 1.7) + 1.2));
const booksBody = {
  settings: { index: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1', translog: { durability: 'request' } } },
  mappings: {
    properties: {
      embedding: { type: 'dense_vector', dims: DIMS, similarity: 'cosine', index_options: { type: 'int4_hnsw', m: 8, ef_construction: 50 } },
      title: { type: 'text' },
      genre: { type: 'keyword' },
    },
  },
} as const;

async function start(): Promise<void> {
  data = await DataDirectory.open(root, deps);
  server = await startServer(data, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} });
}

async function stop(): Promise<void> {
  await server.close();
  await data.close();
}

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, any>) };
};

beforeAll(start, 60_000);
afterAll(async () => {
  await stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

describe('a server of many indexes (--data)', () => {
  it('starts with none and says how to make one', async () => {
    expect((await call('GET', '/health')).body).toMatchObject({ status: 'ok', index: null, indexes: [] });
    expect((await call('GET', '/_cat/indices?format=json')).body).toEqual([]);
    expect((await call('HEAD', '/books')).status).toBe(404);
    expect((await call('POST', '/books/_search', { knn: { field: 'embedding', query_vector: vector(1), k: 1 } })).body).toMatchObject({
      status: 404,
      error: { type: 'index_not_found_exception' },
    });
  });

  it('creates, describes, writes, searches and deletes indexes with the Elasticsearch client', async () => {
    const es = new EsClient({ node: server.url });
    expect(await es.indices.exists({ index: 'books' })).toBe(false);
    expect(await es.indices.create({ index: 'books', ...booksBody })).toEqual({ acknowledged: true, shards_acknowledged: true, index: 'books' });
    expect(await es.indices.exists({ index: 'books' })).toBe(true);
    expect(existsSync(join(root, 'books'))).toBe(true);

    const mapping = await es.indices.getMapping({ index: 'books' });
    expect(mapping.books!.mappings.properties!.embedding).toMatchObject({ type: 'dense_vector', dims: DIMS, similarity: 'cosine' });
    const info = await es.indices.get({ index: 'books' });
    expect(info.books!.settings!.index).toMatchObject({ refresh_interval: '-1', translog: { durability: 'request' } });

    await es.bulk({
      refresh: true,
      operations: Array.from({ length: 30 }, (_, i) => [
        { index: { _index: 'books', _id: `b${i}` } },
        { embedding: vector(i), title: `book ${i}`, genre: i % 2 ? 'sf' : 'crime' },
      ]).flat(),
    });
    const hits = await es.search({ index: 'books', knn: { field: 'embedding', query_vector: vector(7), k: 3, num_candidates: 30 } });
    expect(hits.hits.hits[0]!._id).toBe('b7');
    expect((await es.count({ index: 'books', query: { term: { genre: 'sf' } } })).count).toBe(15);

    // A second index: /_bulk items go to the index each names, and _mget reads across both.
    await es.indices.create({ index: 'films', mappings: { properties: { v: { type: 'dense_vector', dims: DIMS } } } });
    const bulk = await es.bulk({
      refresh: true,
      operations: [
        { index: { _index: 'films', _id: 'f1' } },
        { v: vector(100) },
        { delete: { _index: 'books', _id: 'b0' } },
        { index: { _index: 'nowhere', _id: 'x' } },
        { v: vector(1) },
      ],
    });
    expect(bulk.errors).toBe(true);
    expect(bulk.items.map((i) => Object.values(i)[0]!.status)).toEqual([201, 200, 404]);
    expect(bulk.items[2]!.index!.error).toMatchObject({ type: 'index_not_found_exception' });
    const got = await es.mget({
      docs: [
        { _index: 'films', _id: 'f1' },
        { _index: 'books', _id: 'b1' },
        { _index: 'books', _id: 'b0' },
      ],
    });
    expect(got.docs.map((d) => ('found' in d ? d.found : 'error'))).toEqual([true, true, false]);

    const cat = await es.cat.indices({ format: 'json' });
    expect(cat.map((r) => [r.index, r['docs.count']])).toEqual([
      ['books', '29'],
      ['films', '1'],
    ]);
    expect((await es.cluster.health()).active_primary_shards).toBe(2);

    expect(await es.indices.delete({ index: 'films' })).toEqual({ acknowledged: true });
    expect(await es.indices.exists({ index: 'films' })).toBe(false);
    expect(existsSync(join(root, 'films'))).toBe(false);
    await expect(es.indices.delete({ index: 'films' })).rejects.toMatchObject({ meta: { statusCode: 404 } });
  });

  it('works with the OpenSearch client', async () => {
    const os = new OsClient({ node: server.url });
    expect((await os.indices.exists({ index: 'notes' })).body).toBe(false);
    // OpenSearch's typings know knn_vector, not Elasticsearch's dense_vector: the body goes as sent.
    const body = { mappings: { properties: { v: { type: 'dense_vector', dims: DIMS, similarity: 'l2_norm' } } } } as never;
    const created = await os.indices.create({ index: 'notes', body });
    expect(created.body).toMatchObject({ acknowledged: true, index: 'notes' });
    expect((await os.indices.exists({ index: 'notes' })).body).toBe(true);
    expect((await os.indices.getMapping({ index: 'notes' })).body.notes!.mappings.properties!.v).toMatchObject({ type: 'dense_vector', similarity: 'l2_norm' });
    await os.index({ index: 'notes', id: 'n1', body: { v: vector(3) }, refresh: true });
    const res = await os.search({ index: 'notes', body: { knn: { field: 'v', query_vector: vector(3), k: 1, num_candidates: 10 } } as never });
    expect(res.body.hits.hits[0]!._id).toBe('n1');
    expect((await os.indices.delete({ index: 'notes' })).body).toMatchObject({ acknowledged: true });
  });

  it('answers bad create requests with a 400 naming what is wrong, and creates nothing', async () => {
    const cases: [string, unknown, number, string, RegExp][] = [
      ['books', booksBody, 400, 'resource_already_exists_exception', /index \[books\/books\] already exists/],
      ['Books', booksBody, 400, 'invalid_index_name_exception', /must be lowercase/],
      ['health', booksBody, 405, 'method_not_allowed', /PUT is not allowed on \/health/],
      ['no-vector', { mappings: { properties: { title: { type: 'text' } } } }, 400, 'validation_error', /\[mappings.properties\] must map one field as/],
      ['no-dims', { mappings: { properties: { v: { type: 'dense_vector' } } } }, 400, 'validation_error', /\[mappings.properties.v.dims\] is required/],
      ['no-mappings', { settings: {} }, 400, 'validation_error', /\[mappings\] is required/],
      ['os-vector', { mappings: { properties: { v: { type: 'knn_vector', dimension: 8 } } } }, 400, 'mapper_parsing_exception', /no handler for type \[knn_vector\]/],
      ['two-shards', { settings: { number_of_shards: 2 }, mappings: booksBody.mappings }, 400, 'validation_error', /\[settings.number_of_shards\] must be 1/],
      ['unknown-setting', { settings: { 'index.codec': 'best_compression' }, mappings: booksBody.mappings }, 400, 'illegal_argument_exception', /unknown setting \[index.codec\]/],
      ['bad-interval', { settings: { refresh_interval: '5' }, mappings: booksBody.mappings }, 400, 'validation_error', /refresh_interval\] failed to parse \[5\] as a time value/],
      [
        'bad-options',
        { mappings: { properties: { v: { type: 'dense_vector', dims: 8, index_options: { type: 'ivf' } } } } },
        400,
        'validation_error',
        /index_options.type\] must be one of bbq_hnsw/,
      ],
    ];
    for (const [name, body, status, type, reason] of cases) {
      const res = await call('PUT', `/${name}`, body);
      expect(res.status, name).toBe(status);
      expect(res.body!.error.type, name).toBe(type);
      expect(res.body!.error.reason, name).toMatch(reason);
      if (name !== 'books') expect(existsSync(join(root, name)), name).toBe(false);
    }
  });

  it("changes an index's refresh_interval with the clients' putSettings, and refuses settings fixed at creation", async () => {
    const es = new EsClient({ node: server.url });
    expect(await es.indices.putSettings({ index: 'books', settings: { index: { refresh_interval: '2s' } } })).toEqual({ acknowledged: true });
    expect((await es.indices.getSettings({ index: 'books' })).books!.settings!.index).toMatchObject({ refresh_interval: '2000ms' });
    const fixed = await call('PUT', '/books/_settings', { index: { number_of_shards: 3 } });
    expect(fixed.status).toBe(400);
    expect(fixed.body!.error.reason).toMatch(/Can't update non dynamic settings \[\[index.number_of_shards\]\]/);
    expect((await call('PUT', '/books/_settings', { refresh_interval: 'soon' })).body!.error).toMatchObject({ type: 'validation_error', path: 'settings.refresh_interval' });
    expect((await call('PUT', '/nowhere/_settings', { refresh_interval: '1s' })).status).toBe(404);
  });

  it('reopens every index with its settings and documents after a restart, skipping directories that are not indexes', async () => {
    mkdirSync(join(root, 'half-made'));
    await stop();
    await start();
    expect(logs.some((l) => /skipping .*half-made: no commit in it/.test(l))).toBe(true);
    expect((await call('GET', '/health')).body).toMatchObject({ indexes: ['books'] });
    expect((await call('GET', '/books')).body!.books.settings.index).toMatchObject({ refresh_interval: '2000ms' }); // as updated
    expect((await call('GET', '/books/_doc/b5')).body).toMatchObject({ found: true, _source: { title: 'book 5' } });
    expect((await call('PUT', '/half-made', booksBody)).body!.error.type).toBe('resource_already_exists_exception');
    rmSync(join(root, 'half-made'), { recursive: true });
  });

  it('replays acknowledged writes a killed process never committed before serving the index', async () => {
    await call('PUT', '/crashed', { mappings: { properties: { v: { type: 'dense_vector', dims: DIMS }, n: { type: 'long' } } } });
    await stop();
    // Another process writes and syncs (the acknowledgement point) and exits without committing.
    const entry = join(packageRoot(), 'dist', 'src', 'index.js');
    const script = `
      import { openIndexWriter } from ${JSON.stringify(entry)};
      const w = await openIndexWriter(process.argv[1]);
      for (let i = 0; i < 5; i++) w.updateDocument('c' + i, { v: Array.from({ length: ${DIMS} }, (_, j) => Math.cos(i * 0.9 + j * 1.7) + 1.2), n: i });
      await w.sync();
      process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script, join(root, 'crashed')], { env: { ...process.env, PRESCORE_THREADS: '1' } });
    await start();
    expect(logs.some((l) => /\[crashed\]: replayed \d+ translog ops into a commit/.test(l))).toBe(true);
    // Served at once, before any write: a get, a count and a search see the replayed docs.
    expect((await call('GET', '/crashed/_doc/c3')).body).toMatchObject({ found: true, _source: { n: 3 } });
    expect((await call('GET', '/crashed/_count')).body).toMatchObject({ count: 5 });
    const hits = await call('POST', '/crashed/_search', { knn: { field: 'v', query_vector: vector(4), k: 1, num_candidates: 10 } });
    expect(hits.body!.hits.hits[0]._id).toBe('c4');
    expect((await call('DELETE', '/crashed')).status).toBe(200);
  }, 60_000);

  it('serves the last commit of an index another process holds, and answers its writes 409', async () => {
    const second = await DataDirectory.open(root, deps); // the first server still holds every writer
    try {
      expect(logs.some((l) => /\[books\]: serving the last commit without its translog/.test(l))).toBe(true);
      const other = await startServer(second, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} });
      try {
        const got = await fetch(`${other.url}/books/_doc/b5`);
        expect(((await got.json()) as { found: boolean }).found).toBe(true);
        const write = await fetch(`${other.url}/books/_doc/x`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ embedding: vector(1) }) });
        expect(write.status).toBe(409);
      } finally {
        await other.close();
      }
    } finally {
      await second.close();
    }
  });

  it('routes /_bulk items without _index to the only index, and refuses them when there are several', async () => {
    const one = await call('POST', '/_bulk', undefined);
    expect(one.status).toBe(400); // empty body
    const ndjson = `${JSON.stringify({ index: { _id: 'z1' } })}\n${JSON.stringify({ embedding: vector(9) })}\n`;
    const post = (path: string) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: ndjson });
    expect(((await (await post('/_bulk')).json()) as any).items[0].index).toMatchObject({ _index: 'books', status: 201 });
    await call('PUT', '/other', { mappings: { properties: { v: { type: 'dense_vector', dims: DIMS } } } });
    const several = await post('/_bulk');
    expect(several.status).toBe(400);
    expect(((await several.json()) as any).error.reason).toMatch(/index is missing/);
    expect((await call('POST', '/v1/search', { vector: vector(1), k: 1 })).body!.error.reason).toMatch(/this one serves 2: use \/:index\/_search/);
  });
});

describe('create-index bodies', () => {
  const defaults = defaultIndexSettings(1_000);
  it('take settings nested, dotted or without the index prefix, and index_options as code bits and graph parameters', () => {
    const vectorField = { v: { type: 'dense_vector', dims: 4, index_options: { type: 'bbq_flat', m: 12 } } };
    const r = parseCreateIndex(
      { settings: { 'index.refresh_interval': '250ms', translog: { durability: 'async', sync_interval: '2s' } }, mappings: { properties: vectorField } },
      defaults,
    );
    expect(r.settings).toEqual({ refreshIntervalMs: 250, durability: 'async', syncIntervalMs: 2_000 });
    expect(r.vector).toMatchObject({ field: 'v', dims: 4 });
    expect(r.vector.similarity.userName).toBe('cosine'); // Elasticsearch's default
    expect(r.segments).toEqual({ quantization: { bits: 1 }, flatThreshold: Number.MAX_SAFE_INTEGER, m: 12 });
    expect(parseCreateIndex({ mappings: { properties: { v: { type: 'dense_vector', dims: 4 } } } }, defaults).segments).toEqual({});
  });

  it('name the field at fault', () => {
    const fail = (body: unknown) => {
      try {
        parseCreateIndex(body, defaults);
      } catch (e) {
        return (e as HttpError).body().error;
      }
      throw new Error('accepted');
    };
    expect(fail({ mappings: { properties: { v: { type: 'dense_vector', dims: 4, index_options: { m: 1 } } } } })).toMatchObject({ path: 'mappings.properties.v.index_options.m' });
    expect(fail({ settings: { translog: { durability: 'sometimes' } }, mappings: {} })).toMatchObject({ path: 'settings.translog.durability' });
    expect(fail({ mappings: { properties: { v: { type: 'dense_vector', dims: 4 } } }, aliases: { a: {} } })).toMatchObject({ path: 'aliases' });
  });
});

describe('prescore serve --data', () => {
  it('is one of --index, --lucene and --data, and takes no single-index flags', () => {
    const c = parseServeArgs(['--data', '/srv/prescore'], {});
    expect(c !== 'help' && [c.data, c.dir]).toEqual([true, '/srv/prescore']);
    expect(() => parseServeArgs(['--data', '/a', '--index', '/b'], {})).toThrow(/give one of --index, --lucene and --data, not both \(--index, --data\)/);
    expect(() => parseServeArgs(['--data', '/a', '--name', 'x'], {})).toThrow(/--name \(or PRESCORE_NAME\) is for one index/);
    const env = parseServeArgs([], { PRESCORE_DATA: '/srv/env' });
    expect(env !== 'help' && env.dir).toBe('/srv/env');
  });
});
