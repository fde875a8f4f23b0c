/**
 * Admission control for searches: at most `maxInflight` run, up to `maxQueue` wait in FIFO
 * order, anything beyond is shed immediately (the Elasticsearch search thread-pool pattern:
 * fixed pool, bounded queue, 429). A waiter whose signal aborts (deadline, client gone) leaves
 * the queue without ever running.
 */

export class QueueFullError extends Error {
  constructor(readonly inflight: number, readonly queued: number) {
    super(`search queue is full (${inflight} running, ${queued} queued)`);
    this.name = 'QueueFullError';
  }
}

/** Gives the slot back; idempotent. */
export type Release = () => void;

interface Waiter {
  readonly grant: (release: Release) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class Admission {
  private running = 0;
  private readonly waiters: Waiter[] = [];
  /** Exponentially weighted mean of slot hold times, for Retry-After. */
  private holdMsEwma = 0;

  constructor(readonly maxInflight: number, readonly maxQueue: number) {
    if (!Number.isInteger(maxInflight) || maxInflight < 1) throw new RangeError(`maxInflight must be an integer >= 1, got ${maxInflight}`);
    if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError(`maxQueue must be an integer >= 0, got ${maxQueue}`);
  }

  get inflight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Resolves with a release function once a slot is held. Throws QueueFullError synchronously
   * (as a rejected promise) when the queue is full; rejects with `signal.reason` if the signal
   * aborts first.
   */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running < this.maxInflight) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiters.length >= this.maxQueue) {
      return Promise.reject(new QueueFullError(this.running, this.waiters.length));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Suggested client back-off in whole seconds: the expected time for the queue to drain. */
  retryAfterSeconds(): number {
    const ahead = this.running + this.waiters.length;
    const estimateMs = (ahead / this.maxInflight) * this.holdMsEwma;
    return Math.min(60, Math.max(1, Math.ceil(estimateMs / 1000)));
  }

  private releaser(): Release {
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const held = performance.now() - started;
      this.holdMsEwma = this.holdMsEwma === 0 ? held : 0.9 * this.holdMsEwma + 0.1 * held;
      const next = this.waiters.shift();
      if (next) {
        // Hand the slot over directly: `running` is unchanged, so no newcomer can overtake.
        next.signal?.removeEventListener('abort', next.onAbort);
        next.grant(this.releaser());
      } else {
        this.running--;
      }
    };
  }
}
