/**
 * A simulated clock for the load tester (`LoadOptions.clock`): time moves only from one due timer
 * to the next, so a run of seconds takes milliseconds and every arrival, response, timeout and
 * stall happens at exactly the simulated time the test gave it, however loaded the machine is.
 * Timers run one per turn of the real event loop, so promise continuations and real I/O still
 * interleave with them.
 */
import type { Clock, ClockTimer } from '../../load/clock.js';

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  /** Pending timers by (time, insertion order). */
  private readonly queue: Entry[] = [];
  private pumping = false;

  constructor(start = 10_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  wakeAt(t: number, fn: () => void): void {
    this.push(t, fn);
  }

  after(ms: number, fn: () => void): ClockTimer {
    return this.push(this.t + Math.max(0, ms), fn) as unknown as ClockTimer;
  }

  cancel(timer: ClockTimer): void {
    (timer as unknown as Entry).cancelled = true;
  }

  /** The process is busy for `ms` (a blocked event loop): time passes and no timer runs meanwhile. */
  block(ms: number): void {
    this.t += ms;
  }

  private push(at: number, fn: () => void): Entry {
    const e: Entry = { at: Math.max(at, this.t), seq: this.seq++, fn, cancelled: false };
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.queue[mid];
      if (m.at < e.at || (m.at === e.at && m.seq < e.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, e);
    this.pump();
    return e;
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    setImmediate(() => {
      this.pumping = false;
      const e = this.queue.shift();
      if (e === undefined) return;
      if (!e.cancelled) {
        if (e.at > this.t) this.t = e.at;
        e.fn();
      }
      if (this.queue.length > 0) this.pump();
    });
  }
}
