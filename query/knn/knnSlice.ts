import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import { exactSearch } from '../../segments/hnsw/HnswGraphSearcher.js';
import { GlobalSimilarityQueue } from '../../segments/hnsw/GlobalSimilarityQueue.js';
import { loadSegment } from './WorkerSegments.js';

export interface KnnSliceArgs {
  readonly segments: readonly SegmentHandle[];
  readonly target: Float32Array;
  /** Hits per segment. */
  readonly k: number;
  /** Level-0 beam width (HNSW ef). */
  readonly ef: number;
  /** The query's cross-segment similarity queue (GlobalSimilarityQueue.create(ef)); null: segments search alone. */
  readonly global?: Int32Array | null;
  /** Search level 0 with the JS searcher instead of the wasm kernel (same results; for comparison). */
  readonly js?: boolean;
}

export interface SegmentKnnResult {
  /** Segment-local docs, best first (score desc, then doc asc). */
  readonly docs: Int32Array;
  readonly scores: Float32Array;
  readonly visited: number;
}

/**
 * Executor task `knn.slice`: the first phase over a slice of segments. Per segment: quantize the
 * query to 4 bits against that segment's centroid (COSINE normalized first), then score docs with
 * Lucene's 1-bit estimator — HNSW search when the segment has a graph, an exhaustive scan
 * otherwise — keeping the top k (equal scores: lower doc first) among live docs.
 */
export async function knnSlice(args: KnnSliceArgs): Promise<{ segments: SegmentKnnResult[] }> {
  const out: SegmentKnnResult[] = [];
  const global = args.global ? new GlobalSimilarityQueue(args.global) : null;
  for (const handle of args.segments) {
    const seg = await loadSegment(handle);
    const q = handle.quantized;
    if (!seg.scorer || !q) {
      out.push({ docs: new Int32Array(0), scores: new Float32Array(0), visited: 0 });
      continue;
    }
    const planes = seg.kernels.u8().subarray(seg.planesPtr, seg.planesPtr + 4 * q.codeBytes);
    const qq = seg.quantizer.quantize(args.target, q.centroid, planes);
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
    const result = !seg.graph
      ? exactSearch(seg.scorer, args.k, handle.liveOrds)
      : global || args.js
        ? seg.graph.searchJs(seg.scorer, args.k, args.ef, global)
        : seg.graph.search(seg.scorer, args.k, args.ef);
    const table = handle.vectors.ordToDoc;
    const docs = table ? Int32Array.from(result.ords, (o) => table[o]) : result.ords;
    out.push({ docs, scores: result.scores, visited: result.visited });
  }
  return { segments: out };
}

/** Executor task `index.load`: opens segments in this worker ahead of the first query. */
export async function loadSegments(args: { readonly segments: readonly SegmentHandle[] }): Promise<number> {
  for (const s of args.segments) await loadSegment(s);
  return args.segments.length;
}
