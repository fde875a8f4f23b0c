/**
 * The time source and timers of a load run. The real clock is `performance.now()` with Node's
 * timers; a test (or a simulation) passes its own and drives a whole run, arrivals, timeouts,
 * progress lines and find-max cooldowns alike, in simulated time, so rates, stalls and lateness
 * can be asserted exactly on a machine of any speed or load.
 */
import { performance } from 'node:perf_hooks';

declare const timerBrand: unique symbol;
/** A pending `after` callback; only the clock that made it can cancel it. */
export type ClockTimer = { readonly [timerBrand]: true };

/** Time and timers, injectable so tests run without waiting. */
export interface Clock {
  /** Milliseconds on a monotonic timeline. */
  now(): number;
  /**
   * Wakes `fn` around time `t`: once `t` is reached, or earlier, so `fn` must check `now()`
   * itself; a `t` already past still yields to the event loop first (so responses are
   * timestamped while a late generator catches up).
   */
  wakeAt(t: number, fn: () => void): void;
  /** Calls `fn` once after `ms` unless cancelled first (timeouts, progress, the hard deadline). */
  after(ms: number, fn: () => void): ClockTimer;
  /** Cancels a timer set by wakeAt. */
  cancel(timer: ClockTimer): void;
}

/**
 * Sleeps on a timer (millisecond granularity) and polls only the sub-millisecond remainder through
 * setImmediate, which lets I/O run: precise enough for arrival times, without burning a core at
 * low rates.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  wakeAt(t, fn) {
    const wait = t - performance.now();
    if (wait >= 1) setTimeout(fn, Math.floor(wait));
    else setImmediate(fn);
  },
  after: (ms, fn) => setTimeout(fn, Math.max(0, ms)) as unknown as ClockTimer,
  cancel: (timer) => clearTimeout(timer as unknown as NodeJS.Timeout),
};
