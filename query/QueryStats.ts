import type { SegmentStrategy } from '../segments/index/SegmentSearchPlan.js';
import type { QueryProfile } from './QueryProfile.js';
import type { ReadPath } from './ReadPath.js';
import type { FirstPhaseWhere } from './knn/KnnThread.js';

/** One segment of a filtered search. */
export interface FilteredSegment {
  readonly segment: string;
  /** Live docs the filter accepts in the segment (exact). */
  readonly cardinality: number;
  /** How the planner searched the segment for this filter (SegmentSearchPlan.planFilteredSearch). */
  readonly strategy: SegmentStrategy;
  /** Codes scored. */
  readonly visited: number;
  /** Share of the query's graph neighbourhood the filter accepts (the plan's input; its selectivity where not probed). */
  readonly nearby: number;
}

/** Per-query counters and timings (summed into /metrics by the server). */
export interface QueryStats {
  readonly readPath: ReadPath;
  /** Candidates the first phase handed to rescoring (k x oversample, or fewer). */
  readonly candidates: number;
  /** Docs the first phase visited (scored with the 1-bit estimator), over all segments. */
  readonly visited: number;
  /** Segments the first phase scanned flat instead of searching their graph (no graph, or cheaper by the cost model). */
  readonly exhaustiveSegments: number;
  /** A filtered search: per segment, how many docs its filter accepted and how the segment was searched. Absent: no filter. */
  readonly filter?: readonly FilteredSegment[];
  /** Pages for which a prefetch (madvise/read) was issued. */
  readonly pagesPrefetched: number;
  /** Pages found already resident by a residency check (so no prefetch was needed). */
  readonly pagesResident: number;
  /**
   * Pages the first phase prefetched for rescoring as each segment's search ended (its leaders:
   * LeaderReadAhead); rescoring does not prefetch them again, and pagesPrefetched counts the rest.
   */
  readonly pagesReadAhead: number;
  /** libc calls made for I/O or residency (madvise, mincore, pread, io_uring_enter). */
  readonly syscalls: number;
  /** fp32 vectors read before their prefetch was issued (must be 0 on prefetching paths). */
  readonly readsBeforePrefetch: number;
  /** Whether scoring was deferred behind prefetch (false when the values source needs scores). */
  readonly deferred: boolean;
  /** The largest prefetch distance the ring reached. */
  readonly maxPrefetchDistance: number;
  /**
   * The first phase already scored exact fp32 similarities (the graph searched on disk): the
   * rescoring step reused those scores instead of reading the vectors a second time.
   */
  readonly firstPhaseExact: boolean;
  /** I/O of the disk-resident first phase (`firstPhase: 'graph'`); absent for the in-RAM one. */
  readonly firstPhaseIo?: FirstPhaseIo;
  readonly timings: {
    readonly firstPhaseMs: number;
    readonly rescoreMs: number;
    readonly totalMs: number;
    /** A filtered search: milliseconds spent getting the filter's bitsets (built, or found in the filter cache). */
    readonly filterMs?: number;
  };
  /** Where rescoring ran: on the executor's workers, or on the calling thread (pages believed resident). */
  readonly rescoredOn: 'executor' | 'caller' | 'none';
  /** Where the first phase ran (see KnnThread): on the calling thread, the executor's workers (a task per slice, or one `worker` task for all), or both (the caller searched one slice); `none`: no 1-bit first phase (on-disk graph). */
  readonly searchedOn: FirstPhaseWhere | 'none';
  /**
   * Slices posted to the executor that the calling thread searched itself because no worker had
   * started them when its own slice was done (`caller+executor`; see KnnFloatVectorQuery).
   */
  readonly slicesTakenBack: number;
  /** The per-phase profile, when the search asked for one (`profile: true`). */
  readonly profile?: QueryProfile;
}

/** What the graph first phase read (summed over segments). */
export interface FirstPhaseIo {
  /** Vectors scored (exact fp32 similarities). */
  readonly scored: number;
  /** Vector pages for which a read or madvise(WILLNEED) was issued ahead of scoring. */
  readonly pagesPrefetched: number;
  /** Vectors a residency probe found in the page cache (no read needed). */
  readonly pagesResident: number;
  /** Vectors read without a prefetch (prefetch off, or exhaustive segments). */
  readonly readsBeforePrefetch: number;
  /** Vectors read ahead for the next candidates (lookahead) and, of those, never scored. */
  readonly readAhead: number;
  readonly wasted: number;
  /** Neighbour-list prefetches issued (adjacency pages of new candidates). */
  readonly adjacencyPrefetched: number;
  readonly syscalls: number;
  readonly maxPrefetchDistance: number;
}
