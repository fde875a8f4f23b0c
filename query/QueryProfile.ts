import type { SegmentStrategy } from '../segments/index/SegmentSearchPlan.js';
/**
 * A search's profile (what `profile: true` adds to `stats`, in the spirit of Elasticsearch's
 * search profile): where one query's time went, phase by phase, so per-query overhead is measured
 * rather than guessed. All times are milliseconds; `startMs` is relative to the profile's origin
 * (the HTTP request's arrival, or the library call).
 */
export interface QueryProfile {
  /** Where the search entered: `http` (request arrival) or `library` (VectorIndex.search / IndexSearcher.search). */
  readonly entry: string;
  /** Calling-thread phases in start order (entry, merge, rescoring preparation and collection). */
  readonly phases: readonly ProfiledPhase[];
  /** Every executor round trip of the search, in submission order. */
  readonly hops: readonly ProfiledHop[];
  /** First phase per segment, as measured inside the worker. */
  readonly segments: readonly SegmentProfile[];
  /** Rescoring per share of the ring (one per task, or one when it ran on the calling thread). */
  readonly rescore: readonly RescoreShareProfile[];
  /** Garbage collections of the calling thread that overlapped the search (perf_hooks 'gc'). */
  readonly gc: readonly GcPause[];
}

/** One step on the searching thread (`knn.merge`, `rescore.topN`, `http.body`, ...). */
export interface ProfiledPhase {
  readonly name: string;
  readonly startMs: number;
  readonly durationMs: number;
}

/** One executor round trip (see TaskHop): queue wait + argument clone, the handler, result clone + return. */
export interface ProfiledHop {
  readonly task: string;
  readonly threadId: number;
  readonly startMs: number;
  readonly queueMs: number;
  readonly runMs: number;
  readonly returnMs: number;
}

/** One segment's first phase: query quantization and the graph search or scan, as measured in its worker. */
export interface SegmentProfile {
  readonly segment: string;
  readonly threadId: number;
  /** The 4-bit query quantization against the segment's centroid. */
  readonly quantizeMs: number;
  /** Graph (or exhaustive) search with the segment's estimator. */
  readonly searchMs: number;
  readonly visited: number;
  /**
   * 'hnsw': the graph was searched; 'filtered-hnsw': the graph, as a filtered traversal;
   * 'exhaustive': every (accepted) code was scanned (no graph, or cheaper by the cost model).
   */
  readonly strategy: SegmentStrategy;
}

/** One share of the rescoring ring: where it ran, its entries, pages and time. */
export interface RescoreShareProfile {
  /** `executor`: a worker ran this share; `caller`: the calling thread did (pages believed resident). */
  readonly on: 'executor' | 'caller';
  readonly threadId: number;
  readonly entries: number;
  /** Time inside the share (open + ring + scoring), as seen where it ran. */
  readonly runMs: number;
  readonly pagesPrefetched: number;
  readonly pagesResident: number;
  readonly syscalls: number;
}

/** A garbage-collection pause of the searching thread during the search. */
export interface GcPause {
  readonly kind: string;
  readonly startMs: number;
  readonly durationMs: number;
}
