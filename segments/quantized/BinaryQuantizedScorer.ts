import type { Kernels, OsqQuery } from '../kernels/Kernels.js';
import type { RandomVectorScorer, RandomVectorScorerSupplier, UpdateableRandomVectorScorer } from '../hnsw/RandomVectorScorer.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A segment's 1-bit records resident in a kernels instance's memory. */
export interface ResidentRecords {
  readonly kernels: Kernels;
  readonly recordsPtr: number;
  readonly count: number;
  readonly codeBytes: number;
  readonly recordBytes: number;
}

/**
 * Scores 1-bit doc records with Lucene's OSQ estimator against a 4-bit query whose planes live in
 * kernel memory. Ords and scores cross into wasm through per-scorer scratch, so bulk scoring a
 * neighbour list is one kernel call and allocates nothing.
 */
export class BinaryQuantizedScorer implements RandomVectorScorer {
  readonly maxOrd: number;
  protected readonly k: Kernels;
  private capacity = 0;
  private ordsPtr = 0;
  private outPtr = 0;
  query: OsqQuery;

  constructor(
    protected readonly records: ResidentRecords,
    query: OsqQuery,
  ) {
    this.k = records.kernels;
    this.maxOrd = records.count;
    this.query = query;
    this.ensure(64);
  }

  /** Allocates now everything scoring up to `n` ords per call needs: later calls allocate nothing. */
  reserve(n: number): void {
    this.ensure(n);
    this.k.reserveOsqScratch(this.records.codeBytes);
  }

  private ensure(n: number): void {
    if (n <= this.capacity) return;
    if (this.capacity > 0) {
      this.k.free(this.ordsPtr);
      this.k.free(this.outPtr);
    }
    this.capacity = Math.max(n, this.capacity * 2);
    this.ordsPtr = this.k.alloc(4 * this.capacity);
    this.outPtr = this.k.alloc(4 * this.capacity);
  }

  score(ord: number): number {
    this.k.i32()[this.ordsPtr >>> 2] = ord;
    const r = this.records;
    this.k.scoreOsqOrds(this.query, r.recordsPtr, r.recordBytes, r.codeBytes, this.ordsPtr, 1, this.outPtr);
    return this.k.f32()[this.outPtr >>> 2];
  }

  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    if (n === 0) return;
    this.ensure(n);
    const r = this.records;
    // Plain loops, not set(subarray): neighbour lists are short and this runs ~450 times per insert.
    const i32 = this.k.i32();
    const ordsBase = this.ordsPtr >>> 2;
    for (let i = 0; i < n; i++) i32[ordsBase + i] = ords[i];
    this.k.scoreOsqOrds(this.query, r.recordsPtr, r.recordBytes, r.codeBytes, this.ordsPtr, n, this.outPtr);
    this.copyOut(n, out);
  }

  scoreRange(from: number, n: number, out: Float32Array): void {
    if (n === 0) return;
    this.ensure(n);
    const r = this.records;
    this.k.scoreOsqRange(this.query, r.recordsPtr, r.recordBytes, r.codeBytes, from, n, this.outPtr);
    this.copyOut(n, out);
  }

  private copyOut(n: number, out: Float32Array): void {
    const f32 = this.k.f32();
    const base = this.outPtr >>> 2;
    for (let i = 0; i < n; i++) out[i] = f32[base + i];
  }

  release(): void {
    if (this.capacity === 0) return;
    this.k.free(this.ordsPtr);
    this.k.free(this.outPtr);
    this.capacity = 0;
  }
}

/**
 * Doc-vs-doc scoring for graph construction, Lucene's asymmetric 1-bit path: the "query" is a
 * doc's own 4-bit quantization (transposed planes + corrections, one record per doc in kernel
 * memory), the scored side its neighbours' 1-bit codes.
 */
export class BinaryQuantizedScorerSupplier implements RandomVectorScorerSupplier {
  readonly maxOrd: number;
  readonly queryRecordBytes: number;

  constructor(
    readonly records: ResidentRecords,
    /** Pointer to `count` query records of 4 x codeBytes planes + 16 bytes of corrections. */
    readonly queryRecordsPtr: number,
    readonly dims: number,
    readonly similarity: number,
    readonly centroidDP: number,
  ) {
    this.maxOrd = records.count;
    this.queryRecordBytes = 4 * records.codeBytes + 16;
  }

  scorer(): UpdateableRandomVectorScorer {
    return new OrdinalQueryScorer(this);
  }

  copy(): RandomVectorScorerSupplier {
    return this;
  }
}

class OrdinalQueryScorer extends BinaryQuantizedScorer implements UpdateableRandomVectorScorer {
  constructor(private readonly supplier: BinaryQuantizedScorerSupplier) {
    super(supplier.records, {
      planesPtr: 0,
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
    const base = s.queryRecordsPtr + ord * s.queryRecordBytes;
    const c = (base + 4 * s.records.codeBytes) >>> 2; // query records are 4-byte aligned
    const f32 = this.k.f32();
    // Mutated in place: graph construction moves the scoring ordinal millions of times.
    const q = this.query as Mutable<OsqQuery>;
    q.planesPtr = base;
    q.lower = f32[c];
    q.upper = f32[c + 1];
    q.additionalCorrection = f32[c + 2];
    q.componentSum = this.k.i32()[c + 3];
  }
}
