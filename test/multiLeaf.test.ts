import { describe, expect, it } from 'vitest';
import { FloatHeap, GlobalSimilarityQueue } from '../segments/hnsw/GlobalSimilarityQueue.js';
import { HnswGraphBuilder } from '../segments/hnsw/HnswGraphBuilder.js';
import { HnswGraphSearcher } from '../segments/hnsw/HnswGraphSearcher.js';
import { Fp32ScorerSupplier } from '../segments/hnsw/RandomVectorScorer.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { clusteredVectors } from '../src/bench/hnsw.js';

describe('GlobalSimilarityQueue (the query-wide k best, shared by every segment)', () => {
  it('keeps the k largest offered values and reports the k-th once full', () => {
    const q = new GlobalSimilarityQueue(GlobalSimilarityQueue.create(3));
    expect(q.offer(Float32Array.of(0.1, 0.2), 2)).toBe(-Infinity);
    expect(q.offer(Float32Array.of(0.5), 1)).toBeCloseTo(0.1, 6);
    expect(q.offer(Float32Array.of(0.3, 0.9), 2)).toBeCloseTo(0.3, 6);
    expect(q.offer(Float32Array.of(0.05), 1)).toBeCloseTo(0.3, 6);
  });

  it('is one queue for every thread holding the same shared state', () => {
    const state = GlobalSimilarityQueue.create(2);
    new GlobalSimilarityQueue(state).offer(Float32Array.of(0.7, 0.8), 2);
    expect(new GlobalSimilarityQueue(state).offer(Float32Array.of(0.1), 1)).toBeCloseTo(0.7, 6);
  });
});

describe('FloatHeap', () => {
  it('keeps the capacity largest values and drains them in ascending order', () => {
    const h = new FloatHeap(3);
    for (const v of [5, 1, 4, 2, 3]) h.offer(v);
    const out = new Float32Array(3);
    expect(h.drainAscending(out)).toBe(3);
    expect([...out]).toEqual([3, 4, 5]);
    expect(h.size).toBe(0);
  });
});

describe('multi-segment search with a shared queue (Lucene MultiLeafKnnCollector)', () => {
  it('visits fewer nodes in a segment that cannot compete, and still returns its best hits', () => {
    const dim = 16;
    const make = (seed: number, n: number) => {
      const vectors = clusteredVectors(n, dim, 20, seed);
      const supplier = new Fp32ScorerSupplier(vectors, dim, VectorSimilarityFunction.EUCLIDEAN);
      return { vectors, supplier, graph: new HnswGraphBuilder(supplier, { seed }).build() };
    };
    const a = make(1, 3000);
    const b = make(2, 3000);
    const query = a.vectors.slice(0, dim); // a doc of segment a: segment b holds nothing as close
    const searcher = new HnswGraphSearcher(3000);
    const alone = searcher.search(b.supplier.queryScorer(query), b.graph, 10, 100);
    const global = new GlobalSimilarityQueue(GlobalSimilarityQueue.create(100));
    searcher.search(a.supplier.queryScorer(query), a.graph, 10, 100, null, Infinity, global);
    const shared = searcher.search(b.supplier.queryScorer(query), b.graph, 10, 100, null, Infinity, global);
    expect(shared.visited).toBeLessThan(alone.visited);
    expect(shared.ords[0]).toBe(alone.ords[0]);
  });
});
