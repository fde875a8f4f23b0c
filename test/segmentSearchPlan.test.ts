import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../src/executor/Executor.js';
import { openIndex } from '../src/api/openIndex.js';
import { IndexSearcher } from '../src/api/IndexSearcher.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { KnnFloatVectorQuery } from '../query/KnnFloatVectorQuery.js';
import { QueryStatsCollector } from '../query/QueryStatsCollector.js';
import { monotonicMs } from '../query/executor/clock.js';
import type { DocAndScoreQuery } from '../query/DocAndScoreQuery.js';
import { EXPECTED_VISITS_PER_EF, FAR_FILTER, planFilteredSearch, planSegmentSearch, VISIT_COST_IN_SCANNED_DOCS, type SegmentSearch } from '../segments/index/SegmentSearchPlan.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

describe('the per-segment plan: graph or flat scan', () => {
  it('scans a segment without a graph, whatever the beam', () => {
    expect(planSegmentSearch(1_000_000, 10, false)).toEqual({ strategy: 'exhaustive', visitLimit: Infinity });
  });

  it('scans when the expected visits already cost what the scan costs, else searches the graph with the scan cost as visit limit', () => {
    const docs = 30_000;
    const breakEven = docs / VISIT_COST_IN_SCANNED_DOCS / EXPECTED_VISITS_PER_EF;
    expect(planSegmentSearch(docs, Math.ceil(breakEven), true).strategy).toBe('exhaustive');
    const below = planSegmentSearch(docs, Math.floor(breakEven) - 1, true);
    expect(below.strategy).toBe('hnsw');
    expect(below.visitLimit).toBe(Math.floor(docs / VISIT_COST_IN_SCANNED_DOCS));
    // a large segment at the default beam keeps its graph
    expect(planSegmentSearch(131_072, 200, true).strategy).toBe('hnsw');
  });
});

describe('the per-segment plan with a filter: by its cardinality and where its docs lie', () => {
  const docs = 125_000;
  const ef = 100;
  const M = 16;

  it('scans when no more docs pass than the beam holds, or the segment has no graph', () => {
    expect(planFilteredSearch(docs, ef, ef, true, M).strategy).toBe('exhaustive');
    expect(planFilteredSearch(docs, docs, ef, false, M).strategy).toBe('exhaustive');
  });

  it("a filter passing most of the query's neighbourhood: the graph with the filter, limited to the scan's cost", () => {
    const plan = planFilteredSearch(docs, docs / 10, ef, true, M, 0.95);
    expect(plan.strategy).toBe('hnsw');
    expect(plan.visitLimit).toBe(Math.floor(docs / 10 / VISIT_COST_IN_SCANNED_DOCS));
  });

  it('a uniform filter of 10 %: the filtered traversal; of 1 %: the scan', () => {
    expect(planFilteredSearch(docs, docs / 10, ef, true, M, 0.1).strategy).toBe('filtered-hnsw');
    expect(planFilteredSearch(docs, docs / 100, ef, true, M, 0.01).strategy).toBe('exhaustive');
  });

  it('a filter whose docs lie away from the query (anti-correlated): never the traversal, the scan unless the plain graph is cheaper', () => {
    for (const s of [0.5, 0.1]) {
      const nearby = (FAR_FILTER * s) / 2;
      const plan = planFilteredSearch(docs, docs * s, ef, true, M, nearby);
      expect(plan.strategy).not.toBe('filtered-hnsw');
      expect(planFilteredSearch(docs, docs * s, ef, true, M, 0).strategy).toBe('exhaustive');
    }
  });
});

describe('a search chooses per segment, and says what it chose', () => {
  let index: TestIndex;
  const dims = 32;

  beforeAll(async () => {
    // Two graph segments: 3000 docs and 600 docs (both above the flat threshold of 0).
    index = await buildTestIndex({ n: 3600, dims, segmentDocs: 3000, flatThreshold: 0, queries: 6 });
  }, 120_000);

  afterAll(async () => {
    index.cleanup();
    await Executor.shutdown();
  });

  async function rewrite(k: number, ef: number, segmentSearch?: SegmentSearch) {
    const searcher = new IndexSearcher(DirectoryReader.open(index.dir));
    const stats = new QueryStatsCollector('mmap');
    const query = index.queries.subarray(0, dims);
    const q = await new KnnFloatVectorQuery('vector', query, k, { numCandidates: ef, segmentSearch }).rewrite(searcher, {
      readPath: 'mmap',
      prefetchPolicy: 'adaptive',
      stats,
      startedAt: monotonicMs(),
    });
    return { q, stats };
  }

  it("a small beam keeps the large segment's graph; a beam near the segment size scans the small segment", async () => {
    // 3000 docs at ef 20: the graph, well within its visit limit of 750; the 600-doc segment may
    // reach its limit of 150 visits and be scanned instead
    const small = await rewrite(10, 20);
    expect(small.stats.exhaustiveSegments).toBeLessThanOrEqual(1);
    expect(small.stats.visited).toBeLessThan(3600);
    const large = await rewrite(10, 150);
    // 600 docs: 4 x 150 expected visits >= 600 / 4, so the small segment is scanned
    expect(large.stats.exhaustiveSegments).toBeGreaterThanOrEqual(1);
    expect(large.stats.visited).toBeGreaterThanOrEqual(600);
  });

  it("forced exhaustive scores every doc and finds the codes' true top k: rank by rank at least the graph's scores", async () => {
    const all = await rewrite(40, 40, 'exhaustive');
    expect(all.stats.exhaustiveSegments).toBe(2);
    expect(all.stats.visited).toBe(3600);
    const graphs = await rewrite(40, 40, 'hnsw');
    expect(graphs.stats.exhaustiveSegments).toBe(0);
    const best = (q: DocAndScoreQuery) => Array.from(q.scores).sort((a, b) => b - a);
    const [a, g] = [best(all.q), best(graphs.q)];
    expect(a.length).toBe(40);
    for (let i = 0; i < 40; i++) expect(a[i]).toBeGreaterThanOrEqual(g[i]);
  });

  it('reports the strategy per segment in the search profile and the exhaustive count in the stats', async () => {
    const vi = await openIndex(index.dir);
    try {
      const r = await vi.search(index.queries.subarray(dims, 2 * dims), { k: 10, oversample: 20, profile: true });
      // k x oversample = 200 candidates, beam 800: the 600-doc segment is scanned, and the
      // 3000-doc one too (4 x 800 visits cost more than 3000 / 4 scanned docs)
      expect(r.stats.exhaustiveSegments).toBe(2);
      expect(r.stats.profile!.segments.map((s) => s.strategy)).toEqual(['exhaustive', 'exhaustive']);
      const r2 = await vi.search(index.queries.subarray(dims, 2 * dims), { k: 5, oversample: 1, numCandidates: 10, profile: true });
      expect(r2.stats.profile!.segments.map((s) => s.strategy)).toContain('hnsw');
      expect(r2.stats.exhaustiveSegments).toBe(r2.stats.profile!.segments.filter((s) => s.strategy === 'exhaustive').length);
    } finally {
      await vi.close();
    }
  });

  it('VectorIndex.search forces a strategy with segmentSearch, and refuses an unknown one by name', async () => {
    const vi = await openIndex(index.dir);
    try {
      const q = index.queries.subarray(0, dims);
      const scan = await vi.search(q, { k: 5, oversample: 1, numCandidates: 10, segmentSearch: 'exhaustive' });
      expect(scan.stats.exhaustiveSegments).toBe(2);
      expect(scan.stats.visited).toBe(3600);
      const graph = await vi.search(q, { k: 5, oversample: 1, numCandidates: 10, segmentSearch: 'hnsw' });
      expect(graph.stats.exhaustiveSegments).toBe(0);
      await expect(vi.search(q, { k: 5, segmentSearch: 'flat' as never })).rejects.toThrow(/segmentSearch must be one of auto, hnsw, exhaustive, filtered-hnsw, got flat/);
    } finally {
      await vi.close();
    }
  });
});
