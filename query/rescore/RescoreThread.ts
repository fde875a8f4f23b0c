/**
 * Where a search's fp32 rescoring runs.
 * - `adaptive` (default): on the calling thread when every segment it touches is believed
 *   resident (the adaptive prefetch policy's warm streak, see PrefetchPolicy.believedResident),
 *   or when the ring is short (at most COLD_CALLER_CANDIDATES) and the executor has nothing else
 *   to run; otherwise on the executor as the read path says. Warm, the work is tens of
 *   microseconds of SIMD scoring, less than one executor round trip (the search profile's `hops`
 *   show the trip: queue wait + clone, run, return), so the hop is pure overhead. Cold, a short
 *   ring's reads are all in flight from one thread at once, so the round trip is overhead too
 *   (it doubled a cold k=10 rescoring, see Rescorer.ts); a long ring's page faults would block the
 *   caller's event loop for milliseconds, and with other searches in flight the workers keep it.
 * - `executor`: always as the read path says (the behaviour before adaptive placement).
 * - `caller`: always on the calling thread (comparison and tests).
 * Every placement runs the same ring and scoring code, so results are identical.
 */
export const RESCORE_THREADS = ['adaptive', 'executor', 'caller'] as const;
/** Where rescoring runs: `adaptive` (the default), `executor` or `caller`. */
export type RescoreThread = (typeof RESCORE_THREADS)[number];
