import { discretize, transposeHalfByte } from '../quantization/BitPacking.js';
import { DEFAULT_ITERS, DEFAULT_LAMBDA, OptimizedScalarQuantizer, type LossAndGridPass } from '../quantization/OptimizedScalarQuantizer.js';
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
  private readonly nibbles: Uint8Array;
  private scratchPtr = 0;
  private view: Float32Array | null = null;

  constructor(
    readonly similarity: VectorSimilarityFunction,
    readonly dims: number,
    private readonly kernels: Kernels | null = null,
  ) {
    this.scratch = kernels ? null : new Float32Array(dims);
    let pass: LossAndGridPass | null = null;
    if (kernels) {
      // One block: the query's floats, the pass's five f64 sums (8-byte aligned), then one code byte per component.
      const gridOffset = (4 * dims + 7) & ~7;
      const codesOffset = gridOffset + 40;
      this.scratchPtr = kernels.alloc(codesOffset + dims, 16);
      const gridPtr = this.scratchPtr + gridOffset;
      const codesPtr = this.scratchPtr + codesOffset;
      // Views over kernel memory, re-made when it has grown (a new buffer).
      let sums: Float64Array | null = null;
      let codes: Uint8Array | null = null;
      pass = {
        lossAndGrid: (v, a, b, points, norm2, lambda, grid) => {
          const loss = kernels.osqLossAndGrid(v, a, b, points, norm2, lambda, gridPtr);
          if (sums === null || sums.buffer !== kernels.memory.buffer) sums = new Float64Array(kernels.memory.buffer, gridPtr, 5);
          for (let i = 0; i < 5; i++) grid[i] = sums[i];
          return loss;
        },
        roundToGrid: (v, a, b, step, dest) => {
          // v is the scratch of `dims` floats; dest (the nibbles) holds at least dims bytes.
          const sum = kernels.osqCodes(v.byteOffset, dims, a, b, step, codesPtr);
          if (codes === null || codes.buffer !== kernels.memory.buffer) codes = new Uint8Array(kernels.memory.buffer, codesPtr, dims);
          dest.set(codes);
          return sum;
        },
      };
    }
    this.quantizer = new OptimizedScalarQuantizer(similarity, DEFAULT_LAMBDA, DEFAULT_ITERS, pass);
    this.nibbles = new Uint8Array(discretize(dims, 8));
  }

  /** Frees the kernel-memory scratch (kernels only). */
  release(): void {
    if (this.kernels && this.scratchPtr !== 0) this.kernels.free(this.scratchPtr);
    this.scratchPtr = 0;
    this.view = null;
  }

  /** The query scratch; in kernel memory, a view re-made only when the memory has grown. */
  private scratchVector(): Float32Array {
    if (this.scratch) return this.scratch;
    if (this.scratchPtr === 0) throw new Error('QueryQuantizer: used after release()');
    // Through u8(): the kernels then know the buffer object (a shared memory's changes on growth).
    const memory = this.kernels!.u8().buffer;
    if (this.view === null || this.view.buffer !== memory) this.view = new Float32Array(memory, this.scratchPtr, this.dims);
    return this.view;
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
      else if (this.kernels.osqNormalize(this.scratchPtr, this.dims) === 0) throw new RangeError('cannot normalize a zero-length vector');
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
