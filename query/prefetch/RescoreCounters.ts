/**
 * Mutable per-task I/O counters, accumulated in a worker and summed by the query.
 * Plain numbers on one object: incrementing allocates nothing.
 */
export interface RescoreCounters {
  /** Pages for which a prefetch (madvise WILLNEED or a read submission) was issued. */
  pagesPrefetched: number;
  /** Pages a residency probe (mincore) found already in the page cache. */
  pagesResident: number;
  /** madvise + mincore + pread + io_uring_enter calls. */
  syscalls: number;
  /** Vectors read before their prefetch was issued (must stay 0 on prefetching paths). */
  readsBeforePrefetch: number;
  /** Vectors scored. */
  scored: number;
  /** The largest ring distance reached. */
  maxDistance: number;
}

export function newCounters(): RescoreCounters {
  return { pagesPrefetched: 0, pagesResident: 0, syscalls: 0, readsBeforePrefetch: 0, scored: 0, maxDistance: 0 };
}

export function addCounters(into: RescoreCounters, from: RescoreCounters): void {
  into.pagesPrefetched += from.pagesPrefetched;
  into.pagesResident += from.pagesResident;
  into.syscalls += from.syscalls;
  into.readsBeforePrefetch += from.readsBeforePrefetch;
  into.scored += from.scored;
  into.maxDistance = Math.max(into.maxDistance, from.maxDistance);
}
