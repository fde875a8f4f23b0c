/**
 * Admission control for searches (the Elasticsearch search thread-pool pattern: a fixed pool, a
 * bounded queue, 429 beyond). A search request holds a place from the moment it arrives (its
 * headers are read), while its body is still coming in, queued, or running: at most
 * `maxInflight + maxQueue` places are held, and a request that finds them all taken is shed at
 * once, before its body is read or parsed. Of the held places, at most `maxInflight` run on the
 * engine; the others wait in FIFO order of asking to run. A waiter whose signal aborts
 * (deadline, client gone) leaves the queue without ever running.
 *
 * Why at arrival and not once the body is parsed: counted only from `acquire`, a request was
 * invisible to admission while its body was read and parsed, and every search that ran on the
 * calling thread kept the next requests' bytes in the kernel, where nothing counted or shed them
 * (128 clients against `--max-inflight 2 --max-queue 2`: not one 429 in 8 s, accepted searches
 * waiting 0.6-1.1 s). Counting places held by requests instead of searches running means the
 * bound holds whatever thread a search runs on, and a shed costs no body parse.
 */

export class QueueFullError extends Error {
  constructor(
    readonly inflight: number,
    readonly queued: number,
  ) {
    super(`search queue is full (${inflight} running, ${queued} queued)`);
    this.name = 'QueueFullError';
  }
}

/** Gives the execution slot (and the place) back; idempotent. */
export type Release = () => void;

/**
 * A held place. `run` waits for an execution slot; the `Release` it resolves with then owns the
 * place. `leave` gives up a place that never got a slot (a bad body, a client gone, a deadline
 * while queued); once a slot is granted it does nothing (the Release must be called instead).
 */
export interface Ticket {
  run(signal?: AbortSignal): Promise<Release>;
  leave(): void;
}

interface Waiter {
  readonly grant: (release: Release) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class Admission {
  /** Places held: arrived and not yet released or left. */
  private held = 0;
  private running = 0;
  private readonly waiters: Waiter[] = [];
  /** Exponentially weighted mean of slot hold times, for Retry-After. */
  private holdMsEwma = 0;

  constructor(
    readonly maxInflight: number,
    readonly maxQueue: number,
  ) {
    if (!Number.isInteger(maxInflight) || maxInflight < 1) throw new RangeError(`maxInflight must be an integer >= 1, got ${maxInflight}`);
    if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError(`maxQueue must be an integer >= 0, got ${maxQueue}`);
  }

  /** Searches running on the engine. */
  get inflight(): number {
    return this.running;
  }

  /** Places held by requests not running: reading their body, validating, or waiting for a slot. */
  get queued(): number {
    return this.held - this.running;
  }

  /** Places held in all (inflight + queued). */
  get holding(): number {
    return this.held;
  }

  /** Whether every place is held: the next request would be shed. */
  get full(): boolean {
    return this.held >= this.maxInflight + this.maxQueue;
  }

  /** Takes a place for a request that has just arrived; throws QueueFullError when every place is held. */
  admit(): Ticket {
    if (this.full) throw new QueueFullError(this.running, this.held - this.running);
    this.held++;
    let state: 'held' | 'waiting' | 'granted' | 'left' = 'held';
    let waiter: Waiter | undefined;
    return {
      run: (signal) => {
        if (state !== 'held') return Promise.reject(new Error(`admission ticket already ${state}`));
        if (signal?.aborted) return Promise.reject(signal.reason);
        if (this.running < this.maxInflight && this.waiters.length === 0) {
          state = 'granted';
          this.running++;
          return Promise.resolve(this.releaser());
        }
        state = 'waiting';
        return new Promise<Release>((resolve, reject) => {
          waiter = {
            grant: (release) => {
              state = 'granted';
              resolve(release);
            },
            reject,
            signal,
            onAbort: () => {
              this.unqueue(waiter!);
              state = 'held';
              reject(signal!.reason);
            },
          };
          signal?.addEventListener('abort', waiter.onAbort, { once: true });
          this.waiters.push(waiter);
        });
      },
      leave: () => {
        if (state === 'granted' || state === 'left') return;
        if (state === 'waiting') {
          this.unqueue(waiter!);
          waiter!.signal?.removeEventListener('abort', waiter!.onAbort);
          waiter!.reject(new Error('admission ticket left the queue'));
        }
        state = 'left';
        this.held--;
      },
    };
  }

  /** Suggested client back-off in whole seconds: the expected time for the held places to drain. */
  retryAfterSeconds(): number {
    const estimateMs = (this.held / this.maxInflight) * this.holdMsEwma;
    return Math.min(60, Math.max(1, Math.ceil(estimateMs / 1000)));
  }

  private unqueue(waiter: Waiter): void {
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  private releaser(): Release {
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const held = performance.now() - started;
      this.holdMsEwma = this.holdMsEwma === 0 ? held : 0.9 * this.holdMsEwma + 0.1 * held;
      this.held--;
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
