/**
 * `npm run bench:load`: the server on the cold 1,000,000 x 1024 index (the rescore benchmark's
 * setup: fp32 files evicted, the server in a cgroup v1 memory limit far below the fp32 size),
 * 100 QPS Poisson for 60 s per read path, then `--find-max` (p99 SLO 50 ms) on a fresh cold server.
 *
 *   npm run bench:load -- [--rate 100] [--duration 60s] [--paths mmap,mmap+parallel] [--cache-mib 256] [--no-find-max]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { READ_PATHS, type ReadPath } from '../api/types.js';
import { packageRoot } from '../executor/packageRoot.js';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';
import { runLoad } from '../../load/runLoad.js';
import { findMax } from '../../load/findMax.js';
import { parseDuration } from '../../load/duration.js';
import { queriesFromFvecs } from '../../load/queries.js';
import { readIvecs } from '../../load/vecfile.js';
import { MemoryCgroup, memoryCgroupSupport } from './cgroup.js';
import { benchDataset, ensureIndex, table } from './benchData.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    duration: { type: 'string' },
    paths: { type: 'string' },
    'cache-mib': { type: 'string' },
    'anon-mib': { type: 'string' },
    'no-find-max': { type: 'boolean' },
    n: { type: 'string' },
    dim: { type: 'string' },
  },
});
const ds = benchDataset(Number(values.n ?? 1_000_000), Number(values.dim ?? 1024));
ensureIndex(ds);
const rate = Number(values.rate ?? 100);
const durationMs = parseDuration(values.duration ?? '60s');
const paths = (values.paths ? values.paths.split(',') : [...READ_PATHS]) as ReadPath[];
const vecFiles = readdirSync(ds.indexDir).filter((f) => f.endsWith('.vec')).map((f) => join(ds.indexDir, f));
const queries = queriesFromFvecs(join(ds.dir, 'query.fvecs'));
const groundTruth = readIvecs(join(ds.dir, 'groundtruth.ivecs'));
// The server's resident codes + graphs + heaps (measured by bench:rescore at ~1.3 GiB for 1M x 1024)
// plus a small page cache: the fp32 vectors (3.8 GiB) cannot stay cached.
const limit = (Number(values['anon-mib'] ?? 1536) + Number(values['cache-mib'] ?? 256)) * 2 ** 20;
const support = memoryCgroupSupport();

async function withColdServer<T>(readPath: ReadPath, fn: (url: string) => Promise<T>): Promise<T> {
  for (const f of vecFiles) evictFromPageCache(f);
  const group = support.ok ? MemoryCgroup.create(`prescore-bench-load-${process.pid}`, limit) : null;
  const argv = [join(packageRoot(), 'bin', 'prescore.js'), 'serve', '--index', ds.indexDir, '--port', '0', '--read-path', readPath, '--max-inflight', '32', '--max-queue', '32'];
  const server: ChildProcess = group
    ? group.spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      server.on('exit', (code) => reject(new Error(`server exited with ${code} before listening`)));
    });
    return await fn(url);
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    group?.remove();
  }
}

const rows: (string | number)[][] = [];
const json: Record<string, unknown> = { rate, durationMs, limitBytes: support.ok ? limit : null, runs: {} };
for (const readPath of paths) {
  const report = await withColdServer(readPath, (url) =>
    runLoad({ url, rate, durationMs, warmupMs: 5000, timeoutMs: 2000, queries, groundTruth, k: 10, oversample: 5, progress: process.stderr }),
  );
  let maxRate: number | null = null;
  if (!values['no-find-max']) {
    const fm = await withColdServer(readPath, (url) =>
      findMax({ url, sloP99Ms: 50, stepDurationMs: 10_000, warmupMs: 2000, startRate: 50, queries, k: 10, oversample: 5, timeoutMs: 2000, progress: process.stderr }),
    );
    maxRate = fm.max_sustainable_rate;
    (json.runs as Record<string, unknown>)[`${readPath}:findMax`] = { max_sustainable_rate: fm.max_sustainable_rate, limited_by: fm.limited_by };
  }
  (json.runs as Record<string, unknown>)[readPath] = report;
  const l = report.latency_ms;
  rows.push([readPath, report.offered_rate, report.achieved_rate, l.p50 ?? NaN, l.p90 ?? NaN, l.p99 ?? NaN, l.p999 ?? NaN, l.max ?? NaN, report.counts.shed, report.counts.timeout, report.counts.error, report.recall ? report.recall.mean.toFixed(3) : '-', maxRate ?? '-']);
}
process.stdout.write(
  [
    `bench:load  ${ds.n.toLocaleString()} x ${ds.dim}, cold server (${support.ok ? `cgroup limit ${(limit / 2 ** 30).toFixed(2)} GiB` : `no cgroup: ${support.reason}`}), Poisson ${rate}/s for ${durationMs / 1000} s after 5 s warm-up, k=10 oversample 5, 32 in flight + 32 queued`,
    table(['read path', 'offered/s', 'achieved/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'shed', 'timeout', 'error', 'recall@10', 'find-max/s (p99<=50ms)'], rows),
  ].join('\n') + '\n',
);
writeFileSync(`${ds.indexDir}.load.json`, JSON.stringify(json, null, 2));
