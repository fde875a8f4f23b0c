import { PerformanceObserver, constants, performance, type PerformanceEntry } from 'node:perf_hooks';
import { monotonicMs } from './executor/clock.js';
import type { TaskHop } from './executor/TaskHop.js';
import { round3 } from './QueryStatsCollector.js';
import type { ProfiledPhase, QueryProfile, RescoreShareProfile, SegmentProfile } from './QueryProfile.js';

/**
 * Collects one search's profile. Created by whoever receives the request (the HTTP layer, at the
 * request's arrival, or the library facade) and handed down through the search settings; every
 * layer adds its phases on the process-wide monotonic clock, and executor hops land in `hops`
 * (RunOptions.hops). Only exists for searches that asked for a profile: unprofiled searches pay
 * nothing but a null check per phase.
 */
export class QueryProfiler {
  readonly origin: number;
  readonly hops: TaskHop[] = [];
  private readonly phases: { name: string; at: number; end: number }[] = [];
  readonly segments: SegmentProfile[] = [];
  readonly rescore: RescoreShareProfile[] = [];

  constructor(
    readonly entry: string,
    origin = monotonicMs(),
  ) {
    this.origin = origin;
    watchGc();
  }

  /** Records a calling-thread phase that ran from `at` to `end` (monotonicMs readings). */
  phase(name: string, at: number, end = monotonicMs()): number {
    this.phases.push({ name, at, end });
    return end;
  }

  /** The profile so far, times relative to the profiler's origin. */
  toProfile(): QueryProfile {
    const rel = (t: number) => round3(t - this.origin);
    const phases: ProfiledPhase[] = this.phases
      .slice()
      .sort((a, b) => a.at - b.at)
      .map((p) => ({ name: p.name, startMs: rel(p.at), durationMs: round3(p.end - p.at) }));
    const end = monotonicMs();
    return {
      entry: this.entry,
      phases,
      hops: [...this.hops]
        .sort((a, b) => a.submittedAt - b.submittedAt)
        .map((h) => ({
          task: h.task,
          threadId: h.threadId,
          startMs: rel(h.submittedAt),
          queueMs: round3(h.queueMs),
          runMs: round3(h.runMs),
          returnMs: round3(h.returnMs),
        })),
      segments: this.segments,
      rescore: this.rescore,
      gc: gcBetween(this.origin, end).map((g) => ({ kind: g.kind, startMs: rel(g.at), durationMs: round3(g.durationMs) })),
    };
  }
}

// ---- garbage collections of this thread, kept while profiles are being taken ----

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const GC_KEEP = 256;
const recentGc: { kind: string; at: number; durationMs: number }[] = [];
let observer: PerformanceObserver | null = null;
/** performance.now() (this thread's origin) -> monotonicMs(). */
let toMonotonic = 0;

function watchGc(): void {
  if (observer) return;
  toMonotonic = monotonicMs() - performance.now();
  observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = GC_KINDS[(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'gc';
      recentGc.push({ kind, at: e.startTime + toMonotonic, durationMs: e.duration });
    }
    if (recentGc.length > GC_KEEP) recentGc.splice(0, recentGc.length - GC_KEEP);
  });
  observer.observe({ entryTypes: ['gc'] });
  // The observer must not keep a process alive that is otherwise done.
  (observer as unknown as { unref?: () => void }).unref?.();
}

function gcBetween(from: number, to: number): { kind: string; at: number; durationMs: number }[] {
  return recentGc.filter((g) => g.at + g.durationMs >= from && g.at <= to);
}
