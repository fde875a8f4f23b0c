/**
 * Milliseconds on the process-wide monotonic clock (CLOCK_MONOTONIC via process.hrtime). Unlike
 * `performance.now()`, whose origin is per thread, readings from the main thread and from any
 * worker are directly comparable, so a task's hop (submit -> worker start -> worker end -> result
 * back) can be split into its parts. ns since boot stays exact in a double for ~104 days.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
