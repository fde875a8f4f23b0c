/**
 * The result of a run. Field names are the JSON output's (snake_case), so `JSON.stringify` of a
 * `LoadReport` is the `--json` file and other tools can read it without a mapping table.
 */
import type { Histogram } from 'hdr-histogram-js';
import { formatDuration } from './duration.js';

/** Milliseconds. All null when nothing was recorded. */
export interface LatencySummary {
  readonly count: number;
  readonly min: number | null;
  readonly mean: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly p999: number | null;
  readonly p9999: number | null;
  readonly max: number | null;
}

/** Requests by outcome. */
export interface OutcomeCounts {
  readonly sent: number;
  readonly ok: number;
  /** 429 and 503 answers (load shedding). */
  readonly shed: number;
  /** Client timeouts (+ run deadline aborts) and server 504s. */
  readonly timeout: number;
  /** Everything else: connection errors, other non-2xx, unparseable bodies. */
  readonly error: number;
  /** Requests the generator sent more than `late_threshold_ms` after their intended time. */
  readonly late: number;
}

/** Requests sent and their outcomes. */
export interface Counts extends OutcomeCounts {
  readonly timeout_client: number;
  readonly timeout_server: number;
  readonly timeout_deadline: number;
  readonly errors_by_kind: Readonly<Record<string, number>>;
  readonly status_counts: Readonly<Record<string, number>>;
}

/** One second of the run, bucketed by the requests' intended send time. */
export interface SecondStats extends OutcomeCounts {
  /** Seconds since the start of the run (warm-up included). */
  readonly t: number;
  /** `warmup` if the second overlaps the warm-up; `drain`: after the last arrival, only completions. */
  readonly phase: 'warmup' | 'steady' | 'drain';
  /** Seconds of this bucket inside the arrival schedule (1 except for a partial last second). */
  readonly span_s: number;
  /** Responses of any kind that completed in this second (by completion time). */
  readonly completed: number;
  /** Latency of the ok requests intended in this second. */
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly max_ms: number | null;
}

/** The run's settings, as the report records them. */
export interface LoadConfig {
  readonly url: string;
  readonly endpoint: string;
  readonly arrivals: 'poisson' | 'constant';
  readonly rate: number;
  readonly warmup_s: number;
  readonly duration_s: number;
  readonly timeout_ms: number;
  readonly k: number;
  readonly oversample: number | null;
  readonly num_candidates: number | null;
  readonly read_path: string | null;
  readonly server_timeout_ms: number | null;
  readonly seed: number;
  /** `first`: the index the run's cycle through the queries started at. */
  readonly queries: { readonly source: string; readonly dim: number; readonly count: number; readonly first: number };
  readonly groundtruth: string | null;
  readonly late_threshold_ms: number;
  readonly max_sockets: number;
  readonly request_cap: number;
  readonly hard_deadline_s: number;
}

/** The JSON report of one load run (`--json`). */
export interface LoadReport {
  readonly tool: 'prescore-load';
  readonly schema_version: 1;
  readonly started_at: string;
  readonly wall_s: number;
  readonly config: LoadConfig;
  /** Length of the steady window the rates and percentiles cover (after warm-up). */
  readonly steady_window_s: number;
  /** The target rate (requests/s). */
  readonly offered_rate: number;
  /** Requests sent with an intended time in the steady window, per second (Poisson realisation). */
  readonly sent_rate: number;
  /** ok responses to steady-window requests, per second of the window. */
  readonly achieved_rate: number;
  /** Responses of any kind (ok, shed, error status) to steady-window requests, per second. */
  readonly completed_rate: number;
  readonly latency_basis: string;
  /** Success-only latency from the intended send time (coordinated-omission-free). */
  readonly latency_ms: LatencySummary;
  /** The same plus timeouts recorded at their (>= timeout) elapsed time: a pessimistic view. */
  readonly latency_incl_timeouts_ms: LatencySummary;
  /** The server's own `took_ms` for the ok steady-window responses, when it reports one. */
  readonly server_took_ms: LatencySummary | null;
  /** Steady window only. */
  readonly counts: Counts;
  /** Warm-up included. */
  readonly counts_all: Counts;
  readonly recall: { readonly k: number; readonly mean: number; readonly queries: number } | null;
  readonly client: {
    readonly max_lateness_ms: number;
    readonly event_loop_delay_ms: { readonly p99: number; readonly max: number };
    readonly peak_in_flight: number;
    readonly reset_retries: number;
  };
  /** [percentile, latency ms] points of the success-only histogram, for plots. */
  readonly percentile_curve: ReadonlyArray<readonly [number, number]>;
  /** The success-only histogram (µs), HdrHistogram compressed base64, for merging runs. */
  readonly histogram_hdr_b64: string;
  readonly time_series: readonly SecondStats[];
  readonly interrupted: boolean;
  readonly request_cap_reached: boolean;
}

/** What the latencies are measured from (the intended send time of each Poisson arrival). */
export const LATENCY_BASIS =
  'latency = response completion - intended send time (open loop, coordinated-omission-free); ' +
  'latency_ms covers ok (2xx) responses only; shed (429/503), timeouts (client timeout, run deadline, 504) ' +
  'and errors are counted separately and are not in latency_ms; latency_incl_timeouts_ms adds the timeouts at their elapsed time';

/** Summarises a histogram of microseconds into milliseconds. */
export function summarize(h: Histogram): LatencySummary {
  const n = h.totalCount;
  if (n === 0) {
    return { count: 0, min: null, mean: null, p50: null, p90: null, p99: null, p999: null, p9999: null, max: null };
  }
  const ms = (us: number): number => round3(us / 1000);
  return {
    count: n,
    min: ms(h.minNonZeroValue === Number.MAX_SAFE_INTEGER ? 0 : Math.min(h.minNonZeroValue, h.getValueAtPercentile(0))),
    mean: ms(h.mean),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    p9999: ms(h.getValueAtPercentile(99.99)),
    max: ms(h.maxValue),
  };
}

/** Points of an HdrHistogram percentile plot: x = log10(1 / (1 - p)) in steps of 0.05. */
export function percentileCurve(h: Histogram): Array<[number, number]> {
  const n = h.totalCount;
  if (n === 0) return [];
  const xMax = Math.log10(n) + 0.3;
  const out: Array<[number, number]> = [];
  for (let x = 0; x <= xMax + 1e-9; x += 0.05) {
    const p = 100 * (1 - 10 ** -x);
    out.push([round6(p), round3(h.getValueAtPercentile(p) / 1000)]);
  }
  out.push([100, round3(h.maxValue / 1000)]);
  return out;
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

function f(x: number | null, digits = 2): string {
  if (x === null) return '-';
  if (x >= 1000) return x.toFixed(0);
  if (x >= 100) return x.toFixed(1);
  return x.toFixed(digits);
}

/** The human summary printed at the end of a run. */
export function formatReport(r: LoadReport): string {
  const c = r.config;
  const L = r.latency_ms;
  const lines: string[] = [];
  const knobs = [
    `k=${c.k}`,
    c.oversample !== null ? `oversample=${c.oversample}` : null,
    c.num_candidates !== null ? `num_candidates=${c.num_candidates}` : null,
    c.read_path !== null ? `read_path=${c.read_path}` : null,
  ].filter((s) => s !== null);
  lines.push(
    `prescore load ${c.endpoint}  ${c.arrivals} ${c.rate}/s  warmup ${formatDuration(c.warmup_s * 1000)} + ${formatDuration(
      c.duration_s * 1000,
    )}  ${knobs.join(' ')}${r.interrupted ? '  (INTERRUPTED)' : ''}`,
  );
  lines.push(
    `rate/s    offered ${r.offered_rate.toFixed(1)}  sent ${r.sent_rate.toFixed(1)}  achieved ${r.achieved_rate.toFixed(1)} (ok)  completed ${r.completed_rate.toFixed(1)}  over ${r.steady_window_s.toFixed(1)} s`,
  );
  lines.push(`latency   p50 ${f(L.p50)}  p90 ${f(L.p90)}  p99 ${f(L.p99)}  p99.9 ${f(L.p999)}  max ${f(L.max)} ms  (n=${L.count}, ok only, from intended send time)`);
  const T = r.latency_incl_timeouts_ms;
  if (r.counts.timeout > 0) {
    lines.push(`  +timeouts p99 ${f(T.p99)}  p99.9 ${f(T.p999)}  max ${f(T.max)} ms  (timeouts at their elapsed time)`);
  }
  if (r.server_took_ms !== null) {
    const S = r.server_took_ms;
    lines.push(`server    took_ms p50 ${f(S.p50)}  p90 ${f(S.p90)}  p99 ${f(S.p99)}  p99.9 ${f(S.p999)}  max ${f(S.max)} ms`);
  }
  const k = r.counts;
  const kinds = Object.entries(k.errors_by_kind)
    .map(([n, v]) => `${n}:${v}`)
    .join(' ');
  lines.push(
    `counts    sent ${k.sent}  ok ${k.ok}  shed ${k.shed}  timeout ${k.timeout} (client ${k.timeout_client}, 504 ${k.timeout_server}, deadline ${k.timeout_deadline})  error ${k.error}${kinds ? ` [${kinds}]` : ''}  late ${k.late}`,
  );
  if (r.recall !== null) lines.push(`recall@${r.recall.k} ${r.recall.mean.toFixed(4)}  (${r.recall.queries} ok responses)`);
  const cl = r.client;
  lines.push(
    `client    max lateness ${f(cl.max_lateness_ms)} ms  event-loop delay p99 ${f(cl.event_loop_delay_ms.p99)} max ${f(
      cl.event_loop_delay_ms.max,
    )} ms  peak in-flight ${cl.peak_in_flight}  sockets <= ${c.max_sockets}`,
  );
  const warn: string[] = [];
  if (k.sent > 0 && (k.late / k.sent > 0.05 || cl.max_lateness_ms > 100)) {
    warn.push(
      `${((100 * k.late) / k.sent).toFixed(1)}% of requests left the generator late (max ${f(cl.max_lateness_ms)} ms): ` +
        'the client may be a bottleneck (its lateness is inside the measured latency)',
    );
  }
  if (r.request_cap_reached) warn.push(`the request cap (${c.request_cap}) was reached; the run was cut short`);
  for (const w of warn) lines.push(`WARNING   ${w}`);
  return lines.join('\n');
}
