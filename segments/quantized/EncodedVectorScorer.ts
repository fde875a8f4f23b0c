import type { RandomVectorScorer, RandomVectorScorerSupplier, UpdateableRandomVectorScorer } from '../hnsw/RandomVectorScorer.js';
import { osqCenteredDot, osqFinalScore, osqScale } from '../kernels/JsKernels.js';
import type { OsqQueryCorrections } from '../kernels/OsqEstimator.js';
import type { EncodedKernelQuery } from '../kernels/Kernels.js';
import type { ResidentRecords } from './BinaryQuantizedScorer.js';
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

/**
 * The multi-bit estimator in wasm (Kernels.scoreEncoded) over records resident in a kernels
 * instance's memory, with the query code at `query.codePtr` there: what the first phase uses for
 * 2-, 4-, 7- and 8-bit segments. Ords and scores cross through per-scorer scratch, as in
 * BinaryQuantizedScorer.
 */
export class EncodedQuantizedScorer implements RandomVectorScorer {
  readonly maxOrd: number;
  private capacity = 0;
  private ordsPtr = 0;
  private outPtr = 0;

  constructor(
    readonly encoding: ScalarEncodingInfo,
    readonly records: ResidentRecords,
    public query: EncodedKernelQuery,
  ) {
    if (encoding.docBits === 1) throw new RangeError('EncodedQuantizedScorer scores the multi-bit encodings; 1-bit codes use BinaryQuantizedScorer');
    this.maxOrd = records.count;
    this.ensure(64);
  }

  /** Allocates now everything scoring up to `n` ords per call needs. */
  reserve(n: number): void {
    this.ensure(n);
    this.records.kernels.reserveOsqScratch((this.query.dims + 7) >> 3);
  }

  private ensure(n: number): void {
    if (n <= this.capacity) return;
    const k = this.records.kernels;
    if (this.capacity > 0) {
      k.free(this.ordsPtr);
      k.free(this.outPtr);
    }
    this.capacity = Math.max(n, this.capacity * 2);
    this.ordsPtr = k.alloc(4 * this.capacity);
    this.outPtr = k.alloc(4 * this.capacity);
  }

  private run(ordsPtr: number, start: number, n: number): void {
    const r = this.records;
    r.kernels.scoreEncoded(this.query, this.encoding.docBits as 2 | 4 | 7 | 8, this.query.dims, r.codeBytes, r.recordsPtr, r.recordBytes, ordsPtr, start, n, this.outPtr);
  }

  score(ord: number): number {
    this.run(0, ord, 1);
    return this.records.kernels.f32()[this.outPtr >>> 2];
  }

  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    if (n === 0) return;
    this.ensure(n);
    const i32 = this.records.kernels.i32();
    const base = this.ordsPtr >>> 2;
    for (let i = 0; i < n; i++) i32[base + i] = ords[i];
    this.run(this.ordsPtr, 0, n);
    this.copyOut(n, out);
  }

  scoreRange(from: number, n: number, out: Float32Array): void {
    if (n === 0) return;
    this.ensure(n);
    this.run(0, from, n);
    this.copyOut(n, out);
  }

  private copyOut(n: number, out: Float32Array): void {
    const f32 = this.records.kernels.f32();
    const base = this.outPtr >>> 2;
    for (let i = 0; i < n; i++) out[i] = f32[base + i];
  }

  release(): void {
    if (this.capacity === 0) return;
    this.records.kernels.free(this.ordsPtr);
    this.records.kernels.free(this.outPtr);
    this.capacity = 0;
  }
}

/**
 * Doc-vs-doc scoring for graph construction over multi-bit records, in wasm: EncodedScorerSupplier's
 * scores (bit for bit) from Kernels.scoreEncoded. The doc records and the docs' own query-bit
 * quantizations (queryCodeBytes + 16 bytes each) live in the kernels' memory; the corrections are
 * read from the heap copy of the query records, so a record need not be 4-byte aligned. With the
 * JS estimator a 60k-doc Fashion-MNIST 4-bit graph took over 20 minutes; this is the first phase's
 * kernel (4-bit: ~308 ns per random doc at 1024 dims, 2x the 1-bit kernel; bench:kernels), and a
 * 40k x 1024 4-bit build takes 31 s against 29 s at 1 bit.
 */
export class EncodedQuantizedScorerSupplier implements RandomVectorScorerSupplier {
  readonly maxOrd: number;
  readonly queryRecordBytes: number;
  readonly queryCodeBytes: number;
  readonly queryView: DataView;

  constructor(
    readonly encoding: ScalarEncodingInfo,
    readonly records: ResidentRecords,
    /** Pointer to the `count` query records (the heap copy below) in the kernels' memory. */
    readonly queryRecordsPtr: number,
    queryRecords: Uint8Array,
    readonly dims: number,
    readonly similarity: number,
    readonly centroidDP: number,
  ) {
    if (encoding.docBits === 1) throw new RangeError('EncodedQuantizedScorerSupplier scores the multi-bit encodings; 1-bit codes use BinaryQuantizedScorerSupplier');
    this.maxOrd = records.count;
    this.queryCodeBytes = encoding.queryCodeBytes(dims);
    this.queryRecordBytes = this.queryCodeBytes + CORRECTIONS_BYTES;
    if (queryRecords.length !== records.count * this.queryRecordBytes) {
      throw new RangeError(`${records.count} docs need ${records.count * this.queryRecordBytes} bytes of query records, got ${queryRecords.length}`);
    }
    this.queryView = new DataView(queryRecords.buffer, queryRecords.byteOffset, queryRecords.byteLength);
  }

  scorer(): UpdateableRandomVectorScorer {
    return new OrdinalEncodedScorer(this);
  }

  copy(): RandomVectorScorerSupplier {
    return this;
  }
}

class OrdinalEncodedScorer extends EncodedQuantizedScorer implements UpdateableRandomVectorScorer {
  constructor(private readonly supplier: EncodedQuantizedScorerSupplier) {
    super(supplier.encoding, supplier.records, {
      codePtr: 0,
      lower: 0,
      upper: 0,
      additionalCorrection: 0,
      componentSum: 0,
      dims: supplier.dims,
      similarity: supplier.similarity,
      centroidDP: supplier.centroidDP,
    });
  }

  setScoringOrdinal(ord: number): void {
    const s = this.supplier;
    const off = ord * s.queryRecordBytes;
    const c = off + s.queryCodeBytes;
    const v = s.queryView;
    // Mutated in place: graph construction moves the scoring ordinal millions of times.
    const q = this.query as { -readonly [K in keyof EncodedKernelQuery]: EncodedKernelQuery[K] };
    q.codePtr = s.queryRecordsPtr + off;
    q.lower = v.getFloat32(c, true);
    q.upper = v.getFloat32(c + 4, true);
    q.additionalCorrection = v.getFloat32(c + 8, true);
    q.componentSum = v.getInt32(c + 12, true);
  }
}
