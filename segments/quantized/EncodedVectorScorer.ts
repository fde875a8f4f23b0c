import type { RandomVectorScorer, RandomVectorScorerSupplier, UpdateableRandomVectorScorer } from '../hnsw/RandomVectorScorer.js';
import { osqCenteredDot, osqFinalScore, osqScale } from '../kernels/JsKernels.js';
import type { OsqQueryCorrections } from '../kernels/OsqEstimator.js';
import { codeDot } from './ScalarCodes.js';
import type { ScalarEncodingInfo } from './ScalarEncodings.js';
import { CORRECTIONS_BYTES } from './ScalarQuantizedVectorsFormat.js';

/** A query quantized for one encoding: its packed code (queryCodeBytes) and corrections. */
export interface EncodedQuery extends OsqQueryCorrections {
  readonly code: Uint8Array;
}

/**
 * Lucene's estimator for any ScalarEncoding, in plain JS over records on the heap: the reference
 * the wasm kernels are checked against, and the scorer for encodings without a kernel. Float32
 * arithmetic is emulated step by step (Math.fround), in Lucene's order, so scores are exact.
 */
export class EncodedVectorScorer implements RandomVectorScorer {
  readonly maxOrd: number;
  private readonly view: DataView;
  private readonly docScale: number;
  private readonly queryScale: number;
  protected readonly recordBytes: number;
  protected readonly codeBytes: number;

  constructor(
    readonly encoding: ScalarEncodingInfo,
    readonly dims: number,
    readonly records: Uint8Array,
    public query: EncodedQuery,
  ) {
    this.codeBytes = encoding.docCodeBytes(dims);
    this.recordBytes = this.codeBytes + CORRECTIONS_BYTES;
    this.maxOrd = Math.floor(records.length / this.recordBytes);
    this.view = new DataView(records.buffer, records.byteOffset, records.byteLength);
    this.docScale = osqScale(encoding.docBits);
    this.queryScale = osqScale(encoding.queryBits);
  }

  score(ord: number): number {
    const off = ord * this.recordBytes;
    const q = this.query;
    const qc = codeDot(this.encoding, this.dims, q.code, 0, this.records, off);
    const c = off + this.codeBytes;
    const v = this.view;
    const s = osqCenteredDot(q, qc, v.getFloat32(c, true), v.getFloat32(c + 4, true), v.getInt32(c + 12, true), this.docScale, this.queryScale);
    return osqFinalScore(q, s, v.getFloat32(c + 8, true));
  }

  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.score(ords[i]);
  }

  scoreRange(from: number, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.score(from + i);
  }
}

/**
 * Doc-vs-doc scoring for graph construction (Lucene's asymmetric path): the query is the doc's own
 * quantization at the encoding's query bits (queryCodeBytes + 16 bytes per doc).
 */
export class EncodedScorerSupplier implements RandomVectorScorerSupplier {
  readonly maxOrd: number;

  constructor(
    readonly encoding: ScalarEncodingInfo,
    readonly dims: number,
    readonly records: Uint8Array,
    readonly queryRecords: Uint8Array,
    readonly similarity: number,
    readonly centroidDP: number,
  ) {
    this.maxOrd = Math.floor(records.length / (encoding.docCodeBytes(dims) + CORRECTIONS_BYTES));
  }

  scorer(): UpdateableRandomVectorScorer {
    const s = this;
    const qBytes = this.encoding.queryCodeBytes(this.dims);
    const qView = new DataView(this.queryRecords.buffer, this.queryRecords.byteOffset, this.queryRecords.byteLength);
    const scorer = new EncodedVectorScorer(this.encoding, this.dims, this.records, queryAt(0));
    function queryAt(ord: number): EncodedQuery {
      const off = ord * (qBytes + CORRECTIONS_BYTES);
      const c = off + qBytes;
      return {
        code: s.queryRecords.subarray(off, c),
        lower: qView.getFloat32(c, true),
        upper: qView.getFloat32(c + 4, true),
        additionalCorrection: qView.getFloat32(c + 8, true),
        componentSum: qView.getInt32(c + 12, true),
        dims: s.dims,
        similarity: s.similarity,
        centroidDP: s.centroidDP,
      };
    }
    return Object.assign(scorer, {
      setScoringOrdinal(ord: number): void {
        scorer.query = queryAt(ord);
      },
    });
  }

  copy(): RandomVectorScorerSupplier {
    return this;
  }
}
