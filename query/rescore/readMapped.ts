import { PrefetchDistance, runPrefetchRing } from '../prefetch/PrefetchDistance.js';
import { prefetchPolicy } from '../prefetch/PrefetchPolicy.js';
import type { RescoreRun } from './RescoreRun.js';
import { mappedVectors } from './workerIoCache.js';

/**
 * The mmap paths: vectors are scored in place in this worker's mapping of each segment's `.vec`
 * (zero copy). With a prefetch policy, entries are prefetched (madvise WILLNEED, per the policy)
 * as they enter the ring and fault when they leave it to be scored; without one (`mmap`, or in
 * order when the values source needs first-phase scores) each entry faults when it is scored.
 */
export function readMapped(run: RescoreRun): void {
  const { args, counters, prefetched, trace, scorer } = run;
  const n = args.ords.length;
  const files = args.segments.map(mappedVectors);
  const readAhead = args.readAhead;
  const read = (i: number) => {
    const ord = args.ords[i];
    if (ord < 0) return scorer.noVector(i);
    const s = args.seg[i];
    if (!prefetched[i]) counters.readsBeforePrefetch++;
    const file = files[s];
    const rel = ord * args.segments[s].vectors.byteSize;
    // One view covers files up to 4 GiB; beyond, overlapping 1 GiB chunk views (a vector never straddles two).
    const c = file.chunkCount === 1 ? 0 : file.chunkIndex(rel);
    scorer.score(i, file.chunkFloats(c), (rel - file.chunkStart(c)) >>> 2);
  };
  const policy = args.prefetch === 'none' || args.mode === 'inOrder' ? null : prefetchPolicy(args.prefetch);
  if (policy === null) {
    for (let i = 0; i < n; i++) read(i);
    return;
  }
  const distance = new PrefetchDistance(args.distance.initial, args.distance.cap);
  runPrefetchRing(
    n,
    distance,
    (i) => {
      prefetched[i] = 1;
      const ord = args.ords[i];
      if (ord < 0) return false;
      const s = args.seg[i];
      const size = args.segments[s].vectors.byteSize;
      // Read ahead by the first phase: issued already, so the ring treats it as issued (its distance ramps as for a cold entry).
      const issued = (readAhead !== null && readAhead[i] === 1) || policy.prefetch(files[s], ord * size, size, args.policyState, args.policySlots[s], counters);
      if (trace) trace.push(i + 1);
      return issued;
    },
    read,
  );
  counters.maxDistance = distance.reached;
}
