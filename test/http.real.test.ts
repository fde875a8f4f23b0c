import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/http/server.js';
import { openIndex } from '../src/api/openIndex.js';
import type { VectorIndex } from '../src/api/types.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { GatedIndex } from './support/GatedIndex.js';

/** The HTTP API against the real engine: a 384-dim index built by the project's own builder. */
let t: TestIndex;
let index: VectorIndex;
let server: RunningServer;
/** The server's view of the index: searches can be held at a gate before they reach the engine. */
let gate: GatedIndex;
const DIMS = 384;

beforeAll(async () => {
  t = await buildTestIndex({ n: 3000, dims: DIMS, segmentDocs: 1500, flatThreshold: 1000, queries: 40 });
  index = await openIndex(t.dir, { name: 'embeddings' });
  gate = new GatedIndex(index);
  server = await startServer(gate, { host: '127.0.0.1', port: 0, maxInflight: 2, maxQueue: 2 }, { log: () => {} });
});

afterAll(async () => {
  await server?.close({ force: true });
  await index?.close();
  t?.cleanup();
});

const query = (i: number) => [...t.queries.subarray(i * DIMS, (i + 1) * DIMS)];
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
const json = async (res: Response): Promise<any> => res.json();
/** prescore_search_shed_total from /metrics. */
const shedTotal = async (): Promise<number> => {
  const m = /^prescore_search_shed_total (\d+)$/m.exec(await (await fetch(server.url + '/metrics')).text());
  return Number(m![1]);
};
/** Polls until `condition` holds (the state it waits for comes from sockets, not timers). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}
const post = (path: string, body: unknown) => fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('HTTP over a real index', () => {
  it("answers both request shapes with the engine's hits", async () => {
    for (let i = 0; i < 5; i++) {
      const expected = await index.search(query(i), { k: 10, oversample: 3, numCandidates: 100 });
      const native = await post('/v1/search', { vector: query(i), k: 10, oversample: 3, num_candidates: 100, stats: true });
      expect(native.status).toBe(200);
      const nb = await json(native);
      expect(nb.hits).toEqual(expected.hits);
      expect(nb.stats).toMatchObject({ candidates: 30, deferred: true });
      const es = await post('/embeddings/_search', {
        knn: { field: 'vector', query_vector: query(i), k: 10, num_candidates: 100, rescore_vector: { oversample: 3 } },
      });
      expect(es.status).toBe(200);
      const eb = await json(es);
      expect(eb.hits.hits.map((h: { _id: string }) => h._id)).toEqual(expected.hits.map((h) => h.id));
      expect(eb.hits.max_score).toBe(expected.hits[0].score);
      expect(eb.hits.hits[0]._index).toBe('embeddings');
    }
  });

  it('rejects every limit violation with 400 naming the field path', async () => {
    const v = query(0);
    const cases: [unknown, string][] = [
      [{ vector: v, k: 0 }, 'k'],
      [{ vector: v, k: 10001 }, 'k'],
      [{ vector: v, k: 10, num_candidates: 5 }, 'num_candidates'],
      [{ vector: v, k: 10, num_candidates: 10001 }, 'num_candidates'],
      [{ vector: v, k: 10, oversample: 0.5 }, 'oversample'],
      [{ vector: v, k: 10, oversample: 101 }, 'oversample'],
      [{ vector: v, k: 1000, oversample: 20 }, 'oversample'],
      [{ vector: [0.1, 0.2, 0.3], k: 10 }, 'vector'],
      [{ vector: [...v.slice(0, 3), 'x', ...v.slice(4)], k: 10 }, 'vector[3]'],
      [{ vector: [...v.slice(0, 5), null, ...v.slice(6)], k: 10 }, 'vector[5]'],
      [{ k: 10 }, 'vector'],
      [{ vector: v, k: 10, read_path: 'carrier-pigeon' }, 'read_path'],
    ];
    for (const [body, path] of cases) {
      const res = await post('/v1/search', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      const err = (await json(res)).error;
      expect(err.path).toBe(path);
    }
    const es = await post('/embeddings/_search', { knn: { field: 'vector', query_vector: [1, 2, 3], k: 5, num_candidates: 10 } });
    expect(es.status).toBe(400);
    expect((await json(es)).error.path).toBe('knn.query_vector');
  });

  it('sheds what exceeds inflight + queue with 429 and Retry-After, and answers every accepted request correctly', async () => {
    const expected = await index.search(query(1), { k: 10, oversample: 10, numCandidates: 1000 });
    const passed = gate.passed;
    const shedBefore = await shedTotal();
    const search = () => post('/v1/search', { vector: query(1), k: 10, oversample: 10, num_candidates: 1000 });
    // Two searches hold the in-flight slots (waiting at the gate, before the engine) and two wait
    // in the queue: the server is exactly full.
    gate.hold();
    const accepted = Array.from({ length: 4 }, search);
    await until(() => gate.waiting === 2 && server.runtime.admission.queued === 2);
    // Everything beyond is answered at once, while the first four are still held.
    const shed = await Promise.all(Array.from({ length: 6 }, search));
    for (const r of shed) {
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await json(r)).error).toMatchObject({ type: 'es_rejected_execution_exception', max_inflight: 2, max_queue: 2 });
    }
    gate.open();
    for (const r of await Promise.all(accepted)) {
      expect(r.status).toBe(200);
      expect((await json(r)).hits).toEqual(expected.hits);
    }
    // Nothing lost: the four accepted searches reached the engine, the six shed ones never did.
    expect(gate.passed - passed).toBe(4);
    expect((await shedTotal()) - shedBefore).toBe(6);
  });

  it('answers 504 when a search exceeds its timeout, and keeps serving', async () => {
    // The search is held at the gate past its deadline, whatever the machine's speed.
    gate.hold();
    const res = await post('/v1/search', { vector: query(2), k: 1000, oversample: 10, num_candidates: 10000, timeout_ms: 20 });
    gate.open();
    expect(res.status).toBe(504);
    expect(gate.waiting).toBe(0);
    // The engine keeps serving afterwards.
    expect((await post('/v1/search', { vector: query(2), k: 5 })).status).toBe(200);
  });

  it('describes the index: segments, dims, similarity, bytes and page-cache residency', async () => {
    const body = await json(await fetch(server.url + '/v1/indexes'));
    const d = body.indexes[0];
    expect(d).toMatchObject({ name: 'embeddings', dims: DIMS, docs: 3000, similarity: 'cosine' });
    expect(d.segments).toHaveLength(2);
    expect(d.residentFraction).toBeGreaterThanOrEqual(0);
    expect(d.residentFraction).toBeLessThanOrEqual(1);
  });
});
