/**
 * `npm run bench:scale`: the whole service at 1,000,000 and 5,000,000 x 1024 cosine (`prescore
 * gen`, 1000 queries), each size built with the builder's default segment-size policy and served
 * by `prescore serve` inside a cgroup v1 memory limit of (codes + graphs + --headroom-mib), far
 * below the fp32 size, with the fp32 files evicted before every server start. Per size:
 *
 *   build time and peak RSS; open time; resident memory after open with 1, 2 and 4 workers;
 *   recall@10 at oversample 3 and 5 and of the default search (no knobs: the index's recall
 *   target); cold single-stream latency at k=10 and k=100 (and the first phase's share); 100 QPS
 *   Poisson p50/p99 and shed (after a 20-search probe, with the fp32 evicted again, as bench:load
 *   does); then, in this process, the first phase of every size side by side, query by query, at
 *   oversample 5 and as the default search (the 5M / 1M ratio target).
 *
 *   npm run bench:scale -- [--sizes 1000000,5000000] [--dim 1024] [--queries 1000]
 *     [--workers 1,2,4] [--threads 2] [--headroom-mib 1024] [--rate 100] [--duration 60s]
 *     [--delete-base 5000000] [--probe-limit-gib 12] [--num-candidates N (default: the service's beam)]
 *     [--bits 1|2|4|7|8 (default 1; other bits build into idx-<size>-scale-b<bits>)]
 *   npm run bench:scale -- --sweep ...   (segment-size sweep on 1M: see scaleSweep.ts)
 *
 * --delete-base N,...: delete those sizes' base.fvecs once their index is built (the queries and
 * ground truth stay; a rebuild regenerates the identical base). When the server cannot open
 * inside the cap (killed by the cgroup's OOM killer), the run says so, and the measurements are
 * taken with the cap raised to the resident memory seen + headroom, labelled as such.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openIndex, describeReader } from '../api/openIndex.js';
import { Executor } from '../executor/Executor.js';
import { packageRoot } from '../executor/packageRoot.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { runLoad } from '../../load/runLoad.js';
import { parseDuration } from '../../load/duration.js';
import { queriesFromFvecs } from '../../load/queries.js';
import { readIvecs } from '../../load/vecfile.js';
import type { LoadReport } from '../../load/report.js';
import { memoryCgroupSupport } from './cgroup.js';
import { ColdServer, ServerStartError } from './coldServer.js';
import { benchDataset, benchIndexVariant, ensureDataset, ensureIndex, fmt, loadQueries, recallAt, summarize, table, type BenchDataset, type BuildFacts } from './benchData.js';
import { segmentSweep } from './scaleSweep.js';
import { DOC_BITS_CHOICES, type DocBits } from '../../segments/quantized/ScalarEncodings.js';

const { values } = parseArgs({
  options: {
    sweep: { type: 'boolean' },
    n: { type: 'string' },
    'segment-docs': { type: 'string' },
    keep: { type: 'boolean' },
    sizes: { type: 'string' },
    dim: { type: 'string' },
    queries: { type: 'string' },
    workers: { type: 'string' },
    threads: { type: 'string' },
    'headroom-mib': { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    'delete-base': { type: 'string' },
    'probe-limit-gib': { type: 'string' },
    'num-candidates': { type: 'string' },
    bits: { type: 'string' },
  },
});
const list = (s: string | undefined, dflt: number[]) => (s ? s.split(',').map((x) => Number(x.replace(/_/g, ''))) : dflt);

if (values.sweep) {
  // Each entry: N docs per segment or `default`, optionally `:B` for an HNSW construction beam of B.
  const layouts = (values['segment-docs'] ?? 'default,250000,500000,1000000').split(',').map((x) => {
    const [docs, beam] = x.split(':');
    return { segmentDocs: docs === 'default' ? undefined : Number(docs!.replace(/_/g, '')), beamWidth: beam === undefined ? undefined : Number(beam) };
  });
  await segmentSweep({
    n: Number(values.n ?? 1_000_000),
    layouts,
    queries: Number(values.queries ?? 1000),
    keep: values.keep === true,
    numCandidates: list(values['num-candidates'], [100, 200]),
  });
  process.exit(0);
}

const sizes = list(values.sizes, [1_000_000, 5_000_000]);
const dim = Number(values.dim ?? 1024);
const queryCount = Number(values.queries ?? 1000);
const workerCounts = list(values.workers, [1, 2, 4]);
const threads = Number(values.threads ?? cpus().length);
const headroom = Number(values['headroom-mib'] ?? 1024) * 2 ** 20;
const rate = Number(values.rate ?? 100);
const durationMs = parseDuration(values.duration ?? '60s');
const deleteBase = new Set(list(values['delete-base'], []));
/** Doc bits of every size's codes (`prescore build --bits`): one setting for all sizes, so recall compares like with like. */
const bits = Number(values.bits ?? 1);
if (!DOC_BITS_CHOICES.includes(bits as DocBits)) throw new RangeError(`--bits must be one of ${DOC_BITS_CHOICES.join(', ')}, got ${values.bits}`);
// The memory probes run uncapped by the benchmark's cap but inside this safety limit, so that
// per-worker copies of a large index cannot push the shared machine out of memory.
const probeLimit = Number(values['probe-limit-gib'] ?? 12) * 2 ** 30;
/** The HNSW beam of every search: the service's default (max(200, 4 x k x oversample)) unless --num-candidates. */
const NUM_CANDIDATES = values['num-candidates'] ? Number(values['num-candidates']) : undefined;
const support = memoryCgroupSupport();
const loadBefore = loadAverage();

interface Resident {
  readonly workers: number;
  readonly openSeconds: number;
  readonly rssBytes: number;
  readonly anonBytes: number;
  readonly oom: boolean;
  /** The index's own memory report (GET /v1/indexes), when the server gives one. */
  readonly reported: unknown;
}

interface SingleStream {
  readonly latencyMs: ReturnType<typeof summarize>;
  readonly firstPhaseMs: ReturnType<typeof summarize>;
  readonly recall: number;
  /** The settings the server chose for searches that named none (its recall target's), as `oversample/num_candidates` with their counts. */
  readonly chosen: string;
}

interface SizeResult {
  readonly n: number;
  readonly segments: number;
  readonly segmentDocs: number;
  readonly bytes: { readonly vectors: number; readonly codes: number; readonly graph: number };
  /** Codes and graphs as held in memory (the arena plan), the cap's base. */
  readonly held: { readonly codes: number; readonly graphs: number };
  readonly build: BuildFacts | null;
  readonly resident: Resident[];
  readonly cap: { readonly bytes: number; readonly held: boolean; readonly note: string; readonly peakUsageBytes: number; readonly failcnt: number };
  readonly openSeconds: number;
  readonly k10: SingleStream;
  readonly recallOversample3: number;
  /** A search that names no oversample, num_candidates or recall_target: the server's default (recall@10 0.95 on a calibrated index). */
  readonly defaultSearch: SingleStream;
  readonly k100: SingleStream;
  readonly load: LoadReport | null;
}

const results: SizeResult[] = [];
const datasets: BenchDataset[] = [];
for (const n of sizes) {
  const ds = benchIndexVariant(benchDataset(n, dim, queryCount), bits === 1 ? 'scale' : `scale-b${bits}`, undefined, bits === 1 ? undefined : bits);
  datasets.push(ds);
  const build = ensureIndex(ds);
  ensureDataset(ds, false); // queries + ground truth (when the index existed before this run)
  if (deleteBase.has(n)) rmSync(join(ds.dir, 'base.fvecs'), { force: true });
  results.push(await measureSize(ds, build));
}

// The first phase of every size side by side in this process (warm: it reads only codes and
// graphs), query by query in rotating order: the 5M / 1M first-phase ratio.
process.stderr.write('scale: first phase side by side\n');
const indexes = await Promise.all(datasets.map((ds) => openIndex(ds.indexDir, { calibrate: 'first-use' })));
// Each query runs at oversample 5 and as the default search (no knobs: the index's recall
// target), sizes and variants in rotating order.
const sideBySide = datasets.map(() => [] as number[]);
const sideBySideDefault = datasets.map(() => [] as number[]);
const queries = await Promise.all(datasets.map((ds) => loadQueries(ds)));
const sideBySideCount = Math.min(queryCount, ...queries.map((q) => q.vectors.length));
const fixedOptions = { k: 10, oversample: 5, numCandidates: NUM_CANDIDATES };
for (let i = 0; i < Math.min(100, sideBySideCount); i++)
  for (let s = 0; s < indexes.length; s++) {
    await indexes[s].search(queries[s].vectors[i], fixedOptions);
    await indexes[s].search(queries[s].vectors[i], { k: 10 });
  }
for (let i = 0; i < sideBySideCount; i++) {
  for (let j = 0; j < indexes.length * 2; j++) {
    const slot = (i + j) % (indexes.length * 2);
    const s = slot >> 1;
    const byDefault = (slot & 1) === 1;
    const r = await indexes[s].search(queries[s].vectors[i], byDefault ? { k: 10 } : fixedOptions);
    (byDefault ? sideBySideDefault : sideBySide)[s].push(r.stats.timings.firstPhaseMs);
  }
}
const sideBySideSummary = sideBySide.map((ms) => summarize(ms));
const sideBySideDefaultSummary = sideBySideDefault.map((ms) => summarize(ms));
for (const index of indexes) await index.close();
await Executor.shutdown();
const loadAfter = loadAverage();

const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const cols = results.map((r) => `${(r.n / 1e6).toLocaleString()}M`);
const row = (label: string, f: (r: SizeResult, i: number) => string | number) => [
  label,
  ...results.map((r, i) => {
    const v = f(r, i);
    return typeof v === 'number' ? fmt(v) : v;
  }),
];
const rows: (string | number)[][] = [
  row('segments (docs each)', (r) => `${r.segments} (${r.segmentDocs.toLocaleString()})`),
  row('files: fp32 / codes / graphs', (r) => `${gib(r.bytes.vectors)} / ${mib(r.bytes.codes)} / ${mib(r.bytes.graph)}`),
  row('held in memory: codes / graphs', (r) => `${mib(r.held.codes)} / ${mib(r.held.graphs)}`),
  row('build time', (r) => (r.build ? `${(r.build.seconds / 60).toFixed(1)} min` : 'existed')),
  row('build peak RSS', (r) => (r.build ? `${r.build.peakRssGiB.toFixed(2)} GiB` : '-')),
  row(`cgroup cap (codes + graphs + ${mib(headroom)})`, (r) => `${gib(r.cap.bytes)}${r.cap.held ? '' : ` (${r.cap.note})`}`),
  row('peak cgroup usage (cold k=10 run)', (r) => `${gib(r.cap.peakUsageBytes)}, failcnt ${r.cap.failcnt}`),
  row(`open time (${threads} workers, in the cap)`, (r) => `${r.openSeconds.toFixed(1)} s`),
  ...workerCounts.map((w) =>
    row(`resident after open, ${w} worker${w === 1 ? '' : 's'} (RSS / anon)`, (r) => {
      const m = r.resident.find((x) => x.workers === w);
      if (!m) return '-';
      return m.oom ? `> ${gib(probeLimit)} (probe limit)` : `${gib(m.rssBytes)} / ${gib(m.anonBytes)}`;
    }),
  ),
  row('recall@10, oversample 3', (r) => r.recallOversample3.toFixed(3)),
  row('recall@10, oversample 5', (r) => r.k10.recall.toFixed(3)),
  row('recall@10, default search (no knobs)', (r) => `${r.defaultSearch.recall.toFixed(3)} (${r.defaultSearch.chosen})`),
  row('  default search cold p50 / p99 ms', (r) => `${fmt(r.defaultSearch.latencyMs.p50)} / ${fmt(r.defaultSearch.latencyMs.p99)}`),
  row('cold single stream k=10 p50 / p99 ms', (r) => `${fmt(r.k10.latencyMs.p50)} / ${fmt(r.k10.latencyMs.p99)}`),
  row('  first phase p50 / p99 ms', (r) => `${fmt(r.k10.firstPhaseMs.p50)} / ${fmt(r.k10.firstPhaseMs.p99)}`),
  row('cold single stream k=100 p50 / p99 ms', (r) => `${fmt(r.k100.latencyMs.p50)} / ${fmt(r.k100.latencyMs.p99)}`),
  row(`${rate} QPS Poisson p50 / p99 ms`, (r) => (r.load ? `${fmt(r.load.latency_ms.p50 ?? NaN)} / ${fmt(r.load.latency_ms.p99 ?? NaN)}` : '-')),
  row(`${rate} QPS shed / timeout / error`, (r) => (r.load ? `${r.load.counts.shed} / ${r.load.counts.timeout} / ${r.load.counts.error}` : '-')),
  row('first phase side by side p50 / p99 ms', (_, i) => `${fmt(sideBySideSummary[i].p50)} / ${fmt(sideBySideSummary[i].p99)}`),
  row('  the same, default search p50 / p99 ms', (_, i) => `${fmt(sideBySideDefaultSummary[i].p50)} / ${fmt(sideBySideDefaultSummary[i].p99)}`),
];
const lines = [
  `bench:scale  ${dim}-dim cosine (prescore gen), ${bits}-bit codes, ${queryCount} queries, ${NUM_CANDIDATES === undefined ? 'default beam' : `num_candidates ${NUM_CANDIDATES}`}, oversample 5 unless noted, ${threads} executor threads`,
  `${support.ok ? 'cgroup v1 memory limit per server' : `no cgroup (${support.reason}): eviction only`}; fp32 evicted before every server start; load average ${loadBefore} before, ${loadAfter} after`,
  '',
  table(['', ...cols], rows),
];
if (results.length >= 2) {
  const first = results[0];
  const last = results[results.length - 1];
  const ratio = sideBySideSummary[results.length - 1].p50 / sideBySideSummary[0].p50;
  const ratioDefault = sideBySideDefaultSummary[results.length - 1].p50 / sideBySideDefaultSummary[0].p50;
  const dRecall = last.k10.recall - first.k10.recall;
  const dRecall3 = last.recallOversample3 - first.recallOversample3;
  const dDefault = last.defaultSearch.recall - first.defaultSearch.recall;
  lines.push(
    '',
    `targets: first-phase p50 ${cols.at(-1)} / ${cols[0]} = ${ratio.toFixed(2)} (side by side; <= 2: ${ratio <= 2 ? 'met' : 'MISSED'}), ${ratioDefault.toFixed(2)} for the default search (${ratioDefault <= 2 ? 'met' : 'MISSED'}); ` +
      `recall@10 ${cols.at(-1)} - ${cols[0]}: ${dRecall3.toFixed(3)} at oversample 3, ${dRecall.toFixed(3)} at oversample 5 (within 0.01: ${Math.abs(dRecall) <= 0.01 && Math.abs(dRecall3) <= 0.01 ? 'met' : 'MISSED'}); ` +
      `default search recall@10 ${results.map((r) => r.defaultSearch.recall.toFixed(3)).join(' / ')} (>= 0.95: ${results.every((r) => r.defaultSearch.recall >= 0.95) ? 'met' : 'MISSED'}; ` +
      `${cols.at(-1)} - ${cols[0]} ${dDefault.toFixed(3)}, within 0.01: ${Math.abs(dDefault) <= 0.01 ? 'met' : 'MISSED'}); ` +
      `shed at ${rate} QPS: ${results.map((r) => r.load?.counts.shed ?? '-').join(' / ')} (0: ${results.every((r) => r.load?.counts.shed === 0) ? 'met' : 'MISSED'}); ` +
      `cap held: ${results.map((r) => (r.cap.held ? 'yes' : 'no')).join(' / ')}`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
writeFileSync(
  join(packageRoot(), '.bench', bits === 1 ? 'scale.json' : `scale-b${bits}.json`),
  JSON.stringify({ sizes, bits, threads, headroom, loadBefore, loadAfter, results, sideBySide: sideBySideSummary, sideBySideDefault: sideBySideDefaultSummary }, null, 2),
);

async function measureSize(ds: BenchDataset, build: BuildFacts | null): Promise<SizeResult> {
  const reader = DirectoryReader.open(ds.indexDir);
  const description = describeReader(reader, ds.name, 'mmap+parallel', { threads });
  reader.close();
  const vecFiles = readdirSync(ds.indexDir)
    .filter((f) => f.endsWith('.vec'))
    .map((f) => join(ds.indexDir, f));
  const tag = `${(ds.n / 1e6).toLocaleString()}M`;

  const resident: Resident[] = [];
  for (const workers of workerCounts) {
    process.stderr.write(`scale ${tag}: resident memory with ${workers} workers\n`);
    const started = await startServer(ds, vecFiles, workers, probeLimit);
    if (started.oom) {
      resident.push({ workers, openSeconds: NaN, rssBytes: NaN, anonBytes: NaN, oom: true, reported: null });
      continue;
    }
    const { server } = started;
    const status = procStatus(server.pid);
    const reported = await (await fetch(`${server.url}/v1/indexes`)).json();
    resident.push({ workers, openSeconds: server.openSeconds, rssBytes: status.rss, anonBytes: status.anon, oom: false, reported });
    await stopServer(ds, server, probeLimit);
  }

  // The cap: what the index needs in memory (codes + graphs) plus headroom for node, the workers
  // and a little page cache. If the server cannot open in it, measure with what it was seen to use.
  let capBytes = description.memory.codes + description.memory.graphs + headroom;
  let held = true;
  let note = '';
  const start = async (): Promise<ColdServer> => {
    let s = await startServer(ds, vecFiles, threads, capBytes);
    if (s.oom && held) {
      const seen = resident.find((x) => x.workers === threads && !x.oom);
      held = false;
      note = `OOM at ${gib(capBytes)}; measured with ${seen ? `${gib(seen.anonBytes + headroom)} = resident anon + headroom` : 'no cap'}`;
      process.stderr.write(`scale ${tag}: ${note}\n`);
      capBytes = seen ? seen.anonBytes + headroom : probeLimit;
      s = await startServer(ds, vecFiles, threads, capBytes);
    }
    if (s.oom) throw new Error(`scale ${tag}: the server cannot open even in ${gib(capBytes)}`);
    s.server.beginRun([]);
    return s.server;
  };

  process.stderr.write(`scale ${tag}: cold single stream, k=10\n`);
  let server = await start();
  const openSeconds = server.openSeconds;
  const { vectors, truth } = await loadQueries(ds);
  const k10 = await singleStream(server.url, vectors, truth, 10, 5);
  const memory = server.memory();
  const peakUsageBytes = memory?.peakUsage ?? NaN;
  const failcnt = memory?.limitHits ?? NaN;
  const recallOversample3 = (await singleStream(server.url, vectors, truth, 10, 3)).recall;
  await stopServer(ds, server, capBytes);

  process.stderr.write(`scale ${tag}: cold single stream, the default search\n`);
  server = await start();
  const defaultSearch = await singleStream(server.url, vectors, truth, 10, undefined);
  await stopServer(ds, server, capBytes);

  process.stderr.write(`scale ${tag}: cold single stream, k=100\n`);
  server = await start();
  const k100 = await singleStream(server.url, vectors, truth, 100, 5);
  await stopServer(ds, server, capBytes);

  process.stderr.write(`scale ${tag}: ${rate} QPS Poisson for ${durationMs / 1000} s\n`);
  server = await start();
  // As bench:load does: a few searches bring the server's code paths up (JIT, worker wake-ups),
  // then the fp32 files are evicted again, so the run starts with cold vectors, not a cold process.
  await singleStream(server.url, vectors.slice(0, 20), truth, 10, 5);
  server.beginRun(vecFiles);
  const load = await runLoad({
    url: server.url,
    rate,
    durationMs,
    warmupMs: 5000,
    timeoutMs: 2000,
    queries: queriesFromFvecs(join(ds.dir, 'query.fvecs')),
    groundTruth: readIvecs(join(ds.dir, 'groundtruth.ivecs')),
    k: 10,
    oversample: 5,
    numCandidates: NUM_CANDIDATES,
    progress: process.stderr,
  });
  await stopServer(ds, server, capBytes);

  return {
    n: ds.n,
    segments: description.segments.length,
    segmentDocs: description.segments[0]?.docs ?? 0,
    bytes: description.bytes,
    held: { codes: description.memory.codes, graphs: description.memory.graphs },
    build,
    resident,
    cap: { bytes: capBytes, held, note, peakUsageBytes, failcnt },
    openSeconds,
    k10,
    recallOversample3,
    defaultSearch,
    k100,
    load,
  };
}

type Started = { readonly oom: false; readonly server: ColdServer } | { readonly oom: true };

/**
 * `prescore serve` with `workers` executor threads in a fresh memory cgroup fixed at `limit` bytes
 * from the start (the open included), `coldFiles` (the fp32) evicted first; `oom` when it could
 * not open in it.
 */
async function startServer(ds: BenchDataset, coldFiles: readonly string[], workers: number, limit: number): Promise<Started> {
  const argv = [join(packageRoot(), 'bin', 'prescore.js'), 'serve', '--index', ds.indexDir, '--port', '0', '--calibrate', 'first-use', '--max-inflight', '32', '--max-queue', '32'];
  try {
    const server = await ColdServer.start({
      argv,
      env: { PRESCORE_THREADS: String(workers) },
      coldFiles,
      limit: { kind: 'fixed', bytes: limit },
      cgroup: support,
      name: `prescore-bench-scale-${process.pid}`,
    });
    return { oom: false, server };
  } catch (e) {
    if (e instanceof ServerStartError && e.outOfMemory) return { oom: true };
    throw e;
  }
}

async function stopServer(ds: BenchDataset, server: ColdServer, limit: number): Promise<void> {
  const exit = await server.stop();
  if (exit.oomKilled) throw new Error(`prescore serve (${ds.name}) was killed by the cgroup's OOM killer at ${gib(limit)}`);
}

/** `oversample` undefined: a search that names no setting (nor --num-candidates), as a user's first one would. */
async function singleStream(url: string, vectors: readonly Float32Array[], truth: readonly string[][], k: number, oversample: number | undefined): Promise<SingleStream> {
  const latency: number[] = [];
  const firstPhase: number[] = [];
  const chosen = new Map<string, number>();
  let recall = 0;
  for (let i = 0; i < vectors.length; i++) {
    const body = JSON.stringify({
      vector: Array.from(vectors[i]),
      k,
      ...(NUM_CANDIDATES === undefined || oversample === undefined ? {} : { num_candidates: Math.max(k, NUM_CANDIDATES) }),
      ...(oversample === undefined ? {} : { oversample }),
      stats: true,
    });
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const json = (await res.json()) as {
      hits: { id: string }[];
      stats: { timings: { first_phase_ms: number }; recall?: { target: number; oversample: number; num_candidates: number } };
    };
    latency.push(performance.now() - t0);
    if (!res.ok) throw new Error(`search answered ${res.status}: ${JSON.stringify(json)}`);
    firstPhase.push(json.stats.timings.first_phase_ms);
    recall += recallAt(k, json.hits, truth[i]) / vectors.length;
    const used = json.stats.recall;
    const setting = used
      ? `target ${used.target}: oversample ${used.oversample}, num_candidates ${used.num_candidates}`
      : oversample === undefined
        ? 'uncalibrated default'
        : `oversample ${oversample}`;
    chosen.set(setting, (chosen.get(setting) ?? 0) + 1);
  }
  const settings = [...chosen].map(([s, n]) => (chosen.size === 1 ? s : `${s} x${n}`)).join('; ');
  return { latencyMs: summarize(latency), firstPhaseMs: summarize(firstPhase), recall, chosen: settings };
}

function procStatus(pid: number): { rss: number; anon: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (f: string) => Number(new RegExp(`${f}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
