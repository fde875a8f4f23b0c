/**
 * `npm run bench:rescore`: fp32 rescoring per read path on the 1,000,000 x 1024 index, cold and
 * warm, single stream, for k=100 and k=10 at oversample 5.
 *
 * Cold: before every run the fp32 `.vec` files are evicted with posix_fadvise(DONTNEED), and the
 * measuring process runs in a cgroup v1 memory limit of (its own resident codes + graphs) +
 * --cache-mib, far below the 4 GiB of fp32 vectors; codes and graphs are anonymous memory and stay
 * resident. Warm: no limit, every query run once before the measured pass.
 *
 * Every cold run carries a same-run device reference: for each query, exactly the fp32 pages its
 * rescoring reads, read from the device with io_uring + O_DIRECT, all in flight, one thread
 * (DeviceReference), right before or after the query's search (alternating). Rescoring p50/p99
 * are reported as ratios to the device's p50/p99 for the same pages in the same run.
 *
 *   npm run bench:rescore -- [--queries 200] [--cache-mib 256] [--only cold|warm] [--paths mmap,pread]
 *     [--ks 100,10] [--no-policies]
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { READ_PATHS, type ReadPath } from '../api/types.js';
import { distPath } from '../executor/packageRoot.js';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';
import { PREFETCH_POLICIES } from '../../query/prefetch/PrefetchPolicy.js';
import { MIN_READ_AHEAD_CANDIDATES } from '../../query/prefetch/LeaderReadAhead.js';
import { MemoryCgroup, memoryCgroupSupport } from './cgroup.js';
import { benchDataset, ensureIndex, summarize, table } from './benchData.js';
import { formatDeviceHealth, probeDevice, SLOW_DEVICE_QD1_PAGES_PER_S, type DeviceHealth } from './deviceHealth.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string' },
    'cache-mib': { type: 'string' },
    only: { type: 'string' },
    n: { type: 'string' },
    dim: { type: 'string' },
    paths: { type: 'string' },
    ks: { type: 'string' },
    'no-policies': { type: 'boolean' },
  },
});
const coldPaths = (values.paths ? values.paths.split(',') : [...READ_PATHS]) as ReadPath[];
const ds = benchDataset(Number(values.n ?? 1_000_000), Number(values.dim ?? 1024));
ensureIndex(ds);
const queries = values.queries ?? '200';
const cacheMiB = Number(values['cache-mib'] ?? 256);
/** The disk just before the cold runs, when there were any. */
let deviceBefore: DeviceHealth | null = null;
const vecFiles = readdirSync(ds.indexDir)
  .filter((f) => f.endsWith('.vec'))
  .map((f) => join(ds.indexDir, f));

interface RunResult {
  readPath: ReadPath;
  prefetchPolicy: string;
  k: number;
  queries: number;
  latencyMs: number[];
  rescoreMs: number[];
  recall: number;
  prefetched: number;
  /** Pages the first phase read ahead for rescoring (LeaderReadAhead), summed over queries. */
  readAhead: number;
  resident: number;
  syscalls: number;
  readsBeforePrefetch: number;
  maxDistance: number;
  diskReads: number;
  diskBytes: number;
  rssAnonBytes: number;
  deviceMs: number[];
  /** The CPU reference job after each query (cpuReference.ts), milliseconds. */
  cpuMs: number[];
  devicePages: number;
  callerRescores: number;
}

function child(args: string[], group: MemoryCgroup | null): Promise<RunResult> {
  const argv = [distPath('src', 'bench', 'rescoreRun.js'), '--n', String(ds.n), '--dim', String(ds.dim), '--queries', queries, ...args];
  const proc = group ? group.spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    proc.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`rescoreRun ${args.join(' ')} exited ${code}${group ? ' (out of memory in the cgroup? raise --cache-mib)' : ''}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    }),
  );
}

function evict(): void {
  for (const f of vecFiles) evictFromPageCache(f);
}

const results: { mode: 'cold' | 'warm'; r: RunResult }[] = [];
const configs = (values.ks ? values.ks.split(',').map(Number) : [100, 10]).map((k) => ({ k, oversample: 5 }));
const support = memoryCgroupSupport();
let group: MemoryCgroup | null = null;
let limitNote = 'no cgroup (eviction only)';

// Warm, side by side in one process (every query on every path, rotating order), and a probe of
// the anonymous memory (codes + graphs) the process holds, for the cold runs' memory limit.
const warmSideBySide: { k: number; label: string; sideBySide: { readPath: string; latencyMs: number[]; rescoreMs: number[] }[] }[] = [];
if (values.only !== 'cold') {
  const comparisons = [
    ...configs.map((c) => ({ ...c, label: 'read paths', paths: [...READ_PATHS] as string[] })),
    { k: 100, oversample: 5, label: 'prefetch policies on mmap+parallel (mmap: no prefetch)', paths: ['mmap', ...PREFETCH_POLICIES.map((p) => `mmap+parallel@${p}`)] },
  ];
  for (const c of comparisons) {
    const argv = [
      distPath('src', 'bench', 'rescoreRun.js'),
      '--n',
      String(ds.n),
      '--dim',
      String(ds.dim),
      '--queries',
      queries,
      '--read-paths',
      c.paths.join(','),
      '--k',
      String(c.k),
      '--oversample',
      String(c.oversample),
    ];
    const out = spawnSync(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`warm side-by-side run exited ${out.status}`);
    warmSideBySide.push({ ...JSON.parse(out.stdout.trim().split('\n').at(-1)!), label: c.label });
    process.stderr.write(`warm k=${c.k}: done\n`);
  }
}
if (values.only !== 'warm') {
  const probe = await child(['--read-path', 'mmap', '--k', '10', '--oversample', '1', '--queries', '1'], null);
  const limit = Math.ceil(probe.rssAnonBytes + 256 * 2 ** 20 /* JS heaps, node itself */ + cacheMiB * 2 ** 20);
  if (support.ok) {
    group = MemoryCgroup.create(`prescore-bench-rescore-${process.pid}`, limit);
    limitNote = `cgroup v1 memory limit ${(limit / 2 ** 30).toFixed(2)} GiB (resident codes+graphs ${(probe.rssAnonBytes / 2 ** 30).toFixed(2)} GiB, ~${cacheMiB} MiB left for page cache) vs ${((vecFiles.length * ds.segmentDocs * ds.dim * 4) / 2 ** 30).toFixed(1)} GiB of fp32`;
  } else {
    limitNote = `no cgroup (${support.reason}); eviction only`;
  }
  try {
    deviceBefore = probeDevice(vecFiles);
    process.stderr.write(`device before the cold runs: ${formatDeviceHealth(deviceBefore)}\n`);
    for (const c of configs) {
      for (const readPath of coldPaths) {
        evict();
        const r = await child(['--read-path', readPath, '--k', String(c.k), '--oversample', String(c.oversample), '--device'], group);
        results.push({ mode: 'cold', r });
        const rs = summarize(r.rescoreMs);
        const dv = summarize(r.deviceMs);
        process.stderr.write(
          `cold ${readPath} k=${c.k}: p50 ${summarize(r.latencyMs).p50.toFixed(2)} ms, p99 ${summarize(r.latencyMs).p99.toFixed(2)} ms; rescore/device p50 ${(rs.p50 / dv.p50).toFixed(2)}, p99 ${(rs.p99 / dv.p99).toFixed(2)}\n`,
        );
      }
    }
    // Prefetch policies on the default parallel path, cold and warm.
    for (const policy of values['no-policies'] ? [] : PREFETCH_POLICIES) {
      evict();
      const r = await child(['--read-path', 'mmap+parallel', '--policy', policy, '--k', '100', '--oversample', '5'], group);
      results.push({ mode: 'cold', r });
    }
  } finally {
    group?.remove();
  }
}
const lines: string[] = [`bench:rescore  ${ds.n.toLocaleString()} x ${ds.dim} cosine, ${vecFiles.length} segments, single stream, ${queries} queries, num_candidates 100`];
if (deviceBefore) {
  const slow = deviceBefore.qd1PagesPerS < SLOW_DEVICE_QD1_PAGES_PER_S;
  lines.push(`device before the cold runs (deviceHealth.ts): ${formatDeviceHealth(deviceBefore)}${slow ? ': THROTTLED, the cold figures below measure the throttle' : ''}`);
}
for (const c of configs) {
  const rows = results
    .filter((x) => x.mode === 'cold' && x.r.k === c.k && x.r.prefetchPolicy === 'adaptive')
    .filter((x, i, all) => all.findIndex((y) => y.r.readPath === x.r.readPath) === i)
    .map(({ r }) => {
      const l = summarize(r.latencyMs);
      const rs = summarize(r.rescoreMs);
      const dv = summarize(r.deviceMs);
      const cpu = summarize(r.cpuMs);
      return [
        r.readPath,
        l.p50,
        l.p99,
        (l.p99 / l.p50).toFixed(2),
        rs.p50,
        rs.p99,
        dv.p50,
        dv.p99,
        (rs.p50 / dv.p50).toFixed(2),
        (rs.p99 / dv.p99).toFixed(2),
        (cpu.p99 / cpu.p50).toFixed(2),
        r.devicePages / r.queries,
        // The device reference's own O_DIRECT reads are counted by the disk too: subtract them.
        (r.diskReads - r.devicePages) / r.queries,
        r.recall.toFixed(4),
        r.syscalls / r.queries,
        r.readAhead / r.queries,
      ] as (string | number)[];
    });
  if (rows.length === 0) continue;
  lines.push('', `cold, k=${c.k}, oversample ${c.oversample} (${c.k * c.oversample} candidates); ${limitNote}`);
  lines.push(
    "device = the same query's rescoring pages read with io_uring O_DIRECT, all in flight, one thread, right before/after its search (same run);",
    `read ahead/q = pages the first phase prefetched for rescoring as each segment finished (LeaderReadAhead; above ${MIN_READ_AHEAD_CANDIDATES} candidates): those reads overlap the first phase, so rescore/dev then measures only what was left to wait for;`,
    `cpu ref = a fixed ~2 ms wasm job (CpuReference) after every query: its p99/p50 is the machine's own tail for CPU work (1.0 when quiet)`,
  );
  lines.push(
    table(
      [
        'read path',
        'p50 ms',
        'p99 ms',
        'p99/p50',
        'rescore p50',
        'rescore p99',
        'device p50',
        'device p99',
        'rescore/dev p50',
        'rescore/dev p99',
        'cpu ref p99/p50',
        'pages/q',
        'search disk reads/q',
        `recall@${c.k}`,
        'syscalls/q',
        'read ahead/q',
      ],
      rows,
    ),
  );
  const mmap = rows.find((r) => r[0] === 'mmap');
  const best = [...rows].sort((a, b) => (a[2] as number) - (b[2] as number))[0];
  if (mmap) {
    const mmapRescore = mmap[5] as number;
    const bestRescore = Math.min(...rows.map((r) => r[5] as number));
    lines.push(
      `best p99 (${best[0]}) / mmap p99 = 1/${((mmap[2] as number) / (best[2] as number)).toFixed(1)}; rescore phase p99: best / mmap = 1/${(mmapRescore / bestRescore).toFixed(1)}`,
    );
  }
}
for (const w of warmSideBySide) {
  const rows = w.sideBySide.map((p) => {
    const l = summarize(p.latencyMs);
    const rs = summarize(p.rescoreMs);
    return [p.readPath, l.p50, l.p99, rs.p50, rs.p99] as (string | number)[];
  });
  const fastest = Math.min(...rows.map((r) => r[1] as number));
  lines.push('', `warm, k=${w.k}, oversample 5: ${w.label}, side by side in one process (each query on every path, rotating order)`);
  lines.push(table(['read path', 'p50 ms', 'p99 ms', 'rescore p50', 'rescore p99'], rows));
  lines.push(`warm p50 vs fastest: ${rows.map((r) => `${r[0]} +${(((r[1] as number) / fastest - 1) * 100).toFixed(1)}%`).join(', ')}`);
}
const policyRows = PREFETCH_POLICIES.map((p) => {
  const cold = results.find((x) => x.mode === 'cold' && x.r.readPath === 'mmap+parallel' && x.r.prefetchPolicy === p && x.r.k === 100);
  const c = cold ? summarize(cold.r.latencyMs) : undefined;
  const rs = cold ? summarize(cold.r.rescoreMs) : undefined;
  return [p, c?.p50 ?? NaN, c?.p99 ?? NaN, rs?.p50 ?? NaN, rs?.p99 ?? NaN, cold ? cold.r.prefetched / cold.r.queries : NaN, cold ? cold.r.resident / cold.r.queries : NaN];
});
// With --no-policies only the default policy ran (as the path rows): no table of NaN rows.
if (!values['no-policies'] && policyRows.some((r) => Number.isFinite(r[1] as number)))
  lines.push(
    '',
    'cold, prefetch policies on mmap+parallel, k=100 oversample 5',
    table(['policy', 'p50 ms', 'p99 ms', 'rescore p50', 'rescore p99', 'prefetched/q', 'found resident/q'], policyRows),
  );
process.stdout.write(`${lines.join('\n')}\n`);
writeFileSync(`${ds.indexDir}.rescore.json`, JSON.stringify({ limitNote, results, warmSideBySide }, null, 2));
