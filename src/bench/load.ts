/**
 * `npm run bench:load`: the server on the cold 1,000,000 x 1024 index (the rescore benchmark's
 * setup: fp32 files evicted, the server in a cgroup v1 memory limit far below the fp32 size),
 * Poisson arrivals for 60 s per read path, then `--find-max` (p99 SLO 50 ms) on a fresh cold server.
 *
 *   npm run bench:load -- [--device-fraction 0.5 | --rate R] [--duration 60s] [--paths mmap,mmap+parallel]
 *     [--cache-mib 256] [--anon-mib 1536] [--no-find-max] [--n 1000000 --dim 1024] [--segment-docs N] [--num-candidates C]
 *
 * The offered rate is measured against the device, not fixed: this disk's sustained random-read
 * rate varies ~30x over minutes (a burst budget), so a fixed 100/s asks 10% of it one minute and
 * 300% the next. First the device's sustained random 4 KiB reads/s are measured (probeDeviceSustained:
 * 10 s of 64 random O_DIRECT pages all in flight, back to back), then the rate is the one whose
 * rescoring reads need `--device-fraction` of it (default 0.5): fraction x sustained / (k x
 * oversample pages per search). `--rate R` fixes it instead. Each run reports its p99 against the
 * single-stream cold p50 of the same server.
 *
 * `--segment-docs N` serves the same data indexed with N docs per segment (`idx-<tag>-segN`, built
 * on first use) instead of the benchmark's 125,000; `--num-candidates C` sends that HNSW beam per
 * segment with every search (default: the server's, max(200, 4 x k x oversample)).
 *
 * The cap is the server's anonymous memory once the index is open, plus 64 MiB for its heaps,
 * plus `--cache-mib` of page cache (see coldServer.ts); `--anon-mib` is the most the server may
 * hold after open. The queries never come back while they could still be cached (coldQueryPool.ts:
 * the dataset's queries, then more from the generator's stream; recall is measured on the first
 * ones, which have exact ground truth), and find-max goes on through them from step to step, so
 * the load is as cold as the single stream. Before each run the disk is probed (deviceHealth.ts:
 * a short burst, then 5 s at the run's own demand, k x oversample random fp32 pages per search at
 * the offered rate; on a disk with a burst budget this spends some of it, as the run would within
 * seconds), then 50 single-stream searches probe the server (the fp32 files are evicted again
 * after them). A run that answers fewer than 90% of its requests prints why (loadDiagnosis.ts),
 * and the benchmark exits 1 when a run answered nothing.
 */
import { cpus, loadavg } from 'node:os';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { READ_PATHS, type ReadPath } from '../api/types.js';
import { packageRoot } from '../executor/packageRoot.js';
import { runLoad } from '../../load/runLoad.js';
import { findMax } from '../../load/findMax.js';
import { parseDuration } from '../../load/duration.js';
import type { QuerySet } from '../../load/queries.js';
import { readIvecs } from '../../load/vecfile.js';
import { percentile } from '../../load/percentile.js';
import { singleStream } from '../../load/singleStream.js';
import { memoryCgroupSupport } from './cgroup.js';
import { ColdServer } from './coldServer.js';
import { diagnose } from './loadDiagnosis.js';
import {
  formatDeviceHealth,
  probeDevice,
  probeDeviceSustained,
  probeDeviceUnderLoad,
  SLOW_DEVICE_QD1_PAGES_PER_S,
  type DeviceHealth,
  type DeviceUnderLoad,
} from './deviceHealth.js';
import { coldQueryPool } from './coldQueryPool.js';
import { integerFlag } from '../cliFlags.js';
import { benchDataset, benchIndexVariant, ensureIndex, summarize, table } from './benchData.js';
import { spawn } from 'node:child_process';

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    'device-fraction': { type: 'string' },
    duration: { type: 'string' },
    paths: { type: 'string' },
    'cache-mib': { type: 'string' },
    'anon-mib': { type: 'string' },
    'no-find-max': { type: 'boolean' },
    n: { type: 'string' },
    dim: { type: 'string' },
    'segment-docs': { type: 'string' },
    'num-candidates': { type: 'string' },
  },
});

const base = benchDataset(Number(values.n ?? 1_000_000), Number(values.dim ?? 1024));
const segmentDocs = integerFlag('segment-docs', values['segment-docs']);
const numCandidates = integerFlag('num-candidates', values['num-candidates']);
const ds = segmentDocs === undefined ? base : benchIndexVariant(base, `seg${segmentDocs}`, segmentDocs);
ensureIndex(ds);
const K = 10;
const OVERSAMPLE = 5;
/** fp32 pages one search's rescoring reads: k x oversample vectors of at most one 4 KiB page each (1024 dims, vector data page-aligned). */
const K_PAGES = K * OVERSAMPLE;
const deviceFraction = Number(values['device-fraction'] ?? 0.5);
if (!(deviceFraction > 0 && deviceFraction <= 2)) throw new Error(`--device-fraction must be in (0, 2], got ${values['device-fraction']}`);
const SUSTAINED_PROBE_MS = 10_000;
const vecFiles = readdirSync(ds.indexDir)
  .filter((f) => f.endsWith('.vec'))
  .map((f) => join(ds.indexDir, f));
const sustainedPagesPerS = probeDeviceSustained(vecFiles, SUSTAINED_PROBE_MS);
const rate = values.rate !== undefined ? Number(values.rate) : Math.max(1, Math.floor((deviceFraction * sustainedPagesPerS) / K_PAGES));
process.stderr.write(
  `bench:load: the device sustains ${sustainedPagesPerS.toLocaleString()} random 4 KiB reads/s (${SUSTAINED_PROBE_MS / 1000} s, 64 in flight); ` +
    (values.rate !== undefined
      ? `offering the given ${rate}/s (${((100 * rate * K_PAGES) / sustainedPagesPerS).toFixed(0)}% of it)
`
      : `offering ${rate}/s, whose ${K_PAGES} pages per search need ${(deviceFraction * 100).toFixed(0)}% of it
`),
);
const durationMs = parseDuration(values.duration ?? '60s');
const paths = (values.paths ? values.paths.split(',') : [...READ_PATHS]) as ReadPath[];
const groundTruth = readIvecs(join(ds.dir, 'groundtruth.ivecs'));
const MIB = 2 ** 20;
const cacheBytes = Number(values['cache-mib'] ?? 256) * MIB;
const queries = coldQueryPool(ds, cacheBytes, K * OVERSAMPLE);
// 1M x 1024 holds ~0.3 GiB of codes and graphs in its arenas plus the heaps of node and 2 workers.
const anonCeilingBytes = Number(values['anon-mib'] ?? 1536) * MIB;
const support = memoryCgroupSupport();
/** The client's timeout; the server is given the same deadline, so it drops a search nobody waits for (504). */
const TIMEOUT_MS = 2000;
const PROBE_QUERIES = 50;
/** How long the device is read at the run's own demand before each run (probeDeviceUnderLoad). */
const DEVICE_PROBE_MS = 5000;

/**
 * The CPU reference (cpuReference.ts) sampled every 50 ms in a process of its own for the length
 * of a run: the machine's own tail for CPU work while the load ran. Stop it for its samples; it
 * also stops when this process goes away (its stdin closes).
 */
async function startCpuReference(): Promise<() => Promise<number[]>> {
  const script = join(packageRoot(), 'dist', 'src', 'bench', 'cpuReference.js');
  const child = spawn(process.execPath, [script, '--every-ms', '50'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((ready, fail) => {
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${script} exited before it was ready (${signal ?? `exit ${code}`})`)));
    child.stdout!.on('data', (d: string) => {
      out += d;
      if (out.startsWith('ready\n')) ready();
    });
  });
  child.removeAllListeners('exit');
  return () =>
    new Promise((done) => {
      child.once('exit', () => {
        const last = out.trim().split('\n').at(-1) ?? '';
        done(last.startsWith('{') ? (JSON.parse(last) as { ms: number[] }).ms : []);
      });
      child.stdin!.end();
    });
}

/**
 * Single-stream cold latency of `PROBE_QUERIES` searches through the run's own transport, p50 ms
 * (null when they fail: the run will say why).
 */
async function probe(url: string, q: QuerySet): Promise<number | null> {
  try {
    const { ms } = await singleStream(url, q, { k: K, oversample: OVERSAMPLE, numCandidates }, PROBE_QUERIES);
    return percentile(ms.sort(), 50);
  } catch (e) {
    process.stderr.write(`bench:load: ${(e as Error).message}\n`);
    return null;
  }
}

let answeredNothing = false;

/** One cold server for `fn`; prints the diagnosis when the run went wrong. */
async function withColdServer<T extends { readonly report: Parameters<typeof diagnose>[0]['report'] | null }>(
  label: string,
  readPath: ReadPath,
  fn: (url: string) => Promise<T>,
): Promise<
  T & {
    readonly server: Record<string, unknown> & {
      readonly cpuReference: ReturnType<typeof summarize>;
      readonly probeP50Ms: number | null;
      readonly device: DeviceHealth;
      readonly deviceAtRate: DeviceUnderLoad;
    };
  }
> {
  const device = probeDevice(vecFiles);
  const deviceAtRate = await probeDeviceUnderLoad(vecFiles, rate, K * OVERSAMPLE, DEVICE_PROBE_MS);
  process.stderr.write(
    `bench:load ${label}: device ${formatDeviceHealth(device)}; at ${rate} batches/s of ${K * OVERSAMPLE} pages for ${DEVICE_PROBE_MS / 1000} s: ` +
      `p50 ${deviceAtRate.p50Ms.toFixed(2)} ms, p99 ${deviceAtRate.p99Ms.toFixed(2)} ms, ${deviceAtRate.pagesPerS.toLocaleString()} pages/s of ${(rate * K * OVERSAMPLE).toLocaleString()} asked\n`,
  );
  if (device.qd1PagesPerS < SLOW_DEVICE_QD1_PAGES_PER_S)
    process.stderr.write(`bench:load ${label}: the disk is throttled now; this run's cold figures will measure the throttle\n`);
  const argv = [
    join(packageRoot(), 'bin', 'prescore.js'),
    'serve',
    '--index',
    ds.indexDir,
    '--port',
    '0',
    '--calibrate',
    'first-use',
    '--read-path',
    readPath,
    '--max-inflight',
    '32',
    '--max-queue',
    '32',
  ];
  const server = await ColdServer.start({
    argv,
    coldFiles: vecFiles,
    limit: { kind: 'after-open', cacheBytes, anonCeilingBytes },
    cgroup: support,
    name: `prescore-bench-load-${process.pid}`,
  });
  try {
    const probeP50Ms = await probe(server.url, queries);
    server.beginRun(vecFiles);
    const loadBefore = loadavg()[0]!;
    const stopCpuReference = await startCpuReference();
    let samples: number[] = [];
    let out: T;
    try {
      out = await fn(server.url);
    } finally {
      samples = await stopCpuReference();
    }
    const cpuReference = summarize(samples);
    const memory = server.memory();
    const exit = server.exit;
    const loadAfter = loadavg()[0]!;
    let diagnosis: string[] = [];
    if (out.report) {
      diagnosis = diagnose({ report: out.report, probeP50Ms, memory, exit, serverStderr: server.stderrTail(), loadBefore, loadAfter, cores: cpus().length, device, deviceAtRate });
      if (diagnosis.length) process.stderr.write(`bench:load ${label}: what went wrong\n${diagnosis.map((l) => `  ${l}`).join('\n')}\n`);
      if (out.report.counts_all.ok === 0) answeredNothing = true;
    }
    return { ...out, server: { probeP50Ms, memory, exit, loadBefore, loadAfter, diagnosis, cpuReference, device, deviceAtRate } };
  } finally {
    await server.stop();
  }
}

const rows: (string | number)[][] = [];
const json: Record<string, unknown> = {
  rate,
  durationMs,
  device: { sustainedPagesPerS, fraction: values.rate !== undefined ? (rate * K_PAGES) / sustainedPagesPerS : deviceFraction },
  queries: { count: queries.count, source: queries.source },
  cacheBytes: support.ok ? cacheBytes : null,
  runs: {},
};
for (const readPath of paths) {
  const { report, server } = await withColdServer(readPath, readPath, async (url) => ({
    report: await runLoad({
      url,
      rate,
      durationMs,
      warmupMs: 5000,
      timeoutMs: TIMEOUT_MS,
      serverTimeoutMs: TIMEOUT_MS,
      queries,
      groundTruth,
      k: K,
      oversample: OVERSAMPLE,
      numCandidates,
      progress: process.stderr,
    }),
  }));
  let maxRate: number | null = null;
  if (!values['no-find-max']) {
    const { fm } = await withColdServer(`${readPath} find-max`, readPath, async (url) => ({
      report: null,
      fm: await findMax({
        url,
        sloP99Ms: 50,
        stepDurationMs: 10_000,
        warmupMs: 2000,
        startRate: 50,
        queries,
        k: K,
        oversample: OVERSAMPLE,
        numCandidates,
        timeoutMs: TIMEOUT_MS,
        serverTimeoutMs: TIMEOUT_MS,
        progress: process.stderr,
      }),
    }));
    maxRate = fm.max_sustainable_rate;
    (json.runs as Record<string, unknown>)[`${readPath}:findMax`] = { max_sustainable_rate: fm.max_sustainable_rate, limited_by: fm.limited_by };
  }
  (json.runs as Record<string, unknown>)[readPath] = { ...report, server };
  const l = report.latency_ms;
  const cpu = server.cpuReference;
  rows.push([
    readPath,
    report.offered_rate,
    report.achieved_rate,
    l.p50 ?? NaN,
    l.p90 ?? NaN,
    l.p99 ?? NaN,
    l.p999 ?? NaN,
    l.max ?? NaN,
    server.probeP50Ms ?? '-',
    server.probeP50Ms === null || l.p99 === null ? '-' : (l.p99 / server.probeP50Ms).toFixed(2),
    report.counts.shed,
    report.counts.timeout,
    report.counts.error,
    report.recall && report.recall.queries > 0 ? report.recall.mean.toFixed(3) : '-',
    maxRate ?? '-',
    `${cpu.p50.toFixed(2)} / ${(cpu.p99 / cpu.p50).toFixed(2)}`,
    server.device.qd1PagesPerS.toLocaleString(),
    `${server.deviceAtRate.p50Ms.toFixed(2)} / ${server.deviceAtRate.p99Ms.toFixed(2)}`,
    l.p99 === null ? '-' : (l.p99 / server.deviceAtRate.p99Ms).toFixed(2),
  ]);
}
process.stdout.write(
  [
    `bench:load  ${ds.n.toLocaleString()} x ${ds.dim} in segments of ${ds.segmentDocs.toLocaleString()} docs, num_candidates ${numCandidates ?? 'default'}, cold server (${support.ok ? `cgroup limit: its memory at open + 64 MiB + ${cacheBytes / MIB} MiB page cache` : `no cgroup: ${support.reason}`}), Poisson ${rate}/s for ${durationMs / 1000} s after 5 s warm-up, k=${K} oversample ${OVERSAMPLE}, 32 in flight + 32 queued`,
    `offered rate: ${rate}/s x ${K_PAGES} pages = ${((100 * rate * K_PAGES) / sustainedPagesPerS).toFixed(0)}% of the ${sustainedPagesPerS.toLocaleString()} random 4 KiB reads/s the device sustained just before (${SUSTAINED_PROBE_MS / 1000} s, 64 in flight); acceptance: 0 shed and p99 <= 3x the single-stream p50`,
    table(
      [
        'read path',
        'offered/s',
        'achieved/s',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'p99.9 ms',
        'max ms',
        'single-stream p50 ms',
        'p99 / single p50',
        'shed',
        'timeout',
        'error',
        'recall@10',
        'find-max/s (p99<=50ms)',
        'cpu ref p50 ms / p99/p50',
        'device QD1 pages/s',
        'device at the rate p50 / p99 ms',
        'p99 / device p99',
      ],
      rows,
    ),
    `queries: ${queries.count.toLocaleString()} (${queries.source}), none sent twice while its pages could still be cached; recall@10 on the first ${groundTruth.count}`,
    `single stream: ${PROBE_QUERIES} searches one at a time on the cold server before the run (the fp32 files evicted again after them), through the run's own HTTP client`,
    `device QD1: random 4 KiB O_DIRECT reads of the fp32 files one at a time just before the run (deviceHealth.ts; ~12,000/s when the disk is not throttled, under ${SLOW_DEVICE_QD1_PAGES_PER_S.toLocaleString()} it is)`,
    `device at the rate: ${K * OVERSAMPLE}-page batches of random fp32 pages (what one cold search's rescoring reads), all in flight, at the offered rate for ${DEVICE_PROBE_MS / 1000} s just before the run, latency from each batch's intended start (deviceHealth.ts)`,
    "cpu ref: a fixed ~2 ms wasm job (cpuReference.ts) every 50 ms in a process of its own during the run: the machine's own tail for CPU work (p99/p50 1.0 when quiet)",
  ].join('\n') + '\n',
);
writeFileSync(`${ds.indexDir}.load.json`, JSON.stringify(json, null, 2));
if (answeredNothing) process.exitCode = 1;
