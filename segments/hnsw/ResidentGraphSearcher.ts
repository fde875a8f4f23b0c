import { Kernels } from '../kernels/Kernels.js';
import { SEARCH_CONTEXT as CTX } from '../kernels/SearchContextLayout.js';
import type { BinaryQuantizedScorer, ResidentRecords } from '../quantized/BinaryQuantizedScorer.js';
import { EncodedQuantizedScorer } from '../quantized/EncodedVectorScorer.js';
import type { GlobalSimilarityQueue } from './GlobalSimilarityQueue.js';
import { HnswGraphSearcher, type KnnSearchResult } from './HnswGraphSearcher.js';
import type { OnHeapHnswGraph } from './OnHeapHnswGraph.js';
import { residentGraphBytes, ResidentGraph, writeResidentGraph, type ResidentGraphLayout } from './ResidentGraph.js';

import type { RandomVectorScorer } from './RandomVectorScorer.js';

const MAX_VISIT_LIMIT = 0x7fffffff;
/** 1f/15f, the step of the 4-bit query of 1-bit docs. */
const NIBBLE_QUERY_SCALE = Math.fround(1 / 15);

/**
 * What the level-0 kernel scores with: the 1-bit scorer, or the multi-bit one (2, 4, 7, 8 doc
 * bits); either over this searcher's records, with its query code in the kernels' memory.
 */
export type KernelGraphScorer = BinaryQuantizedScorer | EncodedQuantizedScorer;

/**
 * What searchJs scores with: any scorer over the resident records that can reserve its kernel
 * scratch up front (the 1-bit BinaryQuantizedScorer, the multi-bit EncodedQuantizedScorer).
 */
export interface ResidentScorer extends RandomVectorScorer {
  readonly query: object;
  reserve(n: number): void;
}

/** Level 0's heap lists once a searcher has copied the graph into kernel memory. */
const NO_LISTS = new Int32Array(0);

/**
 * A filtered search's accepted ords (a filter's docs that are live, as ords), and how the graph is
 * searched with them: plain (every visited node scored, accepted ones collected: Lucene's filtered
 * HNSW search) or as a filtered traversal (FilteredTraversal: accepted nodes only, crossing
 * rejected neighbours), with optional extra entry points.
 */
export interface GraphFilter {
  readonly bits: Uint32Array;
  readonly twoHop: boolean;
  readonly seeds: Int32Array | null;
}

/** A live-ords bitset both as the JS searcher reads it and where the kernel reads it (0: every ord live). */
export interface ResidentLiveOrds {
  readonly bits: Uint32Array | null;
  readonly ptr: number;
}

/**
 * HNSW search of one segment whose quantized records (any doc encoding) and graph live in a kernels instance's memory
 * (a shared arena, or the thread's own memory). The greedy descent through the upper levels (a
 * few dozen scores) runs in JS over views of that memory; the level-0 beam search, where nearly
 * all the time goes, runs in wasm (kernels.wat, hnswSearchL0): no JS heap operations or
 * per-neighbour calls across the boundary, one kernel call per search. Results (ords, scores,
 * visited count) are identical to HnswGraphSearcher's, which the tests check on every similarity.
 *
 * The graph and records are only read. What a search writes (visit stamps, heaps, the context
 * block) is the thread's GraphSearchScratch, one per kernels instance, shared by every segment
 * it searches. Not thread-safe: one per segment per thread.
 */
export class ResidentGraphSearcher {
  private released = false;
  readonly graph: ResidentGraph;

  private constructor(
    private readonly kernels: Kernels,
    private readonly scratch: GraphSearchScratch,
    layout: ResidentGraphLayout,
    private readonly records: ResidentRecords,
    private readonly live: ResidentLiveOrds,
    /** Kernel memory this searcher allocated itself (load()), freed on release. */
    private readonly owned: number,
  ) {
    this.graph = new ResidentGraph(layout, kernels.memory);
  }

  /** A searcher over a graph already laid out in the kernels' memory (a segment loaded into an arena). */
  static attach(kernels: Kernels, records: ResidentRecords, layout: ResidentGraphLayout, live: ResidentLiveOrds): ResidentGraphSearcher {
    return ResidentGraphSearcher.create(kernels, records, layout, live, 0);
  }

  /**
   * Copies `graph` into the kernels' memory next to the records (with the live-ords bitset, if
   * any) and searches it there. The searcher takes the graph over: its heap copy of level 0 is
   * released.
   */
  static load(kernels: Kernels, records: ResidentRecords, graph: OnHeapHnswGraph, liveOrds: Uint32Array | null): ResidentGraphSearcher {
    const shapes = Array.from({ length: graph.numLevels - 1 }, (_, i) => ({ count: graph.levelSize(i + 1), stride: graph.store(i + 1).stride }));
    const graphBytes = residentGraphBytes(graph.size(), graph.store(0).stride, shapes);
    const owned = kernels.alloc(64 + graphBytes + (liveOrds ? 4 * liveOrds.length : 0), 64);
    try {
      const layout = writeResidentGraph(kernels.memory.buffer, owned, graph);
      let ptr = 0;
      if (liveOrds) {
        ptr = owned + 64 + graphBytes;
        new Uint32Array(kernels.memory.buffer).set(liveOrds, ptr >>> 2);
      }
      const searcher = ResidentGraphSearcher.create(kernels, records, layout, { bits: liveOrds, ptr }, owned);
      graph.store(0).adj = NO_LISTS;
      return searcher;
    } catch (e) {
      kernels.free(owned);
      throw e;
    }
  }

  private static create(kernels: Kernels, records: ResidentRecords, layout: ResidentGraphLayout, live: ResidentLiveOrds, owned: number): ResidentGraphSearcher {
    if (layout.size > records.count) throw new RangeError(`graph has ${layout.size} nodes but only ${records.count} records`);
    Kernels.checkOsqRecords(records.recordBytes, records.codeBytes);
    const scratch = GraphSearchScratch.acquire(kernels, layout.size, maxStride(layout), records.codeBytes);
    return new ResidentGraphSearcher(kernels, scratch, layout, records, live, owned);
  }

  /**
   * Approximate top-k for the query currently set on `scorer` (which must score this searcher's
   * records): the same contract as HnswGraphSearcher.search with acceptOrds = the live ords.
   */
  search(scorer: KernelGraphScorer, k: number, ef = k, visitedLimit = Infinity, filter: GraphFilter | null = null): KnnSearchResult {
    this.checkUsable(scorer);
    const size = this.graph.size();
    if (k <= 0 || size === 0) return { ords: new Int32Array(0), scores: new Float32Array(0), visited: 0, earlyTerminated: false };
    if (visitedLimit !== Infinity && !(Number.isInteger(visitedLimit) && visitedLimit >= 0)) {
      throw new RangeError(`visit limit must be a non-negative integer or Infinity, got ${visitedLimit}`);
    }
    const limit = Math.min(visitedLimit, MAX_VISIT_LIMIT);
    const upper = this.scratch.upper;
    this.graph.refresh();
    const ep = upper.descend(scorer, this.graph, limit);
    let visited = upper.visitedSoFar;
    const queueSize = Math.max(k, ef);
    let count = 0;
    const sc = this.scratch;
    if (ep !== -1) {
      sc.ensureQueue(queueSize);
      const gen = sc.nextGeneration();
      const kn = this.kernels;
      const q = scorer.query;
      const encoded = scorer instanceof EncodedQuantizedScorer ? scorer.encoding : null;
      const r = this.records;
      const layout = this.graph.layout;
      // Scratch for the filter first: allocating may grow the memory (and detach older views).
      const livePtr = filter ? sc.acceptOrds(filter.bits, this.live.bits) : this.live.ptr;
      if (filter?.twoHop) sc.ensureTwoHop(layout.stride);
      const seedCount = filter?.seeds?.length ?? 0;
      const seedsPtr = seedCount > 0 ? sc.seedOrds(filter!.seeds!) : 0;
      const i32 = kn.i32();
      const f32 = kn.f32();
      const c = sc.ctx >>> 2;
      i32[c + CTX.planes / 4] = 'planesPtr' in q ? q.planesPtr : q.codePtr;
      i32[c + CTX.codeBytes / 4] = r.codeBytes;
      i32[c + CTX.docBits / 4] = encoded ? encoded.docBits : 1;
      f32[c + CTX.queryScale / 4] = encoded ? Math.fround(1 / ((1 << encoded.queryBits) - 1)) : NIBBLE_QUERY_SCALE;
      f32[c + CTX.lxScale / 4] = encoded ? Math.fround(1 / ((1 << encoded.docBits) - 1)) : 1;
      i32[c + CTX.pad / 4] = sc.pad;
      i32[c + CTX.records / 4] = r.recordsPtr;
      i32[c + CTX.recordSize / 4] = r.recordBytes;
      f32[c + CTX.ay / 4] = q.lower;
      f32[c + CTX.uy / 4] = q.upper;
      i32[c + CTX.y1 / 4] = q.componentSum;
      f32[c + CTX.corrY / 4] = q.additionalCorrection;
      i32[c + CTX.dims / 4] = q.dims;
      i32[c + CTX.similarity / 4] = q.similarity;
      f32[c + CTX.centroidDP / 4] = q.centroidDP;
      i32[c + CTX.adj / 4] = layout.level0;
      i32[c + CTX.stride / 4] = layout.stride;
      i32[c + CTX.visited / 4] = sc.visited;
      i32[c + CTX.gen / 4] = gen;
      i32[c + CTX.live / 4] = livePtr;
      i32[c + CTX.twoHop / 4] = filter?.twoHop ? 1 : 0;
      i32[c + CTX.seeds / 4] = seedsPtr;
      i32[c + CTX.seedCount / 4] = seedCount;
      i32[c + CTX.candidates / 4] = sc.candidates;
      i32[c + CTX.results / 4] = sc.results;
      i32[c + CTX.k / 4] = queueSize;
      i32[c + CTX.nbrOrds / 4] = sc.nbrOrds;
      i32[c + CTX.nbrScores / 4] = sc.nbrScores;
      i32[c + CTX.entry / 4] = ep;
      i32[c + CTX.visitedCount / 4] = visited;
      i32[c + CTX.visitLimit / 4] = limit;
      i32[c + CTX.outOrds / 4] = sc.outOrds;
      i32[c + CTX.outScores / 4] = sc.outScores;
      count = kn.hnswSearchL0(sc.ctx);
      visited = kn.i32()[c + CTX.visitedCount / 4];
    }
    const take = Math.min(k, count);
    const ords = new Int32Array(take);
    const scores = new Float32Array(take);
    if (take > 0) {
      ords.set(this.kernels.i32().subarray(sc.outOrds >>> 2, (sc.outOrds >>> 2) + take));
      scores.set(this.kernels.f32().subarray(sc.outScores >>> 2, (sc.outScores >>> 2) + take));
    }
    return { ords, scores, visited, earlyTerminated: visited >= visitedLimit };
  }

  /**
   * How much of the query's neighbourhood a filter accepts: the greedy descent through the upper
   * levels (as search() starts, a few dozen scores), then the level-0 lists of the node it lands
   * on and of that node's neighbours (up to M + M^2 ords, counted with repeats) checked against
   * `bits`; no level-0 node is scored. Returns accepted / checked (1 when nothing was checked).
   *
   * Why: a filter's global selectivity says nothing of where its docs are. A filter correlated
   * with the query accepts most of this neighbourhood, an anti-correlated one none of it, so the
   * plan (SegmentSearchPlan.planFilteredSearch) prices the graph searches by this share.
   */
  nearbyAcceptance(scorer: KernelGraphScorer, bits: Uint32Array): number {
    this.checkUsable(scorer);
    if (this.graph.size() === 0) return 1;
    this.graph.refresh();
    const ep = this.scratch.upper.descend(scorer, this.graph, MAX_VISIT_LIMIT);
    if (ep < 0) return 1;
    const level0 = this.graph.store(0);
    const { adj, stride } = level0;
    const live = this.live.bits;
    let checked = 0;
    let accepted = 0;
    const count = (o: number) => {
      checked++;
      accepted += (bits[o >>> 5]! >>> (o & 31)) & (live === null ? 1 : live[o >>> 5]! >>> (o & 31)) & 1;
    };
    const base = ep * stride;
    const n = adj[base]!;
    for (let i = 1; i <= n; i++) {
      const nb = adj[base + i]!;
      count(nb);
      const b2 = nb * stride;
      const n2 = adj[b2]!;
      for (let j = 1; j <= n2; j++) count(adj[b2 + j]!);
    }
    return checked === 0 ? 1 : accepted / checked;
  }

  /**
   * The same search on the all-JS HnswGraphSearcher, over views of the resident graph: for a
   * query's shared multi-segment queue (Lucene's MultiLeafKnnCollector), which the kernel does
   * not do, and for side-by-side comparison. A private memory's views would be detached if it
   * grew during the search, so the scorer's scratch is reserved first (a search then allocates
   * nothing in kernel memory) and the memory is checked afterwards.
   */
  searchJs(scorer: ResidentScorer, k: number, ef = k, global: GlobalSimilarityQueue | null = null, visitedLimit = Infinity, filter: GraphFilter | null = null): KnnSearchResult {
    if (scorer instanceof EncodedQuantizedScorer || 'planesPtr' in scorer.query) this.checkUsable(scorer as KernelGraphScorer);
    else if (this.released) throw new Error('ResidentGraphSearcher: used after release()');
    scorer.reserve(maxStride(this.graph.layout));
    this.graph.refresh();
    const buffer = this.kernels.memory.buffer;
    const accept = filter ? andBits(filter.bits, this.live.bits) : this.live.bits;
    const traversal = filter ? { twoHop: filter.twoHop, seeds: filter.seeds } : null;
    const result = this.scratch.upper.search(scorer, this.graph, k, ef, accept, visitedLimit, global, traversal);
    if (buffer !== this.kernels.memory.buffer && buffer.byteLength === 0) throw new Error('ResidentGraphSearcher.searchJs: kernel memory grew during the search');
    return result;
  }

  private checkUsable(scorer: KernelGraphScorer): void {
    if (this.released) throw new Error('ResidentGraphSearcher: used after release()');
    if (!(scorer instanceof EncodedQuantizedScorer)) {
      Kernels.checkOsqQuery(scorer.query, this.records.codeBytes);
      return;
    }
    const { dims, similarity } = scorer.query;
    const want = scorer.encoding.docCodeBytes(dims);
    if (want !== this.records.codeBytes || scorer.records.recordsPtr !== this.records.recordsPtr) {
      throw new RangeError(`${scorer.encoding.name} query of ${dims} dims (${want} code bytes) does not score these records (${this.records.codeBytes} code bytes)`);
    }
    Kernels.checkSimilarity(similarity);
  }

  /** Frees what this searcher holds of the kernel memory (not the records, nor an arena's graph). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.scratch.release();
    if (this.owned !== 0) this.kernels.free(this.owned);
  }
}

/** a AND b (b null: a itself). */
function andBits(a: Uint32Array, b: Uint32Array | null): Uint32Array {
  if (b === null) return a;
  const out = new Uint32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! & (b[i] ?? 0);
  return out;
}

function maxStride(layout: ResidentGraphLayout): number {
  return Math.max(layout.stride, ...layout.upper.map((l) => l.stride));
}

/**
 * What a thread's graph searches write, one per kernels instance, shared by every segment the
 * thread searches in that memory (searches run one at a time per thread): the context block,
 * visit stamps and the candidates heap sized to the largest graph, neighbour buffers, the
 * results queue, and the JS searcher of the upper levels. Counted: the last searcher's release
 * frees it. Per worker and arena: 12 bytes per node of the largest segment + 16 per queue slot.
 */
class GraphSearchScratch {
  private static readonly byKernels = new WeakMap<Kernels, GraphSearchScratch>();
  readonly upper = new HnswGraphSearcher();
  private users = 0;
  private nodes = 0;
  private stride = 0;
  private codeBytes = 0;
  private k = 0;
  private gen = 0;
  ctx = 0;
  pad = 0;
  visited = 0;
  candidates = 0;
  nbrOrds = 0;
  nbrScores = 0;
  /** nbrOrds/nbrScores capacity in ints. */
  private nbrCapacity = 0;
  /** A filtered search's accepted-ords bitset and seeds (sized to the largest asked for). */
  private accept = 0;
  private acceptWords = 0;
  private seeds = 0;
  private seedCapacity = 0;
  results = 0;
  outOrds = 0;
  outScores = 0;

  private constructor(private readonly kernels: Kernels) {}

  static acquire(kernels: Kernels, nodes: number, stride: number, codeBytes: number): GraphSearchScratch {
    let s = GraphSearchScratch.byKernels.get(kernels);
    if (!s) {
      s = new GraphSearchScratch(kernels);
      GraphSearchScratch.byKernels.set(kernels, s);
    }
    s.ensure(nodes, stride, codeBytes);
    s.users++;
    return s;
  }

  release(): void {
    if (--this.users > 0) return;
    const kn = this.kernels;
    for (const p of [this.ctx, this.pad, this.visited, this.candidates, this.nbrOrds, this.nbrScores, this.accept, this.seeds]) if (p !== 0) kn.free(p);
    this.freeQueue();
    this.ctx = this.pad = this.visited = this.candidates = this.nbrOrds = this.nbrScores = this.accept = this.seeds = 0;
    this.nodes = this.stride = this.codeBytes = this.nbrCapacity = this.acceptWords = this.seedCapacity = 0;
    GraphSearchScratch.byKernels.delete(kn);
  }

  private ensure(nodes: number, stride: number, codeBytes: number): void {
    const kn = this.kernels;
    if (this.ctx === 0) this.ctx = kn.alloc(CTX.bytes);
    if (nodes > this.nodes) {
      const visited = kn.alloc(4 * Math.max(1, nodes));
      let candidates = 0;
      try {
        candidates = kn.alloc(8 * Math.max(1, nodes), 8);
      } catch (e) {
        kn.free(visited);
        throw e;
      }
      if (this.visited !== 0) kn.free(this.visited);
      if (this.candidates !== 0) kn.free(this.candidates);
      this.visited = visited;
      this.candidates = candidates;
      // Fresh stamps: the block may hold an earlier owner's bytes.
      kn.i32().fill(0, visited >>> 2, (visited >>> 2) + nodes);
      this.gen = 0;
      this.nodes = nodes;
    }
    if (stride > this.stride) {
      this.ensureNeighborBuffers(stride);
      this.stride = stride;
    }
    if (codeBytes > this.codeBytes) {
      const pad = kn.alloc(4 * ((codeBytes + 15) & ~15));
      if (this.pad !== 0) kn.free(this.pad);
      this.pad = pad;
      this.codeBytes = codeBytes;
    }
  }

  private ensureNeighborBuffers(ints: number): void {
    if (ints <= this.nbrCapacity) return;
    const kn = this.kernels;
    const ords = kn.alloc(4 * ints);
    const scores = kn.alloc(4 * ints);
    if (this.nbrOrds !== 0) kn.free(this.nbrOrds);
    if (this.nbrScores !== 0) kn.free(this.nbrScores);
    this.nbrOrds = ords;
    this.nbrScores = scores;
    this.nbrCapacity = ints;
  }

  /** A filtered traversal's hop takes a list and its neighbours' lists: stride + stride x stride ords. */
  ensureTwoHop(stride: number): void {
    this.ensureNeighborBuffers(stride + stride * stride);
  }

  /** Copies `bits` (AND `live`, when the segment has deletions) where the kernel reads accepted ords; its pointer. */
  acceptOrds(bits: Uint32Array, live: Uint32Array | null): number {
    const kn = this.kernels;
    if (bits.length > this.acceptWords) {
      const p = kn.alloc(4 * bits.length);
      if (this.accept !== 0) kn.free(this.accept);
      this.accept = p;
      this.acceptWords = bits.length;
    }
    const view = kn.i32();
    const at = this.accept >>> 2;
    if (live === null) view.set(bits as unknown as Int32Array, at);
    else for (let i = 0; i < bits.length; i++) view[at + i] = bits[i]! & (live[i] ?? 0);
    return this.accept;
  }

  /** Copies the seeds where the kernel reads them; their pointer. */
  seedOrds(seeds: Int32Array): number {
    const kn = this.kernels;
    if (seeds.length > this.seedCapacity) {
      const p = kn.alloc(4 * seeds.length);
      if (this.seeds !== 0) kn.free(this.seeds);
      this.seeds = p;
      this.seedCapacity = seeds.length;
    }
    kn.i32().set(seeds, this.seeds >>> 2);
    return this.seeds;
  }

  /** This search's visit stamp (stamps are cleared once 2^31 - 1 searches have used them). */
  nextGeneration(): number {
    if (this.gen === MAX_VISIT_LIMIT) {
      this.kernels.i32().fill(0, this.visited >>> 2, (this.visited >>> 2) + this.nodes);
      this.gen = 0;
    }
    return ++this.gen;
  }

  ensureQueue(k: number): void {
    if (k <= this.k) return;
    const kn = this.kernels;
    const results = kn.alloc(8 * k, 8);
    let outOrds = 0;
    try {
      outOrds = kn.alloc(4 * k);
      const outScores = kn.alloc(4 * k);
      this.freeQueue();
      this.results = results;
      this.outOrds = outOrds;
      this.outScores = outScores;
      this.k = k;
    } catch (e) {
      kn.free(results);
      if (outOrds !== 0) kn.free(outOrds);
      throw e;
    }
  }

  private freeQueue(): void {
    if (this.k === 0) return;
    this.kernels.free(this.results);
    this.kernels.free(this.outOrds);
    this.kernels.free(this.outScores);
    this.k = 0;
  }
}
