import type { TaskExecutor } from './executor/TaskExecutor.js';
import type { QueryStats } from './QueryStats.js';
import type { ReadPath } from './ReadPath.js';
import type { IndexReader, LeafReaderContext } from '../segments/index/IndexReader.js';
import { DocAndScoreQuery } from './DocAndScoreQuery.js';
import { POLICY_STATE_INTS, type PrefetchPolicyName } from './prefetch/PrefetchPolicy.js';
import type { LeafSlice, Query, SearchContext, Searcher } from './Query.js';

export type { LeafSlice } from './Query.js';
import { QueryStatsCollector } from './QueryStatsCollector.js';
import { monotonicMs } from './executor/clock.js';
import { QueryProfiler } from './QueryProfiler.js';
import type { RescoreThread } from './rescore/RescoreThread.js';
import { TakenBackTasks } from './knn/TakenBackTasks.js';
import { FirstPhasePlacement, type KnnThread } from './knn/KnnThread.js';
import type { ScoreDoc } from './ScoreDoc.js';
import { floatCompare } from './ScoreDoc.js';
import { TopDocs } from './TopDocs.js';
import { CallerTurns, EVENT_LOOP, type CallerThread } from './CallerThread.js';

export interface IndexSearcherOptions {
  /** Runs the first phase and rescoring (the service passes its process-wide pool). */
  readonly executor: TaskExecutor;
  /** Default read path for rescoring (per search overridable). */
  readonly readPath?: ReadPath;
  /** Default prefetch policy for the prefetching read paths. */
  readonly prefetchPolicy?: PrefetchPolicyName;
  /** I/O requests the process keeps in flight at most, shared by concurrent rescoring tasks. */
  readonly ioConcurrency?: number;
  /** First prefetch distance of a ring (it ramps up from here). */
  readonly initialPrefetchDistance?: number;
  /** Where rescoring runs by default (see RescoreThread; default `adaptive`). */
  readonly rescoreThread?: RescoreThread;
  /** Where the first phase runs by default (see KnnThread; default `adaptive`). */
  readonly knnThread?: KnnThread;
}

/** Per-search settings of {@link IndexSearcher.search}, each defaulting to the searcher's own. */
export interface SearchSettings {
  readonly readPath?: ReadPath;
  readonly prefetchPolicy?: PrefetchPolicyName;
  readonly signal?: AbortSignal;
  readonly trace?: boolean;
  /**
   * Profile the search: `true`, or a QueryProfiler the caller created at its own entry (the HTTP
   * layer does, at the request's arrival, and adds its phases). The profile lands in stats.profile.
   */
  readonly profile?: boolean | QueryProfiler;
  readonly rescoreThread?: RescoreThread;
  readonly knnThread?: KnnThread;
  /** Whether the first phase reads its leaders ahead of rescoring (absent: above MIN_READ_AHEAD_CANDIDATES candidates; see LeaderReadAhead). */
  readonly leaderReadAhead?: boolean;
  /** The calling thread as this search shares it (see CallerThread; default EVENT_LOOP: always free). */
  readonly callerThread?: CallerThread;
}

/** What {@link IndexSearcher.search} answers: Lucene's TopDocs and the search's stats. */
export interface SearchOutcome {
  readonly topDocs: TopDocs;
  readonly stats: QueryStats;
  /** The rescoring event order when `trace` was requested (see QueryStatsCollector.trace). */
  readonly trace?: readonly number[];
  /** Worker threads that issued prefetches (the parallel read paths spread issuance over several). */
  readonly prefetchThreads: readonly number[];
}

export const DEFAULT_READ_PATH: ReadPath = 'mmap+parallel';
export const DEFAULT_PREFETCH_POLICY: PrefetchPolicyName = 'adaptive';
export const DEFAULT_IO_CONCURRENCY = 256;
export const DEFAULT_INITIAL_PREFETCH_DISTANCE = 8;
export const DEFAULT_RESCORE_THREAD: RescoreThread = 'adaptive';
export const DEFAULT_KNN_THREAD: KnnThread = 'adaptive';

/**
 * Searches an IndexReader with the executor, as Lucene's IndexSearcher does with its
 * TaskExecutor: queries rewrite to a DocAndScoreQuery (first phase and rescoring run during
 * rewrite, on the executor), then the top n are taken by score desc, doc asc.
 */
export class IndexSearcher implements Searcher {
  readonly executor: TaskExecutor;
  readonly slices: readonly LeafSlice[];
  readonly readPath: ReadPath;
  readonly prefetchPolicy: PrefetchPolicyName;
  readonly ioConcurrency: number;
  readonly initialPrefetchDistance: number;
  readonly rescoreThread: RescoreThread;
  readonly knnThread: KnnThread;
  readonly knnPlacement = new FirstPhasePlacement();
  readonly takenBack = new TakenBackTasks();
  /** See Searcher.heldInArenas: fixed for the searcher's reader, so computed once, not per search. */
  readonly heldInArenas: boolean;
  /** Prefetch policy state per leaf, shared by all workers (see PrefetchPolicy). */
  readonly policyState: Int32Array;

  constructor(
    readonly reader: IndexReader,
    options: IndexSearcherOptions,
  ) {
    this.executor = options.executor;
    this.slices = IndexSearcher.slices(reader.leaves, this.executor.threads);
    this.heldInArenas = this.slices.every((slice) => slice.handles.every((h) => h.resident !== null || h.quantized === null || h.quantized.count === 0));
    this.readPath = options.readPath ?? DEFAULT_READ_PATH;
    this.prefetchPolicy = options.prefetchPolicy ?? DEFAULT_PREFETCH_POLICY;
    this.ioConcurrency = options.ioConcurrency ?? DEFAULT_IO_CONCURRENCY;
    this.initialPrefetchDistance = options.initialPrefetchDistance ?? DEFAULT_INITIAL_PREFETCH_DISTANCE;
    this.rescoreThread = options.rescoreThread ?? DEFAULT_RESCORE_THREAD;
    this.knnThread = options.knnThread ?? DEFAULT_KNN_THREAD;
    this.policyState = new Int32Array(new SharedArrayBuffer(4 * POLICY_STATE_INTS * Math.max(1, reader.leaves.length)));
  }

  /**
   * Groups leaves into at most `count` slices of similar total size (largest first onto the
   * lightest slice), keeping leaf order inside a slice. One task per slice keeps the executor's
   * per-task overhead at O(threads) per query instead of O(segments).
   */
  static slices(leaves: readonly LeafReaderContext[], count: number): LeafSlice[] {
    const n = Math.max(1, Math.min(count, leaves.length));
    const groups: LeafReaderContext[][] = Array.from({ length: n }, () => []);
    const load = new Float64Array(n);
    for (const leaf of [...leaves].sort((a, b) => b.reader.maxDoc - a.reader.maxDoc || a.ord - b.ord)) {
      let best = 0;
      for (let i = 1; i < n; i++) if (load[i] < load[best]) best = i;
      groups[best].push(leaf);
      load[best] += leaf.reader.maxDoc;
    }
    return groups
      .filter((g) => g.length > 0)
      .map((g) => {
        const sorted = g.sort((a, b) => a.ord - b.ord);
        return { leaves: sorted, handles: sorted.map((l) => l.reader.handle) };
      });
  }

  /** Rewrites to a fixed point (Lucene's IndexSearcher.rewrite). */
  async rewrite(query: Query, ctx: SearchContext): Promise<Query> {
    for (let q = query; ; ) {
      ctx.signal?.throwIfAborted();
      const next = await q.rewrite(this, ctx);
      if (next === q) return q;
      q = next;
    }
  }

  /** The top n hits of `query`, score descending then doc ascending, plus the search's stats. */
  async search(query: Query, n: number, settings: SearchSettings = {}): Promise<SearchOutcome> {
    if (!(Number.isInteger(n) && n >= 1)) throw new RangeError(`n must be a positive integer, got ${n}`);
    const stats = new QueryStatsCollector(settings.readPath ?? this.readPath);
    const profiler = settings.profile instanceof QueryProfiler ? settings.profile : settings.profile ? new QueryProfiler('library') : null;
    const ctx: SearchContext = {
      readPath: stats.readPath,
      prefetchPolicy: settings.prefetchPolicy ?? this.prefetchPolicy,
      signal: settings.signal,
      stats,
      trace: settings.trace,
      profiler,
      rescoreThread: settings.rescoreThread ?? this.rescoreThread,
      knnThread: settings.knnThread ?? this.knnThread,
      leaderReadAhead: settings.leaderReadAhead,
      startedAt: monotonicMs(),
      turns: new CallerTurns(settings.callerThread ?? EVENT_LOOP),
    };
    const rewritten = await this.rewrite(query, ctx);
    if (!(rewritten instanceof DocAndScoreQuery)) throw new Error(`${rewritten} did not rewrite to a DocAndScoreQuery`);
    const collectAt = profiler ? monotonicMs() : 0;
    const hits: ScoreDoc[] = [];
    for (let i = 0; i < rewritten.size; i++) hits.push({ doc: rewritten.docs[i], score: rewritten.scores[i] });
    hits.sort((a, b) => floatCompare(b.score, a.score) || a.doc - b.doc);
    const topDocs = new TopDocs({ value: rewritten.totalHits, relation: 'EQUAL_TO' }, hits.slice(0, n));
    profiler?.phase('search.topDocs', collectAt);
    const outcome = { topDocs, stats: stats.toStats(), trace: stats.trace, prefetchThreads: [...stats.prefetchThreads] };
    if (!profiler) return outcome;
    // perf_hooks delivers 'gc' entries on a later turn of the event loop: let them arrive.
    await new Promise((resolve) => setImmediate(resolve));
    return { ...outcome, stats: { ...outcome.stats, profile: profiler.toProfile() } };
  }
}
