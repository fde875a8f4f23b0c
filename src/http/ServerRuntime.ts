import { Admission, QueueFullError, type Ticket } from './Admission.js';
import { HttpError } from './errors.js';
import { EVENT_LOOP, type CallerThread } from '../api/types.js';
import { ServerMetrics } from './ServerMetrics.js';
import type { ServerOptions } from './options.js';

/**
 * For this long after it shed a request, the server thread takes no search work of its own: a
 * server that sheds is overloaded, its thread is busy reading, admitting and shedding requests,
 * and a search there would delay all of them (and `/health`); the workers take every search then.
 * (An event-loop utilization threshold was tried first: the calling thread's own searches keep
 * it above any useful threshold at 4 clients, which sent every search to the workers again.)
 */
const SHED_QUIET_MS = 100;

/**
 * The mutable state shared by the app's handlers and the server's lifecycle: admission,
 * metrics, the draining flag, open requests and the abort controllers of running searches.
 */
export class ServerRuntime {
  readonly admission: Admission;
  private currentMetrics: ServerMetrics;
  private drainingFlag = false;
  private stoppedFlag = false;
  private openRequests = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly searches = new Set<AbortController>();
  /**
   * The event loop as the server's searches share it. Free while the search asking is the only
   * request holding a place (Admission counts them from arrival): only then do adaptive placements
   * run their trials or a cold ring here. With time to spare unless it shed a request in the last
   * SHED_QUIET_MS: until then every search goes to the executor.
   */
  readonly callerThread: CallerThread = {
    free: () => this.admission.holding <= 1,
    spare: () => performance.now() - this.lastShedAt > SHED_QUIET_MS,
    turn: EVENT_LOOP.turn,
  };
  private lastShedAt = Number.NEGATIVE_INFINITY;

  constructor(
    options: Pick<ServerOptions, 'maxInflight' | 'maxQueue'>,
    /** Where engine failures are reported (one line each). */
    readonly log: (line: string) => void = (line) => console.error(line),
  ) {
    this.admission = new Admission(options.maxInflight, options.maxQueue);
    this.currentMetrics = this.newMetrics();
  }

  get metrics(): ServerMetrics {
    return this.currentMetrics;
  }

  /** Starts every metric from zero (after the server's warm-up requests, which no client sent). */
  resetMetrics(): void {
    this.currentMetrics.stop();
    this.currentMetrics = this.newMetrics();
  }

  private newMetrics(): ServerMetrics {
    return new ServerMetrics({ inflight: () => this.admission.inflight, queued: () => this.admission.queued });
  }

  /** A place for a search request that has just arrived, or the 429 (counted) when every place is held. */
  admit(): Ticket {
    try {
      return this.admission.admit();
    } catch (e) {
      if (!(e instanceof QueueFullError)) throw e;
      throw this.shed(e);
    }
  }

  /** Counts a shed request and gives its 429 (Elasticsearch's rejected-execution answer, with Retry-After). */
  shed(e: QueueFullError = new QueueFullError(this.admission.inflight, this.admission.queued)): HttpError {
    this.metrics.shed.inc();
    this.lastShedAt = performance.now();
    return new HttpError(
      429,
      'es_rejected_execution_exception',
      `${e.message}; retry later`,
      { max_inflight: this.admission.maxInflight, max_queue: this.admission.maxQueue },
      { 'Retry-After': String(this.admission.retryAfterSeconds()) },
    );
  }

  get draining(): boolean {
    return this.drainingFlag;
  }

  /** HTTP requests whose handler has not returned yet (searches, queued ones included). */
  get open(): number {
    return this.openRequests;
  }

  /** True once close() has finished: nothing can reach the app through the server any more. */
  get stopped(): boolean {
    return this.stoppedFlag;
  }

  startDraining(): void {
    this.drainingFlag = true;
  }

  markStopped(): void {
    this.drainingFlag = true;
    this.stoppedFlag = true;
  }

  requestStarted(): void {
    this.openRequests++;
  }

  requestEnded(): void {
    this.openRequests--;
    if (this.openRequests === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves when no request is open. */
  idle(): Promise<void> {
    if (this.openRequests === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  track(controller: AbortController): () => void {
    this.searches.add(controller);
    return () => this.searches.delete(controller);
  }

  /** Aborts every queued or running search (the drain deadline passed). */
  abortAll(reason: unknown): void {
    for (const c of this.searches) c.abort(reason);
  }
}
