/**
 * How far ahead of scoring the ring prefetches, PostgreSQL read-stream style: start small so a
 * short candidate list (or a warm one) doesn't pay for a deep ring, double on every entry that
 * needed I/O, shrink by one on every entry that was already resident, never beyond the cap that
 * the I/O concurrency budget grants this task.
 */
export class PrefetchDistance {
  private value: number;
  private max: number;

  constructor(
    readonly initial: number,
    readonly cap: number,
  ) {
    if (!(initial >= 1) || !(cap >= initial)) throw new RangeError(`invalid prefetch distance: initial ${initial}, cap ${cap}`);
    this.value = initial;
    this.max = initial;
  }

  get current(): number {
    return this.value;
  }

  /** The largest distance reached so far. */
  get reached(): number {
    return this.max;
  }

  onIssued(): void {
    if (this.value < this.cap) {
      this.value = Math.min(this.cap, this.value * 2);
      if (this.value > this.max) this.max = this.value;
    }
  }

  onResident(): void {
    if (this.value > this.initial) this.value--;
  }
}

/**
 * The rescoring ring over `n` entries in order: an entry enters (is prefetched) while fewer than
 * `distance.current` entries are waiting; when the ring is full the oldest entry is scored; at the
 * end the ring drains. `prefetch(i)` returns true when it issued I/O. Every entry is prefetched
 * before it is scored.
 */
export function runPrefetchRing(n: number, distance: PrefetchDistance, prefetch: (i: number) => boolean, score: (i: number) => void): void {
  let head = 0;
  for (let tail = 0; tail < n; tail++) {
    while (head < n && head - tail < distance.current) {
      if (prefetch(head++)) distance.onIssued();
      else distance.onResident();
    }
    score(tail);
  }
}
