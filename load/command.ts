/**
 * `prescore load`: argument parsing, preflight, progress and output files around `runLoad` /
 * `findMax`. Returns an exit code instead of exiting so the CLI and tests can call it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { formatDuration, parseDuration } from './duration.js';
import { findMax, findMaxBoundS, type FindMaxResult } from './findMax.js';
import { renderFindMaxHtml, renderHtml } from './html.js';
import { BodyCache } from './body.js';
import { queriesFromFvecs, randomUnitQueries, type QuerySet } from './queries.js';
import { formatReport, type LoadReport } from './report.js';
import { runLoad, type LoadOptions } from './runLoad.js';
import { resolveTarget } from './target.js';
import { getHealth, postOnce } from './transport.js';
import { readIvecs } from './vecfile.js';

export const LOAD_HELP = `Usage: prescore load --url URL (--rate R | --find-max --slo-p99 D) [options]

Open-loop (Poisson) load test of POST /v1/search. Latency is measured from each request's
intended send time (coordinated-omission-free); percentiles cover ok responses, with shed (429/503),
timeouts (client, 504) and errors counted separately. Loopback targets only.

Target and load
  --url URL              server base URL (POSTs to /v1/search) or the full endpoint; 127.0.0.0/8, ::1, localhost only
  --rate R               offered rate, requests/s (Poisson arrivals)
  --duration D           measured window after warm-up (default 60s); durations: 500ms, 10s, 2m, 1m30s
  --warmup D             warm-up excluded from the statistics (default 5s; 2s per find-max step)
  --timeout D            client timeout from the intended send time (default 2s)
  --arrivals KIND        poisson (default) | constant (even spacing, wrk2-style)
  --seed S               seed for arrivals and --dim vectors (default 1)

Queries
  --queries FILE.fvecs   query vectors, cycled in order (first --max-queries rows, default 10000)
  --dim D                instead: seeded random unit vectors of dimension D
  --groundtruth FILE     .ivecs top ids per query: reports recall@k (needs --queries)
  --k N                  hits per query (default 10)
  --oversample X         sent as oversample
  --num-candidates N     sent as num_candidates
  --read-path P          sent as read_path (mmap | mmap+prefetch | mmap+parallel | pread)
  --server-timeout D     sent as timeout_ms (not sent by default)

Output
  --json FILE            full report as JSON (rates, latency_ms, counts, time_series, ...)
  --html FILE            self-contained HTML report with plots
  --quiet                no progress line on stderr
  --skip-preflight       do not check GET /health and one search before starting

Find the highest sustainable rate
  --find-max             step the rate up (x2 per step) until p99 > SLO or shedding/timeouts begin,
                         then bisect between the last good and the first bad rate
  --slo-p99 D            the p99 SLO (required with --find-max), e.g. 50ms
  --step-duration D      measured time per step (default 10s)
  --start-rate R         first step's rate (default --rate, else 50)
  --max-steps N          cap on the number of steps (default 14)
  --max-rate R           never offer more than this (default 20000)

Exit status: 0 ok; 1 run failed (server unreachable, I/O error); 2 bad arguments;
3 find-max found no sustainable rate.
`;

class UsageError extends Error {}

const OPTIONS = {
  url: { type: 'string' },
  rate: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  timeout: { type: 'string' },
  arrivals: { type: 'string' },
  seed: { type: 'string' },
  queries: { type: 'string' },
  'max-queries': { type: 'string' },
  dim: { type: 'string' },
  groundtruth: { type: 'string' },
  k: { type: 'string' },
  oversample: { type: 'string' },
  'num-candidates': { type: 'string' },
  'read-path': { type: 'string' },
  'server-timeout': { type: 'string' },
  json: { type: 'string' },
  html: { type: 'string' },
  quiet: { type: 'boolean' },
  'skip-preflight': { type: 'boolean' },
  'find-max': { type: 'boolean' },
  'slo-p99': { type: 'string' },
  'step-duration': { type: 'string' },
  'start-rate': { type: 'string' },
  'max-steps': { type: 'string' },
  'max-rate': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function num(name: string, v: string | undefined, opts: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const x = Number(v.trim());
  if (v.trim() === '' || !Number.isFinite(x)) throw new UsageError(`--${name}: expected a number, got "${v}"`);
  if (opts.int === true && !Number.isInteger(x)) throw new UsageError(`--${name}: expected an integer, got "${v}"`);
  if (opts.min !== undefined && x < opts.min) throw new UsageError(`--${name}: must be >= ${opts.min}, got ${v}`);
  if (opts.max !== undefined && x > opts.max) throw new UsageError(`--${name}: must be <= ${opts.max}, got ${v}`);
  return x;
}

function dur(name: string, v: string | undefined, positive = true): number | undefined {
  if (v === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(v, `--${name}`);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (positive && ms <= 0) throw new UsageError(`--${name}: must be greater than zero, got "${v}"`);
  return ms;
}

function writeOut(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

export interface LoadCommandIo {
  readonly stdout?: NodeJS.WritableStream;
  readonly stderr?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Runs `prescore load` with `argv` (the arguments after `load`); resolves the exit code. */
export async function loadCommand(argv: string[], io: LoadCommandIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const say = (s: string): void => void stdout.write(s + '\n');
  const warn = (s: string): void => void stderr.write(s + '\n');

  let values: { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (e) {
    warn(`prescore load: ${(e as Error).message}\n(see prescore load --help)`);
    return 2;
  }
  if (values.help === true) {
    say(LOAD_HELP);
    return 0;
  }

  let base: Omit<LoadOptions, 'rate' | 'durationMs'>;
  let rate: number | undefined;
  let durationMs: number;
  let findMaxOpts: { slo: number; stepMs: number; startRate: number; maxSteps: number; maxRate: number } | null = null;
  try {
    if (values.url === undefined) throw new UsageError('--url is required (e.g. --url http://127.0.0.1:8080)');
    rate = num('rate', values.rate, { min: Number.MIN_VALUE, max: 100_000 });
    if (rate !== undefined && rate <= 0) throw new UsageError('--rate: must be greater than zero');
    durationMs = dur('duration', values.duration) ?? 60_000;
    const warmupMs = dur('warmup', values.warmup, false);
    const timeoutMs = dur('timeout', values.timeout) ?? 2000;
    const serverTimeoutMs = dur('server-timeout', values['server-timeout']);
    const seed = num('seed', values.seed, { int: true }) ?? 1;
    const arrivals = values.arrivals ?? 'poisson';
    if (arrivals !== 'poisson' && arrivals !== 'constant') throw new UsageError(`--arrivals: expected poisson or constant, got "${arrivals}"`);
    const k = num('k', values.k, { int: true, min: 1, max: 10_000 }) ?? 10;
    const oversample = num('oversample', values.oversample, { min: 1 });
    const numCandidates = num('num-candidates', values['num-candidates'], { int: true, min: 1 });
    const readPath = values['read-path'];
    if (readPath !== undefined && readPath.trim() === '') throw new UsageError('--read-path: empty');
    const maxQueries = num('max-queries', values['max-queries'], { int: true, min: 1 }) ?? 10_000;
    const dim = num('dim', values.dim, { int: true, min: 1, max: 65_536 });
    if (values.queries !== undefined && dim !== undefined) throw new UsageError('--queries and --dim are exclusive');
    if (values.queries === undefined && dim === undefined) throw new UsageError('one of --queries FILE.fvecs or --dim D is required');
    if (values.groundtruth !== undefined && values.queries === undefined) throw new UsageError('--groundtruth needs --queries (row i of the ground truth belongs to query i)');

    if (values['find-max'] === true) {
      const slo = dur('slo-p99', values['slo-p99']);
      if (slo === undefined) throw new UsageError('--find-max needs --slo-p99 (e.g. --slo-p99 50ms)');
      findMaxOpts = {
        slo,
        stepMs: dur('step-duration', values['step-duration']) ?? 10_000,
        startRate: num('start-rate', values['start-rate'], { min: 0.1, max: 100_000 }) ?? rate ?? 50,
        maxSteps: num('max-steps', values['max-steps'], { int: true, min: 1, max: 100 }) ?? 14,
        maxRate: num('max-rate', values['max-rate'], { min: 1, max: 100_000 }) ?? 20_000,
      };
    } else {
      for (const f of ['slo-p99', 'step-duration', 'start-rate', 'max-steps', 'max-rate'] as const) {
        if (values[f] !== undefined) throw new UsageError(`--${f} only applies with --find-max`);
      }
      if (rate === undefined) throw new UsageError('--rate is required (requests per second), or use --find-max');
    }

    let queries: QuerySet;
    try {
      queries = values.queries !== undefined ? queriesFromFvecs(values.queries, maxQueries) : randomUnitQueries(dim as number, 1000, seed);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    let groundTruth: LoadOptions['groundTruth'];
    if (values.groundtruth !== undefined) {
      try {
        groundTruth = { ...readIvecs(values.groundtruth, queries.count), source: values.groundtruth };
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      if (groundTruth.count < queries.count) {
        throw new UsageError(`--groundtruth ${values.groundtruth} has ${groundTruth.count} rows but --queries has ${queries.count}`);
      }
      if (groundTruth.dim < k) warn(`note: ground truth has ${groundTruth.dim} ids per query; reporting recall@${groundTruth.dim}`);
    }
    try {
      await resolveTarget(values.url);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    base = {
      url: values.url,
      warmupMs: warmupMs ?? (findMaxOpts !== null ? 2000 : 5000),
      timeoutMs,
      queries,
      groundTruth,
      k,
      oversample,
      numCandidates,
      readPath,
      serverTimeoutMs,
      seed,
      arrivals,
      progress: values.quiet === true ? null : stderr,
    };
  } catch (e) {
    if (e instanceof UsageError) {
      warn(`prescore load: ${e.message}`);
      return 2;
    }
    throw e;
  }

  if (values['skip-preflight'] !== true) {
    const code = await preflight(base, warn);
    if (code !== 0) return code;
  }

  const ac = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    warn('\ninterrupted: stopping arrivals, waiting for in-flight requests (Ctrl-C again to quit now)');
    ac.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    if (findMaxOpts !== null) {
      const f = findMaxOpts;
      const warmupMs = base.warmupMs ?? 2000;
      warn(
        `find-max: SLO p99 <= ${formatDuration(f.slo)}, steps of ${formatDuration(warmupMs)} + ${formatDuration(f.stepMs)} from ${f.startRate}/s, ` +
          `at most ${f.maxSteps} steps (<= ${findMaxBoundS(f.maxSteps, warmupMs, f.stepMs, base.timeoutMs ?? 2000, 1000)} s)`,
      );
      say(stepHeader());
      const result = await findMax({
        ...base,
        sloP99Ms: f.slo,
        stepDurationMs: f.stepMs,
        startRate: f.startRate,
        maxSteps: f.maxSteps,
        maxRate: f.maxRate,
        signal: ac.signal,
        onStep: (s, i) => say(stepRow(s, i)),
      });
      say(
        result.max_sustainable_rate !== null
          ? `max sustainable rate: ${result.max_sustainable_rate}/s (p99 <= ${result.slo_p99_ms} ms, no shedding/timeouts; limited by ${result.limited_by})`
          : `no sustainable rate found (limited by ${result.limited_by})`,
      );
      writeOutputs(values.json, values.html, result, warn);
      return result.max_sustainable_rate !== null ? 0 : 3;
    }
    const report = await runLoad({ ...base, rate: rate as number, durationMs, signal: ac.signal });
    say(formatReport(report));
    writeOutputs(values.json, values.html, report, warn);
    return 0;
  } catch (e) {
    warn(`prescore load: ${(e as Error).message}`);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

function writeOutputs(json: string | undefined, html: string | undefined, r: LoadReport | FindMaxResult, warn: (s: string) => void): void {
  if (json !== undefined) {
    writeOut(json, JSON.stringify(r, null, 1) + '\n');
    warn(`wrote ${json}`);
  }
  if (html !== undefined) {
    writeOut(html, r.tool === 'prescore-load' ? renderHtml(r) : renderFindMaxHtml(r));
    warn(`wrote ${html}`);
  }
}

function stepHeader(): string {
  return 'step  phase    offered/s   sent/s    ok/s      p50      p99    p99.9      max  shed  tmo  err  late  verdict';
}

function stepRow(s: import('./findMax.js').FindMaxStep, i: number): string {
  const f = (v: number | null, w: number): string => (v === null ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(2)).padStart(w);
  return (
    `${String(i + 1).padStart(4)}  ${s.phase.padEnd(6)} ${f(s.rate, 10)} ${f(s.sent_rate, 8)} ${f(s.achieved_rate, 8)} ` +
    `${f(s.p50_ms, 8)} ${f(s.p99_ms, 8)} ${f(s.p999_ms, 8)} ${f(s.max_ms, 8)} ${String(s.shed).padStart(5)} ${String(s.timeout).padStart(4)} ` +
    `${String(s.error).padStart(4)} ${String(s.late).padStart(5)}  ${s.pass ? 'pass' : 'FAIL: ' + s.reasons.join(', ')}`
  );
}

/** Checks the server answers /health and accepts one search with these parameters. */
async function preflight(o: Omit<LoadOptions, 'rate' | 'durationMs'>, warn: (s: string) => void): Promise<number> {
  const target = await resolveTarget(o.url);
  try {
    const status = await getHealth(target);
    if (status !== 200) warn(`note: ${target.base}/health answered ${status}`);
  } catch (e) {
    warn(`prescore load: server not reachable: ${(e as Error).message}`);
    return 1;
  }
  const queries = o.queries as QuerySet;
  const body = new BodyCache(queries, {
    k: o.k ?? 10,
    oversample: o.oversample,
    numCandidates: o.numCandidates,
    readPath: o.readPath,
    serverTimeoutMs: o.serverTimeoutMs,
  }).body(0);
  try {
    const res = await postOnce(target, body, Math.max(o.timeoutMs ?? 2000, 5000));
    if (res.status === 400 || res.status === 404 || res.status === 405 || res.status === 413 || res.status === 422) {
      warn(`prescore load: ${target.endpoint} rejected the search (${res.status}): ${res.body.slice(0, 500)}`);
      return 2;
    }
    if (res.status < 200 || res.status >= 300) warn(`note: preflight search answered ${res.status}; starting anyway`);
  } catch (e) {
    warn(`prescore load: preflight search failed: ${(e as Error).message}`);
    return 1;
  }
  return 0;
}
