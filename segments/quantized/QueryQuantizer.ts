import { discretize, transposeHalfByte } from '../quantization/BitPacking.js';
import { OptimizedScalarQuantizer } from '../quantization/OptimizedScalarQuantizer.js';
import { l2normalize } from '../../query/VectorUtil.js';
import { VectorSimilarityFunction } from '../../query/VectorSimilarityFunction.js';
import { QUERY_BITS } from './ScalarQuantizedVectorsFormat.js';

/** A query quantized against one segment's centroid: 4 bit planes and the corrective terms. */
export interface QuantizedQuery {
  /** 4 x codeBytes bytes, plane p = bit p of every dimension (LSB plane first). */
  readonly planes: Uint8Array;
  readonly lower: number;
  readonly upper: number;
  readonly additionalCorrection: number;
  readonly componentSum: number;
}

/**
 * Quantizes queries the way Lucene104ScalarQuantizedVectorScorer does: copy, l2-normalize for
 * COSINE (with Lucene's 1e-5 "already unit" shortcut), then 4-bit OSQ against the segment's
 * centroid and bit-plane transposition. Reuses its scratch buffers; not thread-safe.
 */
export class QueryQuantizer {
  private readonly quantizer: OptimizedScalarQuantizer;
  private readonly scratch: Float32Array;
  private readonly nibbles: Uint8Array;

  constructor(
    readonly similarity: VectorSimilarityFunction,
    readonly dims: number,
  ) {
    this.quantizer = new OptimizedScalarQuantizer(similarity);
    this.scratch = new Float32Array(dims);
    this.nibbles = new Uint8Array(discretize(dims, 8));
  }

  /** Writes the planes into `planes` (4 x codeBytes) and returns the corrections. */
  quantize(query: Float32Array, centroid: Float32Array, planes: Uint8Array): QuantizedQuery {
    if (query.length !== this.dims) throw new RangeError(`query has ${query.length} dims, field has ${this.dims}`);
    this.scratch.set(query);
    if (this.similarity === VectorSimilarityFunction.COSINE) l2normalize(this.scratch);
    const r = this.quantizer.scalarQuantize(this.scratch, this.nibbles, QUERY_BITS, centroid);
    transposeHalfByte(this.nibbles, planes);
    return {
      planes,
      lower: r.lowerInterval,
      upper: r.upperInterval,
      additionalCorrection: r.additionalCorrection,
      componentSum: r.quantizedComponentSum,
    };
  }
}
