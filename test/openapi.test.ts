import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import type { VectorIndex } from '../src/api/types.js';
import { packageRoot } from '../src/executor/packageRoot.js';
import { ROUTES } from '../src/http/app.js';
import { CLIENT_CLOSED_REQUEST, ERROR_TYPES } from '../src/http/errors.js';
import {
  errorResponseSchema,
  esSearchResponseSchema,
  healthResponseSchema,
  indexesResponseSchema,
  nativeSearchResponseSchema,
  refreshResponseSchema,
} from '../src/http/openapi.js';
import { startServer, type RunningServer } from '../src/http/server.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/**
 * GET /openapi.json: a valid OpenAPI 3.1 document with every route and error status the server
 * has, whose examples the server accepts, and from which a typed client (openapi-typescript +
 * openapi-fetch) compiles and searches.
 */
let t: TestIndex;
let index: VectorIndex;
let server: RunningServer;
/** The document, walked as plain JSON. */
let spec: any;
const DIMS = 64;

beforeAll(async () => {
  t = await buildTestIndex({ n: 600, dims: DIMS, segmentDocs: 300, flatThreshold: 1000 });
  index = await openIndex(t.dir, { name: 'demo' });
  server = await startServer(index, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} });
  const res = await fetch(`${server.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  spec = await res.json();
});

afterAll(async () => {
  await server?.close({ force: true });
  await index?.close();
  t?.cleanup();
});

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every (path, method, operation) of the document. */
function operations(): { path: string; method: string; op: { responses: Record<string, unknown>; requestBody?: unknown } }[] {
  const out = [];
  for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, unknown>>)) {
    for (const m of METHODS) if (item[m]) out.push({ path, method: m, op: item[m] as { responses: Record<string, unknown> } });
  }
  return out;
}

/** The error statuses the HTTP layer's code can answer with (every `new HttpError(<status>, ...)`, and Node's 408). */
function statusesInCode(): number[] {
  const dir = join(packageRoot(), 'src', 'http');
  const found = new Set<number>([408]);
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    for (const m of text.matchAll(/new HttpError\(\s*(\d{3}|CLIENT_CLOSED_REQUEST)\b/g)) {
      const status = m[1] === 'CLIENT_CLOSED_REQUEST' ? CLIENT_CLOSED_REQUEST : Number(m[1]);
      // 499 is only logged and counted: the client has gone and never sees it.
      if (status !== CLIENT_CLOSED_REQUEST) found.add(status);
    }
  }
  return [...found].sort();
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(spec);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes the served index: its name, and vectors of its dims', () => {
    expect(spec.info.description).toContain('`demo`');
    const vector = spec.paths['/v1/search'].post.requestBody.content['application/json'].schema.properties.vector;
    expect(vector.oneOf[0]).toMatchObject({ type: 'array', minItems: DIMS, maxItems: DIMS });
  });

  it('has every route the server answers, with each of its methods (HEAD answered with GET)', () => {
    const documented = new Set(operations().map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const served = ROUTES.flatMap(([path, , methods]) => methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${path.replace(/:(\w+)/g, '{$1}')}`));
    expect([...documented].sort()).toEqual([...served].sort());
  });

  it('has every error status the server answers with, and every error type', () => {
    const documented = new Set(operations().flatMap((o) => Object.keys(o.op.responses).map(Number)));
    for (const status of statusesInCode()) expect(documented, `status ${status}`).toContain(status);
    expect(spec.components.schemas.Error.properties.error.properties.type.enum).toEqual([...ERROR_TYPES]);
    // Every search answer the server can shed, time out, refuse or fail is on both search routes.
    for (const path of ['/v1/search', '/{index}/_search']) {
      expect(Object.keys(spec.paths[path].post.responses)).toEqual(expect.arrayContaining(['200', '400', '405', '408', '413', '415', '429', '500', '503', '504']));
    }
  });

  it("has examples the server accepts, answered in the documented response's shape", async () => {
    let tried = 0;
    for (const { path, method, op } of operations()) {
      const content = (op.requestBody as { content?: Record<string, { examples?: Record<string, { value: unknown }> }> } | undefined)?.content;
      for (const [name, example] of Object.entries(content?.['application/json']?.examples ?? {})) {
        const url = `${server.url}${path.replace('{index}', 'demo')}`;
        const res = await fetch(url, { method: method.toUpperCase(), headers: { 'content-type': 'application/json' }, body: JSON.stringify(example.value) });
        const body = await res.json();
        expect(res.status, `${path} example ${name}: ${JSON.stringify(body)}`).toBe(200);
        const schema = path === '/v1/search' ? nativeSearchResponseSchema.strict() : esSearchResponseSchema.strict();
        expect(() => schema.parse(body), `${path} example ${name}`).not.toThrow();
        tried++;
      }
    }
    expect(tried).toBeGreaterThanOrEqual(6);
  });

  it('answers every route in its documented shape, errors included', async () => {
    const get = async (path: string) => (await fetch(server.url + path)).json();
    healthResponseSchema.parse(await get('/health'));
    indexesResponseSchema.parse(await get('/v1/indexes'));
    const refreshed = await fetch(`${server.url}/demo/_refresh`, { method: 'POST' });
    // An index opened without a ReopeningIndex cannot refresh: a documented 400.
    errorResponseSchema.parse(await refreshed.json());
    expect(refreshed.status).toBe(400);
    expect(spec.paths['/{index}/_refresh'].post.responses['200'].content['application/json'].schema).toBeDefined();
    refreshResponseSchema.parse({ _shards: { total: 1, successful: 1, failed: 0 }, refreshed: true, docs: 3 });
    const bad = await fetch(`${server.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"vector": [1], "k": 0}' });
    expect(bad.status).toBe(400);
    const error = errorResponseSchema.parse(await bad.json());
    expect(error.error.path).toBe('vector');
    const wrongMethod = await fetch(`${server.url}/openapi.json`, { method: 'POST' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
    // A filtered search's stats and profile: per-segment filter figures and every planner strategy.
    const filtered = await fetch(`${server.url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: Array.from({ length: DIMS }, (_, i) => Math.sin(i)), k: 3, filter: { ids: { values: ['1', '2', '3', '400'] } }, stats: true, profile: true }),
    });
    expect(filtered.status).toBe(200);
    const answer = nativeSearchResponseSchema.parse(await filtered.json());
    expect(answer.stats?.filter?.reduce((a, f) => a + f.cardinality, 0)).toBe(4);
    expect(answer.stats?.timings.filter_ms).toBeGreaterThanOrEqual(0);
    const missing = await fetch(`${server.url}/other/_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(errorResponseSchema.parse(await missing.json()).error.type).toBe('index_not_found_exception');
  });
});

describe('GET /docs', () => {
  it('is a page over /openapi.json whose script and stylesheet this server serves (nothing from elsewhere)', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("url: '/openapi.json'");
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.sort()).toEqual(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']);
    for (const ref of refs) {
      const asset = await fetch(server.url + ref);
      expect(asset.status).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });
});

describe('a client generated from the document', () => {
  it('compiles (openapi-typescript types, openapi-fetch) and searches the index', async () => {
    const scratch = mkdtempSync(join(packageRoot(), 'test', '.openapi-'));
    try {
      writeFileSync(join(scratch, 'api.d.ts'), astToString(await openapiTS(spec)));
      writeFileSync(
        join(scratch, 'client.ts'),
        `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function nearest(baseUrl: string, vector: number[]): Promise<{ ids: string[]; esIds: string[]; took: number; status: number }> {
  const client = createClient<paths>({ baseUrl });
  const native = await client.POST('/v1/search', { body: { vector, k: 5, stats: true } });
  if (!native.data) throw new Error(JSON.stringify(native.error));
  const es = await client.POST('/{index}/_search', { params: { path: { index: 'demo' } }, body: { knn: { field: 'vector', query_vector: vector, k: 5 } } });
  if (!es.data) throw new Error(JSON.stringify(es.error));
  const bad = await client.POST('/v1/search', { body: { vector, k: 0 } });
  const status: number = bad.error ? bad.error.status : 200;
  const candidates: number | undefined = native.data.stats?.candidates;
  void candidates;
  return { ids: native.data.hits.map((h) => h.id), esIds: es.data.hits.hits.map((h) => h._id), took: native.data.took_ms, status };
}
`,
      );
      writeFileSync(
        join(scratch, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            lib: ['ES2023', 'DOM'],
            types: [],
          },
          files: ['client.ts'],
        }),
      );
      const tsc = join(packageRoot(), 'node_modules', 'typescript', 'bin', 'tsc');
      // Throws with tsc's diagnostics when the client does not type-check against the generated types.
      execFileSync(process.execPath, [tsc, '-p', scratch], { encoding: 'utf8', timeout: 120_000 });
      const { nearest } = (await import(join(scratch, 'client.ts'))) as {
        nearest: (url: string, v: number[]) => Promise<{ ids: string[]; esIds: string[]; took: number; status: number }>;
      };
      const vector = [...t.queries.subarray(0, DIMS)];
      const got = await nearest(server.url, vector);
      const expected = await index.search(Float32Array.from(vector), { k: 5 });
      expect(got.ids).toEqual(expected.hits.map((h) => h.id));
      expect(got.esIds).toHaveLength(5);
      expect(got.took).toBeGreaterThanOrEqual(0);
      expect(got.status).toBe(400);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 180_000);
});
