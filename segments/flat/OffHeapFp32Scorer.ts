import type { RandomVectorScorer } from '../hnsw/RandomVectorScorer.js';
import type { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import type { OffHeapFloatVectors } from './OffHeapFloatVectors.js';

/**
 * The field's exact fp32 similarity of a query to vectors read in place (mapping or io_uring),
 * as a RandomVectorScorer for the graph search. It computes what Fp32VectorScorer computes on the
 * same floats (the same similarity function), so a search over it returns the heap scorer's
 * results bit for bit.
 */
export class OffHeapFp32Scorer implements RandomVectorScorer {
  readonly maxOrd: number;
  private readonly compare: VectorSimilarityFunction['compareAt'];

  constructor(
    readonly vectors: OffHeapFloatVectors,
    readonly similarity: VectorSimilarityFunction,
    readonly query: Float32Array,
  ) {
    if (query.length !== vectors.dims) throw new RangeError(`query has ${query.length} dims, the vectors ${vectors.dims}`);
    this.maxOrd = vectors.size;
    this.compare = similarity.compareAt;
  }

  score(ord: number): number {
    const off = this.vectors.vector(ord);
    return this.compare(this.query, 0, this.vectors.floats, off, this.vectors.dims);
  }

  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.score(ords[i]);
  }

  scoreRange(from: number, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.score(from + i);
  }
}
