import { GlobalSimilarityQueue } from '../../segments/hnsw/GlobalSimilarityQueue.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import { searchSegment, warmSegments, type SegmentKnnResult } from '../../segments/index/searchSegment.js';
import { loadSegment } from '../../segments/index/WorkerSegments.js';
import { defineTask } from '../executor/Task.js';

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

export interface KnnSliceResult {
  readonly segments: SegmentKnnResult[];
}

export const KNN_SLICE = defineTask<KnnSliceArgs, KnnSliceResult>('knn.slice');
export const LOAD_SEGMENTS = defineTask<{ readonly segments: readonly SegmentHandle[] }, number>('index.load');

/**
 * Executor task `knn.slice`: the first phase over a slice of segments (Lucene's LeafSlice), each
 * searched through the segment's own kNN entry, in slice order.
 */
export async function knnSlice(args: KnnSliceArgs): Promise<KnnSliceResult> {
  const out: SegmentKnnResult[] = [];
  const global = args.global ? new GlobalSimilarityQueue(args.global) : null;
  for (const handle of args.segments) out.push(await searchSegment(handle, args.target, { k: args.k, ef: args.ef, global, js: args.js }));
  return { segments: out };
}

/** Executor task `index.load`: opens segments in this worker ahead of the first query, and warms its search code. */
export async function loadSegments(args: { readonly segments: readonly SegmentHandle[] }): Promise<number> {
  for (const s of args.segments) await loadSegment(s);
  await warmSegments(args.segments);
  return args.segments.length;
}
