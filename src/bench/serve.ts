/**
 * `npm run bench:serve`: the server under load, over HTTP, as a client sees it and as the server
 * spends it. For each index (default 200,000 x 768 and 1,000,000 x 1024, generated and built on
 * first use):
 *
 * - single stream, the HTTP server and the library interleaved query by query in one process
 *   (the same queries, the same index directory): p50 of each, their ratio, and the client's own
 *   CPU per HTTP request (what of the round trip is the client's);
 * - closed loops at 1, 2, 4, 16 and 128 clients against the server's defaults, and 128 clients
 *   against `--max-inflight 2 --max-queue 2`: answered/s, shed/s, p50/p99/max, `/health` p99 while
 *   the loop runs, the server's event-loop delay p99 (its /metrics histogram over the window),
 *   server CPU per answered search (process_cpu_seconds_total, every thread) beside the server's
 *   own engine time per search in the single stream, and whether every answer held the hits the
 *   library gives for that query;
 * - open loops (Poisson) at 100/s and at 2x the highest closed-loop throughput;
 * - the same closed loops cold: the server in a cgroup v1 memory limit (its memory at open + 64 MiB
 *   + `--cache-mib` of page cache; coldServer.ts), the fp32 files evicted, queries that never come
 *   back while their pages could be cached (coldQueryPool.ts). Skipped without cgroup v1.
 *
 *   npm run bench:serve -- [--sizes 200000x768,1000000x1024] [--clients 1,2,4,16,128] [--window 5s]
 *     [--no-cold] [--cache-mib 256] [--json FILE]
 *
 * Every run prints its acceptance checks: under 128 clients 429s appear, no 5xx, every answer
 * correct, accepted p99 <= (N + M) x single-stream p50 x 1.5 (the limited server), /health p99 <=
 * 50 ms, event-loop delay p99 <= 20 ms; at 4 clients (warm) server CPU per search <= 1.3x its
 * single-stream engine time; single-stream HTTP p50 <= 1.3x the library's.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { warmFile } from './procFiles.js';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openIndex } from '../api/openIndex.js';
import type { VectorIndex } from '../api/types.js';
import { packageRoot } from '../executor/packageRoot.js';
import { runClosedLoop, type ClosedLoopReport } from '../../load/closedLoop.js';
import { runLoad } from '../../load/runLoad.js';
import { parseDuration } from '../../load/duration.js';
import { percentile } from '../../load/percentile.js';
import { queriesFromFvecs, type QuerySet } from '../../load/queries.js';
import { BodyCache } from '../../load/body.js';
import { realClock } from '../../load/clock.js';
import { resolveTarget } from '../../load/target.js';
import { SocketTransport } from '../../load/SocketTransport.js';
import type { Outcome } from '../../load/transport.js';
import { ColdServer } from './coldServer.js';
import { memoryCgroupSupport } from './cgroup.js';
import { coldQueryPool } from './coldQueryPool.js';
import { benchDataset, ensureIndex, table, type BenchDataset } from './benchData.js';
import { parseJsonBody } from '../http/body.js';
import { SearchValidator } from '../http/validation.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    clients: { type: 'string' },
    window: { type: 'string' },
    'no-cold': { type: 'boolean' },
    'cache-mib': { type: 'string' },
    json: { type: 'string' },
  },
});

const K = 10;
const SINGLE_STREAM = 300;
const LIMITED = { maxInflight: 2, maxQueue: 2 };
/**
 * The 128-client loops run three ways: clients that send again at once after a 429 (a storm: the
 * rate is bounded only by the CPU of client and server), clients that pause 20 ms, and clients
 * that wait what the answer's Retry-After says (as a well-behaved client does).
 */
const BACKOFFS = [20, 'retry-after'] as const;
const MIB = 2 ** 20;
const sizes = (values.sizes ?? '200000x768,1000000x1024').split(',').map((s) => {
  const [n, dim] = s.split('x').map(Number);
  if (!(n! > 0 && dim! > 0)) throw new Error(`--sizes: expected NxDIM, got ${s}`);
  return { n: n!, dim: dim! };
});
const clientCounts = (values.clients ?? '1,2,4,16,128').split(',').map(Number);
const windowMs = parseDuration(values.window ?? '5s');
const cacheBytes = Number(values['cache-mib'] ?? 256) * MIB;
const cgroup = memoryCgroupSupport();

/** Sum of a metric's samples (every label set) in a Prometheus text. */
function metric(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/** The event-loop delay histogram's cumulative bucket counts, by upper bound in seconds. */
function delayBuckets(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^prescore_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return out;
}

interface Scrape {
  readonly cpuS: number;
  readonly queries: number;
  readonly engineS: number;
  readonly delay: Map<number, number>;
}

async function scrape(url: string): Promise<Scrape> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return {
    cpuS: metric(text, 'process_cpu_seconds_total'),
    queries: metric(text, 'prescore_queries_total'),
    engineS: metric(text, 'prescore_query_seconds_total'),
    delay: delayBuckets(text),
  };
}

/** The smallest bucket bound (ms) holding 99% of the delay samples between two scrapes: the p99 is at most this. */
function delayP99Ms(a: Scrape, b: Scrape): number {
  const total = (b.delay.get(Infinity) ?? 0) - (a.delay.get(Infinity) ?? 0);
  if (total <= 0) return 0;
  for (const [le, count] of [...b.delay].sort((x, y) => x[0] - y[0])) {
    if (count - (a.delay.get(le) ?? 0) >= 0.99 * total) return le * 1000;
  }
  return Infinity;
}

async function startServer(ds: BenchDataset, extra: readonly string[], cold: { readonly files: readonly string[] } | null): Promise<ColdServer> {
  const argv = [join(packageRoot(), 'bin', 'prescore.js'), 'serve', '--index', ds.indexDir, '--port', '0', '--calibrate', 'first-use', ...extra];
  if (cold === null) return ColdServer.start({ argv, coldFiles: [], limit: { kind: 'fixed', bytes: 0 }, cgroup: { ok: false, reason: 'warm' }, name: 'warm' });
  return ColdServer.start({
    argv,
    coldFiles: cold.files,
    limit: { kind: 'after-open', cacheBytes, anonCeilingBytes: 2048 * MIB },
    cgroup,
    name: `prescore-bench-serve-${process.pid}`,
  });
}

/** The hit ids of a search answer, joined (what the correctness check compares). */
function hitIds(body: string): string {
  return (JSON.parse(body) as { hits: { id: string }[] }).hits.map((h) => h.id).join(',');
}

interface SingleStreamFigures {
  readonly httpP50: number;
  readonly libraryP50: number | null;
  readonly clientCpuMsPerRequest: number;
  /** The server's engine time per search (prescore_query_seconds_total) over the single stream. */
  readonly engineMs: number;
  readonly cpuMsPerSearch: number;
}

/**
 * The single stream: query i over HTTP, then query i through the library (when given), for
 * `count` queries; then the same HTTP requests alone for the client's own CPU per request.
 */
async function singleStream(url: string, queries: QuerySet, count: number, library: VectorIndex | null, expected: Map<number, string>): Promise<SingleStreamFigures> {
  const target = await resolveTarget(url);
  const transport = new SocketTransport(target, 1, realClock);
  const bodies = new BodyCache(queries, { k: K });
  bodies.prebuild(0, count);
  await transport.preconnect(1, 2000);
  const post = (i: number) => new Promise<Outcome>((done) => transport.post(bodies.body(i % queries.count), realClock.now() + 10_000, done));
  try {
    for (let i = 0; i < 20; i++) await post(i);
    const http: number[] = [];
    const lib: number[] = [];
    const before = await scrape(url);
    for (let i = 0; i < count; i++) {
      const q = i % queries.count;
      const t0 = realClock.now();
      const out = await post(q);
      if (out.kind !== 'ok') throw new Error(`single stream: search ${i} answered ${out.detail}`);
      http.push(out.doneAt - t0);
      if (!expected.has(q)) expected.set(q, hitIds(out.body!));
      if (library) {
        const vector = queries.data.subarray(q * queries.dim, (q + 1) * queries.dim);
        const t1 = performance.now();
        const r = await library.search(vector, { k: K });
        lib.push(performance.now() - t1);
        if (r.hits.map((h) => h.id).join(',') !== expected.get(q)) throw new Error(`single stream: query ${q}: the server's hits differ from the library's`);
      }
    }
    const after = await scrape(url);
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < count; i++) await post(i);
    const cpu = process.cpuUsage(cpu0);
    const searches = after.queries - before.queries;
    return {
      httpP50: percentile(
        http.sort((a, b) => a - b),
        50,
      ),
      libraryP50: library
        ? percentile(
            lib.sort((a, b) => a - b),
            50,
          )
        : null,
      clientCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / count,
      engineMs: ((after.engineS - before.engineS) * 1000) / searches,
      cpuMsPerSearch: ((after.cpuS - before.cpuS) * 1000) / searches,
    };
  } finally {
    transport.close();
  }
}

interface LoopFigures {
  readonly report: ClosedLoopReport;
  readonly cpuMsPerSearch: number;
  readonly engineMsPerSearch: number;
  readonly delayP99Ms: number;
  /** Answers whose hits differ from the library's for the same query. */
  readonly wrong: number;
  readonly checked: number;
  readonly fiveXx: number;
}

async function closedLoop(
  url: string,
  queries: QuerySet,
  clients: number,
  expected: ReadonlyMap<number, string>,
  firstQuery = 0,
  shedBackoffMs: number | 'retry-after' = 0,
): Promise<LoopFigures> {
  let wrong = 0;
  let checked = 0;
  const before = await scrape(url);
  const report = await runClosedLoop({
    url,
    clients,
    durationMs: windowMs,
    warmupMs: 500,
    queries,
    firstQuery,
    k: K,
    shedBackoffMs,
    inspect: (q, _profiled, body) => {
      const want = expected.get(q);
      if (want === undefined) return;
      checked++;
      if (hitIds(body) !== want) wrong++;
    },
  });
  const after = await scrape(url);
  const searches = after.queries - before.queries;
  const fiveXx = Object.entries(report.status_counts).reduce((a, [s, n]) => a + (s.startsWith('5') && s !== '503' ? n : 0), 0);
  return {
    report,
    cpuMsPerSearch: searches > 0 ? ((after.cpuS - before.cpuS) * 1000) / searches : NaN,
    engineMsPerSearch: searches > 0 ? ((after.engineS - before.engineS) * 1000) / searches : NaN,
    delayP99Ms: delayP99Ms(before, after),
    wrong,
    checked,
    fiveXx,
  };
}

/**
 * The server's body parse for one search body of `dim` numbers, three ways interleaved (medians
 * of 20 rounds of 200): decode + JSON.parse + validation (what the server did before), the vector
 * read from the bytes straight into a Float32Array (what it does), and the vector as base64.
 */
function bodyParseMicros(queries: QuerySet): { jsonParse: number; direct: number; base64: number } {
  const dim = queries.dim;
  const vector = queries.data.subarray(0, dim);
  const json = Buffer.from(`{"vector":[${Array.from(vector, (x) => +x.toPrecision(9)).join(',')}],"k":10}`);
  const b64 = Buffer.from(JSON.stringify({ vector: Buffer.from(Float32Array.from(vector).buffer).toString('base64'), k: 10 }));
  const validator = new SearchValidator({ dims: dim, field: 'vector', rejectZeroVector: false }, { maxTimeoutMs: 60_000 });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const variants = [
    () => validator.nativeSearch(JSON.parse(decoder.decode(json))),
    () => validator.nativeSearch(parseJsonBody(json, { path: ['vector'], dims: dim })),
    () => validator.nativeSearch(parseJsonBody(b64, { path: ['vector'], dims: dim })),
  ];
  for (const v of variants) if (!v().ok) throw new Error('bench:serve: a body-parse variant did not validate');
  const rounds = variants.map((): number[] => []);
  for (let r = 0; r < 20; r++) {
    variants.forEach((v, i) => {
      const t0 = performance.now();
      for (let j = 0; j < 200; j++) v();
      rounds[i]!.push(((performance.now() - t0) / 200) * 1000);
    });
  }
  const [jsonParse, direct, base64] = rounds.map((x) =>
    percentile(
      x.sort((a, b) => a - b),
      50,
    ),
  );
  return { jsonParse: jsonParse!, direct: direct!, base64: base64! };
}

const ms = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1));
const verdict = (ok: boolean) => (ok ? 'ok' : 'MISS');

const out: Record<string, unknown> = { startedAt: new Date().toISOString(), loadavg: loadavg(), windowMs, runs: [] };
const checks: string[] = [];
for (const { n, dim } of sizes) {
  const ds = benchDataset(n, dim, n >= 1_000_000 ? 200 : 500);
  ensureIndex(ds);
  const vecFiles = readdirSync(ds.indexDir)
    .filter((f) => f.endsWith('.vec'))
    .map((f) => join(ds.indexDir, f));
  const queries = queriesFromFvecs(join(ds.dir, 'query.fvecs'));
  const tag = `${n.toLocaleString()} x ${dim}`;
  for (const f of vecFiles) warmFile(f);
  const parse = bodyParseMicros(queries);
  checks.push(
    `${tag} body parse (${dim} numbers): decode + JSON.parse + validate ${parse.jsonParse.toFixed(1)} us, straight into a Float32Array ${parse.direct.toFixed(1)} us (${(parse.direct / parse.jsonParse).toFixed(2)}x), base64 ${parse.base64.toFixed(1)} us (${(parse.base64 / parse.jsonParse).toFixed(2)}x)`,
  );

  process.stderr.write(`bench:serve ${tag}: warm servers (defaults; --max-inflight ${LIMITED.maxInflight} --max-queue ${LIMITED.maxQueue}) and the library\n`);
  const defaults = await startServer(ds, [], null);
  const limited = await startServer(ds, ['--max-inflight', String(LIMITED.maxInflight), '--max-queue', String(LIMITED.maxQueue)], null);
  const library = await openIndex(ds.indexDir, { calibrate: 'first-use' });
  const expected = new Map<number, string>();
  const rows: (string | number)[][] = [];
  const run: Record<string, unknown> = { index: tag, bodyParseMicros: parse, warm: {}, cold: null };
  try {
    const single = await singleStream(defaults.url, queries, SINGLE_STREAM, library, expected);
    await library.close();
    // The rest of the queries' expected hits, from the server's single stream (identical to the library's above).
    await singleStream(defaults.url, queries, queries.count, null, expected);
    (run.warm as Record<string, unknown>).singleStream = single;
    checks.push(
      `${tag} warm single stream: HTTP p50 ${ms(single.httpP50)} ms, library p50 ${ms(single.libraryP50)} ms (${(single.httpP50 / single.libraryP50!).toFixed(2)}x; <= 1.3x ${verdict(single.httpP50 <= 1.3 * single.libraryP50!)}), client CPU ${ms(single.clientCpuMsPerRequest)} ms per request, server CPU ${ms(single.cpuMsPerSearch)} ms per search, engine ${ms(single.engineMs)} ms`,
    );
    const loops: Record<string, LoopFigures> = {};
    for (const clients of clientCounts) {
      process.stderr.write(`bench:serve ${tag}: closed loop, ${clients} clients\n`);
      loops[`defaults/${clients}`] = await closedLoop(defaults.url, queries, clients, expected);
    }
    process.stderr.write(`bench:serve ${tag}: closed loop, 128 clients, limited server\n`);
    loops['limited/128'] = await closedLoop(limited.url, queries, 128, expected);
    // Clients that wait a little after a 429 before the next request (the storm above retries at once).
    for (const backoff of BACKOFFS) {
      process.stderr.write(`bench:serve ${tag}: closed loop, 128 clients pausing ${backoff} after a 429\n`);
      loops[`defaults/128 ${backoff}`] = await closedLoop(defaults.url, queries, 128, expected, 0, backoff);
      loops[`limited/128 ${backoff}`] = await closedLoop(limited.url, queries, 128, expected, 0, backoff);
    }
    for (const [name, f] of Object.entries(loops)) {
      const r = f.report;
      rows.push([
        name,
        r.answered_per_s,
        r.shed_per_s,
        ms(r.latency_ms.p50),
        ms(r.latency_ms.p99),
        ms(r.latency_ms.max),
        ms(r.health_ms?.p99),
        `<= ${ms(f.delayP99Ms)}`,
        ms(f.cpuMsPerSearch),
        `${(f.cpuMsPerSearch / single.engineMs).toFixed(2)}x`,
        `${f.checked - f.wrong}/${f.checked}`,
        f.fiveXx,
      ]);
    }
    const capacity = Math.max(...Object.values(loops).map((f) => f.report.answered_per_s));
    const open: Record<string, unknown> = {};
    for (const rate of [100, Math.round(2 * capacity)]) {
      process.stderr.write(`bench:serve ${tag}: open loop, ${rate}/s\n`);
      const r = await runLoad({ url: defaults.url, rate, durationMs: windowMs, warmupMs: 1000, timeoutMs: 5000, queries, k: K });
      open[rate] = r;
      rows.push([
        `open ${rate}/s`,
        r.achieved_rate,
        Math.round(r.counts.shed / r.steady_window_s),
        ms(r.latency_ms.p50),
        ms(r.latency_ms.p99),
        ms(r.latency_ms.max),
        '-',
        '-',
        '-',
        '-',
        '-',
        r.counts.status_counts['500'] ?? 0,
      ]);
    }
    (run.warm as Record<string, unknown>).loops = loops;
    (run.warm as Record<string, unknown>).open = open;

    const four = loops['defaults/4'];
    if (four)
      checks.push(
        `${tag} warm 4 clients: server CPU ${ms(four.cpuMsPerSearch)} ms per search = ${(four.cpuMsPerSearch / single.engineMs).toFixed(2)}x the single-stream engine time (<= 1.3x ${verdict(four.cpuMsPerSearch <= 1.3 * single.engineMs)})`,
      );
    for (const name of ['defaults/128', 'limited/128', ...BACKOFFS.flatMap((b) => [`defaults/128 ${b}`, `limited/128 ${b}`])]) {
      const f = loops[name];
      if (!f) continue;
      const bound = name.startsWith('limited') ? (LIMITED.maxInflight + LIMITED.maxQueue) * single.httpP50 * 1.5 : Infinity;
      const p99 = f.report.latency_ms.p99 ?? Infinity;
      const ok = f.report.shed > 0 && f.fiveXx === 0 && f.wrong === 0 && p99 <= bound && (f.report.health_ms?.p99 ?? Infinity) <= 50 && f.delayP99Ms <= 20;
      checks.push(
        `${tag} warm ${name}: shed ${f.report.shed}, 5xx ${f.fiveXx}, wrong ${f.wrong}/${f.checked}, accepted p99 ${ms(p99)} ms${Number.isFinite(bound) ? ` (bound ${ms(bound)})` : ''}, /health p99 ${ms(f.report.health_ms?.p99)} ms, event-loop delay p99 <= ${ms(f.delayP99Ms)} ms: ${verdict(ok)}`,
      );
    }
  } finally {
    await defaults.stop();
    await limited.stop();
  }
  const header = ['run', 'answered/s', 'shed/s', 'p50 ms', 'p99 ms', 'max ms', '/health p99', 'loop delay p99', 'server CPU ms/search', 'x engine', 'correct', '5xx'];
  process.stdout.write(`\nbench:serve ${tag} warm (k=${K}, ${windowMs / 1000} s windows; engine time per search in the single stream)\n${table(header, rows)}\n`);

  if (!values['no-cold'] && cgroup.ok) {
    const coldRows: (string | number)[][] = [];
    const pool = coldQueryPool(ds, cacheBytes, K * 5);
    process.stderr.write(`bench:serve ${tag}: cold server (cgroup: its memory at open + 64 MiB + ${cacheBytes / MIB} MiB page cache)\n`);
    const cold = await startServer(ds, [], { files: vecFiles });
    try {
      const single = await singleStream(cold.url, pool, 100, null, new Map());
      cold.beginRun(vecFiles);
      let first = 100;
      const loops: Record<string, LoopFigures> = {};
      for (const clients of clientCounts) {
        process.stderr.write(`bench:serve ${tag}: cold closed loop, ${clients} clients\n`);
        const f = await closedLoop(cold.url, pool, clients, expected, first);
        first += f.report.answered + f.report.shed + 64;
        loops[`cold/${clients}`] = f;
        const r = f.report;
        coldRows.push([
          `cold/${clients}`,
          r.answered_per_s,
          r.shed_per_s,
          ms(r.latency_ms.p50),
          ms(r.latency_ms.p99),
          ms(r.latency_ms.max),
          ms(r.health_ms?.p99),
          `<= ${ms(f.delayP99Ms)}`,
          ms(f.cpuMsPerSearch),
          f.fiveXx,
        ]);
      }
      run.cold = { singleStream: single, loops, memory: cold.memory() };
      process.stdout.write(
        `\nbench:serve ${tag} cold (single-stream p50 ${ms(single.httpP50)} ms)\n${table(['run', 'answered/s', 'shed/s', 'p50 ms', 'p99 ms', 'max ms', '/health p99', 'loop delay p99', 'server CPU ms/search', '5xx'], coldRows)}\n`,
      );
      const c128 = loops['cold/128'];
      if (c128)
        checks.push(
          `${tag} cold 128 clients: /health p99 ${ms(c128.report.health_ms?.p99)} ms, event-loop delay p99 <= ${ms(c128.delayP99Ms)} ms, 5xx ${c128.fiveXx}: ${verdict((c128.report.health_ms?.p99 ?? Infinity) <= 50 && c128.delayP99Ms <= 20 && c128.fiveXx === 0)}`,
        );
    } finally {
      await cold.stop();
    }
  } else if (!values['no-cold']) {
    process.stdout.write(`\nbench:serve ${tag} cold: skipped (${cgroup.ok ? '' : cgroup.reason})\n`);
  }
  (out.runs as unknown[]).push(run);
}
process.stdout.write(
  `\nchecks (load average at the start ${(out.loadavg as number[]).map((x) => x.toFixed(2)).join(' ')}, at the end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}):\n${checks.map((c) => `  ${c}`).join('\n')}\n`,
);
const jsonPath = values.json ?? join(packageRoot(), '.bench', 'serve.json');
writeFileSync(jsonPath, JSON.stringify(out, null, 2));
process.stdout.write(`(full figures in ${jsonPath})\n`);
