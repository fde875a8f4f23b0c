import type { RescoreCounters } from './RescoreCounters.js';

/** What a policy needs from a mapped file: a residency probe (mincore) and an advice (madvise WILLNEED). */
export interface PageAccess {
  /** Page size aligned probe; true when every page of [offset, offset+length) is in the page cache. */
  isResident(offset: number, length: number): boolean;
  /** Asks the kernel to start reading [offset, offset+length) (does not wait). */
  prefetch(offset: number, length: number): void;
}

/** The prefetch policies: `always`, `backoff` (Lucene #13381) and `adaptive` (the default). */
export const PREFETCH_POLICIES = ['always', 'backoff', 'adaptive'] as const;
/** One of {@link PREFETCH_POLICIES}. */
export type PrefetchPolicyName = (typeof PREFETCH_POLICIES)[number];

/**
 * Per-file policy state shared by every worker thread (an Int32Array over a SharedArrayBuffer),
 * like Lucene's shared prefetch counter (#15571): residency history is a property of the file,
 * not of whichever thread happens to read it. Updates are deliberately racy: a lost increment
 * only shifts when the next probe happens.
 */
export const POLICY_STATE_INTS = 4;
const HITS = 0; // consecutive probe hits (backoff, adaptive)
const MISS_EWMA = 1; // adaptive: miss rate estimate in 1/1024ths
const CALLS = 2; // adaptive: calls since the last probe (cold mode)

/**
 * Decides, per fp32 vector entering the rescoring ring, whether to probe residency and whether
 * to issue a prefetch. Returns true when a prefetch was issued (the page was believed cold), which
 * the ring uses to ramp its distance.
 */
export interface PrefetchPolicy {
  readonly name: PrefetchPolicyName;
  prefetch(access: PageAccess, offset: number, length: number, state: Int32Array, slot: number, counters: RescoreCounters): boolean;
}

function probe(access: PageAccess, offset: number, length: number, counters: RescoreCounters): boolean {
  counters.syscalls++;
  const resident = access.isResident(offset, length);
  if (resident) counters.pagesResident++;
  return resident;
}

function advise(access: PageAccess, offset: number, length: number, counters: RescoreCounters): true {
  counters.syscalls++;
  counters.pagesPrefetched++;
  access.prefetch(offset, length);
  return true;
}

/** Prefetch every vector, never probe (Lucene #16145's RANDOM mode). Best cold; ~1 syscall per vector when warm. */
export const ALWAYS: PrefetchPolicy = {
  name: 'always',
  prefetch(access, offset, length, _state, _slot, counters) {
    return advise(access, offset, length, counters);
  },
};

/**
 * Lucene #13381: count consecutive page-cache hits and probe only at calls 0, 1, 2, 4, 8, ...
 * of a hit streak; a probe that misses resets the streak and prefetches. Cheap when warm, but in
 * a mixed warm/cold random pattern hot hits push the counter up and cold vectors between probes
 * get no prefetch (Lucene #16145, #16279) — kept for comparison.
 */
export const BACKOFF: PrefetchPolicy = {
  name: 'backoff',
  prefetch(access, offset, length, state, slot, counters) {
    const old = state[slot + HITS]++;
    if (old !== 0 && (old & (old - 1)) !== 0) return false;
    if (probe(access, offset, length, counters)) return false;
    state[slot + HITS] = 0;
    return advise(access, offset, length, counters);
  },
};

/**
 * prescore's default candidate. Three regimes, chosen by a shared miss-rate estimate and hit streak:
 * - mostly cold (miss rate > 1/4): prefetch without probing (one syscall per vector, as `always`),
 *   probing every 16th call only to keep the estimate current;
 * - mixed: probe every vector and prefetch each miss — a cold vector is never skipped;
 * - long warm streak (>= 1024 consecutive hits, Lucene's PrefetchBackoff "rule of three": a probe
 *   costs ~1-3 us, a miss tens to hundreds): probe only every `skip` calls, skip = min(256,
 *   16 << log2(hits / 1024)), so warm overhead falls under 1%; any miss resets to probing.
 */
export const ADAPTIVE: PrefetchPolicy = {
  name: 'adaptive',
  prefetch(access, offset, length, state, slot, counters) {
    const hits = state[slot + HITS];
    if (hits >= 1024) {
      const skip = Math.min(256, 16 << Math.floor(Math.log2(hits / 1024)));
      state[slot + HITS] = hits + 1;
      // Probe positions are spread by a hash of the streak so they don't align with caller loops.
      if (mix(hits) % skip !== 0) return false;
    } else if (state[slot + MISS_EWMA] > 256) {
      const calls = ++state[slot + CALLS];
      if ((calls & 15) !== 0) return advise(access, offset, length, counters);
    }
    const resident = probe(access, offset, length, counters);
    const ewma = state[slot + MISS_EWMA];
    // Miss-rate estimate in 1/1024ths, EWMA with weight 1/16.
    state[slot + MISS_EWMA] = ewma + (((resident ? 0 : 1024) - ewma) >> 4);
    if (resident) {
      if (hits < 1024) state[slot + HITS] = hits + 1;
      return false;
    }
    state[slot + HITS] = 0;
    return advise(access, offset, length, counters);
  },
};

/**
 * Consecutive resident probes after which the adaptive policy's file counts as resident for
 * placement decisions (RescoreThread `adaptive`): ~10 warm queries of 50 candidates over 2
 * segments. Any missed probe resets the streak, so a file that went cold is back on the workers
 * from the next query on.
 */
export const RESIDENT_STREAK = 256;

/** Whether `policy`'s shared state for the file at `slot` says its pages are in the page cache. */
export function believedResident(policy: PrefetchPolicyName, state: Int32Array, slot: number): boolean {
  // Only the adaptive policy's streak means "every probe hit": backoff counts calls, always never probes.
  return policy === 'adaptive' && state[slot + HITS] >= RESIDENT_STREAK;
}

/**
 * A read of the file at `slot` was found cold by someone else's probe (the graph prefetcher's
 * residency samples): the hit streak ends, so the adaptive policy probes (and prefetches) every
 * vector again instead of skipping probes as it does in a warm streak.
 */
export function noteColdRead(state: Int32Array, slot: number): void {
  state[slot + HITS] = 0;
}

export function prefetchPolicy(name: PrefetchPolicyName): PrefetchPolicy {
  switch (name) {
    case 'always':
      return ALWAYS;
    case 'backoff':
      return BACKOFF;
    case 'adaptive':
      return ADAPTIVE;
  }
}

/** A cheap integer hash (murmur3 finalizer), non-negative. */
function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}
