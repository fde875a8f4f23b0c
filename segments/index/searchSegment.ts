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
import { planSegmentSearch, type SegmentSearch, type SegmentSearchPlan, type SegmentStrategy } from './SegmentSearchPlan.js';

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
   * be cheaper (SegmentSearchPlan.ts); 'hnsw' or 'exhaustive' force one (benchmarks, tests). A
   * segment without a graph is always scanned.
   */
  readonly strategy?: SegmentSearch;
}

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
      planesPtr: seg.planesPtr, lower: qq.lower, upper: qq.upper, additionalCorrection: qq.additionalCorrection, componentSum: qq.componentSum,
      dims: handle.dims, similarity: handle.similarity, centroidDP: q.centroidDP,
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
        codePtr: seg.planesPtr, lower: qq.lower, upper: qq.upper, additionalCorrection: qq.additionalCorrection, componentSum: qq.componentSum,
        dims: handle.dims, similarity: handle.similarity, centroidDP: q.centroidDP,
      },
    );
  }
  const quantizeMs = options.profile ? performance.now() - quantizeAt : 0;
  try {
    const { result, strategy } = searchCodes(seg, scorer, options);
    const table = handle.vectors.ordToDoc;
    const docs = table ? Int32Array.from(result.ords, (o) => table[o]) : result.ords;
    return { docs, scores: result.scores, visited: result.visited, strategy, quantizeMs };
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
  const plan: SegmentSearchPlan = wanted === 'auto'
    ? planSegmentSearch(scorer.maxOrd, ef, seg.graph !== null)
    : { strategy: seg.graph ? wanted : 'exhaustive', visitLimit: Infinity };
  const scan = (visitedBefore: number) => {
    const r = exactSearch(scorer, k, handle.liveOrds);
    return { result: { ...r, visited: r.visited + visitedBefore }, strategy: 'exhaustive' as const };
  };
  if (plan.strategy === 'exhaustive' || !seg.graph) return scan(0);
  const global = options.global ?? null;
  const result = global || options.js
    ? seg.graph.searchJs(scorer, k, options.ef, global, plan.visitLimit)
    : seg.graph.search(scorer, k, options.ef, plan.visitLimit);
  return result.earlyTerminated ? scan(result.visited) : { result, strategy: 'hnsw' };
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

