import { discretize, transposeHalfByte } from '../quantization/BitPacking.js';
import { DEFAULT_ITERS, DEFAULT_LAMBDA, OptimizedScalarQuantizer } from '../quantization/OptimizedScalarQuantizer.js';
import { KernelOsqPass } from './KernelOsqPass.js';
import type { Kernels } from '../kernels/Kernels.js';
import { l2normalize } from '../util/VectorUtil.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import type { RandomizedHadamard } from '../quantization/RandomizedHadamard.js';
import { packQueryCode } from './ScalarCodes.js';
import { SINGLE_BIT_QUERY_NIBBLE, type ScalarEncodingInfo } from './ScalarEncodings.js';

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
 *
 * Given kernels, the interval search's inner pass runs in wasm SIMD (Kernels.osqLossAndGrid,
 * ~4x faster; sums in lane order, as Lucene's vectorized quantizer also reorders them), which
 * the first phase uses; without, it is the scalar pass in Lucene's exact order. The COSINE
 * normalisation and the rounding onto the grid then run in wasm too, bit for bit the JS ones.
 */
export class QueryQuantizer {
  private readonly quantizer: OptimizedScalarQuantizer;
  private readonly scratch: Float32Array | null;
  private readonly pass: KernelOsqPass | null;
  private readonly nibbles: Uint8Array;

  constructor(
    readonly similarity: VectorSimilarityFunction,
    readonly dims: number,
    private readonly kernels: Kernels | null = null,
  ) {
    this.scratch = kernels ? null : new Float32Array(dims);
    this.pass = kernels ? new KernelOsqPass(kernels, dims) : null;
    this.quantizer = new OptimizedScalarQuantizer(similarity, DEFAULT_LAMBDA, DEFAULT_ITERS, this.pass);
    this.nibbles = new Uint8Array(discretize(dims, 8));
  }

  /** Frees the kernel-memory scratch (kernels only). */
  release(): void {
    this.pass?.release();
  }

  /** The query scratch: in kernel memory with kernels. */
  private scratchVector(): Float32Array {
    return this.scratch ?? this.pass!.vector();
  }

  /**
   * Writes the query code into `planes` (the encoding's queryCodeBytes: for 1 and 2 doc bits the
   * 4 bit planes of codeBytes each) and returns the corrections. A segment whose codes were
   * rotated needs its rotation here: the query is rotated after COSINE normalisation, before
   * quantization, as the docs were.
   */
  quantize(
    query: Float32Array,
    centroid: Float32Array,
    planes: Uint8Array,
    encoding: ScalarEncodingInfo = SINGLE_BIT_QUERY_NIBBLE,
    rotation: RandomizedHadamard | null = null,
  ): QuantizedQuery {
    if (query.length !== this.dims) throw new RangeError(`query has ${query.length} dims, field has ${this.dims}`);
    const scratch = this.scratchVector();
    scratch.set(query);
    if (this.similarity === VectorSimilarityFunction.COSINE) {
      if (!this.kernels) l2normalize(scratch);
      else if (this.kernels.osqNormalize(this.pass!.vectorPtr, this.dims) === 0) throw new RangeError('cannot normalize a zero-length vector');
    }
    if (rotation) rotation.apply(scratch, scratch);
    const r = this.quantizer.scalarQuantize(scratch, this.nibbles, encoding.queryBits, centroid);
    if (encoding === SINGLE_BIT_QUERY_NIBBLE) transposeHalfByte(this.nibbles, planes);
    else packQueryCode(encoding, this.dims, this.nibbles, planes);
    return {
      planes,
      lower: r.lowerInterval,
      upper: r.upperInterval,
      additionalCorrection: r.additionalCorrection,
      componentSum: r.quantizedComponentSum,
    };
  }
}
