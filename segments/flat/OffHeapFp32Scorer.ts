import type { RandomVectorScorer } from '../hnsw/RandomVectorScorer.js';
import type { Fp32Similarity } from '../kernels/Fp32Similarity.js';
import type { OffHeapFloatVectors } from './OffHeapFloatVectors.js';

/**
 * The field's exact fp32 similarity of a query to vectors read in place (mapping or io_uring),
 * as a RandomVectorScorer for the graph search. Scores come from Fp32Similarity (the wasm
 * kernels), the same function rescoring uses, so a doc's first-phase score is its rescored score.
 */
export class OffHeapFp32Scorer implements RandomVectorScorer {
  readonly maxOrd: number;

  constructor(
    readonly vectors: OffHeapFloatVectors,
    private readonly similarity: Fp32Similarity,
  ) {
    if (similarity.dims !== vectors.dims) throw new RangeError(`the query has ${similarity.dims} dims, the vectors ${vectors.dims}`);
    this.maxOrd = vectors.size;
  }

  score(ord: number): number {
    const off = this.vectors.vector(ord);
    return this.similarity.score(this.vectors.floats, off);
  }

  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.score(ords[i]);
  }

  scoreRange(from: number, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.score(from + i);
  }
}
