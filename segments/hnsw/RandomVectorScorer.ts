import type { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';

/**
 * Scores a fixed query (a user vector, or the vector of a "scoring ordinal") against vectors by
 * ordinal. Higher is more similar. This is all the graph code sees (ARCHITECTURE.md, "Graph
 * scoring"): the fp32 similarity below and the 1-bit estimator both implement it.
 */
export interface RandomVectorScorer {
  /** Number of vectors; valid ordinals are [0, maxOrd). */
  readonly maxOrd: number;
  score(ord: number): number;
  /** Scores ords[0..n) into out[0..n). The graph code calls this once per neighbour list. */
  bulkScore(ords: Int32Array, n: number, out: Float32Array): void;
  /** Optional: scores the contiguous ordinals [from, from + n) into out[0..n) (flat scans). */
  scoreRange?(from: number, n: number, out: Float32Array): void;
}

/** A scorer whose query is the vector of an ordinal, which can be moved (graph construction). */
export interface UpdateableRandomVectorScorer extends RandomVectorScorer {
  setScoringOrdinal(ord: number): void;
}

/** Creates per-thread scorers over one set of vectors. */
export interface RandomVectorScorerSupplier {
  readonly maxOrd: number;
  scorer(): UpdateableRandomVectorScorer;
  /** An independent supplier for another thread/builder (shares the read-only vectors). */
  copy(): RandomVectorScorerSupplier;
}

type Compare = (a: Float32Array, aOff: number, b: Float32Array, bOff: number, dim: number) => number;

/** fp32 vectors packed back to back (`dim` floats per ordinal) scored against a query. */
export class Fp32VectorScorer implements RandomVectorScorer {
  readonly maxOrd: number;
  protected readonly compare: Compare;
  protected query: Float32Array;
  protected queryOffset: number;

  constructor(
    readonly vectors: Float32Array,
    readonly dim: number,
    readonly similarity: VectorSimilarityFunction,
    query: Float32Array,
    queryOffset = 0,
  ) {
    if (dim <= 0 || vectors.length % dim !== 0) throw new RangeError(`vector data length ${vectors.length} is not a multiple of dim ${dim}`);
    if (queryOffset < 0 || queryOffset + dim > query.length) throw new RangeError(`query must have ${dim} dims`);
    this.maxOrd = vectors.length / dim;
    this.compare = similarity.compareAt;
    this.query = query;
    this.queryOffset = queryOffset;
  }

  score(ord: number): number {
    return this.compare(this.query, this.queryOffset, this.vectors, ord * this.dim, this.dim);
  }

  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    const { compare, query, queryOffset, vectors, dim } = this;
    for (let i = 0; i < n; i++) out[i] = compare(query, queryOffset, vectors, ords[i] * dim, dim);
  }

  scoreRange(from: number, n: number, out: Float32Array): void {
    const { compare, query, queryOffset, vectors, dim } = this;
    for (let i = 0; i < n; i++) out[i] = compare(query, queryOffset, vectors, (from + i) * dim, dim);
  }
}

/** The query is the vector of a scoring ordinal of the same set (graph construction). */
export class Fp32UpdateableScorer extends Fp32VectorScorer implements UpdateableRandomVectorScorer {
  constructor(vectors: Float32Array, dim: number, similarity: VectorSimilarityFunction) {
    super(vectors, dim, similarity, vectors, 0);
  }

  setScoringOrdinal(ord: number): void {
    if (!(ord >= 0 && ord < this.maxOrd)) throw new RangeError(`scoring ordinal ${ord} out of [0, ${this.maxOrd})`);
    this.queryOffset = ord * this.dim;
  }
}

/** Supplier over fp32 vectors (tests, benchmarks, and graphs built from raw floats). */
export class Fp32ScorerSupplier implements RandomVectorScorerSupplier {
  readonly maxOrd: number;

  constructor(
    readonly vectors: Float32Array,
    readonly dim: number,
    readonly similarity: VectorSimilarityFunction,
  ) {
    if (dim <= 0 || vectors.length % dim !== 0) throw new RangeError(`vector data length ${vectors.length} is not a multiple of dim ${dim}`);
    this.maxOrd = vectors.length / dim;
  }

  scorer(): UpdateableRandomVectorScorer {
    return new Fp32UpdateableScorer(this.vectors, this.dim, this.similarity);
  }

  copy(): RandomVectorScorerSupplier {
    return new Fp32ScorerSupplier(this.vectors, this.dim, this.similarity);
  }

  /** A scorer for a user query vector. */
  queryScorer(query: Float32Array): RandomVectorScorer {
    return new Fp32VectorScorer(this.vectors, this.dim, this.similarity, query);
  }
}
