/**
 * The open-loop engine. Arrivals follow a seeded schedule on an absolute timeline that never
 * waits for responses; each request's latency is measured from its *intended* send time, so a
 * server stall is charged to every request that should have been sent during it (no coordinated
 * omission). If the generator itself falls behind it still sends, counts the request `late`,
 * and the lateness is part of the measured latency.
 */
import { build as buildHistogram, encodeIntoCompressedBase64, type Histogram } from 'hdr-histogram-js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BodyCache } from './body.js';
import { realClock, type Clock, type ClockTimer } from './clock.js';
import { percentile } from './percentile.js';
import { randomUnitQueries, type QuerySet } from './queries.js';
import { LATENCY_BASIS, percentileCurve, round3, summarize, type Counts, type LoadConfig, type LoadReport, type SecondStats } from './report.js';
import { Rng } from './rng.js';
import { resolveTarget } from './target.js';
import { SocketTransport } from './SocketTransport.js';
import type { Outcome, TransportFactory } from './transport.js';
import type { VecRows } from './vecfile.js';

/** Options of {@link runLoad}: the target, the arrival rate and duration, the queries and the search parameters. */
export interface LoadOptions {
  /** Server base URL (`/v1/search` is appended) or the full endpoint. Loopback only. */
  readonly url: string;
  /** Target (offered) rate, requests per second. */
  readonly rate: number;
  /** Steady-state window measured after the warm-up. */
  readonly durationMs: number;
  /** Default 0 (the CLI defaults to 5 s). */
  readonly warmupMs?: number;
  /** Client timeout counted from the intended send time. Default 2000. */
  readonly timeoutMs?: number;
  /** Query vectors to cycle through; or `dim` for seeded random unit vectors. */
  readonly queries?: QuerySet;
  /**
   * Index of the first query sent (default 0); the run goes on cyclically from there. find-max
   * starts each step where the last one stopped, so that a step does not find the pages of the
   * previous steps' queries in the page cache.
   */
  readonly firstQuery?: number;
  readonly dim?: number;
  /**
   * Ground truth (`.ivecs` rows, row i for query i) enabling recall@k. It may cover only the
   * first rows of `queries` (a large pool whose first queries have exact neighbours): recall is
   * then the mean over the queries it covers.
   */
  readonly groundTruth?: VecRows<Int32Array> & { readonly source?: string };
  readonly k?: number;
  readonly oversample?: number;
  readonly numCandidates?: number;
  readonly readPath?: string;
  /** Sent to the server as `timeout_ms` (not sent when undefined). */
  readonly serverTimeoutMs?: number;
  readonly seed?: number;
  /** `poisson` (exponential inter-arrivals, default) or `constant` (evenly spaced, like wrk2). */
  readonly arrivals?: 'poisson' | 'constant';
  /** A request sent later than this after its intended time counts as `late`. Default 2 ms. */
  readonly lateThresholdMs?: number;
  /** Connection pool size; default sized from rate x timeout. */
  readonly maxSockets?: number;
  /** Live progress (one line per second; rewritten in place on a TTY). */
  readonly progress?: (NodeJS.WritableStream & { isTTY?: boolean }) | null;
  /** Prefix of the progress line (find-max uses the step). */
  readonly label?: string;
  /** Stops scheduling early (SIGINT); the report covers what was sent. */
  readonly signal?: AbortSignal;
  /** Time source and timers of the run; default the real clock (tests drive a simulated one). */
  readonly clock?: Clock;
  /** Makes the run's transport; default HTTP/1.1 keep-alive over plain sockets (`SocketTransport`). */
  readonly transport?: TransportFactory;
}

const HIST_MAX_US = 120_000_000;
const MAX_RATE = 100_000;

/** Requests by outcome (the report's OutcomeCounts, counted as the run goes). */
interface Outcomes {
  sent: number;
  ok: number;
  shed: number;
  timeout: number;
  error: number;
  late: number;
}

interface Tally extends Outcomes {
  /** Requests that got an HTTP answer of any status. */
  responded: number;
  timeoutClient: number;
  timeoutServer: number;
  timeoutDeadline: number;
  errorsByKind: Map<string, number>;
  status: Map<string, number>;
}

interface Bucket extends Outcomes {
  completed: number;
  lat: number[] | null;
  p50: number | null;
  p99: number | null;
  max: number | null;
  /** Requests intended in this second still in flight. */
  open: number;
}

function newTally(): Tally {
  return {
    sent: 0,
    ok: 0,
    shed: 0,
    timeout: 0,
    error: 0,
    late: 0,
    responded: 0,
    timeoutClient: 0,
    timeoutServer: 0,
    timeoutDeadline: 0,
    errorsByKind: new Map(),
    status: new Map(),
  };
}

function newHistogram(): Histogram {
  return buildHistogram({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIST_MAX_US,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
    useWebAssembly: false,
  });
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

function tallyToCounts(t: Tally): Counts {
  return {
    sent: t.sent,
    ok: t.ok,
    shed: t.shed,
    timeout: t.timeout,
    error: t.error,
    late: t.late,
    timeout_client: t.timeoutClient,
    timeout_server: t.timeoutServer,
    timeout_deadline: t.timeoutDeadline,
    errors_by_kind: Object.fromEntries([...t.errorsByKind].sort()),
    status_counts: Object.fromEntries([...t.status].sort()),
  };
}

function positive(name: string, v: number | undefined, allowZero = false): void {
  if (v === undefined) return;
  if (!Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) throw new Error(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${v}`);
}

/** Runs one open-loop load test and returns its report. Throws on bad options or a non-loopback URL. */
export async function runLoad(o: LoadOptions): Promise<LoadReport> {
  positive('rate', o.rate);
  if (o.rate > MAX_RATE) throw new Error(`rate must be <= ${MAX_RATE}/s, got ${o.rate}`);
  positive('duration', o.durationMs);
  positive('warmup', o.warmupMs, true);
  positive('timeout', o.timeoutMs);
  positive('late threshold', o.lateThresholdMs, true);
  const k = o.k ?? 10;
  if (!Number.isInteger(k) || k < 1) throw new Error(`k must be a positive integer, got ${k}`);
  const warmupMs = o.warmupMs ?? 0;
  const durationMs = o.durationMs;
  const timeoutMs = o.timeoutMs ?? 2000;
  const seed = o.seed ?? 1;
  const arrivals = o.arrivals ?? 'poisson';
  const lateThresholdMs = o.lateThresholdMs ?? 2;
  const rate = o.rate;

  const target = await resolveTarget(o.url);

  const requestCap = Math.ceil((rate * (warmupMs + durationMs) * 1.5) / 1000) + 10;
  let queries: QuerySet;
  if (o.queries !== undefined) queries = o.queries;
  else if (o.dim !== undefined) queries = randomUnitQueries(o.dim, Math.min(requestCap, 1000), seed);
  else throw new Error('either queries (an .fvecs file) or dim is required');
  const firstQuery = (o.firstQuery ?? 0) % queries.count;
  if (!Number.isInteger(firstQuery) || firstQuery < 0) throw new Error(`firstQuery must be a non-negative integer, got ${o.firstQuery}`);

  const gt = o.groundTruth;
  let recallK = 0;
  if (gt !== undefined) {
    if (o.queries === undefined) throw new Error('ground truth needs the query file it was computed for (--queries)');
    recallK = Math.min(k, gt.dim);
  }

  const maxSockets = o.maxSockets ?? Math.min(16_384, Math.max(16, Math.ceil((rate * timeoutMs * 1.25) / 1000) + 16));
  const clock = o.clock ?? realClock;
  const transport = (o.transport ?? ((t, n, c) => new SocketTransport(t, n, c)))(target, maxSockets, clock);
  const bodies = new BodyCache(queries, {
    k,
    oversample: o.oversample,
    numCandidates: o.numCandidates,
    readPath: o.readPath,
    serverTimeoutMs: o.serverTimeoutMs,
  });

  try {
    return await drive();
  } finally {
    transport.close();
  }

  async function drive(): Promise<LoadReport> {
    bodies.prebuild(firstQuery, requestCap);
    await transport.preconnect(Math.min(maxSockets, 16 + Math.ceil(rate / 50)), Math.min(timeoutMs, 2000));

    const okHist = newHistogram();
    const inclTimeoutHist = newHistogram();
    const tookHist = newHistogram();
    const liveHist = newHistogram();
    const steady = newTally();
    const all = newTally();
    const buckets: Bucket[] = [];
    let recallSum = 0;
    let recallN = 0;
    let maxLateness = 0;
    let peakInFlight = 0;
    let interrupted = false;
    let capReached = false;
    let stoppedAt = Infinity;

    const EL_RESOLUTION_MS = 5;
    const elDelay = monitorEventLoopDelay({ resolution: EL_RESOLUTION_MS });
    elDelay.enable();

    const rng = new Rng(seed, 1);
    const meanGapMs = 1000 / rate;
    const gap = arrivals === 'constant' ? (): number => meanGapMs : (): number => rng.exponential(meanGapMs);

    const startedAt = new Date();
    const t0 = clock.now() + 5;
    const steadyStart = t0 + warmupMs;
    const end = steadyStart + durationMs;
    const hardDeadline = end + timeoutMs + 1000;
    const totalSeconds = Math.ceil((warmupMs + durationMs) / 1000);

    const bucketAt = (t: number): Bucket => {
      const i = Math.max(0, Math.floor((t - t0) / 1000));
      while (buckets.length <= i) {
        buckets.push({ sent: 0, ok: 0, shed: 0, timeout: 0, error: 0, late: 0, completed: 0, lat: [], p50: null, p99: null, max: null, open: 0 });
      }
      return buckets[i];
    };

    const closeBucket = (b: Bucket): void => {
      if (b.lat === null) return;
      if (b.lat.length > 0) {
        const s = Float64Array.from(b.lat).sort();
        b.p50 = round3(percentile(s, 50));
        b.p99 = round3(percentile(s, 99));
        b.max = round3(s[s.length - 1]);
      }
      b.lat = null;
    };

    const record = (intended: number, qIndex: number, isSteady: boolean, out: Outcome): void => {
      const latencyMs = out.doneAt - intended;
      let kind = out.kind;
      let detail = out.detail;
      let took: number | undefined;
      let recall: number | undefined;
      if (kind === 'ok') {
        try {
          const parsed = JSON.parse(out.body ?? '') as { hits?: unknown; took_ms?: unknown };
          if (!Array.isArray(parsed.hits)) throw new Error('no hits array');
          if (typeof parsed.took_ms === 'number' && Number.isFinite(parsed.took_ms)) took = parsed.took_ms;
          if (gt !== undefined && qIndex < gt.count) recall = recallOf(parsed.hits as Array<{ id?: unknown }>, gt, qIndex, recallK);
        } catch {
          kind = 'error';
          detail = 'bad_response';
        }
      }
      const b = bucketAt(intended);
      b.open--;
      bucketAt(out.doneAt).completed++;
      for (const t of isSteady ? [steady, all] : [all]) {
        t[kind]++;
        if (out.status !== 0) {
          t.responded++;
          bump(t.status, String(out.status));
        }
        if (kind === 'timeout') {
          if (detail === 'http_504') t.timeoutServer++;
          else if (detail === 'deadline') t.timeoutDeadline++;
          else t.timeoutClient++;
        } else if (kind === 'error') bump(t.errorsByKind, detail);
      }
      b[kind]++;
      const us = Math.min(HIST_MAX_US, Math.max(1, Math.round(latencyMs * 1000)));
      if (kind === 'ok') {
        b.lat?.push(latencyMs);
        liveHist.recordValue(us);
      }
      if (!isSteady) return;
      if (kind === 'ok') {
        okHist.recordValue(us);
        inclTimeoutHist.recordValue(us);
        if (took !== undefined) tookHist.recordValue(Math.min(HIST_MAX_US, Math.max(1, Math.round(took * 1000))));
        if (recall !== undefined) {
          recallSum += recall;
          recallN++;
        }
      } else if (kind === 'timeout') {
        inclTimeoutHist.recordValue(us);
      }
    };

    let seq = 0;
    let nextAt = t0 + (arrivals === 'poisson' ? gap() : 0);
    let progressTimer: ClockTimer | null = null;
    const progress = o.progress ?? null;
    const isTty = progress !== null && progress.isTTY === true;
    const label = o.label !== undefined ? `${o.label} ` : '';

    const writeProgress = (final: boolean): void => {
      const now = clock.now();
      const elapsed = Math.max(0, (now - t0) / 1000);
      // Buckets whose requests have all settled get their percentiles and drop their samples.
      for (let i = 0; i < buckets.length; i++) {
        const b = buckets[i];
        if (b.lat !== null && b.open === 0 && nextAt > t0 + (i + 1) * 1000 && now > t0 + (i + 1) * 1000) closeBucket(b);
      }
      if (progress === null) return;
      const p99 = liveHist.totalCount > 0 ? `${(liveHist.getValueAtPercentile(99) / 1000).toFixed(2)}ms` : '-';
      liveHist.reset();
      const phase = now < steadyStart ? 'warmup' : now < end ? 'steady' : 'drain';
      const line =
        `${label}[${elapsed.toFixed(0).padStart(3)}s/${totalSeconds}s ${phase}] sent ${all.sent} ok ${all.ok} shed ${all.shed} ` +
        `timeout ${all.timeout} err ${all.error} late ${all.late} p99(1s) ${p99} in-flight ${transport.inFlight}`;
      if (isTty) progress.write(`\r\x1b[K${line}${final ? '\n' : ''}`);
      else progress.write(`${line}\n`);
    };

    await new Promise<void>((resolveRun) => {
      let scheduling = true;
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        o.signal?.removeEventListener('abort', onAbort);
        clock.cancel(hard);
        if (progressTimer !== null) clock.cancel(progressTimer);
        resolveRun();
      };
      const maybeFinish = (): void => {
        if (!scheduling && transport.inFlight === 0) finish();
      };
      const hard = clock.after(hardDeadline - clock.now(), () => {
        transport.abortAll();
        scheduling = false;
        maybeFinish();
      });
      const everySecond = (): void => {
        progressTimer = clock.after(1000, everySecond);
        writeProgress(false);
      };
      progressTimer = clock.after(1000, everySecond);
      const stop = (): void => {
        scheduling = false;
        maybeFinish();
      };
      const onAbort = (): void => {
        interrupted = true;
        stoppedAt = clock.now();
        stop();
      };
      o.signal?.addEventListener('abort', onAbort, { once: true });

      const send = (intended: number): void => {
        const qIndex = (firstQuery + seq) % queries.count;
        const isSteady = intended >= steadyStart;
        const body = bodies.body(qIndex);
        const sendAt = clock.now();
        const lateness = sendAt - intended;
        if (lateness > maxLateness) maxLateness = lateness;
        const isLate = lateness > lateThresholdMs;
        const b = bucketAt(intended);
        b.sent++;
        b.open++;
        if (isLate) b.late++;
        for (const t of isSteady ? [steady, all] : [all]) {
          t.sent++;
          if (isLate) t.late++;
        }
        transport.post(body, intended + timeoutMs, (out) => {
          record(intended, qIndex, isSteady, out);
          maybeFinish();
        });
        if (transport.inFlight > peakInFlight) peakInFlight = transport.inFlight;
      };

      const tick = (): void => {
        if (!scheduling) {
          maybeFinish();
          return;
        }
        if (o.signal?.aborted === true) {
          interrupted = true;
          stoppedAt = clock.now();
          stop();
          return;
        }
        // A generator that fell behind catches up in bounded batches, yielding in between so
        // responses are still timestamped when they arrive.
        let batch = 0;
        while (nextAt <= clock.now() && batch < 64) {
          if (nextAt >= end) {
            stop();
            return;
          }
          if (seq >= requestCap) {
            capReached = true;
            stoppedAt = nextAt;
            stop();
            return;
          }
          send(nextAt);
          seq++;
          batch++;
          nextAt += gap();
        }
        if (nextAt >= end) {
          stop();
          return;
        }
        clock.wakeAt(nextAt, tick);
      };
      clock.wakeAt(t0 - 1, tick);
    });

    writeProgress(true);
    elDelay.disable();
    transport.close();
    for (const b of buckets) closeBucket(b);

    const wallEnd = clock.now();
    // An interrupted (or capped) run covers only the part of the steady window that was scheduled.
    const windowMs = Number.isFinite(stoppedAt) ? Math.max(0, Math.min(end, stoppedAt, wallEnd) - steadyStart) : durationMs;
    const windowS = windowMs / 1000;
    const perS = (n: number): number => (windowS > 0 ? round3(n / windowS) : 0);

    const config: LoadConfig = {
      url: o.url,
      endpoint: target.endpoint,
      arrivals,
      rate,
      warmup_s: warmupMs / 1000,
      duration_s: durationMs / 1000,
      timeout_ms: timeoutMs,
      k,
      oversample: o.oversample ?? null,
      num_candidates: o.numCandidates ?? null,
      read_path: o.readPath ?? null,
      server_timeout_ms: o.serverTimeoutMs ?? null,
      seed,
      queries: { source: queries.source, dim: queries.dim, count: queries.count, first: firstQuery },
      groundtruth: gt !== undefined ? (gt.source ?? 'given') : null,
      late_threshold_ms: lateThresholdMs,
      max_sockets: maxSockets,
      request_cap: requestCap,
      hard_deadline_s: round3((hardDeadline - t0) / 1000),
    };
    const series: SecondStats[] = buckets.map((b, i) => ({
      t: i,
      phase: t0 + i * 1000 < steadyStart ? 'warmup' : t0 + i * 1000 >= end ? 'drain' : 'steady',
      span_s: t0 + i * 1000 >= end ? 1 : round3(Math.min(1, (end - (t0 + i * 1000)) / 1000)),
      sent: b.sent,
      ok: b.ok,
      shed: b.shed,
      timeout: b.timeout,
      error: b.error,
      late: b.late,
      completed: b.completed,
      p50_ms: b.p50,
      p99_ms: b.p99,
      max_ms: b.max,
    }));
    // The monitor records whole timer periods; the delay is what exceeds the resolution.
    const nsToMs = (ns: number): number => (Number.isFinite(ns) ? round3(Math.max(0, ns / 1e6 - EL_RESOLUTION_MS)) : 0);
    const report: LoadReport = {
      tool: 'prescore-load',
      schema_version: 1,
      started_at: startedAt.toISOString(),
      wall_s: round3((wallEnd - t0) / 1000),
      config,
      steady_window_s: round3(windowS),
      offered_rate: rate,
      sent_rate: perS(steady.sent),
      achieved_rate: perS(steady.ok),
      completed_rate: perS(steady.responded),
      latency_basis: LATENCY_BASIS,
      latency_ms: summarize(okHist),
      latency_incl_timeouts_ms: summarize(inclTimeoutHist),
      server_took_ms: tookHist.totalCount > 0 ? summarize(tookHist) : null,
      counts: tallyToCounts(steady),
      counts_all: tallyToCounts(all),
      recall: gt !== undefined ? { k: recallK, mean: recallN > 0 ? Math.round((recallSum / recallN) * 1e6) / 1e6 : 0, queries: recallN } : null,
      client: {
        max_lateness_ms: round3(Math.max(0, maxLateness)),
        event_loop_delay_ms: { p99: nsToMs(elDelay.percentile(99)), max: nsToMs(elDelay.max) },
        peak_in_flight: peakInFlight,
        reset_retries: transport.resetRetries,
      },
      percentile_curve: percentileCurve(okHist),
      histogram_hdr_b64: okHist.totalCount > 0 ? encodeIntoCompressedBase64(okHist) : '',
      time_series: series,
      interrupted,
      request_cap_reached: capReached,
    };
    return report;
  }
}

/** Fraction of the first `k` ground-truth ids found among the first `k` hits. */
export function recallOf(hits: ReadonlyArray<{ id?: unknown }>, gt: VecRows<Int32Array>, qIndex: number, k: number): number {
  if (k === 0) return 0;
  const want = new Set<string>();
  const base = qIndex * gt.dim;
  for (let i = 0; i < k; i++) want.add(String(gt.data[base + i]));
  let found = 0;
  const n = Math.min(k, hits.length);
  for (let i = 0; i < n; i++) {
    const id = hits[i]?.id;
    if (id === undefined || id === null) continue;
    const s = typeof id === 'number' ? String(id) : String(id).trim();
    const key = /^[+-]?\d+$/.test(s) ? String(Number(s)) : s;
    if (want.delete(key)) found++;
  }
  return found / k;
}
