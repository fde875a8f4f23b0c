/**
 * The nearest-rank percentile of samples sorted ascending: the smallest sample with at least p% of
 * all samples at or below it (p in [0, 100]; p 0 gives the minimum, p 100 the maximum), NaN when
 * there are none. The one definition every report of this package uses (the load tester's
 * per-second buckets and the benchmarks), so their p50/p99 mean the same thing.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
