import type { FilteredSegment, FirstPhaseIo, QueryStats } from './QueryStats.js';
import { addGraphCounters, newGraphCounters, type GraphIoCounters } from './prefetch/GraphPrefetcher.js';
import type { ReadPath } from './ReadPath.js';
import { addCounters, newCounters, type RescoreCounters } from './prefetch/RescoreCounters.js';

/** Accumulates one search's counters and phase timings; `toStats()` freezes them into QueryStats. */
export class QueryStatsCollector {
  readonly started = performance.now();
  readonly io: RescoreCounters = newCounters();
  /** The first phase's I/O when it searched the graph on disk (null: the in-RAM first phase). */
  graphIo: GraphIoCounters | null = null;
  /** The first phase scored exact fp32 similarities (see QueryStats.firstPhaseExact). */
  firstPhaseExact = false;
  candidates = 0;
  visited = 0;
  exhaustiveSegments = 0;
  /** A filtered search's segments (empty: no filter). */
  readonly filtered: FilteredSegment[] = [];
  deferred = true;
  firstPhaseMs = 0;
  rescoreMs = 0;
  rescoredOn: QueryStats['rescoredOn'] = 'none';
  searchedOn: QueryStats['searchedOn'] = 'none';
  slicesTakenBack = 0;
  pagesReadAhead = 0;
  /** Per-entry event log when tracing: +(i+1) = prefetch issued for entry i, -(i+1) = entry i scored. */
  trace: number[] | undefined;
  /** Worker threads that issued prefetches for this search. */
  readonly prefetchThreads = new Set<number>();

  constructor(readonly readPath: ReadPath) {}

  addIo(counters: RescoreCounters): void {
    addCounters(this.io, counters);
  }

  /** The first phase's read-ahead of its leaders (LeaderReadAhead): its calls count with the rest, its pages apart. */
  addReadAhead(counters: RescoreCounters): void {
    this.pagesReadAhead += counters.pagesPrefetched;
    this.io.syscalls += counters.syscalls;
  }

  addGraphIo(counters: GraphIoCounters): void {
    addGraphCounters((this.graphIo ??= newGraphCounters()), counters);
  }

  toStats(): QueryStats {
    return {
      readPath: this.readPath,
      candidates: this.candidates,
      visited: this.visited,
      exhaustiveSegments: this.exhaustiveSegments,
      ...(this.filtered.length > 0 ? { filter: this.filtered } : {}),
      pagesPrefetched: this.io.pagesPrefetched,
      pagesResident: this.io.pagesResident,
      pagesReadAhead: this.pagesReadAhead,
      syscalls: this.io.syscalls,
      readsBeforePrefetch: this.io.readsBeforePrefetch,
      deferred: this.deferred,
      maxPrefetchDistance: this.io.maxDistance,
      firstPhaseExact: this.firstPhaseExact,
      ...(this.graphIo ? { firstPhaseIo: firstPhaseIo(this.graphIo) } : {}),
      timings: {
        firstPhaseMs: round3(this.firstPhaseMs),
        rescoreMs: round3(this.rescoreMs),
        totalMs: round3(performance.now() - this.started),
      },
      rescoredOn: this.rescoredOn,
      searchedOn: this.searchedOn,
      slicesTakenBack: this.slicesTakenBack,
    };
  }
}

/** Milliseconds rounded to microseconds, as every reported timing is. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function firstPhaseIo(c: GraphIoCounters): FirstPhaseIo {
  return {
    scored: c.scored,
    pagesPrefetched: c.pagesPrefetched,
    pagesResident: c.pagesResident,
    readsBeforePrefetch: c.readsBeforePrefetch,
    readAhead: c.readAhead,
    wasted: c.wasted,
    adjacencyPrefetched: c.adjacencyPrefetched,
    syscalls: c.syscalls,
    maxPrefetchDistance: c.maxDistance,
  };
}
