import { exactSearch } from '../hnsw/HnswGraphSearcher.js';
import type { GlobalSimilarityQueue } from '../hnsw/GlobalSimilarityQueue.js';
import type { SegmentHandle } from './SegmentHandle.js';
import { loadSegment, type LoadedSegment } from './WorkerSegments.js';
import { RandomizedHadamard } from '../quantization/RandomizedHadamard.js';
import { encodingForBits, SINGLE_BIT_QUERY_NIBBLE } from '../quantized/ScalarEncodings.js';
import { EncodedQuantizedScorer } from '../quantized/EncodedVectorScorer.js';

/** Rotations by (dims, seed): segments of one index share theirs, and building one costs O(dims) draws. */
const rotations = new Map<string, RandomizedHadamard>();

function rotationOf(dims: number, seed: bigint | null): RandomizedHadamard | null {
  if (seed === null) return null;
  const key = `${dims}:${seed}`;
  let r = rotations.get(key);
  if (!r) rotations.set(key, (r = new RandomizedHadamard(dims, seed)));
  return r;
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
}

export interface SegmentKnnResult {
  /** Segment-local docs, best first (score desc, then doc asc). */
  readonly docs: Int32Array;
  readonly scores: Float32Array;
  readonly visited: number;
  /** Milliseconds spent quantizing the query (only when profiled; 0 otherwise). */
  readonly quantizeMs?: number;
}

/**
 * The per-segment kNN entry (Lucene's KnnVectorsReader.search seam), run in a worker: quantize
 * the query to 4 bits against the segment's centroid (COSINE normalized first, then rotated when
 * the segment's codes are), then score docs
 * with Lucene's 1-bit estimator, HNSW search when the segment has a graph and an exhaustive scan
 * otherwise, keeping the top k (equal scores: lower doc first) among live docs.
 */
export async function searchSegment(handle: SegmentHandle, target: Float32Array, options: SegmentSearchOptions): Promise<SegmentKnnResult> {
  const seg = await loadSegment(handle);
  const q = handle.quantized;
  if (!seg.scorer || !q) return { docs: new Int32Array(0), scores: new Float32Array(0), visited: 0 };
  if (q.bits !== 1) return searchEncoded(seg, handle, target, options);
  const planes = seg.kernels.u8().subarray(seg.planesPtr, seg.planesPtr + 4 * q.codeBytes);
  const quantizeAt = options.profile ? performance.now() : 0;
  const qq = seg.quantizer.quantize(target, q.centroid, planes, SINGLE_BIT_QUERY_NIBBLE, rotationOf(handle.dims, q.rotationSeed));
  const quantizeMs = options.profile ? performance.now() - quantizeAt : 0;
  seg.scorer.query = {
    planesPtr: seg.planesPtr,
    lower: qq.lower,
    upper: qq.upper,
    additionalCorrection: qq.additionalCorrection,
    componentSum: qq.componentSum,
    dims: handle.dims,
    similarity: handle.similarity,
    centroidDP: q.centroidDP,
  };
  const global = options.global ?? null;
  const result = !seg.graph
    ? exactSearch(seg.scorer, options.k, handle.liveOrds)
    : global || options.js
      ? seg.graph.searchJs(seg.scorer, options.k, options.ef, global)
      : seg.graph.search(seg.scorer, options.k, options.ef);
  const table = handle.vectors.ordToDoc;
  const docs = table ? Int32Array.from(result.ords, (o) => table[o]) : result.ords;
  return { docs, scores: result.scores, visited: result.visited, quantizeMs };
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

/**
 * A multi-bit segment (2, 4, 7 or 8 doc bits): the query is quantized at the encoding's query bits
 * into the segment's query buffer (4 x codeBytes, at least the query code's size), scored by the
 * wasm multi-bit estimator; level 0 of a graph is searched by the JS searcher over the resident
 * lists (the wasm level-0 search scores 1-bit codes only).
 */
function searchEncoded(seg: LoadedSegment, handle: SegmentHandle, target: Float32Array, options: SegmentSearchOptions): SegmentKnnResult {
  const q = handle.quantized!;
  const enc = encodingForBits(q.bits);
  const code = new Uint8Array(enc.queryCodeBytes(handle.dims));
  const qq = seg.quantizer.quantize(target, q.centroid, code, enc, rotationOf(handle.dims, q.rotationSeed));
  seg.kernels.u8().set(code, seg.planesPtr);
  const scorer = new EncodedQuantizedScorer(
    enc,
    { kernels: seg.kernels, recordsPtr: seg.handle.resident!.records, count: q.count, codeBytes: q.codeBytes, recordBytes: q.recordBytes },
    {
      codePtr: seg.planesPtr, lower: qq.lower, upper: qq.upper, additionalCorrection: qq.additionalCorrection, componentSum: qq.componentSum,
      dims: handle.dims, similarity: handle.similarity, centroidDP: q.centroidDP,
    },
  );
  try {
    const result = seg.graph ? seg.graph.searchJs(scorer, options.k, options.ef, options.global ?? null) : exactSearch(scorer, options.k, handle.liveOrds);
    const table = handle.vectors.ordToDoc;
    const docs = table ? Int32Array.from(result.ords, (o) => table[o]) : result.ords;
    return { docs, scores: result.scores, visited: result.visited };
  } finally {
    scorer.release();
  }
}
