import type { ReadPath } from './ReadPath.js';
import type { PrefetchPolicyName } from './prefetch/PrefetchPolicy.js';
import type { QueryStatsCollector } from './QueryStatsCollector.js';
import type { QueryProfiler } from './QueryProfiler.js';
import type { RescoreThread } from './rescore/RescoreThread.js';
import type { FirstPhasePlacement, KnnThread } from './knn/KnnThread.js';
import type { IndexReader, LeafReaderContext } from '../segments/index/IndexReader.js';
import type { TaskExecutor } from './executor/TaskExecutor.js';
import type { SegmentHandle } from '../segments/index/SegmentHandle.js';
import type { TakenBackTasks } from './knn/TakenBackTasks.js';
import { CallerTurns, EVENT_LOOP } from './CallerThread.js';

/** Per-search settings and accumulators, threaded through every rewrite. */
export interface SearchContext {
  readonly readPath: ReadPath;
  readonly prefetchPolicy: PrefetchPolicyName;
  readonly signal?: AbortSignal;
  readonly stats: QueryStatsCollector;
  /** Record the rescoring event order (prefetch/score per entry) in the stats; for tests and debugging. */
  readonly trace?: boolean;
  /** Collects the search's per-phase profile; null when none was asked for. */
  readonly profiler?: QueryProfiler | null;
  /** Where rescoring runs (see RescoreThread; absent: as the read path says, i.e. `executor`). */
  readonly rescoreThread?: RescoreThread;
  /** Where the first phase runs (see KnnThread; absent: `executor`). */
  readonly knnThread?: KnnThread;
  /**
   * Set by a rescoring query for its inner query when the rescoring will read the hits' fp32
   * vectors through the page cache with this prefetch policy: the first phase then prefetches
   * each segment's leaders as soon as that segment is searched (LeaderReadAhead).
   */
  readonly hitsReadAhead?: PrefetchPolicyName;
  /**
   * Whether a first phase asked to (hitsReadAhead) reads its leaders ahead: true also for short
   * lists, false never, absent above MIN_READ_AHEAD_CANDIDATES hits only (LeaderReadAhead);
   * never while the adaptive policy believes every segment resident.
   */
  readonly leaderReadAhead?: boolean;
  /**
   * When the search started (executor/clock.ts): the order of every executor task it runs
   * (RunOptions.order), so the executor finishes earlier searches first (OrderedTaskQueue).
   */
  readonly startedAt: number;
  /**
   * The search's turns on the calling thread (CallerThread): work placed there turns the event
   * loop first and every TURN_BUDGET_MS, and adaptive placements use the thread only while it is
   * free. Absent: the calling thread's own event loop (EVENT_LOOP).
   */
  readonly turns?: CallerTurns;
}

/** The search's turns on the calling thread (SearchContext.turns, or the plain event loop's). */
export function callerTurns(ctx: SearchContext): CallerTurns {
  return ctx.turns ?? new CallerTurns(EVENT_LOOP);
}

/** A group of leaves searched by one executor task (Lucene's IndexSearcher.LeafSlice). */
export interface LeafSlice {
  readonly leaves: readonly LeafReaderContext[];
  /** The leaves' segment handles, built once (a slice task's argument, not rebuilt per query). */
  readonly handles: readonly SegmentHandle[];
}

/**
 * What a query's rewrite may use of the searcher running it (IndexSearcher implements it; the
 * interface keeps queries from depending on the searcher's module, and the searcher on theirs).
 */
export interface Searcher {
  readonly reader: IndexReader;
  readonly executor: TaskExecutor;
  readonly slices: readonly LeafSlice[];
  /** Prefetch policy state per leaf, shared by all workers (see PrefetchPolicy). */
  readonly policyState: Int32Array;
  /** I/O requests the process keeps in flight at most, shared by concurrent rescoring tasks. */
  readonly ioConcurrency: number;
  /** First prefetch distance of a ring (it ramps up from here). */
  readonly initialPrefetchDistance: number;
  /** The adaptive first-phase placement's measurements (see KnnThread). */
  readonly knnPlacement: FirstPhasePlacement;
  /**
   * Whether every segment's codes and graph are held in the process's arenas (openIndex). A bare
   * reader's segments are loaded by each thread that searches them, so adaptive placement keeps
   * them off the calling thread rather than load a copy there too.
   */
  readonly heldInArenas: boolean;
  /**
   * Executor tasks still pending whose slices the calling thread took back (KnnFloatVectorQuery):
   * they answer at once when a worker gets to them, so they do not make the executor busy.
   */
  readonly takenBack: TakenBackTasks;
  /** Rewrites to a fixed point. */
  rewrite(query: Query, ctx: SearchContext): Promise<Query>;
}

/**
 * Whether the executor has nothing to run but tasks whose work the calling thread took back.
 * Measured in the HTTP server (1M x 1024, single stream): every search that took a slice back
 * then found the executor busy and sent its short cold ring to the workers, 4 of 4.
 */
export function executorIdle(searcher: Searcher): boolean {
  return searcher.executor.pending !== undefined && searcher.executor.pending - searcher.takenBack.pending === 0;
}

/**
 * A query that reaches its final form by rewriting (Lucene style: kNN and rescoring do all their
 * work in rewrite and end as a DocAndScoreQuery). `rewrite` returns `this` when already final.
 */
export abstract class Query {
  /** Runs this query's work on `searcher` and returns what is left to collect (a {@link DocAndScoreQuery} of hits), as Lucene's Query.rewrite. */
  abstract rewrite(searcher: Searcher, ctx: SearchContext): Promise<Query>;
  /** A readable description, as Lucene's Query.toString. */
  abstract toString(): string;
}
