/**
 * The query side of Lucene's 1-bit x 4-bit OSQ estimator (SINGLE_BIT_QUERY_NIBBLE), shared by
 * the wasm kernels and the JS reference.
 */
export interface OsqQueryCorrections {
  /** a_y, the query's lower interval (float32). */
  readonly lower: number;
  /** u_y, the query's upper interval (float32). */
  readonly upper: number;
  /** corr_y: ‖q − c‖² for EUCLIDEAN, q·c otherwise (float32). */
  readonly additionalCorrection: number;
  /** y₁, the sum of the query's 4-bit codes. */
  readonly componentSum: number;
  /** The field's real dimension D (not padded to a multiple of 8). */
  readonly dims: number;
  /** Similarity ordinal: 0 EUCLIDEAN, 1 DOT_PRODUCT, 2 COSINE, 3 MAXIMUM_INNER_PRODUCT. */
  readonly similarity: number;
  /** c·c of the segment's centroid (float32); unused for EUCLIDEAN. */
  readonly centroidDP: number;
}

export const SIM_EUCLIDEAN = 0;
export const SIM_DOT_PRODUCT = 1;
export const SIM_COSINE = 2;
export const SIM_MAXIMUM_INNER_PRODUCT = 3;

/** Bytes of one 1-bit record: the packed code plus lower, upper, additionalCorrection (f32) and componentSum (i32). */
export function osqRecordSize(codeBytes: number): number {
  return codeBytes + 16;
}
