import { docToOrd, type SegmentHandle } from '../../segments/index/SegmentHandle.js';
import type { SegmentKnnResult } from '../../segments/index/searchSegment.js';
import { mappedVectors } from '../rescore/workerIoCache.js';
import { prefetchPolicy, type PrefetchPolicyName } from './PrefetchPolicy.js';
import type { RescoreCounters } from './RescoreCounters.js';

/**
 * The first phase's read-ahead of the fp32 vectors rescoring will read (Lucene #16656's prefetch
 * issued on the executor, moved one step earlier): a slice task that has searched a segment
 * prefetches that segment's local leaders, its best `perSegment` hits, through the thread's own
 * mapping of the `.vec`, while the other segments are still being searched. The global top
 * candidates are each segment's local top m_s (the merge keeps per-segment order), so the
 * leaders are most of them, and their reads are in flight (or done) by the time the ring asks.
 * The ring skips the entries read ahead (DocAndScoreQuery.readAhead) and prefetches the rest, so
 * every entry's read is issued before it is scored.
 *
 * The pages go through the same prefetch policy as the ring's: warm, the adaptive policy skips
 * them after its probes, as it skips the ring's.
 */
export interface LeaderReadAhead {
  /** Leaders per segment read ahead (leaderCount). */
  readonly perSegment: number;
  readonly policy: PrefetchPolicyName;
  /** The searcher's shared policy state (PrefetchPolicy). */
  readonly policyState: Int32Array;
  /** Per segment of the task, in task order: its slot in `policyState`. */
  readonly policySlots: Int32Array;
}

/**
 * Without an explicit setting (SearchContext.leaderReadAhead), only first phases with more
 * candidates than this read ahead: the rescoring of a short list waits on the device for less
 * than the read-ahead costs the first phase. Measured cold (1M x 1024 in 8 segments, 2 cores,
 * cgroup with 256 MiB of page cache, queries alternating with and without read-ahead in one
 * process): at 50 candidates (k=10) it took 0.66 ms off rescoring (p50 1.13 -> 0.47 ms) and
 * added 0.84 ms to the first phase (2.10 -> 2.94 ms), whose threads issue the madvise calls
 * (~15 us each under the memory limit), so the search p50 went 3.33 -> 3.54 ms; at 500
 * candidates (k=100) rescoring went 8.14 -> 3.46 ms for 4.22 -> 7.18 ms of first phase, search
 * p50 13.1 -> 11.5 ms (p99 22.1 either way; docs/architecture.md "Leader read-ahead" has the other runs). The
 * short rings' threshold is the calling thread's (COLD_CALLER_CANDIDATES).
 */
export const MIN_READ_AHEAD_CANDIDATES = 64;

/**
 * Leaders per segment: an equal share of the candidates, rounded up. Measured on the 1M x 1024
 * index from `prescore gen` (300 queries, k=10 at oversample 5 = 50 candidates, and 500): in 8
 * segments, 7 per segment (56 pages, 1.12x the candidates) are 90.2% of the global 50, 8 (1.28x)
 * 94.5%, 10 (1.60x) 98.7%; at 500 candidates 63 per segment (1.01x) are 95.4%; in 2 segments 25
 * per segment (1.00x) 93.7%, 32 (1.28x) 99.5%. An equal share keeps the extra device reads
 * (pages no candidate needs) at 0-12% for most of the benefit; a disk near its limit pays for each one.
 */
export function leaderCount(candidates: number, segments: number): number {
  return Math.ceil(candidates / Math.max(1, segments));
}

/**
 * Prefetches the leaders of segment `at` of the task (`handle`, its kNN `result`), each through the
 * policy (which may find it resident and skip it); returns how many leaders were handled: the
 * first that many of `result.docs` need no prefetch from the ring (DocAndScoreQuery.readAhead).
 */
export function readAheadLeaders(readAhead: LeaderReadAhead, at: number, handle: SegmentHandle, result: SegmentKnnResult, counters: RescoreCounters): number {
  const policy = prefetchPolicy(readAhead.policy);
  const file = mappedVectors(handle);
  const size = handle.vectors.byteSize;
  const slot = readAhead.policySlots[at];
  const n = Math.min(readAhead.perSegment, result.docs.length);
  for (let i = 0; i < n; i++) {
    const ord = docToOrd(handle.vectors, result.docs[i]);
    if (ord >= 0) policy.prefetch(file, ord * size, size, readAhead.policyState, slot, counters);
  }
  return n;
}
