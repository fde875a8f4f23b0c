import type { OsqQueryCorrections } from './OsqEstimator.js';
import { dotProduct as dot, squareDistance, cosine, cosineParts } from '../util/VectorUtil.js';

/**
 * Plain-JS reference versions of the wasm kernels, over ordinary typed arrays.
 *
 * The OSQ estimator emulates float32 with Math.fround after every +, −, ×, ÷ (double-then-round
 * is exact for these on float32 inputs), so it is bit-identical to the wasm kernel and to
 * Lucene's float code. The fp32 sums follow Lucene's scalar order (four stride-4 accumulators
 * above 32 dims, two for cosine; see segments/util/VectorUtil.ts), which differs from the wasm SIMD order:
 * compare those with a relative tolerance.
 */

/** A 4-bit query for the JS estimator: planes[p * codeBytes + i] is byte i of bit plane p. */
export interface JsOsqQuery extends OsqQueryCorrections {
  readonly planes: Uint8Array;
}

const f = Math.fround;
/** Lucene's 4-bit scale 1f / 15f, as a float32. */
export const QUERY_SCALE_4BIT = f(1 / 15);
/** Lucene's scale for b bits, 1f / (2^b - 1), as a float32 (1 for one bit). */
export function osqScale(bits: number): number {
  return f(1 / ((1 << bits) - 1));
}

const POPCOUNT = new Uint8Array(256);
for (let i = 1; i < 256; i++) POPCOUNT[i] = (i & 1) + POPCOUNT[i >> 1];

/** Σ_{p=0..3} popcount(plane_p AND doc) << p; plane p at q[qOff + p * codeBytes ..], doc at d[dOff ..]. */
export function int4BitDotProduct(q: Uint8Array, qOff: number, d: Uint8Array, dOff: number, codeBytes: number): number {
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  const q1 = qOff + codeBytes,
    q2 = q1 + codeBytes,
    q3 = q2 + codeBytes;
  for (let i = 0; i < codeBytes; i++) {
    const x = d[dOff + i];
    s0 += POPCOUNT[q[qOff + i] & x];
    s1 += POPCOUNT[q[q1 + i] & x];
    s2 += POPCOUNT[q[q2 + i] & x];
    s3 += POPCOUNT[q[q3 + i] & x];
  }
  return s0 + 2 * s1 + 4 * s2 + 8 * s3;
}

/**
 * The estimated centered dot product s ≈ (x − c)·(q − c), float32, in Lucene's order:
 * l_x = u_x − a_x, l_y = (u_y − a_y)·(1/15f), s = a_x·a_y·D + a_y·l_x·x₁ + a_x·l_y·y₁ + l_x·l_y·qc,
 * each product associating left and the four summed left to right, integers converted to float.
 */
export function osqCenteredDot(q: OsqQueryCorrections, qc: number, ax: number, ux: number, x1: number, docScale = 1, queryScale = QUERY_SCALE_4BIT): number {
  const ay = f(q.lower);
  const ly = f(f(f(q.upper) - ay) * queryScale);
  ax = f(ax);
  const lx = f(f(f(ux) - ax) * docScale); // 1-bit: Lucene multiplies by the scale 1f, an identity
  const t1 = f(f(ax * ay) * f(q.dims));
  const t2 = f(f(ay * lx) * f(x1));
  const t3 = f(f(ax * ly) * f(q.componentSum));
  const t4 = f(f(lx * ly) * f(qc));
  return f(f(f(t1 + t2) + t3) + t4);
}

/**
 * Lucene104ScalarQuantizedVectorScorer.quantizedScore's final step (confirmed against
 * apache/lucene lucene/core/.../codecs/lucene104/Lucene104ScalarQuantizedVectorScorer.java,
 * commit eb31ec0): EUCLIDEAN: d² = (corr_y + corr_x) − 2s, score 1/(1 + max(d², 0)); otherwise
 * s' = s + ((corr_y + corr_x) − centroidDP), then MIP: scaleMaxInnerProductScore(s')
 * (s' < 0 → 1/(1 − s'), else s' + 1), DOT_PRODUCT / COSINE: (1 + clamp(s', −1, 1)) / 2.
 */
export function osqFinalScore(q: OsqQueryCorrections, s: number, corrX: number): number {
  const corr = f(f(q.additionalCorrection) + f(corrX));
  if (q.similarity === 0) {
    const d2 = f(corr - f(2 * s));
    return f(1 / f(1 + Math.max(d2, 0)));
  }
  const s2 = f(s + f(corr - f(q.centroidDP)));
  if (q.similarity === 3) return s2 < 0 ? f(1 / f(1 - s2)) : f(s2 + 1);
  return f(f(1 + Math.min(Math.max(s2, -1), 1)) / 2);
}

/** The estimator score of one record at records[off ..] (code, then lower, upper, additionalCorrection, componentSum, LE). */
export function osqScoreRecord(q: JsOsqQuery, records: Uint8Array, view: DataView, off: number, codeBytes: number): number {
  const qc = int4BitDotProduct(q.planes, 0, records, off, codeBytes);
  const c = off + codeBytes;
  const ax = view.getFloat32(c, true);
  const ux = view.getFloat32(c + 4, true);
  const corrX = view.getFloat32(c + 8, true);
  const x1 = view.getInt32(c + 12, true);
  return osqFinalScore(q, osqCenteredDot(q, qc, ax, ux, x1), corrX);
}

function viewOf(a: Uint8Array): DataView {
  return new DataView(a.buffer, a.byteOffset, a.byteLength);
}

/** Scores records ords[0..n) (recordSize bytes each, back to back in `records`) into out[outOff ..]. */
export function scoreOsqOrds(q: JsOsqQuery, records: Uint8Array, recordSize: number, codeBytes: number, ords: ArrayLike<number>, n: number, out: Float32Array, outOff = 0): void {
  const view = viewOf(records);
  for (let k = 0; k < n; k++) out[outOff + k] = osqScoreRecord(q, records, view, ords[k] * recordSize, codeBytes);
}

/** Scores records startOrd .. startOrd + n − 1 into out[outOff ..]. */
export function scoreOsqRange(q: JsOsqQuery, records: Uint8Array, recordSize: number, codeBytes: number, startOrd: number, n: number, out: Float32Array, outOff = 0): void {
  const view = viewOf(records);
  for (let k = 0; k < n; k++) out[outOff + k] = osqScoreRecord(q, records, view, (startOrd + k) * recordSize, codeBytes);
}

// ---- fp32: Lucene's scalar accumulation order, shared with the rest of the project ----------

export { dot, squareDistance, cosine, cosineParts };

/** out[q * nd + d] = dot(queries row q, docs row d). */
export function dotBatch(queries: Float32Array, nq: number, docs: Float32Array, nd: number, dim: number, out: Float32Array): void {
  for (let q = 0; q < nq; q++) {
    for (let d = 0; d < nd; d++) out[q * nd + d] = dot(queries, q * dim, docs, d * dim, dim);
  }
}

/** The reference kernels as one object, mirroring Kernels' method names. */
export const JsKernels = {
  int4BitDotProduct,
  osqCenteredDot,
  osqFinalScore,
  scoreOsqOrds,
  scoreOsqRange,
  dot,
  squareDistance,
  cosine,
  cosineParts,
  dotBatch,
} as const;
