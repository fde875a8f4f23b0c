import { exactSearch } from '../hnsw/HnswGraphSearcher.js';
import type { GlobalSimilarityQueue } from '../hnsw/GlobalSimilarityQueue.js';
import type { SegmentHandle } from './SegmentHandle.js';
import { loadSegment, type LoadedSegment } from './WorkerSegments.js';
import { RandomizedHadamard } from '../quantization/RandomizedHadamard.js';
import { encodingForBits, SINGLE_BIT_QUERY_NIBBLE } from '../quantized/ScalarEncodings.js';
import { EncodedQuantizedScorer } from '../quantized/EncodedVectorScorer.js';
import type { KnnSearchResult } from '../hnsw/HnswGraphSearcher.js';
import type { KernelGraphScorer } from '../hnsw/ResidentGraphSearcher.js';
import type { QuantizedQuery } from '../quantized/QueryQuantizer.js';
import { planFilteredSearch, planSegmentSearch, type SegmentSearch, type SegmentSearchPlan, type SegmentStrategy } from './SegmentSearchPlan.js';
import type { GraphFilter } from '../hnsw/ResidentGraphSearcher.js';

/** Rotations by (dims, seed): segments of one index share theirs, and building one costs O(dims) draws. */
const rotations = new Map<string, RandomizedHadamard>();

/** The one every search of an index asks for (its segments share it): found without building a key. */
let lastRotation: RandomizedHadamard | null = null;

function rotationOf(dims: number, seed: bigint | null): RandomizedHadamard | null {
  if (seed === null) return null;
  if (lastRotation !== null && lastRotation.dims === dims && lastRotation.seed === seed) return lastRotation;
  const key = `${dims}:${seed}`;
  let r = rotations.get(key);
  if (!r) rotations.set(key, (r = new RandomizedHadamard(dims, seed)));
  return (lastRotation = r);
}

export interface SegmentSearchOptions {
  /** Hits to return. */
  readonly k: number;
  /** Level-0 beam width (HNSW ef). */
  readonly ef: number;
  /** The query's cross-segment similarity queue; null: the segment is searched alone. */
  readonly global?: GlobalSimilarityQueue | null;
  /** Search level 0 with the JS searcher instead of the wasm kernel (same results; for comparison). */
  readonly js?: boolean;
  /** Time the query quantization (SegmentKnnResult.quantizeMs) for a search profile. */
  readonly profile?: boolean;
  /**
   * 'auto' (default): the graph or a flat scan of the codes, whichever the cost model expects to
   * be cheaper (SegmentSearchPlan.ts); 'hnsw', 'filtered-hnsw' or 'exhaustive' force one
   * (benchmarks, tests). A segment without a graph is always scanned.
   */
  readonly strategy?: SegmentSearch;
  /** Pre-filter: only these docs may be returned (a search returns min(k, accepted) hits). Absent: every live doc. */
  readonly filter?: SegmentFilter | null;
}

/** A filter's accepted docs of one segment: live docs that match, as a bitset over segment docs. */
export interface SegmentFilter {
  readonly bits: Uint32Array;
  /** Set bits: the plan's input. */
  readonly cardinality: number;
}

/** Extra entry points a filtered traversal starts from, spread over the accepted ords. */
const FILTER_SEEDS = 8;

export interface SegmentKnnResult {
  /** Segment-local docs, best first (score desc, then doc asc). */
  readonly docs: Int32Array;
  readonly scores: Float32Array;
  readonly visited: number;
  /**
   * How the segment was searched: its graph, or every code (no graph, or cheaper by the cost
   * model, or the graph search reached the scan's cost and the scan replaced it).
   */
  readonly strategy: SegmentStrategy;
  /** Milliseconds spent quantizing the query (only when profiled; 0 otherwise). */
  readonly quantizeMs?: number;
  /** A filtered search: the share of the query's graph neighbourhood the filter accepts, as the plan saw it. */
  readonly nearby?: number;
}

/**
 * The per-segment kNN entry (Lucene's KnnVectorsReader.search seam), run in a worker: quantize
 * the query against the segment's centroid (COSINE normalized first, then rotated when the
 * segment's codes are) at the query bits of the segment's encoding (4 for 1- and 2-bit docs),
 * then score docs with Lucene's estimator in the wasm kernels, by HNSW search of the graph or a
 * flat scan of every code (SegmentSearchPlan: the cheaper by a cost model), keeping the top k
 * (equal scores: lower doc first) among live docs.
 */
export async function searchSegment(handle: SegmentHandle, target: Float32Array, options: SegmentSearchOptions): Promise<SegmentKnnResult> {
  const seg = await loadSegment(handle);
  const q = handle.quantized;
  if (!seg.scorer || !q) return { docs: new Int32Array(0), scores: new Float32Array(0), visited: 0, strategy: 'exhaustive' };
  const quantizeAt = options.profile ? performance.now() : 0;
  const rotation = rotationOf(handle.dims, q.rotationSeed);
  let scorer: KernelGraphScorer;
  let encoded: EncodedQuantizedScorer | null = null;
  let qq: QuantizedQuery;
  if (q.bits === 1) {
    const planes = seg.kernels.u8().subarray(seg.planesPtr, seg.planesPtr + 4 * q.codeBytes);
    qq = seg.quantizer.quantize(target, q.centroid, planes, SINGLE_BIT_QUERY_NIBBLE, rotation);
    scorer = seg.scorer;
    scorer.query = {
      planesPtr: seg.planesPtr,
      lower: qq.lower,
      upper: qq.upper,
      additionalCorrection: qq.additionalCorrection,
      componentSum: qq.componentSum,
      dims: handle.dims,
      similarity: handle.similarity,
      centroidDP: q.centroidDP,
    };
  } else {
    // The query code (at most 4 x codeBytes: 4 planes of 2-bit docs' half code, or one byte per
    // component for 4 to 8 bits) goes where a 1-bit segment keeps its planes.
    const enc = encodingForBits(q.bits);
    const code = seg.kernels.u8().subarray(seg.planesPtr, seg.planesPtr + enc.queryCodeBytes(handle.dims));
    qq = seg.quantizer.quantize(target, q.centroid, code, enc, rotation);
    scorer = encoded = new EncodedQuantizedScorer(
      enc,
      { kernels: seg.kernels, recordsPtr: seg.handle.resident!.records, count: q.count, codeBytes: q.codeBytes, recordBytes: q.recordBytes },
      {
        codePtr: seg.planesPtr,
        lower: qq.lower,
        upper: qq.upper,
        additionalCorrection: qq.additionalCorrection,
        componentSum: qq.componentSum,
        dims: handle.dims,
        similarity: handle.similarity,
        centroidDP: q.centroidDP,
      },
    );
  }
  const quantizeMs = options.profile ? performance.now() - quantizeAt : 0;
  try {
    const { result, strategy, nearby } = options.filter ? searchFiltered(seg, scorer, options, options.filter) : { ...searchCodes(seg, scorer, options), nearby: undefined };
    const table = handle.vectors.ordToDoc;
    const docs = table ? Int32Array.from(result.ords, (o) => table[o]) : result.ords;
    return { docs, scores: result.scores, visited: result.visited, strategy, quantizeMs, ...(nearby !== undefined ? { nearby } : {}) };
  } finally {
    encoded?.release();
  }
}

/**
 * The graph or the flat scan, as planned; a graph search that reaches the plan's visit limit
 * (the scan's cost) is replaced by the scan, and its visits still count.
 */
function searchCodes(seg: LoadedSegment, scorer: KernelGraphScorer, options: SegmentSearchOptions): { result: KnnSearchResult; strategy: SegmentStrategy } {
  const handle = seg.handle;
  const k = options.k;
  const ef = Math.max(k, options.ef);
  const wanted = options.strategy ?? 'auto';
  const plan: SegmentSearchPlan =
    wanted === 'auto' ? planSegmentSearch(scorer.maxOrd, ef, seg.graph !== null) : { strategy: seg.graph ? wanted : 'exhaustive', visitLimit: Infinity };
  const scan = (visitedBefore: number) => {
    const r = exactSearch(scorer, k, handle.liveOrds);
    return { result: { ...r, visited: r.visited + visitedBefore }, strategy: 'exhaustive' as const };
  };
  if (plan.strategy === 'exhaustive' || !seg.graph) return scan(0);
  const global = options.global ?? null;
  const result = global || options.js ? seg.graph.searchJs(scorer, k, options.ef, global, plan.visitLimit) : seg.graph.search(scorer, k, options.ef, plan.visitLimit);
  return result.earlyTerminated ? scan(result.visited) : { result, strategy: 'hnsw' };
}

/**
 * A pre-filtered search: only accepted ords are returned, as Lucene's AbstractKnnVectorQuery does
 * with a filter, by the plan for the filter's cardinality (planFilteredSearch): a scan of the
 * accepted codes, the graph with the filter, or the graph as a filtered traversal; a graph search
 * that reaches the plan's visit limit (the scan's cost) or returns fewer than k hits is replaced
 * by the scan, so a segment returns min(k, accepted) hits, never fewer because of the filter.
 */
function searchFiltered(
  seg: LoadedSegment,
  scorer: KernelGraphScorer,
  options: SegmentSearchOptions,
  filter: SegmentFilter,
): { result: KnnSearchResult; strategy: SegmentStrategy; nearby?: number } {
  const handle = seg.handle;
  const k = options.k;
  const ef = Math.max(k, options.ef);
  if (filter.cardinality === 0) return { result: { ords: new Int32Array(0), scores: new Float32Array(0), visited: 0, earlyTerminated: false }, strategy: 'exhaustive' };
  const bits = acceptedOrds(handle, filter.bits);
  const wanted = options.strategy ?? 'auto';
  // Where the filter's docs lie relative to the query prices the graph searches (a descent and
  // ~1,000 bit checks; not needed when the plan scans anyway).
  const nearby = wanted === 'auto' && seg.graph && filter.cardinality > ef ? seg.graph.nearbyAcceptance(scorer, bits) : filter.cardinality / scorer.maxOrd;
  const plan: SegmentSearchPlan =
    wanted === 'auto'
      ? planFilteredSearch(scorer.maxOrd, filter.cardinality, ef, seg.graph !== null, seg.graph?.graph.layout.stride ? (seg.graph.graph.layout.stride - 1) / 2 : 16, nearby)
      : { strategy: seg.graph ? wanted : 'exhaustive', visitLimit: Infinity };
  const scan = (visitedBefore: number) => {
    const r = exactSearch(scorer, k, bits);
    return { result: { ...r, visited: r.visited + visitedBefore }, strategy: 'exhaustive' as const, nearby };
  };
  if (plan.strategy === 'exhaustive' || !seg.graph) return scan(0);
  const graphFilter: GraphFilter = { bits, twoHop: plan.strategy === 'filtered-hnsw', seeds: plan.strategy === 'filtered-hnsw' ? sampleSeeds(bits, FILTER_SEEDS) : null };
  const global = options.global ?? null;
  const result =
    global || options.js ? seg.graph.searchJs(scorer, k, options.ef, global, plan.visitLimit, graphFilter) : seg.graph.search(scorer, k, options.ef, plan.visitLimit, graphFilter);
  if (result.earlyTerminated || result.ords.length < Math.min(k, filter.cardinality)) return scan(result.visited);
  return { result, strategy: plan.strategy, nearby };
}

/** The filter's docs as ords: the same bitset when ord = doc (prescore's dense segments). */
function acceptedOrds(handle: SegmentHandle, docBits: Uint32Array): Uint32Array {
  const table = handle.vectors.ordToDoc;
  if (!table) return docBits;
  const out = new Uint32Array((table.length + 31) >>> 5);
  for (let o = 0; o < table.length; o++) {
    const d = table[o]!;
    if ((docBits[d >>> 5]! >>> (d & 31)) & 1) out[o >>> 5]! |= 1 << (o & 31);
  }
  return out;
}

/** Up to `n` set bits spread over the bitset: the first one at or after each of n evenly spaced words. */
function sampleSeeds(bits: Uint32Array, n: number): Int32Array {
  const out: number[] = [];
  let from = 0;
  for (let i = 0; i < n; i++) {
    const o = nextSetBit(bits, Math.max(from, Math.floor((i * bits.length) / n) * 32));
    if (o < 0) break;
    out.push(o);
    from = o + 1;
  }
  return Int32Array.from(out);
}

/** The first set bit at or after `from`, or -1. */
function nextSetBit(bits: Uint32Array, from: number): number {
  let w = from >>> 5;
  if (w >= bits.length) return -1;
  let word = bits[w]! & (~0 << (from & 31));
  for (;;) {
    if (word !== 0) return (w << 5) | (31 - Math.clz32(word & -word));
    if (++w >= bits.length) return -1;
    word = bits[w]!;
  }
}

/** Searches per worker that warm-up runs (enough for the JIT to have compiled the hot paths). */
const WARMUP_SEARCHES = 16;

/**
 * Runs a few real searches over `handles` (round robin, each segment's centroid as the query), so
 * the first query after an index opens finds this worker's code compiled (JS and wasm tier-up)
 * and its scratch touched, not just its data loaded. Results are discarded.
 */
export async function warmSegments(handles: readonly SegmentHandle[]): Promise<void> {
  const searchable = handles.filter((h) => h.quantized && h.quantized.count > 0);
  for (let i = 0; i < WARMUP_SEARCHES && searchable.length > 0; i++) {
    const h = searchable[i % searchable.length];
    await searchSegment(h, h.quantized!.centroid, { k: 10, ef: 100 });
  }
}
