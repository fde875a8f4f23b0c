import type { Kernels } from '../../segments/kernels/Kernels.js';
import type { GenSimilarity } from './DatasetSpec.js';
import { CLUSTERS } from './EmbeddingModel.js';
import { compileFilter } from './FilterDsl.js';
import { dot1, keyMode, type PreparedQueries, TopK, toKey } from './GroundTruth.js';

/** The columns a filter reads (all base rows; shared memory on the executor). */
export interface FilterColumns {
  readonly cluster: Uint16Array;
  readonly u: Float64Array;
  readonly tags: Uint8Array;
}

/**
 * The filters of a chunk of queries, compiled (FilterDsl.ts: a tag mask and a per-cluster bound
 * on u each) and indexed as bit sets over f (a query's filter number), so that a (query, doc)
 * pair costs a couple of loads however many filters there are:
 * - filters that are the same for every query of the chunk (uniform-P, and-4) are `shared`:
 *   evaluated once per doc from their compiled form (`sharedMasks`, `sharedBounds`);
 * - for the others, per (query, cluster): `always`, the filters every doc of the cluster passes
 *   (bound +Infinity, no tags), and `conditional`, those to check doc by doc (a bound that cuts
 *   the cluster, or tags), whose bounds are kept sparsely (`conditionalKeys`: sorted
 *   (q * perQuery + f) * CLUSTERS + cluster, `conditionalBounds`, `masks`). A correlated filter
 *   has one such cluster, so the index is ~8 KB a query instead of perQuery x 8 KB of bounds.
 * Plain typed arrays: built once per chunk on the calling thread, cloned into the tasks.
 */
export interface FilterIndex {
  readonly queries: number;
  readonly perQuery: number;
  readonly sharedBits: number;
  /** perQuery: tag masks of the shared filters (0 for the others). */
  readonly sharedMasks: Uint8Array;
  /** perQuery x CLUSTERS: bounds of the shared filters. */
  readonly sharedBounds: Float64Array;
  /** queries x CLUSTERS bit sets. */
  readonly always: Uint32Array;
  readonly conditional: Uint32Array;
  /** queries x perQuery tag masks. */
  readonly masks: Uint8Array;
  readonly conditionalKeys: Int32Array;
  readonly conditionalBounds: Float64Array;
}

/**
 * Compiles and indexes a chunk's filters (query-major, perQuery per query); throws on a shape
 * FilterDsl cannot evaluate, naming the clause by `path(i)` (filter i of the chunk).
 */
export function indexFilters(filters: readonly unknown[], perQuery: number, path = (i: number) => `filters[${i}]`): FilterIndex {
  if (!Number.isInteger(perQuery) || perQuery < 1 || perQuery > 32) throw new RangeError(`perQuery must be in [1, 32], got ${perQuery}`);
  if (filters.length % perQuery !== 0 || filters.length === 0) throw new RangeError(`${filters.length} filters are not whole queries of ${perQuery}`);
  const Q = filters.length / perQuery;
  const compiled = filters.map((dsl, s) => compileFilter(dsl, path(s)));
  const masks = Uint8Array.from(compiled, (f) => f.tagMask);
  let sharedBits = 0;
  const sharedMasks = new Uint8Array(perQuery);
  const sharedBounds = new Float64Array(perQuery * CLUSTERS);
  for (let f = 0; f < perQuery; f++) {
    const first = compiled[f];
    let same = true;
    for (let q = 1; q < Q && same; q++) {
      const other = compiled[q * perQuery + f];
      same = other.tagMask === first.tagMask;
      for (let c = 0; c < CLUSTERS && same; c++) same = other.uBelow[c] === first.uBelow[c];
    }
    if (!same) continue;
    sharedBits |= 1 << f;
    sharedMasks[f] = first.tagMask;
    sharedBounds.set(first.uBelow, f * CLUSTERS);
  }
  const always = new Uint32Array(Q * CLUSTERS);
  const conditional = new Uint32Array(Q * CLUSTERS);
  const keys: number[] = [];
  const bounds: number[] = [];
  for (let q = 0; q < Q; q++) {
    for (let f = 0; f < perQuery; f++) {
      if (sharedBits & (1 << f)) continue;
      const slot = q * perQuery + f;
      const { tagMask, uBelow } = compiled[slot];
      for (let c = 0; c < CLUSTERS; c++) {
        const bound = uBelow[c];
        if (bound === -Infinity) continue;
        if (bound === Infinity && tagMask === 0) {
          always[q * CLUSTERS + c] |= 1 << f;
        } else {
          conditional[q * CLUSTERS + c] |= 1 << f;
          keys.push(slot * CLUSTERS + c);
          bounds.push(bound);
        }
      }
    }
  }
  return {
    queries: Q,
    perQuery,
    sharedBits,
    sharedMasks,
    sharedBounds,
    always,
    conditional,
    masks,
    conditionalKeys: Int32Array.from(keys),
    conditionalBounds: Float64Array.from(bounds),
  };
}

/** Evaluates an indexed chunk of filters on docs. */
export class FilterEvaluator {
  private readonly shared: number[] = [];

  constructor(readonly index: FilterIndex) {
    for (let f = 0; f < index.perQuery; f++) if (index.sharedBits & (1 << f)) this.shared.push(f);
  }

  get queries(): number {
    return this.index.queries;
  }

  get perQuery(): number {
    return this.index.perQuery;
  }

  /** The shared filters (bits over f) a doc passes: the same for every query of the chunk. */
  docBits(cluster: number, u: number, tags: number): number {
    const { sharedMasks, sharedBounds } = this.index;
    let bits = 0;
    for (const f of this.shared) {
      const m = sharedMasks[f];
      if (u < sharedBounds[f * CLUSTERS + cluster] && (tags & m) === m) bits |= 1 << f;
    }
    return bits;
  }

  /** The other filters of query q (bits over f) a doc passes. */
  queryBits(q: number, cluster: number, u: number, tags: number): number {
    const { always, conditional, perQuery, masks, conditionalKeys: keys, conditionalBounds } = this.index;
    const at = q * CLUSTERS + cluster;
    let bits = always[at];
    for (let check = conditional[at]; check !== 0; check &= check - 1) {
      const f = 31 - Math.clz32(check & -check);
      const slot = q * perQuery + f;
      const m = masks[slot];
      if ((tags & m) !== m) continue;
      const key = slot * CLUSTERS + cluster;
      let lo = 0;
      let hi = keys.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
      }
      if (u < conditionalBounds[lo]) bits |= 1 << f;
    }
    return bits;
  }
}

/**
 * Exact filtered top-k: for each query of a chunk and each of its filters (a slot), the top-k
 * of the docs that pass, ranked exactly as the unfiltered ground truth (GroundTruth.ts: float64
 * keys from the float32 vectors, ties to the lower id). Every (query, doc) pair is scored once,
 * whatever the number of filters; each slot keeps its own top-k and counts the docs that pass.
 *
 * With kernels, the wasm `dotBatch` scores a block of docs against the chunk's queries in
 * float32 and WasmPrefilter's bound decides which pairs can still enter some slot's top-k: per
 * slot, a top-k of approximate keys of the passing docs and the largest bound seen give a lower
 * bound on the slot's final k-th exact key (see WasmPrefilter.ts for the argument, which holds
 * per slot since it only involves docs that pass the slot's filter). A pair that can enter any of
 * the slots its doc passes is re-scored in float64 once and offered to each of them. Without
 * kernels every passing pair is scored in float64; both give identical results.
 */
export class FilteredScorer {
  readonly top: TopK;
  /** Docs that passed each slot's filter. */
  readonly counts: Int32Array;
  /** Pairs re-scored in float64 (wasm) or scored (js). */
  rescored = 0;
  private readonly perQuery: number;
  private readonly mode: number;
  private readonly approxTop: TopK;
  private readonly maxBound: Float64Array;
  private readonly gamma: number;
  private readonly docSquaredNorms: Float64Array;
  private readonly docNorms: Float64Array;
  private readonly invDocNorms: Float64Array;
  private readonly candidates: Int32Array;
  private readonly candidateUpper: Float64Array;
  /** Per doc of the block: the shared filters it passes, then (per query) all it passes. */
  private readonly docBits: Uint32Array;
  private readonly bits: Uint32Array;
  private readonly qPtr: number = 0;
  private readonly dPtr: number = 0;
  private readonly oPtr: number = 0;
  private released = false;

  constructor(
    private readonly kernels: Kernels | null,
    private readonly queries: PreparedQueries,
    private readonly filters: FilterEvaluator,
    private readonly columns: FilterColumns,
    readonly maxDocs: number,
    similarity: GenSimilarity,
    k: number,
  ) {
    const { count: Q, dim: D } = queries;
    if (filters.queries !== Q) throw new RangeError(`filters for ${filters.queries} queries, ${Q} queries`);
    this.perQuery = filters.perQuery;
    const slots = Q * this.perQuery;
    this.mode = keyMode(similarity);
    this.top = new TopK(slots, k);
    this.counts = new Int32Array(slots);
    this.approxTop = new TopK(slots, k);
    this.maxBound = new Float64Array(slots);
    const u = 2 ** -24;
    this.gamma = (2 * ((D + 2) * u)) / (1 - (D + 2) * u);
    this.docSquaredNorms = new Float64Array(maxDocs);
    this.docNorms = new Float64Array(maxDocs);
    this.invDocNorms = new Float64Array(maxDocs);
    this.candidates = new Int32Array(maxDocs);
    this.candidateUpper = new Float64Array(maxDocs);
    this.docBits = new Uint32Array(maxDocs);
    this.bits = new Uint32Array(maxDocs);
    if (kernels) {
      this.qPtr = kernels.alloc(Q * D * 4);
      this.dPtr = kernels.alloc(maxDocs * D * 4);
      this.oPtr = kernels.alloc(Q * maxDocs * 4);
      kernels.f32().set(queries.vectors.subarray(0, Q * D), this.qPtr >>> 2);
    }
  }

  /** Scores `count` <= maxDocs docs (rows at docOffset + r*docStride, ids firstId + r, also their rows in the columns). */
  score(docs: Float32Array, docOffset: number, docStride: number, count: number, firstId: number): void {
    if (count > this.maxDocs) throw new RangeError(`block of ${count} docs exceeds ${this.maxDocs}`);
    const { dim: D } = this.queries;
    const { docSquaredNorms: dn2, docNorms, invDocNorms, filters, docBits } = this;
    const { cluster, u, tags } = this.columns;
    for (let r = 0; r < count; r++) {
      const id = firstId + r;
      docBits[r] = filters.docBits(cluster[id], u[id], tags[id]);
      const o = docOffset + r * docStride;
      let s = 0;
      for (let i = 0; i < D; i++) s += docs[o + i] * docs[o + i];
      dn2[r] = s;
      docNorms[r] = Math.sqrt(s);
      invDocNorms[r] = 1 / docNorms[r];
    }
    if (this.kernels) this.scoreWasm(docs, docOffset, docStride, count, firstId);
    else this.scoreJs(docs, docOffset, docStride, count, firstId);
  }

  /** Sets bits[r] to the filters of query q doc r passes and counts them; returns bits[r]. */
  private evaluate(q: number, r: number, id: number): number {
    const { columns, counts } = this;
    let bits = this.docBits[r] | this.filters.queryBits(q, columns.cluster[id], columns.u[id], columns.tags[id]);
    this.bits[r] = bits;
    const slot0 = q * this.perQuery;
    while (bits !== 0) {
      counts[slot0 + 31 - Math.clz32(bits & -bits)]++;
      bits &= bits - 1;
    }
    return this.bits[r];
  }

  private scoreJs(docs: Float32Array, docOffset: number, docStride: number, count: number, firstId: number): void {
    const { count: Q, dim: D, squaredNorms: qn2, vectors: qv } = this.queries;
    const { perQuery, top, mode, docSquaredNorms: dn2 } = this;
    for (let q = 0; q < Q; q++) {
      for (let r = 0; r < count; r++) {
        let bits = this.evaluate(q, r, firstId + r);
        if (bits === 0) continue;
        const key = toKey(mode, dot1(qv, q * D, docs, docOffset + r * docStride, D), qn2[q], dn2[r]);
        this.rescored++;
        for (; bits !== 0; bits &= bits - 1) top.offer(q * perQuery + 31 - Math.clz32(bits & -bits), key, firstId + r);
      }
    }
  }

  private scoreWasm(docs: Float32Array, docOffset: number, docStride: number, count: number, firstId: number): void {
    const kernels = this.kernels!;
    const { count: Q, dim: D, squaredNorms: qn2, vectors: qv } = this.queries;
    const { perQuery, top, approxTop, maxBound, mode, gamma, candidates, candidateUpper } = this;
    const { docSquaredNorms: dn2, docNorms, invDocNorms } = this;
    let f32 = kernels.f32();
    const dBase = this.dPtr >>> 2;
    for (let r = 0; r < count; r++) {
      const o = docOffset + r * docStride;
      f32.set(docs.subarray(o, o + D), dBase + r * D);
    }
    kernels.dotBatch(this.qPtr, Q, this.dPtr, count, D, this.oPtr);
    f32 = kernels.f32();
    const exactThresholds = top.thresholds;
    const approxThresholds = approxTop.thresholds;
    const lower = (slot: number) => Math.max(exactThresholds[slot], approxThresholds[slot] - maxBound[slot]);
    for (let q = 0; q < Q; q++) {
      const ob = (this.oPtr >>> 2) + q * count;
      const qn = Math.sqrt(qn2[q]);
      const invQn = 1 / qn;
      const g = mode === 1 ? gamma : mode === 0 ? gamma * qn : 2 * gamma * qn;
      const slot0 = q * perQuery;
      let n = 0;
      for (let r = 0; r < count; r++) {
        const passed = this.evaluate(q, r, firstId + r);
        if (passed === 0) continue;
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
        let wanted = false;
        for (let bits = passed; bits !== 0; bits &= bits - 1) {
          const slot = slot0 + 31 - Math.clz32(bits & -bits);
          // NaN (zero vectors under cosine) is kept: the exact path ranks it.
          if (upper < lower(slot)) continue;
          wanted = true;
          if (bound > maxBound[slot]) maxBound[slot] = bound;
          approxTop.offer(slot, approx, firstId + r);
        }
        if (wanted) {
          candidates[n] = r;
          candidateUpper[n] = upper;
          n++;
        }
      }
      // Re-check against the bounds as they stand after the whole block, then score exactly.
      for (let c = 0; c < n; c++) {
        const r = candidates[c];
        const upper = candidateUpper[c];
        let wanted = false;
        for (let bits = this.bits[r]; bits !== 0 && !wanted; bits &= bits - 1) wanted = !(upper < lower(slot0 + 31 - Math.clz32(bits & -bits)));
        if (!wanted) continue;
        const key = toKey(mode, dot1(qv, q * D, docs, docOffset + r * docStride, D), qn2[q], dn2[r]);
        this.rescored++;
        for (let bits = this.bits[r]; bits !== 0; bits &= bits - 1) top.offer(slot0 + 31 - Math.clz32(bits & -bits), key, firstId + r);
      }
    }
  }

  /** Frees the instance memory this scorer allocated. */
  release(): void {
    if (this.released || !this.kernels) return;
    this.released = true;
    this.kernels.free(this.oPtr);
    this.kernels.free(this.dPtr);
    this.kernels.free(this.qPtr);
  }
}
