import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/http/app.js';
import { startServer } from '../src/http/server.js';
import { defaultIndexName, parseServeArgs } from '../src/http/serve.js';
import type { SearchOptions, SearchResult, VectorIndex } from '../src/api/types.js';
import { openIndex } from '../src/api/openIndex.js';
import { buildIndex } from '../src/api/buildIndex.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { openVectorSource, writeFvecs } from '../segments/input/index.js';
import { FakeIndex } from './support/FakeIndex.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
const json = async (res: Response): Promise<any> => res.json();
const DIMS = 8;

describe('wrong methods', () => {
  const app = createApp(new FakeIndex({ dims: DIMS, name: 'idx' }));
  const routes: [string, string[]][] = [
    ['/v1/search', ['POST']],
    ['/idx/_search', ['POST']],
    ['/idx/_refresh', ['GET', 'HEAD', 'POST']],
    ['/v1/indexes', ['GET', 'HEAD']],
    ['/health', ['GET', 'HEAD']],
    ['/metrics', ['GET', 'HEAD']],
  ];
  for (const [path, allowed] of routes) {
    it(`${path}: every other method is 405 with Allow: ${allowed.join(', ')}`, async () => {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'].filter((m) => !allowed.includes(m))) {
        const res = await app.request(path, { method });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow')).toBe(allowed.join(', '));
        if (method !== 'HEAD') expect((await json(res)).error).toMatchObject({ type: 'method_not_allowed' });
      }
    });
  }

  it('unknown paths stay 404', async () => {
    expect((await app.request('/v2/nothing')).status).toBe(404);
  });
});

describe('request validation messages', () => {
  const app = createApp(new FakeIndex({ dims: DIMS, name: 'idx' }));
  const post = (path: string, raw: string) => app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
  const v = JSON.stringify(Array.from({ length: DIMS }, (_, i) => i + 1));

  it('k: 1e400 says the number is not finite (not "got null")', async () => {
    for (const [path, raw, field] of [
      ['/v1/search', `{"vector": ${v}, "k": 1e400}`, 'k'],
      ['/v1/search', `{"vector": ${v}, "k": 10, "oversample": -1e999}`, 'oversample'],
      ['/idx/_search', `{"knn": {"field": "embedding", "query_vector": ${v}, "k": 1e400}}`, 'knn.k'],
    ] as const) {
      const res = await post(path, raw);
      expect(res.status).toBe(400);
      const err = (await json(res)).error;
      expect(err.path).toBe(field);
      expect(err.reason).toMatch(/not finite/);
      expect(err.reason).not.toMatch(/null/);
    }
  });

  it('_source takes a boolean, patterns or includes/excludes; anything else is a 400 naming it', async () => {
    const knn = { field: 'embedding', query_vector: JSON.parse(v) as number[], k: 3 };
    for (const source of [true, false, 'title', ['a.*', 'b'], { includes: ['a'], excludes: ['a.b'], exclude_vectors: false }]) {
      expect((await post('/idx/_search', JSON.stringify({ knn, _source: source }))).status, JSON.stringify(source)).toBe(200);
    }
    const bad = await post('/idx/_search', JSON.stringify({ knn, _source: 3 }));
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toMatchObject({ path: '_source', reason: expect.stringMatching(/must be a boolean, a field pattern/) });
    const unknown = await post('/idx/_search', JSON.stringify({ knn, _source: { include_vectors: true } }));
    expect((await json(unknown)).error).toMatchObject({ path: '_source.include_vectors', reason: expect.stringMatching(/unknown field/) });
  });

  it('a zero query vector on a cosine index is a 400 naming the vector', async () => {
    const zero = JSON.stringify(Array(DIMS).fill(0));
    const res = await post('/v1/search', `{"vector": ${zero}, "k": 3}`);
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatchObject({ path: 'vector', reason: expect.stringMatching(/zero vector/) });
  });
});

describe('scores are never null', () => {
  /** An engine that (wrongly) produced NaN: the response must not turn it into `null`. */
  const nanIndex: VectorIndex = Object.assign(new FakeIndex({ dims: DIMS, name: 'idx' }), {
    async search(this: FakeIndex, vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
      const r = await FakeIndex.prototype.search.call(this, vector, options);
      return { ...r, hits: r.hits.map((h, i) => (i === 0 ? { ...h, score: NaN } : h)) };
    },
  });
  const app = createApp(nanIndex, { name: 'idx' }, undefined);
  const q = Array.from({ length: DIMS }, (_, i) => i + 1);

  it('a non-finite score is a 500 naming the doc on both routes, never a null score or max_score', async () => {
    for (const [path, body] of [
      ['/v1/search', { vector: q, k: 3 }],
      ['/idx/_search', { knn: { field: 'embedding', query_vector: q, k: 3 } }],
    ] as const) {
      const res = await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(text).toMatch(/non-finite score \(NaN\)/);
      expect(text).not.toMatch(/"(_score|score|max_score)":null/);
    }
  });
});

describe('header and body read timeouts', () => {
  it('a client that drips its headers gets 408 and is closed long before it finishes them', async () => {
    const server = await startServer(new FakeIndex({ dims: DIMS }), { port: 0, headersTimeoutMs: 200, requestTimeoutMs: 400 }, { log: () => {} });
    try {
      const header = `GET /health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(400)}\r\n\r\n`;
      const socket = connect(server.port, '127.0.0.1');
      let sent = 0;
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString()));
      // One byte per 20 ms: the whole header would take ~9 s; the deadline is 200 ms.
      const drip = setInterval(() => {
        if (sent < header.length && !socket.destroyed) socket.write(header[sent++]!);
      }, 20);
      await new Promise<void>((ok) => socket.once('close', () => ok()));
      clearInterval(drip);
      expect(received).toMatch(/^HTTP\/1\.1 408/);
      expect(sent).toBeLessThan(header.length);
    } finally {
      await server.close({ force: true });
    }
  });

  it('a client that stops sending its body gets 408', async () => {
    const server = await startServer(new FakeIndex({ dims: DIMS }), { port: 0, headersTimeoutMs: 200, requestTimeoutMs: 400 }, { log: () => {} });
    try {
      const socket = connect(server.port, '127.0.0.1');
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString()));
      socket.write('POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"vec');
      await new Promise<void>((ok) => socket.once('close', () => ok()));
      expect(received).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await server.close({ force: true });
    }
  });

  it('the deadlines are flags with environment variables and checked against each other', () => {
    const c = parseServeArgs(['--index', 'x', '--header-timeout-ms', '500', '--request-timeout-ms', '2000'], {});
    expect(c !== 'help' && c.server).toMatchObject({ headersTimeoutMs: 500, requestTimeoutMs: 2000 });
    const e = parseServeArgs(['--index', 'x'], { PRESCORE_HEADER_TIMEOUT_MS: '700' });
    expect(e !== 'help' && e.server.headersTimeoutMs).toBe(700);
    expect(() => parseServeArgs(['--index', 'x', '--header-timeout-ms', '5000', '--request-timeout-ms', '1000'], {})).toThrow(/--header-timeout-ms/);
  });

  it('the write settings are flags with environment variables, defaults and ranges', () => {
    const c = parseServeArgs(['--index', 'x', '--max-bulk-bytes', '2048', '--refresh-interval-ms', '250'], {});
    expect(c !== 'help' && [c.server.maxBulkBytes, c.refreshIntervalMs]).toEqual([2048, 250]);
    const d = parseServeArgs(['--index', 'x'], { PRESCORE_REFRESH_INTERVAL_MS: '5000' });
    expect(d !== 'help' && [d.server.maxBulkBytes, d.refreshIntervalMs]).toEqual([100 * 1024 * 1024, 5000]);
    expect(() => parseServeArgs(['--index', 'x', '--refresh-interval-ms', '0'], {})).toThrow(/--refresh-interval-ms must be an integer in \[10, 3600000\]/);
    expect(() => parseServeArgs(['--index', 'x', '--max-bulk-bytes', '10'], {})).toThrow(/--max-bulk-bytes/);
  });
});

describe('names users know', () => {
  it('Elasticsearch similarity names are accepted wherever a similarity is named', () => {
    expect(VectorSimilarityFunction.fromName('l2_norm')).toBe(VectorSimilarityFunction.EUCLIDEAN);
    expect(VectorSimilarityFunction.fromName('dot_product')).toBe(VectorSimilarityFunction.DOT_PRODUCT);
    expect(VectorSimilarityFunction.fromName('cosine')).toBe(VectorSimilarityFunction.COSINE);
    expect(VectorSimilarityFunction.fromName('max_inner_product')).toBe(VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT);
    expect(VectorSimilarityFunction.fromName('L2-NORM')).toBe(VectorSimilarityFunction.EUCLIDEAN);
    expect(() => VectorSimilarityFunction.fromName('hamming')).toThrow(/l2_norm/);
  });

  it('a bare `serve --index data/demo/index` serves "demo"; other directories keep their own name', () => {
    expect(defaultIndexName('data/demo/index')).toBe('demo');
    expect(defaultIndexName('/srv/embeddings')).toBe('embeddings');
    const c = parseServeArgs(['--index', 'data/demo/index'], {});
    expect(c !== 'help' && c.open.name).toBe('demo');
  });
});

describe('input that cannot be served', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'prescore-harden-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a zero vector in a cosine build fails naming its row; other similarities accept it', async () => {
    const rows = 50;
    const data = Float32Array.from({ length: rows * DIMS }, (_, i) => Math.sin(i + 1));
    data.fill(0, 37 * DIMS, 38 * DIMS);
    const input = join(root, 'zero.fvecs');
    await writeFvecs(input, data, DIMS);
    const out = join(root, 'zero-cosine');
    await expect(buildIndex({ input, out, similarity: VectorSimilarityFunction.COSINE, progress: false })).rejects.toThrow(
      `${input}: row 37: vector is all zeros; cosine similarity is undefined`,
    );
    await expect(openIndex(out)).rejects.toThrow(/no prescore index/);
    const dot = join(root, 'zero-l2');
    await buildIndex({ input, out: dot, similarity: VectorSimilarityFunction.fromName('l2_norm'), progress: false });
    const index = await openIndex(dot);
    try {
      const { hits } = await index.search(Array.from(data.subarray(0, DIMS)), { k: 50 });
      expect(hits.every((h) => Number.isFinite(h.score))).toBe(true);
    } finally {
      await index.close();
    }
  });

  it('the library rejects a zero query vector on a cosine index', async () => {
    const rows = 20;
    const input = join(root, 'ok.fvecs');
    await writeFvecs(
      input,
      Float32Array.from({ length: rows * DIMS }, (_, i) => Math.cos(i)),
      DIMS,
    );
    const out = join(root, 'ok');
    await buildIndex({ input, out, similarity: VectorSimilarityFunction.COSINE, progress: false });
    const index = await openIndex(out);
    try {
      await expect(index.search(new Float32Array(DIMS), { k: 3 })).rejects.toThrow(/all zeros; cosine similarity is undefined/);
    } finally {
      await index.close();
    }
  });

  it('an fvecs file whose header says 9 dims over rows of 8 names row 0 and its real length', async () => {
    for (const rows of [7, 10]) {
      // rows x (header 9 + 8 floats): with 10 rows the size is even a multiple of a 9-dim row.
      const buf = Buffer.alloc(rows * 36);
      for (let r = 0; r < rows; r++) {
        buf.writeInt32LE(9, r * 36);
        for (let i = 0; i < 8; i++) buf.writeFloatLE(0.25 + r + i, r * 36 + 4 + 4 * i);
      }
      const path = join(root, `nine-${rows}.fvecs`);
      const { writeFileSync } = await import('node:fs');
      writeFileSync(path, buf);
      await expect(openVectorSource(path)).rejects.toThrow(`${path}: row 0: dimension header says 9 values but the row holds 8`);
    }
  });
});
