import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/http/server.js';
import type { ServerOptions } from '../src/http/options.js';
import { FakeIndex, type FakeIndexOptions } from './support/FakeIndex.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close({ force: true })));
});

interface Harness {
  readonly server: RunningServer;
  readonly fake: FakeIndex;
  readonly logs: string[];
  post(path: string, body: unknown, init?: RequestInit): Promise<Response>;
  get(path: string): Promise<Response>;
}

async function start(options: Partial<ServerOptions> = {}, fakeOptions: FakeIndexOptions = {}): Promise<Harness> {
  const fake = new FakeIndex({ name: 'vectors', ...fakeOptions });
  const logs: string[] = [];
  // No warm-up searches (test/http.warmUp.test.ts covers them): these tests count the fake's calls and hold its searches.
  const server = await startServer(fake, { host: '127.0.0.1', port: 0, warmUpRequests: 0, ...options }, { log: (l) => logs.push(l) });
  servers.push(server);
  return {
    server,
    fake,
    logs,
    post: (path, body, init = {}) =>
      fetch(server.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        ...init,
      }),
    get: (path) => fetch(server.url + path),
  };
}

async function json(res: Response): Promise<any> {
  return (await res.json()) as any;
}

const ids = (hits: readonly { id: string }[]) => hits.map((h) => h.id);

describe('search results', () => {
  it('/v1/search returns the brute-force top k with stats', async () => {
    const h = await start();
    for (const seed of [1, 2, 3]) {
      const vector = h.fake.randomQuery(seed);
      const res = await h.post('/v1/search', { vector, k: 10, num_candidates: 50, oversample: 2, read_path: 'pread', stats: true });
      expect(res.status).toBe(200);
      const body = await json(res);
      const expected = h.fake.bruteForce(vector, 10);
      expect(ids(body.hits)).toEqual(ids(expected));
      expect(body.hits.map((x: any) => x.doc)).toEqual(expected.map((x) => x.doc));
      expect(body.hits[0].score).toBeCloseTo(expected[0]!.score, 6);
      expect(body.took_ms).toBeGreaterThanOrEqual(0);
      expect(body.total_hits).toBe(h.fake.docs);
      expect(body.stats).toMatchObject({ read_path: 'pread', candidates: 20, syscalls: 2, deferred: true });
      expect(Object.keys(body.stats.timings).sort()).toEqual(['first_phase_ms', 'rescore_ms', 'total_ms']);
      expect(body.queue_ms).toBeGreaterThanOrEqual(0);
    }
    expect(h.fake.calls.at(-1)).toMatchObject({ k: 10, numCandidates: 50, oversample: 2, readPath: 'pread' });
  });

  it('answers hits and took_ms only, unless stats or profile is asked for', async () => {
    const h = await start();
    const plain = await json(await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3 }));
    expect(Object.keys(plain).sort()).toEqual(['hits', 'took_ms', 'total_hits']);
    const off = await json(await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3, stats: false }));
    expect(off.stats).toBeUndefined();
    const profiled = await json(await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3, profile: true }));
    expect(profiled.stats).toBeDefined(); // profile implies stats (the fake engine profiles nothing)
    const bad = await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3, stats: 'yes' });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.path).toBe('stats');
  });

  it('uses the server default read path when the request names none', async () => {
    const h = await start({ readPath: 'mmap+parallel' });
    const res = await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3, stats: true });
    expect((await json(res)).stats.read_path).toBe('mmap+parallel');
    expect(h.fake.calls[0]).toMatchObject({ k: 3, numCandidates: undefined, oversample: undefined, readPath: 'mmap+parallel' });
  });

  it('/:index/_search takes the Elasticsearch knn body and answers in ES shape', async () => {
    const h = await start();
    const vector = h.fake.randomQuery(7);
    const res = await h.post('/vectors/_search', {
      knn: { field: 'embedding', query_vector: vector, k: 10, num_candidates: 100, rescore_vector: { oversample: 3 } },
      size: 10,
      _source: false,
    });
    expect(res.status).toBe(200);
    const body = await json(res);
    const expected = h.fake.bruteForce(vector, 10);
    expect(body).toMatchObject({
      timed_out: false,
      _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
      hits: { total: { value: 10, relation: 'eq' } },
    });
    expect(Number.isInteger(body.took)).toBe(true);
    expect(body.hits.hits.map((x: any) => x._id)).toEqual(ids(expected));
    expect(body.hits.hits.every((x: any) => x._index === 'vectors')).toBe(true);
    expect(body.hits.max_score).toBeCloseTo(expected[0]!.score, 6);
    expect(h.fake.calls[0]).toMatchObject({ k: 10, numCandidates: 100, oversample: 3 });

    // Both shapes agree.
    const native = await json(await h.post('/v1/search', { vector, k: 10, num_candidates: 100, oversample: 3 }));
    expect(ids(native.hits)).toEqual(body.hits.hits.map((x: any) => x._id));
  });

  it('ES defaults: k from size, num_candidates = 1.5 k, size trims the hits', async () => {
    const h = await start();
    const vector = h.fake.randomQuery(9);
    const a = await json(await h.post('/vectors/_search', { knn: { field: 'embedding', query_vector: vector } }));
    expect(a.hits.hits).toHaveLength(10);
    expect(h.fake.calls[0]).toMatchObject({ k: 10, numCandidates: 15, oversample: undefined });

    const b = await json(await h.post('/vectors/_search', { knn: { field: 'embedding', query_vector: vector, k: 20 }, size: 5 }));
    expect(b.hits.total.value).toBe(20);
    expect(b.hits.hits.map((x: any) => x._id)).toEqual(ids(h.fake.bruteForce(vector, 5)));
    expect(h.fake.calls[1]).toMatchObject({ k: 20, numCandidates: 30 });

    const c = await json(await h.post('/vectors/_search', { knn: { field: 'embedding', query_vector: vector, k: 3 }, size: 0, timeout: '2s' }));
    expect(c.hits).toMatchObject({ total: { value: 3 }, hits: [] });
  });

  it('serves the name it was given rather than the index name', async () => {
    const h = await start({ name: 'products' });
    const body = { knn: { field: 'embedding', query_vector: h.fake.randomQuery(1), k: 1 } };
    expect((await h.post('/products/_search', body)).status).toBe(200);
    expect((await h.post('/vectors/_search', body)).status).toBe(404);
  });
});

describe('ES route errors', () => {
  it('unknown index -> 404 index_not_found_exception', async () => {
    const h = await start();
    const res = await h.post('/nope/_search', { knn: { field: 'embedding', query_vector: h.fake.randomQuery(1), k: 1 } });
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body).toMatchObject({ status: 404, error: { type: 'index_not_found_exception', reason: 'no such index [nope]', index: 'nope' } });
    expect(body.error.root_cause[0].type).toBe('index_not_found_exception');
  });

  it('wrong field, unknown and unsupported keys -> 400 naming them', async () => {
    const h = await start();
    const q = h.fake.randomQuery(1);
    const cases: [unknown, string, RegExp][] = [
      [{ knn: { field: 'title_vector', query_vector: q, k: 1 } }, 'knn.field', /title_vector.*embedding/],
      [{ knn: { field: 'embedding', query_vector: q, k: 1 }, query: { match_all: {} } }, 'query', /would combine scores, which is not supported/],
      [{ knn: { field: 'embedding', query_vector: q, k: 1, filter: { term: { a: 1 } } } }, 'knn.filter', /this index has no mapping/],
      [{ knn: { field: 'embedding', query_vector: q, k: 1, rescore_vector: { oversample: 2, x: 1 } } }, 'knn.rescore_vector.x', /unknown field/],
      [{ knn: [{ field: 'embedding', query_vector: q, k: 1 }] }, 'knn', /must be an object/],
      [{ size: 3 }, 'knn', /is required/],
      [{ knn: { query_vector: q, k: 1 } }, 'knn.field', /is required/],
      [{ knn: { field: 'embedding', query_vector: q, k: 1 }, _source: 5 }, '_source', /must be a boolean, a field pattern/],
      [{ knn: { field: 'embedding', query_vector: q, k: 1 }, timeout: 'soon' }, 'timeout', /time value/],
    ];
    for (const [body, path, reason] of cases) {
      const res = await h.post('/vectors/_search', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const err = (await json(res)).error;
      expect(err.type).toBe('validation_error');
      expect(err.path).toBe(path);
      expect(err.issues[0].reason).toMatch(reason);
    }
    expect(h.fake.started).toBe(0);
  });
});

describe('validation', () => {
  const dims = 384;
  const good = (f: FakeIndex) => f.randomQuery(5);

  // [description, body builder, native path] — each must be a 400 naming the path.
  const nativeCases: [string, (v: number[]) => unknown, string, RegExp][] = [
    ['k = 0', (v) => ({ vector: v, k: 0 }), 'k', /integer in \[1, 10000\].*got 0/],
    ['k = 10001', (v) => ({ vector: v, k: 10001 }), 'k', /got 10001/],
    ['k fractional', (v) => ({ vector: v, k: 1.5 }), 'k', /integer/],
    ['k as string', (v) => ({ vector: v, k: '10' }), 'k', /integer.*got "10"/],
    ['k missing', (v) => ({ vector: v }), 'k', /is required/],
    ['num_candidates < k', (v) => ({ vector: v, k: 10, num_candidates: 5 }), 'num_candidates', />= k \(10\), got 5/],
    ['num_candidates > 10000', (v) => ({ vector: v, k: 10, num_candidates: 10001 }), 'num_candidates', /10000/],
    ['oversample 0.5', (v) => ({ vector: v, k: 10, oversample: 0.5 }), 'oversample', /in \[1, 100\].*0\.5/],
    ['oversample 101', (v) => ({ vector: v, k: 10, oversample: 101 }), 'oversample', /got 101/],
    ['k x oversample > 10000', (v) => ({ vector: v, k: 200, oversample: 51 }), 'oversample', /200 x oversample|10200 candidates exceeds 10000/],
    ['3-dim vector', () => ({ vector: [0.1, 0.2, 0.3], k: 10 }), 'vector', /384 elements.*got 3/],
    ['string element', (v) => ({ vector: v.map((x, i) => (i === 3 ? 'x' : x)), k: 10 }), 'vector[3]', /finite number, got string "x"/],
    ['null element', (v) => ({ vector: v.map((x, i) => (i === 5 ? null : x)), k: 10 }), 'vector[5]', /got null/],
    ['nested array element', (v) => ({ vector: v.map((x, i) => (i === 0 ? [x] : x)), k: 10 }), 'vector[0]', /got an array/],
    ['vector missing', () => ({ k: 10 }), 'vector', /is required/],
    ['vector not an array', () => ({ vector: 'abc', k: 10 }), 'vector', /must be an array/],
    ['zero vector (cosine)', () => ({ vector: new Array(dims).fill(0), k: 10 }), 'vector', /zero vector/],
    ['unknown read_path', (v) => ({ vector: v, k: 10, read_path: 'mmap+magic' }), 'read_path', /one of "mmap"/],
    ['timeout_ms 0', (v) => ({ vector: v, k: 10, timeout_ms: 0 }), 'timeout_ms', /integer in \[1, 60000\]/],
    ['timeout_ms too large', (v) => ({ vector: v, k: 10, timeout_ms: 3_600_000 }), 'timeout_ms', /60000/],
    ['unknown field', (v) => ({ vector: v, k: 10, kk: 3 }), 'kk', /unknown field/],
    ['body not an object', () => [1, 2, 3], '', /object/],
  ];

  it.each(nativeCases)('/v1/search: %s -> 400 naming its path', async (_name, build, path, reason) => {
    const h = await start();
    const res = await h.post('/v1/search', build(good(h.fake)));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.status).toBe(400);
    expect(body.error.type).toBe('validation_error');
    expect(body.error.path).toBe(path);
    expect(body.error.issues[0]).toMatchObject({ path });
    expect(body.error.issues[0].reason).toMatch(reason);
    expect(body.error.reason).toContain(path === '' ? 'request body' : `[${path}]`);
    expect(h.fake.started).toBe(0);
  });

  it('rejects numbers JSON can carry but float32 cannot (huge exponents)', async () => {
    const h = await start();
    const v = good(h.fake).map(String);
    for (const [literal, reason] of [
      ['1e39', /float32 range/],
      ['-1e39', /float32 range/],
      ['1e400', /overflows a double/],
    ] as const) {
      const parts = [...v];
      parts[7] = literal;
      const res = await h.post('/v1/search', `{"vector":[${parts.join(',')}],"k":5}`);
      expect(res.status).toBe(400);
      const err = (await json(res)).error;
      expect(err.path).toBe('vector[7]');
      expect(err.issues[0].reason).toMatch(reason);
    }
  });

  it('reports several issues at once, and caps a garbage vector', async () => {
    const h = await start();
    const res = await h.post('/v1/search', { vector: new Array(dims).fill('x'), k: 0, oversample: 999 });
    const err = (await json(res)).error;
    expect(err.issues.length).toBeLessThanOrEqual(21);
    expect(err.issues_truncated).toBeGreaterThan(0);
    expect(err.issues.map((i: any) => i.path)).toContain('vector[0]');
    expect(JSON.stringify(err).length).toBeLessThan(8_000);
  });

  it('takes the vector as base64 float32: little-endian on /v1/search, big-endian (as Elasticsearch) on /:index/_search', async () => {
    const h = await start();
    const vector = Float32Array.from(good(h.fake));
    const bytes = (littleEndian: boolean) => {
      const view = new DataView(new ArrayBuffer(4 * vector.length));
      vector.forEach((x, i) => {
        view.setFloat32(4 * i, x, littleEndian);
      });
      return Buffer.from(view.buffer).toString('base64');
    };
    const asArray = await json(await h.post('/v1/search', { vector: [...vector], k: 5 }));
    const native = await h.post('/v1/search', { vector: bytes(true), k: 5 });
    expect(native.status).toBe(200);
    expect((await json(native)).hits).toEqual(asArray.hits);
    const es = await h.post('/vectors/_search', { knn: { field: 'embedding', query_vector: bytes(false), k: 5 } });
    expect(es.status).toBe(200);
    expect((await json(es)).hits.hits.map((x: any) => x._id)).toEqual(ids(asArray.hits));
  });

  it('rejects a base64 vector of the wrong length, outside the alphabet, or holding NaN, naming the path', async () => {
    const h = await start();
    const nan = new Float32Array(dims).fill(0.5);
    nan[4] = Number.NaN;
    const cases: [string, string, RegExp][] = [
      [Buffer.from(new Float32Array(3).buffer).toString('base64'), 'vector', /1536 bytes.*holds 12 bytes/],
      ['not base64!', 'vector', /not base64/],
      [Buffer.from(nan.buffer).toString('base64'), 'vector[4]', /finite float32, got NaN/],
    ];
    for (const [vector, path, reason] of cases) {
      const res = await h.post('/v1/search', { vector, k: 5 });
      expect(res.status).toBe(400);
      const err = (await json(res)).error;
      expect(err.path).toBe(path);
      expect(err.issues[0].reason).toMatch(reason);
    }
    expect(h.fake.started).toBe(0);
  });

  const esCases: [string, (v: number[]) => unknown, string][] = [
    ['k = 0', (v) => ({ knn: { field: 'embedding', query_vector: v, k: 0 } }), 'knn.k'],
    ['k = 10001', (v) => ({ knn: { field: 'embedding', query_vector: v, k: 10001 } }), 'knn.k'],
    ['num_candidates < k', (v) => ({ knn: { field: 'embedding', query_vector: v, k: 10, num_candidates: 9 } }), 'knn.num_candidates'],
    ['num_candidates < default k (size)', (v) => ({ knn: { field: 'embedding', query_vector: v, num_candidates: 5 } }), 'knn.num_candidates'],
    ['oversample 0.5', (v) => ({ knn: { field: 'embedding', query_vector: v, k: 1, rescore_vector: { oversample: 0.5 } } }), 'knn.rescore_vector.oversample'],
    ['oversample 101', (v) => ({ knn: { field: 'embedding', query_vector: v, k: 1, rescore_vector: { oversample: 101 } } }), 'knn.rescore_vector.oversample'],
    [
      'k x oversample > 10000',
      (v) => ({ knn: { field: 'embedding', query_vector: v, k: 1000, num_candidates: 1000, rescore_vector: { oversample: 11 } } }),
      'knn.rescore_vector.oversample',
    ],
    ['3-dim vector', () => ({ knn: { field: 'embedding', query_vector: [1, 2, 3], k: 1 } }), 'knn.query_vector'],
    ['string element', (v) => ({ knn: { field: 'embedding', query_vector: v.map((x, i) => (i === 3 ? 'x' : x)), k: 1 } }), 'knn.query_vector[3]'],
    ['null element', (v) => ({ knn: { field: 'embedding', query_vector: v.map((x, i) => (i === 9 ? null : x)), k: 1 } }), 'knn.query_vector[9]'],
    ['vector missing', () => ({ knn: { field: 'embedding', k: 1 } }), 'knn.query_vector'],
    ['size -1', (v) => ({ knn: { field: 'embedding', query_vector: v, k: 1 }, size: -1 }), 'size'],
  ];

  it.each(esCases)('/:index/_search: %s -> 400 naming its path', async (_name, build, path) => {
    const h = await start();
    const res = await h.post('/vectors/_search', build(good(h.fake)));
    expect(res.status).toBe(400);
    const err = (await json(res)).error;
    expect(err.type).toBe('validation_error');
    expect(err.path).toBe(path);
    expect(h.fake.started).toBe(0);
  });
});

describe('request bodies', () => {
  it('malformed JSON, empty body, bad UTF-8 -> 400 parse_error', async () => {
    const h = await start();
    for (const body of ['{"vector": [1, 2', '', 'nope']) {
      const res = await h.post('/v1/search', body);
      expect(res.status).toBe(400);
      expect((await json(res)).error.type).toBe('parse_error');
    }
    const res = await fetch(h.server.url + '/v1/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).error.reason).toMatch(/UTF-8/);
  });

  it('content types: json variants and none are accepted, others 415', async () => {
    const h = await start();
    const body = JSON.stringify({ vector: h.fake.randomQuery(1), k: 1 });
    const send = (headers: Record<string, string>) => fetch(h.server.url + '/v1/search', { method: 'POST', headers, body });
    expect((await send({ 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await send({ 'content-type': 'application/vnd.prescore+json' })).status).toBe(200);
    const form = await send({ 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect((await json(form)).error.type).toBe('unsupported_media_type');
    expect((await send({ 'content-type': 'text/plain' })).status).toBe(415);
    // No Content-Type at all: raw http so the client cannot add one.
    const res = await rawRequest(h.server, '/v1/search', body, {});
    expect(res.status).toBe(200);
  });

  it('a body over the cap -> 413, by Content-Length or by counting a chunked body', async () => {
    const h = await start({ maxBodyBytes: 64 * 1024 });
    const big = JSON.stringify({ vector: new Array(20_000).fill(0.123456789), k: 1 });
    expect(big.length).toBeGreaterThan(64 * 1024);
    const res = await h.post('/v1/search', big);
    expect(res.status).toBe(413);
    expect((await json(res)).error).toMatchObject({ type: 'request_entity_too_large', max_bytes: 65536 });

    const chunked = await rawRequest(h.server, '/v1/search', big, { 'content-type': 'application/json' }, true);
    expect(chunked.status).toBe(413);

    // The server is still healthy and a normal-size request passes.
    const ok = await h.post('/v1/search', { vector: h.fake.randomQuery(2), k: 2 });
    expect(ok.status).toBe(200);
    expect(h.fake.started).toBe(1);
  });

  it('an upload cut off midway is not a server error', async () => {
    const h = await start();
    const body = JSON.stringify({ vector: h.fake.randomQuery(1), k: 1 });
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: h.server.host,
        port: h.server.port,
        path: '/v1/search',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      });
      req.on('error', () => resolve());
      req.write(body.slice(0, 100));
      // Cut the upload once the handler is reading the body.
      void until(() => h.server.runtime.open === 1).then(() => req.destroy());
    });
    await until(() => h.server.runtime.open === 0);
    const m = parsePrometheus(await (await h.get('/metrics')).text());
    const statuses = m.samples.filter((s) => s.name === 'prescore_http_requests_total' && s.labels.route === '/v1/search').map((s) => s.labels.status);
    expect(statuses).toEqual(['499']);
    expect(h.logs).toEqual([]);
  });

  it('a 10k-dim vector fits under the default cap', async () => {
    const h = await start({}, { dims: 10_000, docs: 20 });
    const vector = h.fake.randomQuery(3);
    const res = await h.post('/v1/search', { vector, k: 5 });
    expect(res.status).toBe(200);
    expect(ids((await json(res)).hits)).toEqual(ids(h.fake.bruteForce(vector, 5)));
  });

  it('unknown routes -> 404 JSON', async () => {
    const h = await start();
    const res = await h.get('/nope/not/a/route');
    expect(res.status).toBe(404);
    expect((await json(res)).error.type).toBe('not_found');
    // A single path segment names an index, as in Elasticsearch.
    const index = await h.get('/nope');
    expect(index.status).toBe(404);
    expect((await json(index)).error.type).toBe('index_not_found_exception');
  });
});

describe('overload and deadlines', () => {
  it('a burst beyond inflight + queue gets 429 + Retry-After; accepted requests are correct', async () => {
    const h = await start({ maxInflight: 2, maxQueue: 2, defaultTimeoutMs: 10_000 }, { delayMs: 250 });
    const queries = Array.from({ length: 20 }, (_, i) => h.fake.randomQuery(100 + i));
    const responses = await Promise.all(queries.map((vector) => h.post('/v1/search', { vector, k: 5 })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    const ok = statuses.filter((s) => s === 200).length;
    const shed = statuses.filter((s) => s === 429).length;
    expect(ok).toBeGreaterThanOrEqual(4);
    expect(shed).toBeGreaterThan(0);
    expect(h.fake.maxRunning).toBeLessThanOrEqual(2);

    for (let i = 0; i < responses.length; i++) {
      const res = responses[i]!;
      const body = await json(res);
      if (res.status === 429) {
        expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
        expect(body.error.type).toBe('es_rejected_execution_exception');
        expect(body.error).toMatchObject({ max_inflight: 2, max_queue: 2 });
      } else {
        expect(ids(body.hits)).toEqual(ids(h.fake.bruteForce(queries[i]!, 5)));
      }
    }
    expect(h.fake.completed).toBe(ok);
    const metrics = parsePrometheus(await (await h.get('/metrics')).text());
    expect(sample(metrics, 'prescore_search_shed_total')).toBe(shed);
    expect(sample(metrics, 'prescore_http_requests_total', { route: '/v1/search', method: 'POST', status: '429' })).toBe(shed);
    expect(sample(metrics, 'prescore_http_requests_total', { route: '/v1/search', method: 'POST', status: '200' })).toBe(ok);
  });

  it('maxQueue 0 sheds everything beyond the running searches', async () => {
    const h = await start({ maxInflight: 1, maxQueue: 0 }, { delayMs: 100 });
    const [a, b] = await Promise.all([1, 2].map((s) => h.post('/v1/search', { vector: h.fake.randomQuery(s), k: 1 })));
    expect([a!.status, b!.status].sort()).toEqual([200, 429]);
  });

  it('a deadline -> 504 and the engine observes the abort', async () => {
    // The search never finishes on its own: only the deadline can answer the request.
    const h = await start({}, { held: true });
    const res = await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3, timeout_ms: 50 });
    expect(res.status).toBe(504);
    expect((await json(res)).error).toMatchObject({ type: 'search_timeout', timeout_ms: 50, stage: 'engine' });
    await h.fake.abortsObserved(1);
    expect(h.fake.completed).toBe(0);
    expect(h.fake.calls[0]!.signal!.aborted).toBe(true);
  });

  it('the default deadline applies when the request names none; ES `timeout` too', async () => {
    const h = await start({ defaultTimeoutMs: 60 }, { delayMs: 5_000 });
    const a = await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 3 });
    expect(a.status).toBe(504);
    const b = await h.post('/vectors/_search', { knn: { field: 'embedding', query_vector: h.fake.randomQuery(1), k: 3 }, timeout: '40ms' });
    expect(b.status).toBe(504);
    expect((await json(b)).error.timeout_ms).toBe(40);
  });

  it('a queued request whose deadline passes is dropped without running', async () => {
    const h = await start({ maxInflight: 1, maxQueue: 4 }, { delayMs: 1_000 });
    const slow = h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 1 });
    await until(() => h.fake.running === 1);
    const queued = await h.post('/v1/search', { vector: h.fake.randomQuery(2), k: 1, timeout_ms: 50 });
    expect(queued.status).toBe(504);
    expect((await json(queued)).error.stage).toBe('queue');
    expect((await slow).status).toBe(200);
    expect(h.fake.started).toBe(1);
    const metrics = parsePrometheus(await (await h.get('/metrics')).text());
    expect(sample(metrics, 'prescore_search_timeouts_total', { stage: 'queue' })).toBe(1);
  });

  it('an engine that ignores its signal keeps its slot until it settles', async () => {
    const h = await start({ maxInflight: 1, maxQueue: 4 }, { delayMs: 1_000, ignoreAbort: true });
    const first = await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 1, timeout_ms: 30 });
    expect(first.status).toBe(504);
    expect(h.fake.running).toBe(1);
    const second = await h.post('/v1/search', { vector: h.fake.randomQuery(2), k: 1 });
    expect(second.status).toBe(200);
    expect(h.fake.maxRunning).toBe(1);
  });

  it('a client disconnect aborts the search', async () => {
    const h = await start({}, { delayMs: 5_000 });
    const controller = new AbortController();
    const pending = h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 1 }, { signal: controller.signal });
    await until(() => h.fake.running === 1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await h.fake.abortsObserved(1);
    await until(() => h.server.runtime.admission.inflight === 0);
    const metrics = parsePrometheus(await (await h.get('/metrics')).text());
    expect(sample(metrics, 'prescore_search_cancelled_total')).toBe(1);
  });

  it('engine errors -> 500 with the message', async () => {
    const h = await start();
    h.fake.failWith = new Error('segment _3 is corrupt');
    const res = await h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 1 });
    expect(res.status).toBe(500);
    expect((await json(res)).error).toMatchObject({ type: 'search_error', reason: 'search failed: segment _3 is corrupt' });
    expect(h.logs.join('\n')).toContain('segment _3 is corrupt');
    expect(h.server.runtime.admission.inflight).toBe(0);
  });
});

describe('health, indexes, metrics', () => {
  it('/health and /v1/indexes', async () => {
    const h = await start({ maxInflight: 3, maxQueue: 5 });
    const health = await json(await h.get('/health'));
    expect(health).toEqual({ status: 'ok', index: 'vectors', dims: 384, indexes: ['vectors'], inflight: 0, queued: 0, max_inflight: 3, max_queue: 5 });
    const indexes = await json(await h.get('/v1/indexes'));
    expect(indexes.indexes).toHaveLength(1);
    expect(indexes.indexes[0]).toMatchObject({ name: 'vectors', field: 'embedding', dims: 384, docs: 300, similarity: 'COSINE' });
  });

  it('/metrics is valid Prometheus text and sums requests, latency, timeouts and query stats', async () => {
    const h = await start({}, { delayMs: 0 });
    for (const seed of [1, 2, 3]) await h.post('/v1/search', { vector: h.fake.randomQuery(seed), k: 10, oversample: 2 });
    await h.post('/v1/search', { vector: h.fake.randomQuery(4), k: 4, read_path: 'pread' });
    await h.post('/v1/search', { k: 0 });
    h.fake.delayMs = 5_000;
    await h.post('/v1/search', { vector: h.fake.randomQuery(5), k: 1, timeout_ms: 20 });

    const res = await h.get('/metrics');
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parsePrometheus(await res.text());

    expect(m.types.get('prescore_http_requests_total')).toBe('counter');
    expect(m.types.get('prescore_http_request_duration_seconds')).toBe('histogram');
    expect(m.types.get('prescore_search_inflight')).toBe('gauge');
    expect(sample(m, 'prescore_http_requests_total', { route: '/v1/search', method: 'POST', status: '200' })).toBe(4);
    expect(sample(m, 'prescore_http_requests_total', { route: '/v1/search', method: 'POST', status: '400' })).toBe(1);
    expect(sample(m, 'prescore_http_requests_total', { route: '/v1/search', method: 'POST', status: '504' })).toBe(1);
    expect(sample(m, 'prescore_http_request_duration_seconds_count', { route: '/v1/search' })).toBe(6);
    expect(sample(m, 'prescore_http_request_duration_seconds_bucket', { route: '/v1/search', le: '+Inf' })).toBe(6);
    expect(sample(m, 'prescore_search_timeouts_total', { stage: 'engine' })).toBe(1);
    expect(sample(m, 'prescore_search_shed_total')).toBe(0);
    expect(sample(m, 'prescore_search_inflight')).toBe(0);
    expect(sample(m, 'prescore_queries_total', { read_path: 'mmap+prefetch' })).toBe(3);
    expect(sample(m, 'prescore_query_candidates_total', { read_path: 'mmap+prefetch' })).toBe(60);
    expect(sample(m, 'prescore_query_candidates_total', { read_path: 'pread' })).toBe(12);
    expect(sample(m, 'prescore_query_syscalls_total', { read_path: 'mmap+prefetch' })).toBe(6);
    expect(sample(m, 'prescore_query_pages_prefetched_total', { read_path: 'pread' })).toBe(12);
    expect(sample(m, 'prescore_query_pages_resident_total', { read_path: 'pread' })).toBe(1);
    expect(m.samples.some((s) => s.name === 'prescore_query_first_phase_seconds_total')).toBe(true);
    expect(m.samples.some((s) => s.name === 'prescore_query_rescore_seconds_total')).toBe(true);
  });
});

describe('drain', () => {
  it('close() lets in-flight and queued requests complete, then refuses connections', async () => {
    // Searches finish only when released: the drain provably waits for them.
    const h = await start({ maxInflight: 2, maxQueue: 2 }, { held: true });
    const queries = [1, 2, 3].map((s) => h.fake.randomQuery(s));
    const pending = queries.map((vector) => h.post('/v1/search', { vector, k: 4 }));
    await until(() => h.fake.running === 2 && h.server.runtime.admission.queued === 1);

    const closed = h.server.close();
    let closeDone = false;
    void closed.then(() => (closeDone = true));
    // The listener closes once the accept backlog is taken in: then a new connection is refused
    // (a fresh TCP connection: fetch could reuse a kept-alive one), while the searches still wait.
    await until(() => !h.server.server.listening);
    await expect(connectOnce(h.server.url)).rejects.toThrow(/ECONNREFUSED/);
    expect(closeDone).toBe(false);
    h.fake.release();

    const responses = await Promise.all(pending);
    for (let i = 0; i < 3; i++) {
      expect(responses[i]!.status).toBe(200);
      expect(ids((await json(responses[i]!)).hits)).toEqual(ids(h.fake.bruteForce(queries[i]!, 4)));
    }
    await closed;
    expect(closeDone).toBe(true);
    expect(h.fake.aborted).toBe(0);
  });

  it('responses while draining carry Connection: close; searches reaching the app after the server stopped get 503', async () => {
    const h = await start({ maxInflight: 1, maxQueue: 2 }, { held: true });
    const { Agent } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const body = JSON.stringify({ vector: h.fake.randomQuery(1), k: 1 });
      // Two kept-alive connections, one search running and one queued when the drain starts.
      const slow = rawRequest(h.server, '/v1/search', body, { 'content-type': 'application/json' }, false, agent);
      const slow2 = rawRequest(h.server, '/v1/search', body, { 'content-type': 'application/json' }, false, agent);
      await until(() => h.fake.running === 1 && h.server.runtime.admission.queued === 1);
      const closed = h.server.close();
      h.fake.release();
      const [a, b] = await Promise.all([slow, slow2]);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(a.headers.connection).toBe('close');
      await closed;
    } finally {
      agent.destroy();
    }
    // A search attempted on the app after the server stopped is refused with 503.
    const res = await h.server.app.request('/v1/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: h.fake.randomQuery(1), k: 1 }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await h.server.app.request('/health')).status).toBe(503);
  });

  it('the drain deadline aborts what is still running (503) and close() returns', async () => {
    // The search never finishes on its own: close() can only return through the deadline.
    const h = await start({ drainTimeoutMs: 100 }, { held: true });
    const pending = h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 1 });
    await until(() => h.fake.running === 1);
    await h.server.close();
    expect(h.fake.completed).toBe(0);
    const res = await pending;
    expect(res.status).toBe(503);
    expect((await json(res)).error.type).toBe('shutting_down');
    expect(h.fake.aborted).toBe(1);
  });

  it('close({force: true}) cuts a long drain short', async () => {
    const h = await start({ drainTimeoutMs: 60_000 }, { delayMs: 10_000 });
    const pending = h.post('/v1/search', { vector: h.fake.randomQuery(1), k: 1 });
    await until(() => h.fake.running === 1);
    const closing = h.server.close();
    await h.server.close({ force: true });
    await closing;
    expect((await pending).status).toBe(503);
  });
});

// ---------------------------------------------------------------------------------------------

/** Opens (and closes) one fresh TCP connection to the server of `url`. */
async function connectOnce(url: string): Promise<void> {
  const { connect } = await import('node:net');
  const { hostname, port } = new URL(url);
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });
}

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!condition()) {
    if (Date.now() - t0 > timeoutMs) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, for what fetch cannot do: no Content-Type, chunked bodies, a shared agent. */
function rawRequest(server: RunningServer, path: string, body: string, headers: Record<string, string>, chunked = false, agent?: import('node:http').Agent): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: server.host, port: server.port, path, method: 'POST', headers: chunked ? headers : { ...headers, 'content-length': Buffer.byteLength(body) }, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      // The server may answer 413 and close before the whole upload went out.
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') reject(e);
    });
    if (chunked) {
      const step = 8 * 1024;
      for (let i = 0; i < body.length; i += step) req.write(body.slice(i, i + step));
      req.end();
    } else {
      req.end(body);
    }
  });
}

interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface PromText {
  types: Map<string, string>;
  samples: PromSample[];
}

/** A strict parser for the text exposition format (0.0.4): fails on anything malformed. */
function parsePrometheus(text: string): PromText {
  expect(text.endsWith('\n')).toBe(true);
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: PromSample[] = [];
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"/y;
  for (const line of text.slice(0, -1).split('\n')) {
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${name}) (.*)$`).exec(line))) {
      expect(helps.has(m[1]!), `duplicate HELP ${m[1]}`).toBe(false);
      helps.add(m[1]!);
      continue;
    }
    if ((m = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      expect(types.has(m[1]!), `duplicate TYPE ${m[1]}`).toBe(false);
      types.set(m[1]!, m[2]!);
      continue;
    }
    m = new RegExp(`^(${name})(?:\\{(.*)\\})? (\\S+)$`).exec(line);
    expect(m, `bad line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    const inner = m![2] ?? '';
    let at = 0;
    while (at < inner.length) {
      labelRe.lastIndex = at;
      const lm = labelRe.exec(inner);
      expect(lm, `bad labels: ${inner}`).not.toBeNull();
      labels[lm![1]!] = lm![2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      at = labelRe.lastIndex;
      if (at < inner.length) {
        expect(inner[at]).toBe(',');
        at++;
      }
    }
    const raw = m![3]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw === 'NaN' ? NaN : Number(raw);
    expect(Number.isNaN(value) && raw !== 'NaN', `bad value: ${line}`).toBe(false);
    const family = m![1]!.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(m![1]!) || types.get(family) === 'histogram', `sample before its TYPE: ${line}`).toBe(true);
    samples.push({ name: m![1]!, labels, value });
  }
  // Histogram buckets are cumulative and end at +Inf == _count.
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const bySeries = new Map<string, PromSample[]>();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le: _le, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      bySeries.set(key, [...(bySeries.get(key) ?? []), s]);
    }
    for (const [key, buckets] of bySeries) {
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
      expect(buckets.at(-1)!.labels.le).toBe('+Inf');
      const count = samples.find((x) => x.name === `${family}_count` && JSON.stringify(x.labels) === key);
      expect(count?.value).toBe(buckets.at(-1)!.value);
    }
  }
  return { types, samples };
}

function sample(m: PromText, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  return m.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}
