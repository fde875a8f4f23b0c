import { Kernels } from '../kernels/Kernels.js';
import type { BinaryQuantizedScorer, ResidentRecords } from '../quantized/BinaryQuantizedScorer.js';
import type { GlobalSimilarityQueue } from './GlobalSimilarityQueue.js';
import { HnswGraphSearcher, type KnnSearchResult } from './HnswGraphSearcher.js';
import type { OnHeapHnswGraph } from './OnHeapHnswGraph.js';
import type { RandomVectorScorer } from './RandomVectorScorer.js';

/** Byte offsets of the search context block (kernels.wat, hnswSearchL0). */
const CTX = {
  planes: 0, codeBytes: 4, pad: 8, records: 12, recordSize: 16, ay: 20, uy: 24, y1: 28, corrY: 32,
  dims: 36, similarity: 40, centroidDP: 44, adj: 48, stride: 52, visited: 56, gen: 60, live: 64,
  candidates: 68, results: 72, k: 76, nbrOrds: 80, nbrScores: 84, entry: 88, visitedCount: 92,
  visitLimit: 96, outOrds: 100, outScores: 104, bytes: 112,
} as const;

const MAX_VISIT_LIMIT = 0x7fffffff;

/**
 * What searchJs scores with: any scorer over the resident records that can reserve its kernel
 * scratch up front (the 1-bit BinaryQuantizedScorer, the multi-bit EncodedQuantizedScorer).
 */
export interface ResidentScorer extends RandomVectorScorer {
  readonly query: object;
  reserve(n: number): void;
}

/** Level 0's heap lists once the searcher owns the graph (they live in kernel memory). */
const NO_LISTS = new Int32Array(0);

/**
 * HNSW search of one segment whose 1-bit records and level-0 neighbour lists live in a kernels
 * instance's memory. The greedy descent through the upper levels (a few dozen scores) runs in JS;
 * the level-0 beam search, where nearly all the time goes, runs in wasm (kernels.wat,
 * hnswSearchL0): no JS heap operations or per-neighbour calls across the boundary, one kernel call
 * per search. Results (ords, scores, visited count) are identical to HnswGraphSearcher's, which
 * the tests check on every similarity.
 *
 * Owns its kernel memory (level-0 lists, visited stamps, queues); release() frees it. Not
 * thread-safe: one per segment per worker.
 */
export class ResidentGraphSearcher {
  private readonly upper: HnswGraphSearcher;
  private gen = 0;
  private k = 0;
  private resultsPtr = 0;
  private outOrdsPtr = 0;
  private outScoresPtr = 0;
  private released = false;

  private constructor(
    private readonly kernels: Kernels,
    readonly graph: OnHeapHnswGraph,
    private readonly liveOrds: Uint32Array | null,
    private readonly ptrs: { ctx: number; adj: number; visited: number; candidates: number; nbrOrds: number; nbrScores: number; pad: number; live: number },
    private readonly size: number,
    private readonly codeBytes: number,
  ) {
    this.upper = new HnswGraphSearcher(size);
  }

  /**
   * Moves level 0 of `graph` into the kernels' memory next to the records (with the live-ords
   * bitset, if any). The searcher takes the graph over: its heap copy of level 0 is released, and
   * the upper levels stay on the heap for the descent.
   */
  static load(kernels: Kernels, records: ResidentRecords, graph: OnHeapHnswGraph, liveOrds: Uint32Array | null): ResidentGraphSearcher {
    const size = graph.size();
    if (size > records.count) throw new RangeError(`graph has ${size} nodes but only ${records.count} records`);
    Kernels.checkOsqRecords(records.recordBytes, records.codeBytes);
    const level0 = graph.store(0);
    const stride = level0.stride;
    const owned: number[] = [];
    const alloc = (bytes: number, align = 16): number => {
      const p = kernels.alloc(Math.max(bytes, 8), align);
      owned.push(p);
      return p;
    };
    try {
      const ptrs = {
        ctx: alloc(CTX.bytes),
        adj: alloc(4 * size * stride),
        visited: alloc(4 * size),
        candidates: alloc(8 * size, 8),
        nbrOrds: alloc(4 * stride),
        nbrScores: alloc(4 * stride),
        pad: alloc(4 * ((records.codeBytes + 15) & ~15)),
        live: liveOrds ? alloc(4 * liveOrds.length) : 0,
      };
      const i32 = kernels.i32();
      i32.set(level0.adj.subarray(0, size * stride), ptrs.adj >>> 2);
      i32.fill(0, ptrs.visited >>> 2, (ptrs.visited >>> 2) + size);
      if (liveOrds) new Uint32Array(i32.buffer).set(liveOrds, ptrs.live >>> 2);
      const c = ptrs.ctx >>> 2;
      i32[c + CTX.records / 4] = records.recordsPtr;
      i32[c + CTX.recordSize / 4] = records.recordBytes;
      i32[c + CTX.codeBytes / 4] = records.codeBytes;
      i32[c + CTX.pad / 4] = ptrs.pad;
      i32[c + CTX.adj / 4] = ptrs.adj;
      i32[c + CTX.stride / 4] = stride;
      i32[c + CTX.visited / 4] = ptrs.visited;
      i32[c + CTX.live / 4] = ptrs.live;
      i32[c + CTX.candidates / 4] = ptrs.candidates;
      i32[c + CTX.nbrOrds / 4] = ptrs.nbrOrds;
      i32[c + CTX.nbrScores / 4] = ptrs.nbrScores;
      level0.adj = NO_LISTS;
      return new ResidentGraphSearcher(kernels, graph, liveOrds, ptrs, size, records.codeBytes);
    } catch (e) {
      for (const p of owned) kernels.free(p);
      throw e;
    }
  }

  /**
   * Approximate top-k for the query currently set on `scorer` (which must score this searcher's
   * records): the same contract as HnswGraphSearcher.search with acceptOrds = the live ords given
   * at load.
   */
  search(scorer: BinaryQuantizedScorer, k: number, ef = k, visitedLimit = Infinity): KnnSearchResult {
    this.checkUsable(scorer);
    if (k <= 0 || this.size === 0) return { ords: new Int32Array(0), scores: new Float32Array(0), visited: 0, earlyTerminated: false };
    if (visitedLimit !== Infinity && !(Number.isInteger(visitedLimit) && visitedLimit >= 0)) {
      throw new RangeError(`visit limit must be a non-negative integer or Infinity, got ${visitedLimit}`);
    }
    const limit = Math.min(visitedLimit, MAX_VISIT_LIMIT);
    const ep = this.upper.descend(scorer, this.graph, limit);
    let visited = this.upper.visitedSoFar;
    const queueSize = Math.max(k, ef);
    let count = 0;
    if (ep !== -1) {
      this.ensureQueue(queueSize);
      const kn = this.kernels;
      if (this.gen === MAX_VISIT_LIMIT) {
        kn.i32().fill(0, this.ptrs.visited >>> 2, (this.ptrs.visited >>> 2) + this.size);
        this.gen = 0;
      }
      this.gen++;
      const q = scorer.query;
      const i32 = kn.i32();
      const f32 = kn.f32();
      const c = this.ptrs.ctx >>> 2;
      i32[c + CTX.planes / 4] = q.planesPtr;
      f32[c + CTX.ay / 4] = q.lower;
      f32[c + CTX.uy / 4] = q.upper;
      i32[c + CTX.y1 / 4] = q.componentSum;
      f32[c + CTX.corrY / 4] = q.additionalCorrection;
      i32[c + CTX.dims / 4] = q.dims;
      i32[c + CTX.similarity / 4] = q.similarity;
      f32[c + CTX.centroidDP / 4] = q.centroidDP;
      i32[c + CTX.gen / 4] = this.gen;
      i32[c + CTX.results / 4] = this.resultsPtr;
      i32[c + CTX.k / 4] = queueSize;
      i32[c + CTX.entry / 4] = ep;
      i32[c + CTX.visitedCount / 4] = visited;
      i32[c + CTX.visitLimit / 4] = limit;
      i32[c + CTX.outOrds / 4] = this.outOrdsPtr;
      i32[c + CTX.outScores / 4] = this.outScoresPtr;
      count = kn.hnswSearchL0(this.ptrs.ctx);
      visited = kn.i32()[c + CTX.visitedCount / 4];
    }
    const take = Math.min(k, count);
    const ords = new Int32Array(take);
    const scores = new Float32Array(take);
    if (take > 0) {
      ords.set(this.kernels.i32().subarray(this.outOrdsPtr >>> 2, (this.outOrdsPtr >>> 2) + take));
      scores.set(this.kernels.f32().subarray(this.outScoresPtr >>> 2, (this.outScoresPtr >>> 2) + take));
    }
    return { ords, scores, visited, earlyTerminated: visited >= visitedLimit };
  }

  /**
   * The same search on the all-JS HnswGraphSearcher, over a view of the resident level 0: for a
   * query's shared multi-segment queue (Lucene's MultiLeafKnnCollector), which the kernel does
   * not do, and for side-by-side comparison. The view would be detached if the kernels' memory
   * grew during the search, so the scorer's scratch is reserved first (a search then allocates
   * nothing in kernel memory), the memory is checked afterwards, and the view is dropped.
   */
  searchJs(scorer: ResidentScorer, k: number, ef = k, global: GlobalSimilarityQueue | null = null): KnnSearchResult {
    if ('planesPtr' in scorer.query) this.checkUsable(scorer as BinaryQuantizedScorer);
    else if (this.released) throw new Error('ResidentGraphSearcher: used after release()');
    const level0 = this.graph.store(0);
    scorer.reserve(level0.stride);
    const base = this.ptrs.adj >>> 2;
    const view = this.kernels.i32().subarray(base, base + this.size * level0.stride);
    level0.adj = view;
    try {
      const result = this.upper.search(scorer, this.graph, k, ef, this.liveOrds, Infinity, global);
      if (view.buffer !== this.kernels.memory.buffer) throw new Error('ResidentGraphSearcher.searchJs: kernel memory grew during the search');
      return result;
    } finally {
      level0.adj = NO_LISTS;
    }
  }

  private checkUsable(scorer: BinaryQuantizedScorer): void {
    if (this.released) throw new Error('ResidentGraphSearcher: used after release()');
    Kernels.checkOsqQuery(scorer.query, this.codeBytes);
  }

  private ensureQueue(k: number): void {
    if (k <= this.k) return;
    const kn = this.kernels;
    const results = kn.alloc(8 * k, 8);
    let outOrds = 0;
    try {
      outOrds = kn.alloc(4 * k);
      const outScores = kn.alloc(4 * k);
      this.freeQueue();
      this.resultsPtr = results;
      this.outOrdsPtr = outOrds;
      this.outScoresPtr = outScores;
      this.k = k;
    } catch (e) {
      kn.free(results);
      if (outOrds !== 0) kn.free(outOrds);
      throw e;
    }
  }

  private freeQueue(): void {
    if (this.k === 0) return;
    this.kernels.free(this.resultsPtr);
    this.kernels.free(this.outOrdsPtr);
    this.kernels.free(this.outScoresPtr);
    this.k = 0;
  }

  /** Frees this searcher's kernel memory (not the records). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.freeQueue();
    for (const p of Object.values(this.ptrs)) if (p !== 0) this.kernels.free(p);
  }
}
