/**
 * Where a search's first phase (the 1-bit search of every segment) runs.
 * - `adaptive` (default): on the calling thread alone, or on the executor with the calling thread
 *   searching one of the slices meanwhile (as Lucene's TaskExecutor runs tasks on the caller
 *   too), whichever was cheaper in the last side-by-side trial for this searcher
 *   (FirstPhasePlacement, TRIAL_SAMPLES), but only while the executor has nothing else to run.
 *   The first phase reads only the codes and graphs held in RAM, so the caller never waits on
 *   the disk; what the executor adds is parallelism across slices at the price of a round trip
 *   per slice (queue wait + clone + wake-up + return: ~0.3 ms on an idle 2-core VM, several ms
 *   when other processes compete for the cores). Measured side by side (200k x 768, 2 segments,
 *   2 workers, load average 8.5): first phase p50 1.18 ms on the caller vs 7.97 ms on the
 *   executor. With other searches in flight (or other requests waiting for the calling thread,
 *   CallerThread.free), nothing is measured: the calling thread takes the search when no other
 *   first phase holds it, in turns (CallerThread: a turn before it starts and every TURN_BUDGET_MS
 *   between segments, so the event loop keeps reading, admitting and answering), and the whole
 *   first phase of a search that finds it taken is one task (`worker`), so concurrent searches
 *   spread over the workers: parallelism across searches, not within one, with one hop per search
 *   at most. Why the caller too: a hop costs CPU on both threads (clone, wake-up, return), and
 *   under load that is most of what a search costs beyond its own work. Closed loop over HTTP,
 *   warm, the two servers side by side in alternating 3 s windows (4 each): 200k x 768 (2
 *   segments), server CPU per answered search 3.20 ms against 3.57 with every busy search on a
 *   worker at 4 clients, 2.29 against 2.63 at 16, answered/s within the windows' noise (271-296
 *   against 252-310); 1M x 1024 (8 segments, where a caller's first phase turns between its
 *   segments and the next search finds the caller taken) 7.71 against 7.40 ms and 6.14 against
 *   6.23. Measured before that (the worker against one task per slice): closed loop, warm 1M x
 *   1024, 4 and 8 searches in flight, 510 / 510 searches/s against 487 / 475 with one task per
 *   slice, p99 24.8 / 42.0 ms against 39.3 / 67.7.
 * - `executor`: always one task per slice on the executor, the caller only waits.
 * - `worker`: always one task over every segment.
 * - `caller`: always on the calling thread (comparison and tests).
 * - `caller+executor`: always the first slice here and the others on the executor; a posted slice
 *   that no worker has started by the time the caller is done is searched here too (taken back).
 * Every placement runs the same per-segment search code, so results are identical.
 */
export const KNN_THREADS = ['adaptive', 'executor', 'worker', 'caller', 'caller+executor'] as const;
/** Where the first phase runs: `adaptive` (the default), `executor`, `worker`, `caller` or `caller+executor`. */
export type KnnThread = (typeof KNN_THREADS)[number];

/**
 * Where one search's first phase ran: `caller+executor` is the adaptive executor placement on an
 * idle executor: the calling thread searches the first slice while the workers search the
 * others. Measured side by side (warm, 2 workers, the three placements interleaved query by
 * query, 500 queries each): 1M x 1024 in 8 segments (2 slices of 4), first phase p50 2.48 ms
 * caller, 2.52 ms executor, 1.77 ms caller+executor; 200k x 768 in 2 segments (2 slices of 1),
 * 0.54 / 0.92 / 0.65 ms, where the caller alone stays the cheaper.
 */
export type FirstPhaseWhere = Exclude<KnnThread, 'adaptive'>;

/**
 * The placement that is not the preferred one is measured again every `exploreEvery` adaptive
 * choices: EXPLORE_EVERY at first and whenever an explored sample comes out competitive (its time
 * within COMPETITIVE of the preferred placement's), doubling up to MAX_EXPLORE_EVERY while explores
 * keep confirming the preferred one. Why: an explore runs a search on the slower placement, and
 * at one in 32 those searches were the p99 (bench:profile, 200k x 768 warm, 500 queries, two runs:
 * adaptive p99 3.22 / 1.79 ms against 1.18 / 1.19 ms with the first phase always on the caller,
 * p50 equal). Backed off to one in 512, explores are 0.2% of searches; a placement that becomes
 * faster is seen at the next explore (at most 512 choices later), which resets the interval.
 */
const EXPLORE_EVERY = 32;
const MAX_EXPLORE_EVERY = 512;
const COMPETITIVE = 1.1;
/**
 * The placements are compared by their times alone. An earlier rule counted the executor's at
 * 1.25x, for its tail: with the first phase all on the workers (the `executor` placement), p99
 * was 6.1-8.4 ms against 3.9-4.5 ms on the caller for about the same mean (1M x 1024, 8
 * segments, 2 workers, warm). The adaptive choice's executor arm is `caller+executor` now, and a
 * posted slice no worker has started is taken back by the caller (KnnFloatVectorQuery), so its
 * tail is no longer the worker's wake-up: side by side (1M x 1024, single stream, searches 3 ms
 * apart, 1000 per placement interleaved), first phase p50 1.45-1.61 ms against 2.03-2.27 on the
 * caller alone, p99 lower than the caller's in 6 of 8 runs (num_candidates 100), and at the
 * service's default beam (200) p50 1.98-2.01 against 3.07, p99 9.4-10.5 against 17.4 (two runs).
 * With the 1.25x premium the HTTP server kept the caller alone there (first phase p50 3.38 ms,
 * 198 of 200 searches), its explored `caller+executor` samples at 2.96 ms never calling a trial.
 * At 200k x 768 in 2 segments trials keep the caller alone in a plain single stream (0.54 against
 * 0.65 ms side by side), and choose `caller+executor` when other work keeps the workers awake
 * between searches (bench:profile's default variants: 0.62-0.68 ms against 0.82-0.89 forced onto
 * the caller alone).
 */
/** Weight of the newest measurement in the preferred placement's moving average (measured on every search). */
const ALPHA = 0.1;
/**
 * Weight of an explored measurement, the other placement's (one search in EXPLORE_EVERY): it
 * replaces that placement's time, since only a trial can act on it. Why not a moving average:
 * the first trial of an HTTP server runs during its warm-up requests (concurrent, the JIT still
 * compiling), and at 0.5 that trial's inflated time took 3-4 explores (100-160 searches) to
 * wash out: 161 of the server's first 200 searches stayed on the caller alone (first phase p50
 * 3.53 ms) while `caller+executor` measured 2.49 ms (1M x 1024, single stream).
 */
const ALPHA_EXPLORED = 1;

/**
 * The preferred placement changes only through a trial: TRIAL_SAMPLES searches on each, alternating
 * (ABBA: caller, executor, executor, caller, ...), each placement's average then replaced by the
 * median of its samples. Why: the two moving averages are measured at different times (the
 * preferred one on every search, the other one search in `exploreEvery`), and this machine's
 * speed drifts 2x within minutes, so comparing them put 1% / 13% / 21% of warm searches on
 * `caller+executor` in three bench:profile runs (200k x 768, 2 segments), where it is ~20% slower
 * than the caller alone side by side (0.65 vs 0.54 ms); one lucky explored sample, or a slow
 * stretch measured on the preferred placement only, was enough. Side by side, both see the same
 * machine; the median of five ignores two preempted samples. The first searches are a trial too.
 */
const TRIAL_SAMPLES = 5;
/**
 * A trial is called when the other placement's time is this much below the preferred one's (so
 * noise around equal costs does not call trial after trial), and at most once per TRIAL_GAP
 * adaptive choices: a trial puts ~TRIAL_SAMPLES searches on the slower placement.
 */
const TRIAL_MARGIN = 1.1;
const TRIAL_GAP = 32;

/** The two placements the adaptive choice measures on an idle executor. */
type Measured = 'caller' | 'caller+executor';

export interface PlacementChoice {
  readonly where: FirstPhaseWhere;
  /**
   * How the search's first-phase time feeds the placement's average: not at all (a forced
   * placement, or the machine was busy), as the preferred placement, as an explored one, or as
   * one of a trial's side-by-side samples.
   */
  readonly sample: 'none' | 'preferred' | 'explored' | 'trial';
}

/** The side-by-side samples of one trial (TRIAL_SAMPLES per placement). */
class Trial {
  private readonly caller = new Float64Array(TRIAL_SAMPLES);
  private readonly executor = new Float64Array(TRIAL_SAMPLES);
  private callerN = 0;
  private executorN = 0;

  /** The placement short of samples; on a tie, in ABBA order (so neither always goes first). */
  next(): Measured {
    if (this.callerN !== this.executorN) return this.callerN < this.executorN ? 'caller' : 'caller+executor';
    return this.callerN % 2 === 0 ? 'caller' : 'caller+executor';
  }

  add(onCaller: boolean, ms: number): void {
    if (onCaller) {
      if (this.callerN < TRIAL_SAMPLES) this.caller[this.callerN++] = ms;
    } else if (this.executorN < TRIAL_SAMPLES) this.executor[this.executorN++] = ms;
  }

  get complete(): boolean {
    return this.callerN === TRIAL_SAMPLES && this.executorN === TRIAL_SAMPLES;
  }

  median(onCaller: boolean): number {
    const s = (onCaller ? this.caller : this.executor).sort();
    return s[TRIAL_SAMPLES >> 1]!;
  }
}

/**
 * The adaptive choice, per searcher: an exponentially weighted mean of the first phase's wall time
 * on each placement, measured only on searches that had the machine to themselves (no executor
 * task pending, no other first phase on the caller), since queueing behind other searches would
 * be charged to the placement otherwise. A first phase on the caller counts as busy too: the
 * searches of a burst all start before the first one finishes, and only one of them may take the
 * calling thread. The averages only call for a trial (see TRIAL_SAMPLES), which decides.
 */
export class FirstPhasePlacement {
  private callerMs = Number.NaN;
  private executorMs = Number.NaN;
  private preferred: Measured = 'caller';
  private trial: Trial | null = new Trial();
  /** Adaptive idle choices since the last trial ended. */
  private sinceTrial = 0;
  private exploreEvery = EXPLORE_EVERY;
  /** Adaptive choices outside a trial until the next explore. */
  private untilExplore = EXPLORE_EVERY;
  private onCallerNow = 0;

  /**
   * Where the next search's first phase runs; pair with done(). `executorIdle`: no executor task
   * pending and nothing else waiting for the calling thread (CallerThread.free); `callerAllowed`:
   * the adaptive choice may use the calling thread at all (not for a reader whose segments are not
   * held in the process's arenas: the caller would load its own copy; not while the thread has no
   * time to spare, CallerThread.spare).
   */
  choose(thread: KnnThread, executorIdle: boolean, callerAllowed = true): PlacementChoice {
    const choice = this.pick(thread, executorIdle && this.onCallerNow === 0, callerAllowed && this.onCallerNow === 0);
    if (choice.where === 'caller') this.onCallerNow++;
    return choice;
  }

  /** The first phase chosen by `choice` finished after `ms` (or failed: then `ms` is NaN and nothing is recorded). */
  done(choice: PlacementChoice, ms: number): void {
    const onCaller = choice.where === 'caller';
    if (onCaller) this.onCallerNow--;
    if (choice.sample === 'none' || Number.isNaN(ms)) return;
    if (choice.sample === 'trial') {
      this.trial?.add(onCaller, ms);
      if (this.trial?.complete) this.decide(this.trial);
      return;
    }
    if (choice.sample === 'explored') {
      const preferredMs = onCaller ? this.executorMs : this.callerMs;
      this.exploreEvery = ms <= COMPETITIVE * preferredMs ? EXPLORE_EVERY : Math.min(MAX_EXPLORE_EVERY, 2 * this.exploreEvery);
      this.untilExplore = this.exploreEvery;
    }
    const alpha = choice.sample === 'explored' ? ALPHA_EXPLORED : ALPHA;
    if (onCaller) this.callerMs += alpha * (ms - this.callerMs);
    else this.executorMs += alpha * (ms - this.executorMs);
    const preferredOnCaller = this.preferred === 'caller';
    const preferredMs = preferredOnCaller ? this.callerMs : this.executorMs;
    const otherMs = preferredOnCaller ? this.executorMs : this.callerMs;
    if (this.sinceTrial >= TRIAL_GAP && TRIAL_MARGIN * otherMs < preferredMs) this.trial = new Trial();
  }

  private decide(trial: Trial): void {
    this.callerMs = trial.median(true);
    this.executorMs = trial.median(false);
    const preferred: Measured = this.callerMs <= this.executorMs ? 'caller' : 'caller+executor';
    if (preferred !== this.preferred) this.exploreEvery = EXPLORE_EVERY;
    this.preferred = preferred;
    this.untilExplore = this.exploreEvery;
    this.trial = null;
    this.sinceTrial = 0;
  }

  private pick(thread: KnnThread, idle: boolean, callerFree: boolean): PlacementChoice {
    if (thread !== 'adaptive') return { where: thread, sample: 'none' };
    if (!callerFree) return { where: 'worker', sample: 'none' };
    // Busy (other searches in flight or held): the calling thread takes this one, in turns
    // (CallerThread), and the workers the searches that find it taken. Not measured.
    if (!idle) return { where: 'caller', sample: 'none' };
    // Measured only on an idle executor, where the calling thread also searches a slice.
    if (this.trial) return { where: this.trial.next(), sample: 'trial' };
    this.sinceTrial++;
    if (--this.untilExplore > 0) return { where: this.preferred, sample: 'preferred' };
    this.untilExplore = this.exploreEvery;
    return { where: this.preferred === 'caller' ? 'caller+executor' : 'caller', sample: 'explored' };
  }
}
