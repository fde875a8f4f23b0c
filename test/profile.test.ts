import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../src/executor/Executor.js';
import { openIndex } from '../src/api/openIndex.js';
import { READ_PATHS, RESCORE_THREADS, type VectorIndex } from '../src/api/types.js';
import { SearchValidator } from '../src/http/validation.js';
import { createApp } from '../src/http/app.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { IndexSearcher } from '../src/api/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../query/KnnFloatVectorQuery.js';
import { RescoreTopNQuery } from '../query/RescoreTopNQuery.js';
import { PREFETCH_POLICIES, RESIDENT_STREAK } from '../query/prefetch/PrefetchPolicy.js';
import { COLD_CALLER_CANDIDATES } from '../query/rescore/Rescorer.js';
import type { SearchOutcome } from '../query/IndexSearcher.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

let t: TestIndex;
let searcher: IndexSearcher;
let index: VectorIndex;
const DIMS = 32;

beforeAll(async () => {
  t = await buildTestIndex({ n: 1500, dims: DIMS, segmentDocs: 500, flatThreshold: 0 });
  searcher = new IndexSearcher(DirectoryReader.open(t.dir));
  index = await openIndex(t.dir);
});

afterAll(async () => {
  await index?.close();
  t?.cleanup();
  await Executor.shutdown();
});

const query = (i: number) => t.queries.subarray(i * DIMS, (i + 1) * DIMS);
const rescoreQuery = (q: Float32Array, n: number, candidates: number) =>
  RescoreTopNQuery.createFullPrecisionRescorerQuery(new KnnFloatVectorQuery('vector', q, candidates, { numCandidates: 100 }), q, 'vector', n);

describe('rescoring placement (RescoreThread)', () => {
  it('gives identical top n and scores on the calling thread, on the executor and adaptively, on every read path and policy', async () => {
    for (let qi = 0; qi < 4; qi++) {
      const outcomes: SearchOutcome[] = [];
      for (const readPath of READ_PATHS) {
        for (const prefetchPolicy of PREFETCH_POLICIES) {
          for (const rescoreThread of RESCORE_THREADS) outcomes.push(await searcher.search(rescoreQuery(query(qi), 10, 50), 10, { readPath, prefetchPolicy, rescoreThread }));
        }
      }
      for (const o of outcomes) expect(o.topDocs.scoreDocs).toEqual(outcomes[0].topDocs.scoreDocs);
    }
  });

  it('adaptively moves a long ring to the calling thread once every touched file is believed resident, and back when a probe misses', async () => {
    const s = new IndexSearcher(DirectoryReader.open(t.dir));
    const long = COLD_CALLER_CANDIDATES + 16;
    const first = await s.search(rescoreQuery(query(0), 10, long), 10, { readPath: 'mmap+parallel' });
    expect(first.stats.rescoredOn).toBe('executor');
    // The freshly written files are in the page cache: every probe hits, the streak grows.
    let warm: SearchOutcome | undefined;
    for (let i = 0; i < (3 * RESIDENT_STREAK) / 20 && warm === undefined; i++) {
      const o = await s.search(rescoreQuery(query(i % 20), 10, long), 10, { readPath: 'mmap+parallel' });
      if (o.stats.rescoredOn === 'caller') warm = o;
    }
    expect(warm?.stats.rescoredOn).toBe('caller');
    expect(warm?.stats.readsBeforePrefetch).toBe(0);
    // A missed probe resets a file's streak (as after eviction): that search goes back to the workers.
    s.policyState.fill(0);
    const after = await s.search(rescoreQuery(query(1), 10, long), 10, { readPath: 'mmap+parallel' });
    expect(after.stats.rescoredOn).toBe('executor');
    // The stock baseline and the io_uring path never move.
    for (const readPath of ['mmap', 'pread'] as const) {
      expect((await searcher.search(rescoreQuery(query(2), 10, 60), 10, { readPath, rescoreThread: 'adaptive' })).stats.rescoredOn).toBe('executor');
    }
  });

  it('runs a short cold ring on the calling thread while the executor is idle, and on the workers while other tasks are in flight', async () => {
    const real = Executor.get();
    let otherTasks = 0;
    const executor = {
      threads: real.threads,
      get pending() {
        return otherTasks;
      },
      run: real.run.bind(real),
    };
    const s = new IndexSearcher(DirectoryReader.open(t.dir), { executor });
    const short = rescoreQuery(query(3), 10, COLD_CALLER_CANDIDATES);
    // No file is believed resident yet: only the ring's length and the idle executor decide.
    otherTasks = 1;
    expect((await s.search(short, 10, { readPath: 'mmap+parallel' })).stats.rescoredOn).toBe('executor');
    otherTasks = 0;
    expect((await s.search(short, 10, { readPath: 'mmap+parallel' })).stats.rescoredOn).toBe('caller');
    expect((await s.search(rescoreQuery(query(3), 10, COLD_CALLER_CANDIDATES + 1), 10, { readPath: 'mmap+parallel' })).stats.rescoredOn).toBe('executor');
    expect((await s.search(short, 10, { readPath: 'mmap+parallel', rescoreThread: 'executor' })).stats.rescoredOn).toBe('executor');
  });
});

describe('search profile', () => {
  it('is absent unless asked for', async () => {
    const r = await index.search(query(0), { k: 5, oversample: 3 });
    expect(r.stats.profile).toBeUndefined();
  });

  it('times every executor hop, every segment, the merge and the rescoring shares of one query', async () => {
    const r = await index.search(query(0), { k: 5, oversample: 3, profile: true, readPath: 'mmap+parallel', knnThread: 'executor', rescoreThread: 'executor' });
    const p = r.stats.profile!;
    expect(p.entry).toBe('library');
    expect(p.segments.map((s) => s.segment).sort()).toHaveLength(3);
    for (const s of p.segments) {
      expect(s.quantizeMs).toBeGreaterThanOrEqual(0);
      expect(s.searchMs).toBeGreaterThanOrEqual(0);
      expect(s.visited).toBeGreaterThan(0);
    }
    expect(p.segments.reduce((a, s) => a + s.visited, 0)).toBe(r.stats.visited);
    const knnHops = p.hops.filter((h) => h.task === 'knn.slice');
    const rescoreHops = p.hops.filter((h) => h.task === 'rescore.ring');
    expect(knnHops).toHaveLength(searcher.slices.length);
    expect(rescoreHops).toHaveLength(p.rescore.length);
    for (const h of p.hops) {
      expect(h.threadId).toBeGreaterThan(0); // a worker, not the calling thread
      for (const ms of [h.queueMs, h.runMs, h.returnMs]) expect(ms).toBeGreaterThanOrEqual(0);
    }
    // Rescoring starts after the first phase's hops have come back.
    const knnDone = Math.max(...knnHops.map((h) => h.startMs + h.queueMs + h.runMs + h.returnMs));
    for (const h of rescoreHops) expect(h.startMs).toBeGreaterThanOrEqual(knnDone - 0.01);
    expect(p.rescore.reduce((a, s) => a + s.entries, 0)).toBe(r.stats.candidates);
    expect(p.rescore.every((s) => s.on === 'executor')).toBe(true);
    expect(p.phases.map((x) => x.name)).toEqual(expect.arrayContaining(['library.prepare', 'knn.merge', 'rescore.prepare', 'rescore.executor', 'rescore.topN', 'library.hits']));
    expect(Array.isArray(p.gc)).toBe(true);
  });

  it('shows caller+executor as one hop fewer than slices: the calling thread searched the first slice itself (and any it took back)', async () => {
    const r = await index.search(query(2), { k: 5, oversample: 3, profile: true, knnThread: 'caller+executor', rescoreThread: 'caller' });
    const p = r.stats.profile!;
    expect(r.stats.searchedOn).toBe('caller+executor');
    // A slice no worker had started when the caller was done is searched here, without a hop.
    const taken = r.stats.slicesTakenBack;
    expect(p.hops.filter((h) => h.task === 'knn.slice')).toHaveLength(searcher.slices.length - 1 - taken);
    expect(p.segments).toHaveLength(3);
    const first = new Set(searcher.slices[0]!.leaves.map((l) => l.reader.name));
    for (const s of p.segments) if (first.has(s.segment)) expect(s.threadId).toBe(threadId);
    const here = p.segments.filter((s) => s.threadId === threadId).length;
    const takenSegments = searcher.slices.slice(1).filter((slice) => slice.leaves.every((l) => p.segments.find((s) => s.segment === l.reader.name)!.threadId === threadId));
    expect(takenSegments).toHaveLength(taken);
    expect(here).toBe(first.size + takenSegments.reduce((n, slice) => n + slice.leaves.length, 0));
    expect(p.phases.map((x) => x.name)).toContain('knn.callerAndExecutor');
  });

  it('shows worker as a single hop that searched every segment', async () => {
    const r = await index.search(query(3), { k: 5, oversample: 3, profile: true, knnThread: 'worker', rescoreThread: 'caller' });
    const p = r.stats.profile!;
    expect(r.stats.searchedOn).toBe('worker');
    const hops = p.hops.filter((h) => h.task === 'knn.slice');
    expect(hops).toHaveLength(1);
    expect(p.segments).toHaveLength(3);
    expect(new Set(p.segments.map((s) => s.threadId))).toEqual(new Set([hops[0]!.threadId]));
    expect(p.phases.map((x) => x.name)).toContain('knn.worker');
  });

  it('shows rescoring on the calling thread as one share without a hop', async () => {
    const r = await index.search(query(1), { k: 5, oversample: 3, profile: true, rescoreThread: 'caller' });
    const p = r.stats.profile!;
    expect(r.stats.rescoredOn).toBe('caller');
    expect(p.rescore).toEqual([expect.objectContaining({ on: 'caller', entries: r.stats.candidates })]);
    expect(p.hops.filter((h) => h.task === 'rescore.ring')).toEqual([]);
    expect(p.phases.map((x) => x.name)).toContain('rescore.onCaller');
  });

  it('is asked for with a boolean `profile` in both HTTP bodies, and anything else is a 400 naming the field', () => {
    const v = new SearchValidator({ dims: 2, field: 'vector', rejectZeroVector: false }, { maxTimeoutMs: 1000 });
    const native = v.nativeSearch({ vector: [1, 2], k: 1, profile: true });
    expect(native.ok && native.value.profile).toBe(true);
    const es = v.esSearch({ knn: { field: 'vector', query_vector: [1, 2], k: 1 }, profile: true });
    expect(es.ok && es.value.profile).toBe(true);
    const plain = v.nativeSearch({ vector: [1, 2], k: 1 });
    expect(plain.ok && plain.value.profile).toBe(false);
    const bad = v.nativeSearch({ vector: [1, 2], k: 1, profile: 'yes' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(JSON.stringify(bad.error.body())).toMatch(/"path":"profile"/);
  });

  it('comes back over HTTP, timed from the request arrival: body, validation and admission first, then the engine phases and hops', async () => {
    // The first phase pinned to the executor, so the profile has its hops (adaptive placement may
    // run it on the calling thread, where there are none).
    const pinned = await openIndex(t.dir, { knnThread: 'executor' });
    const app = createApp(pinned);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
    const post = async (path: string, body: unknown): Promise<any> =>
      (await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const native = await post('/v1/search', { vector: [...query(2)], k: 3, profile: true });
    const p = native.stats.profile;
    expect(p.entry).toBe('http');
    expect(p.phases.slice(0, 3).map((x: { name: string }) => x.name)).toEqual(['http.body', 'http.validate', 'http.admission']);
    expect(p.hops.filter((h: { task: string }) => h.task === 'knn.slice')).toHaveLength(searcher.slices.length);
    expect(p.segments).toHaveLength(3);
    const es = await post(`/${index.name}/_search`, { knn: { field: 'vector', query_vector: [...query(2)], k: 3 }, profile: true });
    expect(es.profile.entry).toBe('http');
    expect(es.hits.hits.map((h: { _id: string }) => h._id)).toEqual(native.hits.map((h: { id: string }) => h.id));
    const plain = await post('/v1/search', { vector: [...query(2)], k: 3 });
    expect(plain.stats).toBeUndefined();
    await pinned.close();
  });
});
