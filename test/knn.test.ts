import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../src/executor/Executor.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { readFileSync } from 'node:fs';
import { QueryQuantizer } from '../segments/quantized/QueryQuantizer.js';
import { RandomizedHadamard } from '../segments/quantization/RandomizedHadamard.js';
import { SINGLE_BIT_QUERY_NIBBLE } from '../segments/quantized/ScalarEncodings.js';
import { JsKernels } from '../segments/kernels/JsKernels.js';
import { Kernels } from '../segments/kernels/Kernels.js';
import { IndexSearcher } from '../src/api/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../query/KnnFloatVectorQuery.js';
import type { DocAndScoreQuery } from '../query/DocAndScoreQuery.js';
import { QueryStatsCollector } from '../query/QueryStatsCollector.js';
import { monotonicMs } from '../query/executor/clock.js';
import { TopDocs } from '../query/TopDocs.js';
import { floatCompare } from '../query/ScoreDoc.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

let flat: TestIndex;
let graph: TestIndex;
/** The brute force quantizes queries exactly as the first phase does (kernel-backed QueryQuantizer). */
let kernels: Kernels;

beforeAll(async () => {
  kernels = await Kernels.load();
  // Same vectors twice: once scanned exhaustively, once with an HNSW graph per segment.
  [flat, graph] = await Promise.all([
    buildTestIndex({ n: 3000, dims: 96, segmentDocs: 1000, flatThreshold: 1_000_000 }),
    buildTestIndex({ n: 3000, dims: 96, segmentDocs: 1000, flatThreshold: 0 }),
  ]);
});

afterAll(async () => {
  flat?.cleanup();
  graph?.cleanup();
  await Executor.shutdown();
});

/** Brute force: Lucene's 1-bit estimator against every doc of every segment, global (score desc, doc asc). */
function bruteForceFromHandles(dir: string, query: Float32Array, k: number): { doc: number; score: number }[] {
  const reader = DirectoryReader.open(dir);
  const hits: { doc: number; score: number }[] = [];
  for (const leaf of reader.leaves) {
    const q = leaf.reader.handle.quantized!;
    const records = new Uint8Array(readFileSync(q.path).subarray(q.offset, q.offset + q.count * q.recordBytes));
    const planes = new Uint8Array(4 * q.codeBytes);
    const quantizer = new QueryQuantizer(reader.field.similarity, reader.field.dims, kernels);
    // Rotated segments (the default build) rotate the query too.
    const rotation = q.rotationSeed === null ? null : new RandomizedHadamard(reader.field.dims, q.rotationSeed);
    const qq = quantizer.quantize(query, q.centroid, planes, SINGLE_BIT_QUERY_NIBBLE, rotation);
    quantizer.release();
    const scores = new Float32Array(q.count);
    JsKernels.scoreOsqRange(
      { ...qq, planes, dims: reader.field.dims, similarity: reader.field.similarity.ordinal, centroidDP: q.centroidDP } as never,
      records,
      q.recordBytes,
      q.codeBytes,
      0,
      q.count,
      scores,
    );
    for (let d = 0; d < q.count; d++) hits.push({ doc: leaf.docBase + d, score: scores[d] });
  }
  return hits.sort((a, b) => floatCompare(b.score, a.score) || a.doc - b.doc).slice(0, k);
}

async function knn(index: TestIndex, query: Float32Array, k: number, numCandidates = k, graphSearch?: 'js' | 'wasm'): Promise<DocAndScoreQuery> {
  const searcher = new IndexSearcher(DirectoryReader.open(index.dir));
  const ctx = { readPath: 'mmap' as const, prefetchPolicy: 'adaptive' as const, stats: new QueryStatsCollector('mmap'), startedAt: monotonicMs() };
  return new KnnFloatVectorQuery('vector', query, k, { numCandidates, graphSearch }).rewrite(searcher, ctx);
}

function ranked(q: DocAndScoreQuery): { doc: number; score: number }[] {
  return [...q.docs].map((doc, i) => ({ doc, score: q.scores[i] })).sort((a, b) => floatCompare(b.score, a.score) || a.doc - b.doc);
}

describe('first phase: 1-bit kNN over every segment', () => {
  it('flat segments return exactly the brute-force estimator top k, ties to the lower doc', async () => {
    for (let qi = 0; qi < 10; qi++) {
      const query = flat.queries.subarray(qi * 96, (qi + 1) * 96);
      const expected = bruteForceFromHandles(flat.dir, query, 40);
      expect(ranked(await knn(flat, query, 40))).toEqual(expected);
    }
  });

  it('graph segments agree with the brute-force estimator (recall >= 0.95 at ef 100)', async () => {
    let found = 0;
    let total = 0;
    for (let qi = 0; qi < 20; qi++) {
      const query = graph.queries.subarray(qi * 96, (qi + 1) * 96);
      const expected = new Set(bruteForceFromHandles(graph.dir, query, 20).map((h) => h.doc));
      const got = ranked(await knn(graph, query, 20, 100));
      expect(got).toHaveLength(20);
      found += got.filter((h) => expected.has(h.doc)).length;
      total += 20;
      // Whatever it returns carries the true estimator score of that doc.
      const all = new Map(bruteForceFromHandles(graph.dir, query, 3000).map((h) => [h.doc, h.score]));
      for (const h of got) expect(h.score).toBe(all.get(h.doc));
    }
    expect(found / total).toBeGreaterThanOrEqual(0.95);
  });

  it("graph segments: the wasm level-0 search returns exactly the JS searcher's hits and visit counts", async () => {
    for (let qi = 0; qi < 20; qi++) {
      const query = graph.queries.subarray(qi * 96, (qi + 1) * 96);
      for (const [k, ef] of [
        [10, 100],
        [50, 50],
        [5, 7],
      ]) {
        const stats = [new QueryStatsCollector('mmap'), new QueryStatsCollector('mmap')];
        const searcher = new IndexSearcher(DirectoryReader.open(graph.dir));
        const [js, wasm] = await Promise.all(
          (['js', 'wasm'] as const).map((graphSearch, i) =>
            new KnnFloatVectorQuery('vector', query, k, { numCandidates: ef, graphSearch }).rewrite(searcher, {
              readPath: 'mmap',
              prefetchPolicy: 'adaptive',
              stats: stats[i],
              startedAt: monotonicMs(),
            }),
          ),
        );
        expect(ranked(wasm)).toEqual(ranked(js));
        expect(stats[1].visited).toBe(stats[0].visited);
      }
    }
  });

  it('rejects a query of the wrong dimension or field', async () => {
    await expect(knn(flat, new Float32Array(3), 10)).rejects.toThrow(/dimension mismatch: query has 3 dims/);
    const searcher = new IndexSearcher(DirectoryReader.open(flat.dir));
    const ctx = { readPath: 'mmap' as const, prefetchPolicy: 'adaptive' as const, stats: new QueryStatsCollector('mmap'), startedAt: monotonicMs() };
    await expect(new KnnFloatVectorQuery('other', flat.queries.subarray(0, 96), 5).rewrite(searcher, ctx)).rejects.toThrow(/unknown vector field "other"/);
  });
});

describe('TopDocs.merge (per-segment results into the global top k)', () => {
  it('orders by score desc, then doc asc across segments', () => {
    const a = new TopDocs({ value: 3, relation: 'EQUAL_TO' }, [
      { doc: 5, score: 0.9 },
      { doc: 1, score: 0.5 },
      { doc: 2, score: 0.5 },
    ]);
    const b = new TopDocs({ value: 2, relation: 'EQUAL_TO' }, [
      { doc: 10, score: 0.9 },
      { doc: 11, score: 0.5 },
    ]);
    const merged = TopDocs.merge(4, [a, b]);
    expect(merged.scoreDocs.map((s) => s.doc)).toEqual([5, 10, 1, 2]);
    expect(merged.totalHits).toEqual({ value: 5, relation: 'EQUAL_TO' });
  });

  it('lets NaN lose every comparison and treats -0 like +0 (compares with < and >)', () => {
    const a = new TopDocs({ value: 2, relation: 'EQUAL_TO' }, [{ doc: 0, score: NaN }]);
    const b = new TopDocs({ value: 1, relation: 'EQUAL_TO' }, [{ doc: 7, score: -0 }]);
    const c = new TopDocs({ value: 1, relation: 'EQUAL_TO' }, [{ doc: 9, score: 0 }]);
    expect(TopDocs.merge(3, [b, c, a]).scoreDocs.map((s) => s.doc)).toEqual([7, 9, 0]);
  });
});
