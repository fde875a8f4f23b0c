import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../src/executor/Executor.js';
import { READ_PATHS } from '../src/api/types.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import type { SearchOutcome } from '../query/IndexSearcher.js';
import { IndexSearcher } from '../src/api/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../query/KnnFloatVectorQuery.js';
import { RescoreTopNQuery } from '../query/RescoreTopNQuery.js';
import { DocAndScoreQuery } from '../query/DocAndScoreQuery.js';
import { DoubleValuesSource, FullPrecisionFloatVectorSimilarityValuesSource } from '../query/DoubleValuesSource.js';
import { PREFETCH_POLICIES } from '../query/prefetch/PrefetchPolicy.js';
import { floatCompare } from '../query/ScoreDoc.js';
import { QueryStatsCollector } from '../query/QueryStatsCollector.js';
import { monotonicMs } from '../query/executor/clock.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

let t: TestIndex;
let searcher: IndexSearcher;
const DIMS = 64;

beforeAll(async () => {
  t = await buildTestIndex({ n: 2400, dims: DIMS, segmentDocs: 500, flatThreshold: 0 });
  searcher = new IndexSearcher(DirectoryReader.open(t.dir));
});

afterAll(async () => {
  t?.cleanup();
  await Executor.shutdown();
});

const query = (i: number) => t.queries.subarray(i * DIMS, (i + 1) * DIMS);
const vector = (doc: number) => t.base.subarray(doc * DIMS, (doc + 1) * DIMS);

function rescoreQuery(q: Float32Array, n: number, candidates: number) {
  return RescoreTopNQuery.createFullPrecisionRescorerQuery(new KnnFloatVectorQuery('vector', q, candidates, { numCandidates: 100 }), q, 'vector', n);
}

describe('RescoreTopNQuery', () => {
  it('returns the top n of the candidates by fp32 similarity (score desc, doc asc), totalHits = candidates', async () => {
    for (let qi = 0; qi < 5; qi++) {
      const q = query(qi);
      const candidates = (await searcher.rewrite(new KnnFloatVectorQuery('vector', q, 50, { numCandidates: 100 }), ctx())) as DocAndScoreQuery;
      const expected = [...candidates.docs]
        .map((doc) => ({ doc, score: t.similarity.compare(q, vector(doc)) }))
        .sort((a, b) => floatCompare(b.score, a.score) || a.doc - b.doc)
        .slice(0, 10);
      const { topDocs } = await searcher.search(rescoreQuery(q, 10, 50), 10);
      expect(topDocs.totalHits).toEqual({ value: 50, relation: 'EQUAL_TO' });
      expect(topDocs.scoreDocs.map((s) => s.doc)).toEqual(expected.map((e) => e.doc));
      topDocs.scoreDocs.forEach((s, i) => {
        expect(s.score).toBeCloseTo(expected[i].score, 5);
      });
    }
  });

  it('gives identical top n and scores on every read path and prefetch policy', async () => {
    for (let qi = 0; qi < 5; qi++) {
      const outcomes: SearchOutcome[] = [];
      for (const readPath of READ_PATHS) {
        for (const prefetchPolicy of PREFETCH_POLICIES) outcomes.push(await searcher.search(rescoreQuery(query(qi), 20, 100), 20, { readPath, prefetchPolicy }));
      }
      for (const o of outcomes) expect(o.topDocs.scoreDocs).toEqual(outcomes[0].topDocs.scoreDocs);
    }
  });

  it('keeps a ring of candidates that spans segments: the next segment is prefetched before the previous one is drained', async () => {
    const q = query(0);
    const { trace } = await searcher.search(rescoreQuery(q, 10, 200), 10, { readPath: 'mmap+prefetch', prefetchPolicy: 'always', trace: true });
    const candidates = (await searcher.rewrite(new KnnFloatVectorQuery('vector', q, 200, { numCandidates: 200 }), ctx())) as DocAndScoreQuery;
    const segmentOf = (i: number) => Math.floor(candidates.docs[i] / 500);
    const position = new Map(trace!.map((e, at) => [e, at]));
    const boundaries = [...candidates.docs.keys()].filter((i) => i > 0 && segmentOf(i) !== segmentOf(i - 1));
    expect(boundaries.length).toBeGreaterThan(2);
    for (const i of boundaries) {
      // Entry i (first of a segment) entered the ring before entry i-1 (last of the previous one) left it.
      expect(position.get(i + 1)!).toBeLessThan(position.get(-i)!);
    }
  });

  it('in the parallel path reads no fp32 vector before its prefetch was issued, and spreads issuance over the workers', async () => {
    // The ring's own issuance: without the first phase's read-ahead, which would leave it little to issue.
    const { stats, trace, prefetchThreads } = await searcher.search(rescoreQuery(query(1), 10, 200), 10, {
      readPath: 'mmap+parallel',
      prefetchPolicy: 'always',
      trace: true,
      leaderReadAhead: false,
    });
    expect(stats.readsBeforePrefetch).toBe(0);
    expect(stats.pagesPrefetched).toBeGreaterThanOrEqual(200);
    const position = new Map(trace!.map((e, at) => [e, at]));
    for (let i = 0; i < 200; i++) expect(position.get(i + 1)!).toBeLessThan(position.get(-(i + 1))!);
    expect(new Set(prefetchThreads).size).toBe(searcher.executor.threads);
    // The single-thread path issues everything from one thread.
    const single = await searcher.search(rescoreQuery(query(1), 10, 200), 10, { readPath: 'mmap+prefetch', prefetchPolicy: 'always', leaderReadAhead: false });
    expect(single.prefetchThreads).toHaveLength(1);
  });

  it("has the first phase read each segment's leaders ahead on the prefetching mmap paths: an equal share of the candidates per segment", async () => {
    // 2400 docs in 5 segments, 200 candidates: the best 40 of each segment's hits.
    const on = await searcher.search(rescoreQuery(query(4), 10, 200), 10, { readPath: 'mmap+parallel', prefetchPolicy: 'always' });
    expect(on.stats.pagesReadAhead).toBe(5 * 40);
    expect(on.stats.readsBeforePrefetch).toBe(0);
    const single = await searcher.search(rescoreQuery(query(4), 10, 200), 10, { readPath: 'mmap+prefetch', prefetchPolicy: 'always' });
    expect(single.stats.pagesReadAhead).toBe(5 * 40);
    const off = await searcher.search(rescoreQuery(query(4), 10, 200), 10, { readPath: 'mmap+parallel', prefetchPolicy: 'always', leaderReadAhead: false });
    expect(off.stats.pagesReadAhead).toBe(0);
    expect(on.topDocs.scoreDocs).toEqual(off.topDocs.scoreDocs);
    // The ring issues only what was not read ahead: the candidates beyond a segment's leaders.
    expect(off.stats.pagesPrefetched).toBe(200);
    expect(on.stats.pagesPrefetched).toBeLessThan(200);
    expect(on.stats.pagesPrefetched + on.stats.pagesReadAhead).toBeGreaterThanOrEqual(200);
    // Not on the paths that do not prefetch through the page cache: the stock baseline, and pread's own reads.
    for (const readPath of ['mmap', 'pread'] as const) {
      expect((await searcher.search(rescoreQuery(query(4), 10, 200), 10, { readPath, prefetchPolicy: 'always' })).stats.pagesReadAhead).toBe(0);
    }
  });

  it('reads ahead for a short candidate list only when asked to (its rescoring waits on the disk for less than the read-ahead costs)', async () => {
    const short = await searcher.search(rescoreQuery(query(4), 10, 50), 10, { readPath: 'mmap+parallel', prefetchPolicy: 'always' });
    expect(short.stats.pagesReadAhead).toBe(0);
    const asked = await searcher.search(rescoreQuery(query(4), 10, 50), 10, { readPath: 'mmap+parallel', prefetchPolicy: 'always', leaderReadAhead: true });
    expect(asked.stats.pagesReadAhead).toBe(5 * 10);
    expect(asked.topDocs.scoreDocs).toEqual(short.topDocs.scoreDocs);
  });

  it('reads nothing ahead once the adaptive policy has found every segment resident (warm)', async () => {
    const warmUp = () => searcher.search(rescoreQuery(query(6), 10, 200), 10, { readPath: 'mmap+parallel', prefetchPolicy: 'adaptive' });
    for (let i = 0; i < 10; i++) await warmUp();
    const warm = await warmUp();
    expect(warm.stats.pagesReadAhead).toBe(0);
    expect(warm.stats.readsBeforePrefetch).toBe(0);
  });

  it('reads nothing ahead when the values need first-phase scores (docs are scored in order, as they arrive)', async () => {
    const q = query(5);
    const blended = DoubleValuesSource.linearCombination([0.5, DoubleValuesSource.SCORES], [0.5, new FullPrecisionFloatVectorSimilarityValuesSource(q, 'vector')]);
    const { stats } = await searcher.search(new RescoreTopNQuery(new KnnFloatVectorQuery('vector', q, 80, { numCandidates: 100 }), blended, 10), 10, {
      readPath: 'mmap+parallel',
      prefetchPolicy: 'always',
    });
    expect(stats.pagesReadAhead).toBe(0);
  });

  it('counts a read without prefetch on the stock mmap path (queue depth 1, nothing issued ahead)', async () => {
    const { stats } = await searcher.search(rescoreQuery(query(2), 10, 60), 10, { readPath: 'mmap' });
    expect(stats.pagesPrefetched).toBe(0);
    expect(stats.readsBeforePrefetch).toBe(60);
  });

  it('disables deferral when the values source needs first-phase scores: docs are scored in order, nothing prefetched', async () => {
    const q = query(3);
    const blended = DoubleValuesSource.linearCombination([0.5, DoubleValuesSource.SCORES], [0.5, new FullPrecisionFloatVectorSimilarityValuesSource(q, 'vector')]);
    const knn = new KnnFloatVectorQuery('vector', q, 80, { numCandidates: 100 });
    const { stats, trace, topDocs } = await searcher.search(new RescoreTopNQuery(knn, blended, 10), 10, { readPath: 'mmap+parallel', trace: true });
    expect(stats.deferred).toBe(false);
    expect(stats.pagesPrefetched).toBe(0);
    expect(trace).toEqual(Array.from({ length: 80 }, (_, i) => -(i + 1)));
    // The value really blends both scores.
    const candidates = (await searcher.rewrite(knn, ctx())) as DocAndScoreQuery;
    const best = topDocs.scoreDocs[0];
    const first = candidates.scores[[...candidates.docs].indexOf(best.doc)];
    expect(best.score).toBeCloseTo(0.5 * first + 0.5 * t.similarity.compare(q, vector(best.doc)), 5);
  });

  it('keeps the lower doc among equal scores (n = 2 of docs 3, 7, 10 all scoring 0.5) and counts all candidates', async () => {
    const inner = new DocAndScoreQuery([
      { doc: 10, score: 0.5 },
      { doc: 3, score: 0.5 },
      { doc: 7, score: 0.5 },
    ]);
    const { topDocs } = await searcher.search(new RescoreTopNQuery(inner, DoubleValuesSource.SCORES, 2), 2);
    expect(topDocs.scoreDocs).toEqual([
      { doc: 3, score: 0.5 },
      { doc: 7, score: 0.5 },
    ]);
    expect(topDocs.totalHits.value).toBe(3);
  });

  it('returns no hits (rather than failing) when the inner query matches nothing', async () => {
    const { topDocs } = await searcher.search(new RescoreTopNQuery(DocAndScoreQuery.empty(), DoubleValuesSource.SCORES, 5), 5);
    expect(topDocs.scoreDocs).toEqual([]);
    expect(topDocs.totalHits.value).toBe(0);
  });

  it('rejects n < 1 and a target of the wrong dimension', async () => {
    expect(() => new RescoreTopNQuery(DocAndScoreQuery.empty(), DoubleValuesSource.SCORES, 0)).toThrow(/n must be >= 1/);
    const inner = new DocAndScoreQuery([{ doc: 1, score: 1 }]);
    await expect(searcher.search(RescoreTopNQuery.createFullPrecisionRescorerQuery(inner, [1, 2, 3], 'vector', 1), 1)).rejects.toThrow(/dimension mismatch/);
  });
});

function ctx() {
  return { readPath: 'mmap' as const, prefetchPolicy: 'adaptive' as const, stats: new QueryStatsCollector('mmap'), startedAt: monotonicMs() };
}
