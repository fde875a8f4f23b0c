/**
 * `npm run bench:ingest`: documents written through `_bulk` over HTTP against the batch build of
 * the same data, in one run.
 *
 *   npm run bench:ingest -- --sizes 200000x768 [--batch 500] [--clients 2]
 *
 * Per size (a `prescore gen --filters` dataset: each row's vector with its fields):
 * 1. the batch rate: `prescore build` of the vectors with their fields (a child process);
 * 2. the write rate: a new empty index served by `prescore serve` (a child), `--clients` clients
 *    sending `_bulk` bodies of `--batch` documents back to back (refresh=false, every write
 *    acknowledged after its translog fdatasync), docs/s acknowledged, and the clients' own CPU;
 * 3. while they write: a search every 50 ms (knn, k=10) and, every 2 s, a marker document whose
 *    time from acknowledgement to visibility (`_count` on its id, polled every 10 ms) is the
 *    refresh-to-visible latency; then the same searches on the idle server;
 * 4. a metadata-only update: 1,000 `_update`s of one field, and the bytes the server wrote
 *    (`/proc/<pid>/io` write_bytes) per update.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../executor/packageRoot.js';
import { openIndexWriter } from '../api/openIndexWriter.js';
import { Executor } from '../executor/Executor.js';
import { Mapping } from '../../segments/document/Mapping.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { readAllVectors } from '../../segments/input/index.js';
import { shortestFloat32 } from '../../query/fetch/FetchPhase.js';
import { benchDataset, ensureDataset, summarize, type BenchDataset } from './benchData.js';
import { ColdServer } from './coldServer.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    batch: { type: 'string' },
    clients: { type: 'string' },
  },
});
const BATCH = Number(values.batch ?? 500);
const CLIENTS = Number(values.clients ?? 2);
const sizes = (values.sizes ?? '1000000x768,1000000x1024').split(',').map((s) => {
  const [n, dim] = s.split('x').map(Number);
  if (!(n! > 0 && dim! > 0)) throw new Error(`--sizes: expected NxDIM, got ${s}`);
  return { n: n!, dim: dim! };
});

interface Figures {
  readonly size: string;
  readonly buildDocsPerSec: number;
  readonly ingestDocsPerSec: number;
  readonly clientCpuMsPerDoc: number;
  readonly visibleP50Ms: number;
  readonly visibleP99Ms: number;
  readonly searchBusyP50: number;
  readonly searchBusyP99: number;
  readonly searchIdleP50: number;
  readonly searchIdleP99: number;
  readonly segments: number;
  readonly bytesPerMetadataUpdate: number;
}

const results: Figures[] = [];
process.stderr.write(
  `bench:ingest: load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}\n`,
);
for (const { n, dim } of sizes) results.push(await runSize(benchDataset(n, dim, 200)));
await Executor.shutdown();

console.log(
  '\n| size | build docs/s | _bulk docs/s (ratio) | client CPU ms/doc | visible p50 / p99 ms | search while writing p50 / p99 ms | idle p50 / p99 ms | ratio p50 / p99 | segments after | bytes per metadata update |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.size} | ${r.buildDocsPerSec.toFixed(0)} | ${r.ingestDocsPerSec.toFixed(0)} (${(r.ingestDocsPerSec / r.buildDocsPerSec).toFixed(2)}x) | ${r.clientCpuMsPerDoc.toFixed(3)} | ${r.visibleP50Ms.toFixed(0)} / ${r.visibleP99Ms.toFixed(0)} | ${r.searchBusyP50.toFixed(2)} / ${r.searchBusyP99.toFixed(2)} | ${r.searchIdleP50.toFixed(2)} / ${r.searchIdleP99.toFixed(2)} | ${(r.searchBusyP50 / r.searchIdleP50).toFixed(2)}x / ${(r.searchBusyP99 / r.searchIdleP99).toFixed(2)}x | ${r.segments} | ${r.bytesPerMetadataUpdate.toFixed(0)} |`,
  );
}
console.log('\nchecks:');
for (const r of results) {
  const check = (ok: boolean, what: string) => console.log(`  ${ok ? 'ok  ' : 'MISS'} ${r.size}: ${what}`);
  check(r.ingestDocsPerSec >= 0.8 * r.buildDocsPerSec, `acknowledged docs/s >= 0.8x the batch build (${(r.ingestDocsPerSec / r.buildDocsPerSec).toFixed(2)}x)`);
  check(r.visibleP99Ms <= 1000, `refresh-to-visible p99 <= 1 s (${r.visibleP99Ms.toFixed(0)} ms)`);
  check(r.searchBusyP50 <= 2 * r.searchIdleP50 && r.searchBusyP99 <= 2 * r.searchIdleP99, 'search p50/p99 while writing <= 2x idle');
}
console.log(
  `load average at the end: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);

async function runSize(ds: BenchDataset): Promise<Figures> {
  ensureDataset(ds);
  const base = join(ds.dir, 'base.fvecs');
  const fieldsFile = join(ds.dir, 'fields.jsonl');
  const mappingJson = JSON.parse(readFileSync(join(ds.dir, 'mapping.json'), 'utf8')) as Record<string, unknown>;
  const spec = JSON.parse(readFileSync(join(ds.dir, 'dataset.json'), 'utf8')) as { similarity: string };
  const vectors = (await readAllVectors(base)).vectors;
  const queries = (await readAllVectors(join(ds.dir, 'query.fvecs'))).vectors;
  const fields = readFileSync(fieldsFile, 'utf8').trim().split('\n');

  // 1. The batch build of the same rows.
  const buildDir = `${ds.indexDir}-ingest-build`;
  rmSync(buildDir, { recursive: true, force: true });
  process.stderr.write(`bench:ingest ${ds.name}: prescore build\n`);
  const t0 = performance.now();
  const built = spawnSync(
    process.execPath,
    [join(packageRoot(), 'bin', 'prescore.js'), 'build', '--input', base, '--fields', fieldsFile, '--mapping', join(ds.dir, 'mapping.json'), '--out', buildDir],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PRESCORE_PROGRESS: '0' } },
  );
  if (built.status !== 0) throw new Error('prescore build failed');
  const buildDocsPerSec = ds.n / ((performance.now() - t0) / 1000);
  rmSync(buildDir, { recursive: true, force: true });

  // 2. A new empty index, served; then _bulk from CLIENTS clients.
  const liveDir = `${ds.indexDir}-ingest-live`;
  rmSync(liveDir, { recursive: true, force: true });
  const creator = await openIndexWriter(liveDir, {
    create: { dims: ds.dim, similarity: VectorSimilarityFunction.fromName(spec.similarity), mapping: Mapping.parse(mappingJson) },
  });
  await creator.close();
  const server = await ColdServer.start({
    argv: [join(packageRoot(), 'bin', 'prescore.js'), 'serve', '--index', liveDir, '--port', '0', '--name', 'live'],
    coldFiles: [],
    limit: { kind: 'fixed', bytes: 0 },
    cgroup: { ok: false, reason: 'warm' },
    name: 'ingest',
  });
  try {
    const url = server.url;
    let retries = 0;
    const post = async (path: string, body: string, contentType = 'application/json') => {
      for (let attempt = 1; ; attempt++) {
        let res: Response;
        try {
          res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
        } catch (e) {
          // A keep-alive connection the server closed as the client reused it: every request here is
          // idempotent (explicit ids), so send it again, as the official clients do; counted.
          if (attempt >= 3) throw e;
          retries++;
          continue;
        }
        if (res.status === 429) {
          await res.arrayBuffer();
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        const json = (await res.json()) as Record<string, unknown>;
        if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
        return json;
      }
    };
    const docLine = (row: number) => {
      const v = vectors.subarray(row * ds.dim, (row + 1) * ds.dim);
      const f = fields[row]!;
      return `${f.slice(0, -1)},"vector":[${Array.from(v, shortestFloat32).join(',')}]}`;
    };
    const searchBody = (q: number) =>
      JSON.stringify({ knn: { field: 'vector', query_vector: Array.from(queries.subarray(q * ds.dim, (q + 1) * ds.dim), shortestFloat32), k: 10, num_candidates: 100 } });

    let next = 0;
    let writing = true;
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    const client = async () => {
      for (;;) {
        const from = next;
        if (from >= ds.n) return;
        next = Math.min(ds.n, from + BATCH);
        const lines: string[] = [];
        for (let r = from; r < next; r++) lines.push(`{"index":{"_id":"${r}"}}`, docLine(r));
        const answer = await post('/live/_bulk', `${lines.join('\n')}\n`, 'application/x-ndjson');
        if (answer.errors) throw new Error(`bulk errors: ${JSON.stringify(answer).slice(0, 400)}`);
      }
    };
    const busy: number[] = [];
    const searcher = async (out: number[], until: () => boolean) => {
      for (let q = 0; until(); q = (q + 1) % 200) {
        const s = performance.now();
        await post('/live/_search', searchBody(q));
        out.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const visible: number[] = [];
    const markers = async () => {
      for (let m = 0; writing; m++) {
        await new Promise((r) => setTimeout(r, 2000));
        if (!writing) return;
        const id = `marker-${m}`;
        await post(`/live/_doc/${id}`, docLine(m));
        const acked = performance.now();
        for (;;) {
          const count = await post('/live/_count', JSON.stringify({ query: { ids: { values: [id] } } }));
          if (count.count === 1) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        visible.push(performance.now() - acked);
      }
    };
    process.stderr.write(`bench:ingest ${ds.name}: _bulk x ${CLIENTS} clients, ${BATCH} docs per request\n`);
    const background = [searcher(busy, () => writing), markers()];
    const progress = setInterval(() => process.stderr.write(`  ${next} / ${ds.n} sent\n`), 10_000);
    await Promise.all(Array.from({ length: CLIENTS }, client));
    const ingestSeconds = (performance.now() - t1) / 1000;
    const cpu = process.cpuUsage(cpu0);
    clearInterval(progress);
    writing = false;
    await Promise.all(background);
    await post('/live/_refresh', '{}');

    // 3. The same searches on the idle server.
    const idle: number[] = [];
    const idleUntil = performance.now() + Math.max(10_000, Math.min(30_000, busy.length * 60));
    await searcher(idle, () => performance.now() < idleUntil);
    process.stderr.write(`bench:ingest ${ds.name}: ${retries} requests sent again after a connection error\n`);
    const segments = ((await (await fetch(`${url}/v1/indexes`)).json()) as { indexes: { segments: unknown[] }[] }).indexes[0]!.segments.length;

    // 4. Metadata-only updates: bytes the server wrote per update.
    const written = () => Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${server.pid}/io`, 'utf8'))![1]);
    const w0 = written();
    for (let i = 0; i < 1000; i++) await post(`/live/_update/${i * 7}`, JSON.stringify({ doc: { u: 0.5 } }));
    await post('/live/_refresh', '{}');
    const bytesPerMetadataUpdate = (written() - w0) / 1000;
    const [seen, whileWriting, afterwards] = [summarize(visible), summarize(busy), summarize(idle)];
    return {
      size: ds.name,
      buildDocsPerSec,
      ingestDocsPerSec: ds.n / ingestSeconds,
      clientCpuMsPerDoc: (cpu.user + cpu.system) / 1000 / ds.n,
      visibleP50Ms: seen.p50,
      visibleP99Ms: seen.p99,
      searchBusyP50: whileWriting.p50,
      searchBusyP99: whileWriting.p99,
      searchIdleP50: afterwards.p50,
      searchIdleP99: afterwards.p99,
      segments,
      bytesPerMetadataUpdate,
    };
  } finally {
    await server.stop();
    rmSync(liveDir, { recursive: true, force: true });
  }
}
