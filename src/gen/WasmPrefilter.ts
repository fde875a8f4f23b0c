import { Kernels } from '../../segments/kernels/Kernels.js';
import type { GenSimilarity } from './DatasetSpec.js';
import { dot1, keyMode, type PreparedQueries, TopK, toKey } from './GroundTruth.js';

let threadKernels: Promise<Kernels | null> | undefined;

/** This thread's kernels instance for ground truth, or null when wasm SIMD is unavailable. */
export function groundTruthKernels(): Promise<Kernels | null> {
  threadKernels ??= Kernels.load({ initialBytes: 16 << 20 }).catch(() => null);
  return threadKernels;
}

/**
 * Exact top-k at SIMD speed: the wasm `dotBatch` (float32, SIMD lane order) scores a block of
 * docs against all queries, and only pairs that can still be in the exact top-k are re-scored
 * with the sequential float64 dot product the pure-JS path uses. The result is therefore
 * identical to the float64 brute force (same keys, same tie rule), whatever order the kernel
 * sums in.
 *
 * Bound: a float32 dot product summed in any order has |error| <= gamma * sum|q_i d_i|
 * <= gamma |q| |d| (Cauchy-Schwarz), gamma = (D+2)u / (1 - (D+2)u), u = 2^-24; we use twice that.
 * So a doc's exact key lies in [approx - b, approx + b]. Per query we keep, besides the exact
 * top-k, a top-k of approximate keys: its k-th key t minus the largest bound seen is a lower
 * bound on the final exact k-th key, as is the exact top-k's own threshold. A doc whose
 * approx + b is below that lower bound cannot make the top-k. Survivors of a block are re-checked
 * against the bound as it stood at the end of the block, then re-scored four at a time (four
 * independent float64 chains, each summed in the same order as the JS path) and offered.
 */
export class WasmPrefilter {
  private readonly qPtr: number;
  private readonly dPtr: number;
  private readonly oPtr: number;
  private readonly gamma: number;
  private readonly mode: number;
  private readonly approxTop: TopK;
  /** Per query: the largest bound of any doc offered to approxTop (bounds t - b on the k-th key). */
  private readonly maxBound: Float64Array;
  private readonly docNorms: Float64Array;
  private readonly invDocNorms: Float64Array;
  private readonly docSquaredNorms: Float64Array;
  private readonly candidates: Int32Array;
  private readonly candidateUpper: Float64Array;
  private readonly exact = new Float64Array(4);
  private released = false;
  /** Pairs re-scored in float64 so far. */
  rescored = 0;

  constructor(
    private readonly kernels: Kernels,
    private readonly queries: PreparedQueries,
    readonly maxDocs: number,
    similarity: GenSimilarity,
    k: number,
  ) {
    const { count: Q, dim: D } = queries;
    this.qPtr = kernels.alloc(Q * D * 4);
    this.dPtr = kernels.alloc(maxDocs * D * 4);
    this.oPtr = kernels.alloc(Q * maxDocs * 4);
    kernels.f32().set(queries.vectors.subarray(0, Q * D), this.qPtr >>> 2);
    const u = 2 ** -24;
    this.gamma = (2 * ((D + 2) * u)) / (1 - (D + 2) * u);
    this.mode = keyMode(similarity);
    this.approxTop = new TopK(Q, k);
    this.maxBound = new Float64Array(Q);
    this.docNorms = new Float64Array(maxDocs);
    this.invDocNorms = new Float64Array(maxDocs);
    this.docSquaredNorms = new Float64Array(maxDocs);
    this.candidates = new Int32Array(maxDocs);
    this.candidateUpper = new Float64Array(maxDocs);
  }

  /** Scores `count` <= maxDocs docs (rows at docOffset + r*docStride, ids firstId + r) into `top`. */
  score(docs: Float32Array, docOffset: number, docStride: number, count: number, firstId: number, top: TopK): void {
    const { kernels, queries, mode, gamma, docNorms, invDocNorms, docSquaredNorms: dn2, approxTop, maxBound, candidates, candidateUpper, exact } = this;
    const { count: Q, dim: D, squaredNorms: qn2, vectors: qv } = queries;
    if (count > this.maxDocs) throw new RangeError(`block of ${count} docs exceeds ${this.maxDocs}`);
    let f32 = kernels.f32();
    const dBase = this.dPtr >>> 2;
    for (let r = 0; r < count; r++) {
      const o = docOffset + r * docStride;
      f32.set(docs.subarray(o, o + D), dBase + r * D);
      let s = 0;
      for (let i = 0; i < D; i++) s += docs[o + i] * docs[o + i];
      dn2[r] = s;
      docNorms[r] = Math.sqrt(s);
      invDocNorms[r] = 1 / docNorms[r];
    }
    kernels.dotBatch(this.qPtr, Q, this.dPtr, count, D, this.oPtr);
    f32 = kernels.f32();
    const exactThresholds = top.thresholds;
    const approxThresholds = approxTop.thresholds;
    let rescored = 0;
    for (let q = 0; q < Q; q++) {
      const ob = (this.oPtr >>> 2) + q * count;
      const qn = Math.sqrt(qn2[q]);
      const invQn = 1 / qn;
      // Bound factor: the bound of doc r is g (cosine) or g * |d_r|.
      const g = mode === 1 ? gamma : mode === 0 ? gamma * qn : 2 * gamma * qn;
      let lower = Math.max(exactThresholds[q], approxThresholds[q] - maxBound[q]);
      let n = 0;
      for (let r = 0; r < count; r++) {
        const s = f32[ob + r];
        let approx: number;
        let bound: number;
        if (mode === 1) {
          approx = s * invQn * invDocNorms[r];
          bound = g;
        } else if (mode === 0) {
          approx = s;
          bound = g * docNorms[r];
        } else {
          approx = 2 * s - dn2[r];
          bound = g * docNorms[r];
        }
        const upper = approx + bound;
        // NaN (zero vectors under cosine) is kept: the exact path ranks it.
        if (upper < lower) continue;
        candidates[n] = r;
        candidateUpper[n] = upper;
        n++;
        if (bound > maxBound[q]) maxBound[q] = bound;
        approxTop.offer(q, approx, firstId + r);
        lower = Math.max(exactThresholds[q], approxThresholds[q] - maxBound[q]);
      }
      // Re-check against the bound as it stands after the whole block, then score exactly.
      let m = 0;
      for (let c = 0; c < n; c++) {
        if (!(candidateUpper[c] < lower)) candidates[m++] = candidates[c];
      }
      const qOff = q * D;
      let c = 0;
      for (; c + 3 < m; c += 4) {
        const r0 = candidates[c],
          r1 = candidates[c + 1],
          r2 = candidates[c + 2],
          r3 = candidates[c + 3];
        dot1x4(qv, qOff, docs, docOffset + r0 * docStride, docOffset + r1 * docStride, docOffset + r2 * docStride, docOffset + r3 * docStride, D, exact);
        top.offer(q, toKey(mode, exact[0], qn2[q], dn2[r0]), firstId + r0);
        top.offer(q, toKey(mode, exact[1], qn2[q], dn2[r1]), firstId + r1);
        top.offer(q, toKey(mode, exact[2], qn2[q], dn2[r2]), firstId + r2);
        top.offer(q, toKey(mode, exact[3], qn2[q], dn2[r3]), firstId + r3);
      }
      for (; c < m; c++) {
        const r = candidates[c];
        top.offer(q, toKey(mode, dot1(qv, qOff, docs, docOffset + r * docStride, D), qn2[q], dn2[r]), firstId + r);
      }
      rescored += m;
    }
    this.rescored += rescored;
  }

  /** Frees the instance memory this scorer allocated. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.kernels.free(this.oPtr);
    this.kernels.free(this.dPtr);
    this.kernels.free(this.qPtr);
  }
}

/** Four float64 dot products of one query with four docs: four independent chains, each sequential. */
function dot1x4(q: Float32Array, qOff: number, docs: Float32Array, d0: number, d1: number, d2: number, d3: number, D: number, out: Float64Array): void {
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  for (let i = 0; i < D; i++) {
    const x = q[qOff + i];
    s0 += x * docs[d0 + i];
    s1 += x * docs[d1 + i];
    s2 += x * docs[d2 + i];
    s3 += x * docs[d3 + i];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}
