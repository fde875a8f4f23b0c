/**
 * The closed-loop engine: `clients` connections, each sending its next search as soon as the
 * previous one is answered (wrk's model, and what a pool of application threads does), while a
 * prober in a process of its own asks `GET /health` every `healthEveryMs`. Latency here runs
 * from send to answer: a closed loop measures the server at the concurrency it is given, and its
 * answered rate is the server's throughput at that concurrency. A shed answer (429) is followed
 * by the next request at once, as a client without back-off would, or after `shedBackoffMs`.
 */
import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import { BodyCache } from './body.js';
import { realClock } from './clock.js';
import type { QuerySet } from './queries.js';
import { summarize, type LatencySummary } from './report.js';
import { resolveTarget } from './target.js';
import { SocketTransport } from './SocketTransport.js';
import type { Outcome } from './transport.js';
import { startHealthProber, type HealthProber } from './healthProber.js';

/** Options of {@link runClosedLoop}. */
export interface ClosedLoopOptions {
  /** Server base URL (`/v1/search` is appended) or the full endpoint. Loopback only. */
  readonly url: string;
  /** Concurrent clients, each with one request in flight. */
  readonly clients: number;
  readonly durationMs: number;
  /** Before the window: requests sent and answered but not counted. Default 0. */
  readonly warmupMs?: number;
  readonly queries: QuerySet;
  /** Index of the first query sent (default 0); clients take the next query in turn, cyclically. */
  readonly firstQuery?: number;
  readonly k: number;
  readonly oversample?: number;
  readonly numCandidates?: number;
  readonly readPath?: string;
  /** A request not answered within this is a timeout (default 10 s). */
  readonly timeoutMs?: number;
  /** Every n-th search asks for the server's profile (`profile: true`); default never. */
  readonly profileEvery?: number;
  /** Period of the `/health` prober (a process of its own, healthProber.ts) in ms (default 50); 0: no prober. */
  readonly healthEveryMs?: number;
  /**
   * After a shed answer (429, 503) a client waits this many milliseconds before its next request
   * (default 0: at once), or, with 'retry-after', the seconds the answer's `Retry-After` says.
   */
  readonly shedBackoffMs?: number | 'retry-after';
  /** Called with every answered search of the window: its query's index, whether it asked for a profile, and the body. */
  readonly inspect?: (query: number, profiled: boolean, body: string) => void;
}

/** What {@link runClosedLoop} measured. */
export interface ClosedLoopReport {
  readonly clients: number;
  readonly shed_backoff_ms: number | 'retry-after';
  readonly window_s: number;
  readonly answered: number;
  /** 429 and 503 answers. */
  readonly shed: number;
  readonly timeouts: number;
  readonly errors: number;
  /** Status code -> count, every answer of the window. */
  readonly status_counts: Readonly<Record<string, number>>;
  readonly answered_per_s: number;
  readonly shed_per_s: number;
  /** Answered searches only, send to answer. */
  readonly latency_ms: LatencySummary;
  /** `GET /health` round trips during the window (null without a prober). */
  readonly health_ms: LatencySummary | null;
}

const HIST_MAX_US = 120_000_000;

function histogram(): Histogram {
  return buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: HIST_MAX_US, numberOfSignificantValueDigits: 3, autoResize: false, useWebAssembly: false });
}

/** Runs one closed loop and returns its report. */
export async function runClosedLoop(o: ClosedLoopOptions): Promise<ClosedLoopReport> {
  if (!(Number.isInteger(o.clients) && o.clients >= 1 && o.clients <= 4096)) throw new Error(`clients must be an integer in [1, 4096], got ${o.clients}`);
  if (!(o.durationMs > 0)) throw new Error(`duration must be positive, got ${o.durationMs}`);
  const target = await resolveTarget(o.url);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const warmupMs = o.warmupMs ?? 0;
  const healthEveryMs = o.healthEveryMs ?? 50;
  const backoff = o.shedBackoffMs ?? 0;
  const params = { k: o.k, oversample: o.oversample, numCandidates: o.numCandidates, readPath: o.readPath };
  const plain = new BodyCache(o.queries, params);
  const profiled = o.profileEvery ? new BodyCache(o.queries, { ...params, profile: true }) : null;
  const transport = new SocketTransport(target, o.clients, realClock);
  const latency = histogram();
  const health = histogram();
  const status = new Map<string, number>();
  const counts = { answered: 0, shed: 0, timeouts: 0, errors: 0 };
  let next = o.firstQuery ?? 0;
  let sent = 0;
  let prober: HealthProber | null = null;
  try {
    await transport.preconnect(o.clients, Math.min(timeoutMs, 2000));
    const probing = healthEveryMs > 0 ? await startHealthProber(o.url, healthEveryMs, timeoutMs) : null;
    prober = probing;
    const startedAt = realClock.now();
    const windowStart = startedAt + warmupMs;
    const windowEnd = windowStart + o.durationMs;
    const measureHealth = setTimeout(() => probing?.measureFrom(), warmupMs);
    await new Promise<void>((resolve) => {
      let running = o.clients;
      const client = (): void => {
        if (realClock.now() >= windowEnd) {
          if (--running === 0) resolve();
          return;
        }
        const query = next++ % o.queries.count;
        const asksProfile = profiled !== null && ++sent % o.profileEvery! === 0;
        const body = (asksProfile ? profiled! : plain).body(query);
        const at = realClock.now();
        transport.post(body, at + timeoutMs, (out: Outcome) => {
          if (at >= windowStart && out.doneAt <= windowEnd) record(out, at, query, asksProfile);
          const pause = out.kind !== 'shed' ? 0 : backoff === 'retry-after' ? 1000 * (out.retryAfterS ?? 1) : backoff;
          if (pause > 0) setTimeout(client, pause);
          else client();
        });
      };
      for (let i = 0; i < o.clients; i++) client();
    });
    clearTimeout(measureHealth);
    for (const ms of (await probing?.stop()) ?? []) health.recordValue(clampUs(ms));
    prober = null;
  } finally {
    prober?.kill();
    transport.close();
  }
  const windowS = o.durationMs / 1000;
  return {
    clients: o.clients,
    shed_backoff_ms: backoff,
    window_s: windowS,
    ...counts,
    status_counts: Object.fromEntries([...status].sort()),
    answered_per_s: Math.round((counts.answered / windowS) * 10) / 10,
    shed_per_s: Math.round((counts.shed / windowS) * 10) / 10,
    latency_ms: summarize(latency),
    health_ms: healthEveryMs > 0 ? summarize(health) : null,
  };

  function record(out: Outcome, at: number, query: number, asksProfile: boolean): void {
    if (out.status !== 0) status.set(String(out.status), (status.get(String(out.status)) ?? 0) + 1);
    if (out.kind === 'ok') {
      counts.answered++;
      latency.recordValue(clampUs(out.doneAt - at));
      o.inspect?.(query, asksProfile, out.body ?? '');
    } else if (out.kind === 'shed') counts.shed++;
    else if (out.kind === 'timeout') counts.timeouts++;
    else counts.errors++;
  }
}

function clampUs(ms: number): number {
  return Math.min(HIST_MAX_US, Math.max(1, Math.round(ms * 1000)));
}
