import { threadId } from 'node:worker_threads';
import { GlobalSimilarityQueue } from '../../segments/hnsw/GlobalSimilarityQueue.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import { searchSegment, warmSegments, type SegmentFilter, type SegmentKnnResult } from '../../segments/index/searchSegment.js';
import { loadSegment, wasReleased } from '../../segments/index/WorkerSegments.js';
import type { SegmentSearch } from '../../segments/index/SegmentSearchPlan.js';
import { defineTask } from '../executor/Task.js';
import { resolveSegments, type SegmentRefs, type UnknownSegments } from '../SegmentRefs.js';
import { readAheadLeaders, type LeaderReadAhead } from '../prefetch/LeaderReadAhead.js';
import { newCounters, type RescoreCounters } from '../prefetch/RescoreCounters.js';

export interface KnnSliceArgs {
  /** The slice's segments, in slice order (by key once this worker has their handles). */
  readonly segments: SegmentRefs;
  readonly target: Float32Array;
  /** Hits per segment. */
  readonly k: number;
  /** Level-0 beam width (HNSW ef). */
  readonly ef: number;
  /** The query's cross-segment similarity queue (GlobalSimilarityQueue.create(ef)); null: segments search alone. */
  readonly global?: Int32Array | null;
  /** Search level 0 with the JS searcher instead of the wasm kernel (same results; for comparison). */
  readonly js?: boolean;
  /** Time each segment's search (KnnSliceResult.segmentMs) for a search profile. */
  readonly profile?: boolean;
  /** Per segment: the graph or a flat scan by the cost model ('auto', the default), or forced. */
  readonly strategy?: SegmentSearch;
  /**
   * The slice's claim cell, shared with the calling thread (cells over a SharedArrayBuffer): the
   * task searches only after claiming the cell (UNCLAIMED -> STARTED); otherwise the calling thread
   * has taken the slice back (UNCLAIMED -> TAKEN_BACK) and the task answers SLICE_TAKEN at once.
   * See KnnFloatVectorQuery.
   */
  readonly claim?: SliceClaim | null;
  /** Prefetch each searched segment's leaders for the rescoring that follows (LeaderReadAhead); absent: none. */
  readonly readAhead?: LeaderReadAhead | null;
  /** Pre-filter, per segment in slice order: its accepted docs (bitsets over SharedArrayBuffers); absent: unfiltered. */
  readonly filters?: readonly SegmentFilter[] | null;
}

/** A claim cell's states: set once, by whichever of the worker and the calling thread comes first. */
const UNCLAIMED = 0;
const STARTED = 1;
const TAKEN_BACK = 2;

export interface SliceClaim {
  readonly cells: Int32Array;
  readonly at: number;
}

/** A posted slice's answer when the calling thread searched it itself (it had not started here). */
export interface SliceTaken {
  readonly taken: true;
}
const SLICE_TAKEN: SliceTaken = { taken: true };

export function isSliceTaken(r: KnnSliceResult | SliceTaken): r is SliceTaken {
  return (r as Partial<SliceTaken>).taken === true;
}

/** Claims a posted slice for the calling thread: true when no worker had started it. */
export function takeBack(claim: SliceClaim): boolean {
  return Atomics.compareExchange(claim.cells, claim.at, UNCLAIMED, TAKEN_BACK) === UNCLAIMED;
}

export interface KnnSliceResult {
  readonly segments: SegmentKnnResult[];
  /** Per segment, milliseconds of its whole search in the worker (when profiled). */
  readonly segmentMs: Float64Array | null;
  readonly threadId: number;
  /** The leaders' read-ahead (null: none was asked for): its I/O, and per segment how many leaders it handled. */
  readonly readAhead: { readonly counters: RescoreCounters; readonly leaders: Int32Array } | null;
}

export const KNN_SLICE = defineTask<KnnSliceArgs, KnnSliceResult | SliceTaken | UnknownSegments>('knn.slice');
export const LOAD_SEGMENTS = defineTask<{ readonly segments: readonly SegmentHandle[] }, number>('index.load');

/**
 * Executor task `knn.slice`: the first phase over a slice of segments (Lucene's LeafSlice), each
 * searched through the segment's own kNN entry, in slice order. On the calling thread,
 * `beforeSegment` is its turns (CallerTurns.next): a pending promise before a segment is awaited
 * first, so the event loop runs between segments.
 */
export async function knnSlice(args: KnnSliceArgs, beforeSegment?: () => Promise<void> | null): Promise<KnnSliceResult | SliceTaken | UnknownSegments> {
  // Taken back: answer before resolving, so a retry with handles (after UnknownSegments) does not
  // make this worker keep the handles of an index that may be closing.
  if (args.claim && Atomics.load(args.claim.cells, args.claim.at) === TAKEN_BACK) return SLICE_TAKEN;
  const segments = resolveSegments(args.segments);
  if (!Array.isArray(segments)) return segments as UnknownSegments;
  if (args.claim && Atomics.compareExchange(args.claim.cells, args.claim.at, UNCLAIMED, STARTED) !== UNCLAIMED) return SLICE_TAKEN;
  const out: SegmentKnnResult[] = [];
  const global = args.global ? new GlobalSimilarityQueue(args.global) : null;
  const segmentMs = args.profile ? new Float64Array(segments.length) : null;
  const options = { k: args.k, ef: args.ef, global, js: args.js, profile: args.profile, strategy: args.strategy };
  const readAhead = args.readAhead ? { counters: newCounters(), leaders: new Int32Array(segments.length) } : null;
  for (let i = 0; i < segments.length; i++) {
    const turn = beforeSegment?.();
    if (turn) await turn;
    const at = segmentMs ? performance.now() : 0;
    const result = await searchSegment(segments[i]!, args.target, args.filters ? { ...options, filter: args.filters[i] } : options);
    out.push(result);
    if (segmentMs) segmentMs[i] = performance.now() - at;
    // After the timing: the read-ahead is I/O issued for the rescoring, not this segment's search.
    if (readAhead) readAhead.leaders[i] = readAheadLeaders(args.readAhead!, i, segments[i]!, result, readAhead.counters);
  }
  return { segments: out, segmentMs, threadId, readAhead };
}

/** Executor task `index.load`: opens segments in this worker ahead of the first query, and warms its search code. */
export async function loadSegments(args: { readonly segments: readonly SegmentHandle[] }): Promise<number> {
  // A reopen does not wait for this task: it may run after its index was closed, whose state
  // must then not be made (nothing would free it).
  const open = args.segments.filter((s) => !wasReleased(s.indexId));
  for (const s of open) await loadSegment(s);
  await warmSegments(open);
  return open.length;
}
