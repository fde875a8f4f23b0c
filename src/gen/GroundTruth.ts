import type { GenSimilarity } from './DatasetSpec.js';

/**
 * Exact k-nearest-neighbour ground truth by brute force.
 *
 * Ranking: every (query, doc) pair gets a float64 key computed from the float32 inputs (products
 * of two float32 are exact in float64; sums are sequential over the dimensions, the same for
 * every pair whichever code path scores it), higher is better:
 * - dot_product, max_inner_product: q.d
 * - cosine: q.d / (|q| |d|)   (a zero vector scores -Infinity)
 * - euclidean: 2 q.d - |d|^2  (= |q|^2 - |q-d|^2, ranks like the negated squared distance)
 * Ties (equal keys) go to the lower doc id. The reported score is the key, except for euclidean
 * where it is the negated squared distance -|q-d|^2.
 */
export interface TopKResult {
  readonly queries: number;
  /** Entries per query (min(k, docs seen)). */
  readonly k: number;
  /** queries x k doc ids, best first. */
  readonly ids: Int32Array;
  /** queries x k scores, aligned with ids. */
  readonly scores: Float64Array;
}

/** Per-query bounded heaps in flat arrays. The root of each heap is its worst entry. */
export class TopK {
  readonly queries: number;
  readonly k: number;
  private readonly heapScores: Float64Array;
  private readonly heapIds: Int32Array;
  private readonly sizes: Int32Array;
  /** Root score when a heap is full, else -Infinity: most candidates fail `score < threshold`. */
  readonly thresholds: Float64Array;

  constructor(queries: number, k: number) {
    if (!Number.isInteger(k) || k <= 0) throw new RangeError(`k must be a positive integer, got ${k}`);
    this.queries = queries;
    this.k = k;
    this.heapScores = new Float64Array(queries * k);
    this.heapIds = new Int32Array(queries * k);
    this.sizes = new Int32Array(queries);
    this.thresholds = new Float64Array(queries).fill(-Infinity);
  }

  /** Offers (score, id) to query q. NaN counts as -Infinity. */
  offer(q: number, score: number, id: number): void {
    if (Number.isNaN(score)) score = -Infinity;
    if (score < this.thresholds[q]) return;
    const k = this.k;
    const base = q * k;
    const hs = this.heapScores;
    const hi = this.heapIds;
    let size = this.sizes[q];
    if (size < k) {
      // Sift up.
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const ps = hs[base + parent];
        const pid = hi[base + parent];
        // Stop when the parent is worse than or equal to the new entry.
        if (ps < score || (ps === score && pid > id)) break;
        hs[base + i] = ps;
        hi[base + i] = pid;
        i = parent;
      }
      hs[base + i] = score;
      hi[base + i] = id;
      this.sizes[q] = size;
      if (size === k) this.thresholds[q] = hs[base];
      return;
    }
    const rootScore = hs[base];
    // Better than the worst: higher score, or equal score and lower id.
    if (!(score > rootScore || (score === rootScore && id < hi[base]))) return;
    // Replace the root and sift down.
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= k) break;
      let c = l;
      const r = l + 1;
      if (r < k) {
        const ls = hs[base + l],
          rs = hs[base + r];
        // Pick the worse child.
        if (rs < ls || (rs === ls && hi[base + r] > hi[base + l])) c = r;
      }
      const cs = hs[base + c];
      const cid = hi[base + c];
      if (score < cs || (score === cs && id > cid)) break;
      hs[base + i] = cs;
      hi[base + i] = cid;
      i = c;
    }
    hs[base + i] = score;
    hi[base + i] = id;
    this.thresholds[q] = hs[base];
  }

  /** Offers every entry of another partial result (e.g. one worker's range). */
  merge(other: TopKResult): void {
    if (other.queries !== this.queries) throw new RangeError(`cannot merge ${other.queries} queries into ${this.queries}`);
    for (let q = 0; q < other.queries; q++) {
      for (let j = 0; j < other.k; j++) {
        const id = other.ids[q * other.k + j];
        if (id < 0) continue;
        this.offer(q, other.scores[q * other.k + j], id);
      }
    }
  }

  /** Entries held for query q (k once full). */
  size(q: number): number {
    return this.sizes[q];
  }

  /**
   * Sorted result with rows of their own length: per query, best first, sizes[q] entries, the rest
   * of its k slots id -1 (which merge() skips) and score -Infinity.
   */
  resultRows(): TopKResult & { readonly sizes: Int32Array } {
    const { k } = this;
    const ids = new Int32Array(this.queries * k).fill(-1);
    const scores = new Float64Array(this.queries * k).fill(-Infinity);
    const order: number[] = [];
    const hs = this.heapScores,
      hi = this.heapIds;
    for (let q = 0; q < this.queries; q++) {
      const base = q * k;
      const size = this.sizes[q];
      order.length = 0;
      for (let j = 0; j < size; j++) order.push(j);
      order.sort((a, b) => hs[base + b] - hs[base + a] || hi[base + a] - hi[base + b]);
      for (let j = 0; j < size; j++) {
        ids[base + j] = hi[base + order[j]];
        scores[base + j] = hs[base + order[j]];
      }
    }
    return { queries: this.queries, k, ids, scores, sizes: this.sizes.slice() };
  }

  /** Sorted result: per query, best first (score desc, id asc). */
  result(): TopKResult {
    let kOut = this.k;
    for (let q = 0; q < this.queries; q++) kOut = Math.min(kOut, this.sizes[q]);
    const ids = new Int32Array(this.queries * kOut);
    const scores = new Float64Array(this.queries * kOut);
    const order: number[] = [];
    for (let q = 0; q < this.queries; q++) {
      const base = q * this.k;
      const size = this.sizes[q];
      order.length = 0;
      for (let j = 0; j < size; j++) order.push(j);
      const hs = this.heapScores,
        hi = this.heapIds;
      // Equal infinities subtract to NaN, which is falsy: they fall through to the id order.
      order.sort((a, b) => hs[base + b] - hs[base + a] || hi[base + a] - hi[base + b]);
      for (let j = 0; j < kOut; j++) {
        ids[q * kOut + j] = hi[base + order[j]];
        scores[q * kOut + j] = hs[base + order[j]];
      }
    }
    return { queries: this.queries, k: kOut, ids, scores };
  }
}

/** Squared norms (sequential float64 sums) of `count` rows at offset + r*stride. */
export function squaredNorms(data: Float32Array, offset: number, stride: number, count: number, dim: number, out: Float64Array): void {
  for (let r = 0; r < count; r++) {
    const o = offset + r * stride;
    let s = 0;
    for (let i = 0; i < dim; i++) s += data[o + i] * data[o + i];
    out[r] = s;
  }
}

/** Queries prepared once for scoring: their squared norms. */
export interface PreparedQueries {
  readonly vectors: Float32Array;
  readonly count: number;
  readonly dim: number;
  readonly squaredNorms: Float64Array;
}

export function prepareQueries(vectors: Float32Array, dim: number): PreparedQueries {
  const count = Math.floor(vectors.length / dim);
  const norms = new Float64Array(count);
  squaredNorms(vectors, 0, dim, count, dim, norms);
  return { vectors, count, dim, squaredNorms: norms };
}

/** Scratch for scoreDocs, reusable across calls. */
export class ScoreScratch {
  docSquaredNorms = new Float64Array(0);
  readonly dots = new Float64Array(8);
  ensure(docs: number): void {
    if (this.docSquaredNorms.length < docs) this.docSquaredNorms = new Float64Array(docs);
  }
}

/** Query rows per cache block: about 256 KiB of float32 queries. */
function queryBlock(dim: number): number {
  return Math.max(4, Math.floor(65536 / dim) & ~3);
}

/**
 * Scores `count` docs (rows at docOffset + r*docStride of `docs`, ids firstId + r) against all
 * queries and offers them to `top`. Blocks of queries (kept in cache) x pairs of docs, with a
 * 4 queries x 2 docs kernel (8 independent float64 accumulators).
 */
export function scoreDocs(
  queries: PreparedQueries,
  docs: Float32Array,
  docOffset: number,
  docStride: number,
  count: number,
  firstId: number,
  similarity: GenSimilarity,
  top: TopK,
  scratch = new ScoreScratch(),
): void {
  const { vectors: qv, count: Q, dim: D, squaredNorms: qn2 } = queries;
  scratch.ensure(count);
  const dn2 = scratch.docSquaredNorms;
  squaredNorms(docs, docOffset, docStride, count, D, dn2);
  const dots = scratch.dots;
  const qb = queryBlock(D);
  const thresholds = top.thresholds;
  const mode = keyMode(similarity);
  for (let q0 = 0; q0 < Q; q0 += qb) {
    const q1 = Math.min(Q, q0 + qb);
    const q4end = q0 + ((q1 - q0) & ~3);
    let r = 0;
    for (; r + 1 < count; r += 2) {
      const d0 = docOffset + r * docStride;
      const d1 = d0 + docStride;
      let q = q0;
      for (; q < q4end; q += 4) {
        dot4x2(qv, q * D, D, docs, d0, d1, dots);
        for (let a = 0; a < 4; a++) {
          for (let b = 0; b < 2; b++) {
            const key = toKey(mode, dots[a * 2 + b], qn2[q + a], dn2[r + b]);
            if (key >= thresholds[q + a] || Number.isNaN(key)) top.offer(q + a, key, firstId + r + b);
          }
        }
      }
      for (; q < q1; q++) {
        for (let b = 0; b < 2; b++) {
          const key = toKey(mode, dot1(qv, q * D, docs, d0 + b * docStride, D), qn2[q], dn2[r + b]);
          if (key >= thresholds[q] || Number.isNaN(key)) top.offer(q, key, firstId + r + b);
        }
      }
    }
    if (r < count) {
      const d0 = docOffset + r * docStride;
      for (let q = q0; q < q1; q++) {
        const key = toKey(mode, dot1(qv, q * D, docs, d0, D), qn2[q], dn2[r]);
        if (key >= thresholds[q] || Number.isNaN(key)) top.offer(q, key, firstId + r);
      }
    }
  }
}

/** Ranking key from a float64 dot product: mode 0 dot, 1 cosine, 2 euclidean (see the top of the file). */
export function toKey(mode: number, dot: number, qn2: number, dn2: number): number {
  if (mode === 0) return dot;
  if (mode === 1) return qn2 > 0 && dn2 > 0 ? dot / Math.sqrt(qn2 * dn2) : -Infinity;
  return 2 * dot - dn2;
}

export function keyMode(similarity: GenSimilarity): number {
  return similarity === 'euclidean' ? 2 : similarity === 'cosine' ? 1 : 0;
}

/** Four queries (rows qOff, qOff+D, ...) against two docs; each sum sequential over i. */
function dot4x2(q: Float32Array, qOff: number, D: number, docs: Float32Array, d0: number, d1: number, out: Float64Array): void {
  const a = qOff,
    b = a + D,
    c = b + D,
    e = c + D;
  let s00 = 0,
    s01 = 0,
    s10 = 0,
    s11 = 0,
    s20 = 0,
    s21 = 0,
    s30 = 0,
    s31 = 0;
  for (let i = 0; i < D; i++) {
    const x0 = docs[d0 + i],
      x1 = docs[d1 + i];
    const y0 = q[a + i],
      y1 = q[b + i],
      y2 = q[c + i],
      y3 = q[e + i];
    s00 += y0 * x0;
    s01 += y0 * x1;
    s10 += y1 * x0;
    s11 += y1 * x1;
    s20 += y2 * x0;
    s21 += y2 * x1;
    s30 += y3 * x0;
    s31 += y3 * x1;
  }
  out[0] = s00;
  out[1] = s01;
  out[2] = s10;
  out[3] = s11;
  out[4] = s20;
  out[5] = s21;
  out[6] = s30;
  out[7] = s31;
}

/** Sequential float64 dot product: the exact sum every path uses for a (query, doc) pair. */
export function dot1(q: Float32Array, qOff: number, docs: Float32Array, dOff: number, D: number): number {
  let s = 0;
  for (let i = 0; i < D; i++) s += q[qOff + i] * docs[dOff + i];
  return s;
}

/** Converts ranking keys to reported scores in place (euclidean: -|q-d|^2). */
export function finalizeScores(result: TopKResult, queries: PreparedQueries, similarity: GenSimilarity): TopKResult {
  if (similarity === 'euclidean') {
    for (let q = 0; q < result.queries; q++) {
      for (let j = 0; j < result.k; j++) result.scores[q * result.k + j] -= queries.squaredNorms[q];
    }
  }
  return result;
}

/**
 * Exact top-k of `base` (n x dim, ids 0..n-1) for every query, in process. For tests and small
 * data; big data goes through generateGroundTruth on the executor.
 */
export function groundTruth(base: Float32Array, queries: Float32Array, dim: number, k: number, similarity: GenSimilarity): TopKResult {
  const n = Math.floor(base.length / dim);
  const prepared = prepareQueries(queries, dim);
  const top = new TopK(prepared.count, Math.min(k, Math.max(1, n)));
  const scratch = new ScoreScratch();
  const block = 4096;
  for (let first = 0; first < n; first += block) {
    scoreDocs(prepared, base, first * dim, dim, Math.min(block, n - first), first, similarity, top, scratch);
  }
  return finalizeScores(top.result(), prepared, similarity);
}

/** Rows of a flat array (e.g. TopKResult.ids or an .ivecs file) as subarrays. */
export function rowsOf<T extends Int32Array | Float32Array | Float64Array>(flat: T, width: number): T[] {
  const rows: T[] = [];
  for (let o = 0; o < flat.length; o += width) rows.push(flat.subarray(o, o + width) as T);
  return rows;
}

/**
 * Mean over queries of |results[q][0..k) ∩ truth[q][0..k)| / k. Ids compare as strings, so
 * search hits' string ids and ground-truth row numbers can be mixed.
 */
export function recallAtK(results: readonly ArrayLike<number | string>[], truth: readonly ArrayLike<number | string>[], k: number): number {
  if (results.length !== truth.length) throw new RangeError(`results for ${results.length} queries, truth for ${truth.length}`);
  if (results.length === 0) return 0;
  let sum = 0;
  for (let q = 0; q < results.length; q++) {
    const t = truth[q];
    if (t.length < k) throw new RangeError(`truth for query ${q} has ${t.length} ids, fewer than k = ${k}`);
    const want = new Set<string>();
    for (let j = 0; j < k; j++) want.add(String(t[j]));
    const r = results[q];
    let hits = 0;
    const seen = new Set<string>();
    for (let j = 0; j < Math.min(k, r.length); j++) {
      const id = String(r[j]);
      if (want.has(id) && !seen.has(id)) hits++;
      seen.add(id);
    }
    sum += hits / k;
  }
  return sum / results.length;
}
