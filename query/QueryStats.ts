import type { QueryProfile } from './QueryProfile.js';
import type { ReadPath } from './ReadPath.js';

/** Per-query counters and timings (summed into /metrics by the server). */
export interface QueryStats {
  readonly readPath: ReadPath;
  /** Candidates the first phase handed to rescoring (k x oversample, or fewer). */
  readonly candidates: number;
  /** Docs the first phase visited (scored with the 1-bit estimator), over all segments. */
  readonly visited: number;
  /** Pages for which a prefetch (madvise/read) was issued. */
  readonly pagesPrefetched: number;
  /** Pages found already resident by a residency check (so no prefetch was needed). */
  readonly pagesResident: number;
  /** libc calls made for I/O or residency (madvise, mincore, pread, io_uring_enter). */
  readonly syscalls: number;
  /** fp32 vectors read before their prefetch was issued (must be 0 on prefetching paths). */
  readonly readsBeforePrefetch: number;
  /** Whether scoring was deferred behind prefetch (false when the values source needs scores). */
  readonly deferred: boolean;
  /** The largest prefetch distance the ring reached. */
  readonly maxPrefetchDistance: number;
  readonly timings: {
    readonly firstPhaseMs: number;
    readonly rescoreMs: number;
    readonly totalMs: number;
  };
  /** Where rescoring ran: on the executor's workers, or on the calling thread (pages believed resident). */
  readonly rescoredOn: 'executor' | 'caller' | 'none';
  /** The per-phase profile, when the search asked for one (`profile: true`). */
  readonly profile?: QueryProfile;
}
