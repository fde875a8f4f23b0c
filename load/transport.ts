/**
 * The HTTP client side of a run: `node:http` with one keep-alive agent per run, sized from the
 * rate and the timeout so an open loop is never throttled by its own connection pool
 * (undici's fetch adds per-request promise/stream overhead and hides socket assignment).
 * Callbacks, not promises, keep the per-request cost small at a few thousand requests/s.
 */
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Clock, ClockTimer } from './clock.js';
import type { Target } from './target.js';

/** How a request ended. */
export type OutcomeKind = 'ok' | 'shed' | 'timeout' | 'error';

/** One request's outcome. */
export interface Outcome {
  readonly kind: OutcomeKind;
  /** HTTP status, 0 when no response arrived. */
  readonly status: number;
  /** The run clock's `now()` when the response body was complete (or the failure was observed). */
  readonly doneAt: number;
  /** Response body, for 2xx only. */
  readonly body: string | null;
  /** ok | http_429 | http_503 | http_504 | http_<n> | client_timeout | deadline | <errno code>. */
  readonly detail: string;
  /** A shed answer's `Retry-After`, in seconds, when it carried one. */
  readonly retryAfterS?: number;
}

export interface Pending {
  settled: boolean;
  req: ClientRequest | null;
  timer: ClockTimer | null;
  done: (o: Outcome) => void;
}

/**
 * How a run's requests reach the server: `SocketTransport` by default (`HttpTransport`, node:http's
 * client, is kept for comparison); a test or an embedder may pass another (a simulated server on
 * a simulated clock) through `LoadOptions.transport`.
 */
export interface Transport {
  /** Requests posted and not yet settled. */
  readonly inFlight: number;
  /** Reused sockets the server had closed under us (retried once, not an outcome). */
  readonly resetRetries: number;
  /** Opens `n` connections before the clock starts. */
  preconnect(n: number, timeoutMs: number): Promise<void>;
  /**
   * Sends one request; `done` is called exactly once. `deadline` is an absolute time on the run's
   * clock after which the request is aborted as a client timeout.
   */
  post(body: Buffer, deadline: number, done: (o: Outcome) => void): void;
  /** Settles everything still in flight as `deadline` timeouts (the run's hard stop). */
  abortAll(): void;
  /** Closes every connection. */
  close(): void;
}

/** Makes a run's transport for its target, pool size and clock. */
export type TransportFactory = (target: Target, maxSockets: number, clock: Clock) => Transport;

/** Status codes that mean "the server refused work to protect itself". */
export function classifyStatus(status: number): { kind: OutcomeKind; detail: string } {
  if (status >= 200 && status < 300) return { kind: 'ok', detail: 'ok' };
  if (status === 429 || status === 503) return { kind: 'shed', detail: `http_${status}` };
  if (status === 504) return { kind: 'timeout', detail: 'http_504' };
  return { kind: 'error', detail: `http_${status}` };
}

export class HttpTransport implements Transport {
  readonly agent: Agent;
  private readonly pending = new Set<Pending>();
  /** Reused sockets the server had closed under us (retried once, not an outcome). */
  resetRetries = 0;

  constructor(
    private readonly target: Target,
    readonly maxSockets: number,
    private readonly clock: Clock,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      maxSockets,
      maxFreeSockets: maxSockets,
      // LIFO keeps a few hot sockets busy; idle ones time out before a typical server's 5 s
      // keep-alive closes them under us.
      scheduling: 'lifo',
      timeout: 4000,
      noDelay: true,
    } as ConstructorParameters<typeof Agent>[0]);
  }

  /**
   * Opens `n` keep-alive connections before the clock starts (GET /health through the pool),
   * so the first second of the run does not pay for a burst of TCP handshakes.
   */
  async preconnect(n: number, timeoutMs = 2000): Promise<void> {
    const t = this.target;
    const one = (): Promise<void> =>
      new Promise((resolve) => {
        const req = request(
          {
            agent: this.agent,
            host: t.address,
            family: t.family,
            port: t.port,
            path: t.healthPath,
            method: 'GET',
            setHost: false,
            headers: { host: t.hostHeader },
            timeout: timeoutMs,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
            res.on('error', () => resolve());
          },
        );
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve());
        req.end();
      });
    await Promise.all(Array.from({ length: n }, one));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one POST; `done` is called exactly once. `deadline` is an absolute time on the run's
   * clock after which the request is aborted as a client timeout.
   */
  post(body: Buffer, deadline: number, done: (o: Outcome) => void): void {
    const p: Pending = { settled: false, req: null, timer: null, done };
    this.pending.add(p);
    const wait = deadline - this.clock.now();
    p.timer = this.clock.after(wait, () => this.finish(p, 'timeout', 0, null, 'client_timeout'));
    this.issue(p, body, false);
  }

  private issue(p: Pending, body: Buffer, isRetry: boolean): void {
    const t = this.target;
    const req = request({
      agent: this.agent,
      host: t.address,
      family: t.family,
      port: t.port,
      path: t.path,
      method: 'POST',
      setHost: false,
      headers: {
        host: t.hostHeader,
        'content-type': 'application/json',
        'content-length': body.length,
        accept: 'application/json',
      },
    });
    p.req = req;
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const cls = classifyStatus(status);
      if (cls.kind === 'ok') {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => this.finish(p, 'ok', status, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'), 'ok'));
      } else {
        res.resume();
        const retryAfter = Number(res.headers['retry-after']);
        res.on('end', () => this.finish(p, cls.kind, status, null, cls.detail, Number.isFinite(retryAfter) ? retryAfter : undefined));
      }
      res.on('error', (e: NodeJS.ErrnoException) => this.finish(p, 'error', status, null, e.code ?? 'response_error'));
      res.on('aborted', () => this.finish(p, 'error', status, null, 'response_aborted'));
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (p.settled) return;
      // A keep-alive socket the server closed while idle: a client artifact, not a server
      // failure. One retry; the latency still counts from the intended time.
      if (!isRetry && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
        this.resetRetries++;
        this.issue(p, body, true);
        return;
      }
      this.finish(p, 'error', 0, null, e.code ?? e.message ?? 'request_error');
    });
    req.end(body);
  }

  private finish(p: Pending, kind: OutcomeKind, status: number, body: string | null, detail: string, retryAfterS?: number): void {
    if (p.settled) return;
    p.settled = true;
    const doneAt = this.clock.now();
    this.pending.delete(p);
    if (p.timer !== null) this.clock.cancel(p.timer);
    // An abandoned request's socket is in an unknown state: close it rather than reuse it.
    if ((detail === 'client_timeout' || detail === 'deadline') && p.req !== null && !p.req.destroyed) p.req.destroy();
    p.done({ kind, status, doneAt, body, detail, ...(retryAfterS === undefined ? {} : { retryAfterS }) });
  }

  /** Aborts everything still in flight as `deadline` timeouts (the run's hard stop). */
  abortAll(): void {
    for (const p of [...this.pending]) this.finish(p, 'timeout', 0, null, 'deadline');
  }

  /** Closes every connection. */
  close(): void {
    this.abortAll();
    this.agent.destroy();
  }
}

/** GET `target.healthPath` with a short timeout; resolves the status, or rejects naming the error. */
export function getHealth(target: Target, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.address,
        family: target.family,
        port: target.port,
        path: target.healthPath,
        method: 'GET',
        setHost: false,
        headers: { host: target.hostHeader },
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => reject(new Error(`${target.base}/health: ${e.code ?? e.message}`)));
    req.end();
  });
}

/** One POST outside of a run (the CLI's preflight): status and body text. */
export function postOnce(target: Target, body: Buffer, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.address,
        family: target.family,
        port: target.port,
        path: target.path,
        method: 'POST',
        setHost: false,
        headers: { host: target.hostHeader, 'content-type': 'application/json', 'content-length': body.length },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => reject(new Error(`${target.endpoint}: ${e.code ?? e.message}`)));
    req.end(body);
  });
}
