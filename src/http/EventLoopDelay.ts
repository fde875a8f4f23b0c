import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Distribution } from './metrics.js';

/**
 * The server thread's event-loop delay, from Node's own monitor (`monitorEventLoopDelay`: a libuv
 * timer every `resolutionMs`, each wake-up's lateness recorded in an HDR histogram), in seconds.
 * The monitor records the whole interval between wake-ups, so its resolution is taken off each
 * figure here: an idle loop reads ~0, and a 50 ms stall ~40-50 ms (the timer may fire anywhere
 * in the stall). Read at scrape time as `prescore_event_loop_delay_seconds`.
 */
export class EventLoopDelay implements Distribution {
  private readonly histogram: IntervalHistogram;

  constructor(readonly resolutionMs = 10) {
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    // The monitor's timer is unref'd: it keeps no process alive.
    this.histogram.enable();
  }

  get count(): number {
    return this.histogram.count;
  }

  /** Sum of the delays in seconds (the mean's, less the resolution per sample; never negative). */
  get sum(): number {
    return this.count === 0 ? 0 : Math.max(0, this.histogram.mean / 1e9 - this.resolutionMs / 1e3) * this.count;
  }

  /** The delay at percentile `p` (0-100), in seconds. */
  percentile(p: number): number {
    return this.count === 0 ? 0 : Math.max(0, this.histogram.percentile(p) / 1e9 - this.resolutionMs / 1e3);
  }

  /**
   * Samples with a delay of at most `seconds`: the histogram answers percentiles only, so this
   * searches for the highest percentile whose value is within the bound (to 1e-6 of the count).
   */
  countAtMost(seconds: number): number {
    if (this.count === 0) return 0;
    const bound = (seconds + this.resolutionMs / 1e3) * 1e9;
    if (this.histogram.min > bound) return 0;
    if (this.histogram.max <= bound) return this.count;
    let lo = 0;
    let hi = 100;
    while (hi - lo > 1e-4) {
      const mid = (lo + hi) / 2;
      if (this.histogram.percentile(mid) <= bound) lo = mid;
      else hi = mid;
    }
    return Math.floor((lo / 100) * this.count);
  }

  stop(): void {
    this.histogram.disable();
  }
}
