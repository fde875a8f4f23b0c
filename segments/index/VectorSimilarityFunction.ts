import type { DenseVectorSimilarity } from '../document/FieldMapping.js';
import { cosine, dotProduct, normalizeToUnitInterval, scaleMaxInnerProductScore, squareDistance } from '../util/VectorUtil.js';

/**
 * Lucene's VectorSimilarityFunction. The ordinal is the on-disk number used by .fnm (a byte),
 * .vemf, .vem and .vemq (an int32) and prescore's commit. Scores are float32 and higher means
 * more similar:
 *
 * | ordinal | name                  | score                                              |
 * |---------|-----------------------|----------------------------------------------------|
 * | 0       | EUCLIDEAN             | 1 / (1 + Σ(aᵢ − bᵢ)²) (squared distance, no sqrt)   |
 * | 1       | DOT_PRODUCT           | max((1 + a·b) / 2, 0) (vectors expected unit length) |
 * | 2       | COSINE                | max((1 + cos(a, b)) / 2, 0), the quotient in double |
 * | 3       | MAXIMUM_INNER_PRODUCT | a·b < 0 ? 1 / (1 − a·b) : a·b + 1 (may exceed 1)    |
 */
export type SimilarityName = 'EUCLIDEAN' | 'DOT_PRODUCT' | 'COSINE' | 'MAXIMUM_INNER_PRODUCT';

/**
 * Lucene's VectorSimilarityFunction: how two vectors score, and how the score maps to [0, 1] or beyond.
 *
 * @example
 * ```ts
 * VectorSimilarityFunction.fromName('cosine').compare(a, b);
 * ```
 */
export class VectorSimilarityFunction {
  static readonly EUCLIDEAN = new VectorSimilarityFunction('EUCLIDEAN', 0, (a, ao, b, bo, d) => Math.fround(1 / Math.fround(1 + squareDistance(a, ao, b, bo, d))));
  static readonly DOT_PRODUCT = new VectorSimilarityFunction('DOT_PRODUCT', 1, (a, ao, b, bo, d) => normalizeToUnitInterval(dotProduct(a, ao, b, bo, d)));
  static readonly COSINE = new VectorSimilarityFunction('COSINE', 2, (a, ao, b, bo, d) => normalizeToUnitInterval(cosine(a, ao, b, bo, d)));
  static readonly MAXIMUM_INNER_PRODUCT = new VectorSimilarityFunction('MAXIMUM_INNER_PRODUCT', 3, (a, ao, b, bo, d) => scaleMaxInnerProductScore(dotProduct(a, ao, b, bo, d)));

  static readonly values: readonly VectorSimilarityFunction[] = [
    VectorSimilarityFunction.EUCLIDEAN,
    VectorSimilarityFunction.DOT_PRODUCT,
    VectorSimilarityFunction.COSINE,
    VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT,
  ];

  private constructor(
    readonly name: SimilarityName,
    readonly ordinal: number,
    /** Scores b[bOff..bOff+dim) against a[aOff..aOff+dim). */
    readonly compareAt: (a: Float32Array, aOff: number, b: Float32Array, bOff: number, dim: number) => number,
  ) {}

  /** The score of `a` against `b` (Lucene's compare: higher is nearer). */
  compare(a: Float32Array, b: Float32Array): number {
    if (a.length !== b.length) throw new RangeError(`vector dimensions differ: ${a.length} != ${b.length}`);
    return this.compareAt(a, 0, b, 0, a.length);
  }

  /** The similarity Lucene stores as `ordinal` in its field infos. */
  static fromOrdinal(ordinal: number): VectorSimilarityFunction {
    const sim = VectorSimilarityFunction.values[ordinal];
    if (!sim) throw new RangeError(`unknown similarity ordinal ${ordinal}`);
    return sim;
  }

  /**
   * Accepts Lucene's names, Elasticsearch's (`l2_norm`, `dot_product`, `cosine`,
   * `max_inner_product`) and the lower-case CLI/HTTP spellings; case and `-`/`_` do not matter.
   */
  static fromName(name: string): VectorSimilarityFunction {
    const key = name.trim().toUpperCase().replace(/-/g, '_');
    const sim =
      VectorSimilarityFunction.values.find((s) => s.name === key) ??
      (key === 'MAX_INNER_PRODUCT' || key === 'MIP' ? VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT : undefined) ??
      (key === 'L2' || key === 'L2_NORM' ? VectorSimilarityFunction.EUCLIDEAN : undefined);
    if (!sim) {
      throw new RangeError(`unknown similarity "${name}" (expected cosine, dot_product, euclidean or max_inner_product; l2_norm is euclidean)`);
    }
    return sim;
  }

  /** The CLI/HTTP spelling. */
  get userName(): string {
    return this.name === 'MAXIMUM_INNER_PRODUCT' ? 'max_inner_product' : this.name.toLowerCase();
  }

  /** Elasticsearch's name in a dense_vector mapping (`l2_norm` for EUCLIDEAN). */
  get esName(): DenseVectorSimilarity {
    return this.name === 'EUCLIDEAN' ? 'l2_norm' : (this.userName as DenseVectorSimilarity);
  }

  /** The Lucene name. */
  toString(): string {
    return this.name;
  }
}
