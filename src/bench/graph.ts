/**
 * `npm run bench:graph`: the disk-resident first phase (`firstPhase: 'graph'`) on a 500,000 x 768
 * cosine index from `prescore gen` + `prescore build` (2 segments of 250k): HNSW over `.vex` with
 * exact fp32 scores from `.vec`, both read in place.
 *
 * Capped: the files are evicted (posix_fadvise DONTNEED) and the measuring process runs in a
 * cgroup v1 memory limit of its own anonymous memory + 25% of `.vec` + `.vex`, so three quarters
 * of what the search touches must come from disk again and again. Resident: no limit, every
 * query run once on every variant before the measured pass. In each, every variant (prefetch
 * off / on / on + lookahead at two I/O budgets, the pread path, and the 1-bit in-RAM first phase
 * for reference) runs every query, interleaved query by query in one process (see graphRun.ts).
 * Then the time from opening to the first answer, with and without a sidecar.
 *
 *   npm run bench:graph -- [--queries 200] [--budgets 16,256] [--cache-fraction 0.25] [--headroom-mib 128] [--only capped|resident|open] [--variants 0,1,5]
 *                          [--lucene DIR [--field NAME]]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openIndex } from '../api/openIndex.js';
import { openLuceneIndex } from '../api/openLuceneIndex.js';
import { Executor } from '../executor/Executor.js';
import { distPath } from '../executor/packageRoot.js';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';
import { MemoryCgroup, memoryCgroupSupport } from './cgroup.js';
import { benchDataset, ensureIndex, loadQueries, summarize, table } from './benchData.js';
import { K, NUM_CANDIDATES, type VariantResult } from './graphRun.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string' },
    budgets: { type: 'string' },
    variants: { type: 'string' },
    'cache-fraction': { type: 'string' },
    'headroom-mib': { type: 'string' },
    only: { type: 'string' },
    n: { type: 'string' },
    dim: { type: 'string' },
    lucene: { type: 'string' },
    field: { type: 'string' },
  },
});
const ds = benchDataset(Number(values.n ?? 500_000), Number(values.dim ?? 768), Number(values.queries ?? 200), 250_000);
const build = ensureIndex(ds);
const queries = String(ds.queries);
const budgets = values.budgets ?? '16,256';
const cacheFraction = Number(values['cache-fraction'] ?? 0.25);
// Room for the measuring process's own growth above its probed anonymous memory.
const headroomMiB = Number(values['headroom-mib'] ?? 128);
const dataFiles = readdirSync(ds.indexDir)
  .filter((f) => f.endsWith('.vec') || f.endsWith('.vex'))
  .map((f) => join(ds.indexDir, f));
const dataBytes = dataFiles.reduce((a, f) => a + statSync(f).size, 0);

interface RunOutput {
  readonly queries: number;
  readonly rssAnonBytes: number;
  readonly results: VariantResult[];
}

function child(args: string[], group: MemoryCgroup | null): Promise<RunOutput> {
  const argv = [
    distPath('src', 'bench', 'graphRun.js'),
    '--n',
    String(ds.n),
    '--dim',
    String(ds.dim),
    '--queries',
    queries,
    '--budgets',
    budgets,
    ...(values.variants ? ['--variants', values.variants] : []),
    ...args,
  ];
  const opts = { stdio: ['ignore', 'pipe', 'inherit'] as ('ignore' | 'pipe' | 'inherit')[] };
  const proc = group ? group.spawn(process.execPath, argv, opts) : spawn(process.execPath, argv, opts);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    proc.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`graphRun ${args.join(' ')} exited ${code}${group ? ' (out of memory in the cgroup?)' : ''}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    }),
  );
}

function evict(): void {
  for (const f of dataFiles) evictFromPageCache(f);
}

function rows(run: RunOutput): (string | number)[][] {
  return run.results.map((r) => {
    const l = summarize(r.latencyMs);
    const reads = r.readBytes.reduce((a, b) => a + b, 0) / 4096 / run.queries;
    return [
      r.name,
      l.p50,
      l.p99,
      reads,
      r.scored / run.queries,
      r.readAhead / run.queries,
      r.readAhead ? `${((100 * r.wasted) / r.readAhead).toFixed(0)}%` : '-',
      r.maxDistance,
      r.recall.toFixed(4),
    ];
  });
}

const HEADERS = ['variant', 'p50 ms', 'p99 ms', 'pages read/q', 'scored/q', 'read ahead/q', 'wasted', 'max dist', `recall@${K}`];

/** Every graph row against prefetch off: how many times lower its p50 is (capped) or how much slower (resident). */
function ratios(run: RunOutput, resident: boolean): string {
  const p50 = (r: VariantResult) => summarize(r.latencyMs).p50;
  const off = p50(run.results.find((r) => r.name.startsWith('graph, prefetch off'))!);
  return run.results
    .filter((r) => r.name.startsWith('graph, ') && !r.name.startsWith('graph, prefetch off'))
    .map((r) => (resident ? `${r.name}: p50 ${(100 * (p50(r) / off - 1)).toFixed(1)}% vs prefetch off` : `${r.name}: p50 ${(off / p50(r)).toFixed(2)}x lower than prefetch off`))
    .join('\n');
}

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const lines: string[] = [
  `bench:graph  ${ds.n.toLocaleString()} x ${ds.dim} cosine, ${readdirSync(ds.indexDir).filter((f) => f.endsWith('.vex')).length} segments, single stream, ${queries} queries, k ${K}, num_candidates ${NUM_CANDIDATES}`,
  `.vec + .vex = ${(dataBytes / 2 ** 30).toFixed(2)} GiB; build ${build ? `${build.seconds.toFixed(0)} s` : 'reused'}`,
  `load before: ${uptime()}`,
];

if (values.only === undefined || values.only === 'capped') {
  const support = memoryCgroupSupport();
  let group: MemoryCgroup | null = null;
  let note = '';
  evict();
  const probe = await child(['--probe'], null);
  const limit = Math.ceil(probe.rssAnonBytes + headroomMiB * 2 ** 20 + cacheFraction * dataBytes);
  if (support.ok) {
    group = MemoryCgroup.create(`prescore-bench-graph-${process.pid}`, limit);
    note = `cgroup v1 limit ${(limit / 2 ** 20).toFixed(0)} MiB = process anon ${(probe.rssAnonBytes / 2 ** 20).toFixed(0)} MiB + ${headroomMiB} MiB + ${(cacheFraction * 100).toFixed(0)}% of .vec+.vex`;
  } else {
    note = `no cgroup (${support.reason}): evicted once, NOT capped`;
  }
  try {
    evict();
    const run = await child([], group);
    lines.push('', `capped memory (files evicted first; ${note})`, table(HEADERS, rows(run)), ratios(run, false));
    writeFileSync(`${ds.indexDir}.graph-capped.json`, JSON.stringify({ note, run }, null, 2));
  } finally {
    group?.remove();
  }
}

if (values.only === undefined || values.only === 'resident') {
  const run = await child(['--warm'], null);
  lines.push('', 'fully resident (no limit; every query on every variant once before the measured pass)', table(HEADERS, rows(run)), ratios(run, true));
  writeFileSync(`${ds.indexDir}.graph-resident.json`, JSON.stringify({ run }, null, 2));
}

if (values.only === undefined || values.only === 'open') {
  // Time to the first answer: a Lucene directory with a fresh sidecar (built on open) vs the graph
  // in place, and this index with its codes loaded into the workers vs the graph in place (cold).
  const { vectors } = await loadQueries(ds, 1);
  const timings: (string | number)[][] = [];
  // A Lucene index directory: --lucene DIR (field --field, default knn_field), else the 10.0 test
  // fixture when PRESCORE_LUCENE_FIXTURES names the fixtures directory.
  const tmp = mkdtempSync(join(tmpdir(), 'prescore-bench-graph-'));
  const fixtures = process.env.PRESCORE_LUCENE_FIXTURES;
  try {
    let luceneDir = values.lucene;
    if (luceneDir === undefined && fixtures) {
      execFileSync('unzip', ['-q', '-o', join(fixtures, 'index.10.0.0-cfs.zip'), '-d', join(tmp, 'lucene')]);
      luceneDir = join(tmp, 'lucene');
    }
    if (luceneDir === undefined) timings.push(['Lucene index: none given (--lucene DIR or PRESCORE_LUCENE_FIXTURES)', NaN]);
    else {
      for (const firstPhase of ['codes', 'graph'] as const) {
        const t0 = performance.now();
        const index = await openLuceneIndex(luceneDir, { field: values.field ?? 'knn_field', firstPhase, sidecarDir: join(tmp, `sidecar-${firstPhase}`) });
        await index.search(
          Array.from({ length: index.dims }, (_, i) => Math.sin(i)),
          { k: 5 },
        );
        timings.push([`Lucene ${luceneDir}, ${firstPhase === 'codes' ? 'sidecar built on open' : 'graph in place, no sidecar'}`, performance.now() - t0]);
        await index.close();
      }
    }
  } catch (e) {
    timings.push([`Lucene index: ${(e as Error).message}`, NaN]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  for (const firstPhase of ['codes', 'graph'] as const) {
    evict();
    for (const f of readdirSync(ds.indexDir)) evictFromPageCache(join(ds.indexDir, f));
    const t0 = performance.now();
    const index = await openIndex(ds.indexDir, { firstPhase, calibrate: 'first-use' });
    await index.search(vectors[0], { k: K, numCandidates: NUM_CANDIDATES });
    timings.push([`${ds.name} index, cold, ${firstPhase === 'codes' ? '1-bit codes loaded into the workers' : 'graph in place'}`, performance.now() - t0]);
    await index.close();
  }
  if (build) timings.push([`building the 1-bit codes + graphs of ${ds.name} (what a sidecar for a Lucene index this size costs)`, build.seconds * 1000]);
  lines.push('', 'open to first answer', table(['what', 'ms'], timings));
  await Executor.shutdown();
}
lines.push('', `load after: ${uptime()}`);
process.stdout.write(`${lines.join('\n')}\n`);
