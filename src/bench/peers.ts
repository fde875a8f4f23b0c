/**
 * `npm run bench:peers`: recall@10 against p50 for prescore and zvec (HNSW_RABITQ with its
 * refiner: the fastest peer measured warm), side by side in one process, single stream, k=10.
 *
 * Per set (the `prescore gen` 200k x 768 set, MiniLM, Fashion-MNIST cosine and euclidean), each
 * engine's index is built once with its defaults and cached under .bench/peers (prescore:
 * `prescore build`; zvec: HNSW_RABITQ, its default m, efConstruction and 7-bit RaBitQ codes,
 * inserted in batches and optimized), then every held-out query is searched by every variant in
 * a new random order per query, so that both engines share the machine's drift:
 *
 *   prescore: oversample 1..10 at the service's beam (max(200, 4 x k x oversample)) and at
 *             num_candidates 100 and 50 (a smaller first-phase beam);
 *   zvec:     ef 8..256 with its refiner (fp32 rescoring, as prescore's second phase), and a few
 *             without it (codes only).
 *
 * Every search's hits are checked against exact ground truth (tie-aware for pixel data). Before
 * the timed pass each engine searches every query once at its largest setting (warm: both
 * engines' files in the page cache). The report: each engine's curve (recall, p50, p99 per
 * setting), its Pareto front, and per target recall (0.92 / 0.96 unless --targets) the cheapest
 * setting of each engine that reaches it and the ratio of their p50s (asked: prescore <= zvec).
 * Memory: each index's files and the growth of the process's anonymous memory when it was
 * opened. Warm only: both engines map their files, and pages mapped into the process stay
 * resident through posix_fadvise(DONTNEED), so a cold comparison needs each engine in its own
 * memory-capped process (as bench:rescore and bench:scale run prescore); not done here.
 *
 * zvec is not a dependency of prescore; install it beside the benchmark first:
 *
 *   npm install --no-save @zvec/zvec@0.7.0
 *   npm run bench:peers -- [--sets gen,minilm,fmnist-cosine,fmnist-euclidean] [--queries 1000]
 *     [--gen-dir .bench/gen-200k-768] [--targets 0.92,0.96] [--json out.json]
 */
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openIndex } from '../api/openIndex.js';
import type { SearchOptions, VectorIndex } from '../api/types.js';
import { Executor } from '../executor/Executor.js';
import { packageRoot } from '../executor/packageRoot.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { sampleQuantile, seededShuffle, table } from './benchData.js';
import { rssAnonBytes } from './procFiles.js';
import { defaultIndexOf, loadRecallSet, recallOf, type RecallSet } from './recallData.js';

const { values } = parseArgs({
  options: {
    sets: { type: 'string' },
    queries: { type: 'string' },
    'gen-dir': { type: 'string' },
    targets: { type: 'string' },
    json: { type: 'string' },
  },
});

const K = 10;
const CACHE = join(packageRoot(), '.bench', 'peers');
const sets = (values.sets ?? 'gen,minilm,fmnist-cosine,fmnist-euclidean').split(',');
const queryCount = Number(values.queries ?? 1000);
const targets = (values.targets ?? '0.92,0.96').split(',').map(Number);

/** The part of zvec's API this benchmark uses (its package is installed only beside it). */
interface Zvec {
  ZVecCollectionSchema: new (params: unknown) => unknown;
  ZVecCreateAndOpen(path: string, schema: unknown): ZvecCollection;
  ZVecOpen(path: string, options?: { readOnly?: boolean }): ZvecCollection;
  ZVecDataType: { VECTOR_FP32: number };
  ZVecIndexType: { HNSW_RABITQ: number };
  ZVecMetricType: { L2: number; IP: number; COSINE: number };
}
interface ZvecCollection {
  insertSync(docs: { id: string; vectors: Record<string, Float32Array> }[]): unknown;
  optimizeSync(): void;
  querySync(query: { fieldName: string; vector: Float32Array; topk: number; params: Record<string, unknown> }): { id: string }[];
  closeSync(): void;
}

function loadZvec(): Zvec {
  const require = createRequire(join(packageRoot(), 'package.json'));
  try {
    return require('@zvec/zvec') as Zvec;
  } catch (e) {
    throw new Error(
      `@zvec/zvec is not installed (it is the peer this benchmark compares with, not a dependency): npm install --no-save @zvec/zvec@0.7.0\n(${(e as Error).message})`,
    );
  }
}

const FIELD = 'embedding';
const zvec = loadZvec();

/** The zvec collection of the set (HNSW_RABITQ, zvec's defaults), built unless cached. */
function zvecCollectionOf(set: RecallSet): { dir: string; buildMs: number | null } {
  const dir = join(CACHE, set.name, 'zvec');
  const done = join(CACHE, set.name, 'zvec.done');
  if (existsSync(done)) return { dir, buildMs: null };
  rmSync(dir, { recursive: true, force: true });
  const metricType =
    set.similarity === VectorSimilarityFunction.EUCLIDEAN
      ? zvec.ZVecMetricType.L2
      : set.similarity === VectorSimilarityFunction.DOT_PRODUCT || set.similarity === VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT
        ? zvec.ZVecMetricType.IP
        : zvec.ZVecMetricType.COSINE;
  const schema = new zvec.ZVecCollectionSchema({
    name: 'bench_peers',
    vectors: { name: FIELD, dataType: zvec.ZVecDataType.VECTOR_FP32, dimension: set.dims, indexParams: { indexType: zvec.ZVecIndexType.HNSW_RABITQ, metricType } },
  });
  const t0 = performance.now();
  const collection = zvec.ZVecCreateAndOpen(dir, schema);
  const BATCH = 1000;
  for (let start = 0; start < set.base.size; start += BATCH) {
    const docs = [];
    for (let o = start; o < Math.min(set.base.size, start + BATCH); o++) docs.push({ id: String(o), vectors: { [FIELD]: set.base.vector(o).slice() } });
    collection.insertSync(docs);
    if ((start / BATCH) % 20 === 0) process.stderr.write(`\rzvec ${set.name}: inserted ${start + docs.length} of ${set.base.size}`);
  }
  process.stderr.write(`\nzvec ${set.name}: optimizing (building the graph)\n`);
  collection.optimizeSync();
  collection.closeSync();
  const buildMs = performance.now() - t0;
  writeFileSync(done, JSON.stringify({ buildMs }));
  return { dir, buildMs };
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const bytesUnder = (dir: string) => filesUnder(dir).reduce((sum, f) => sum + statSync(f).size, 0);

type Engine = 'prescore' | 'zvec';
interface Variant {
  readonly engine: Engine;
  readonly key: string;
  /** The engine's setting that reads the most (run once per query before the timed pass). */
  readonly largest?: boolean;
  search(query: Float32Array): Promise<number[]> | number[];
}

interface Point {
  readonly engine: Engine;
  readonly key: string;
  readonly recall: number;
  readonly p50: number;
  readonly p99: number;
}

interface TargetRow {
  readonly set: string;
  readonly target: number;
  readonly prescore: Point | null;
  readonly zvec: Point | null;
}

interface SetReport {
  readonly set: string;
  readonly docs: number;
  readonly dims: number;
  readonly queries: number;
  readonly build: Record<Engine, number | null>;
  readonly fileBytes: Record<Engine, number>;
  readonly anonBytes: Record<Engine, number>;
  readonly points: Point[];
  readonly targets: TargetRow[];
}

function prescoreVariants(index: VectorIndex): Variant[] {
  const out: Variant[] = [];
  const oversamples = [1, 1.5, 2, 3, 4, 5, 8, 10];
  for (const numCandidates of [undefined, 100, 50])
    for (const oversample of oversamples) {
      if (numCandidates !== undefined && numCandidates < K * oversample) continue;
      const options: SearchOptions = { k: K, oversample, ...(numCandidates === undefined ? {} : { numCandidates }) };
      out.push({
        engine: 'prescore',
        key: `os ${oversample}${numCandidates === undefined ? '' : `, nc ${numCandidates}`}`,
        largest: numCandidates === undefined && oversample === oversamples.at(-1),
        search: async (q) => (await index.search(q, options)).hits.map((h) => Number(h.id)),
      });
    }
  return out;
}

function zvecVariants(collection: ZvecCollection): Variant[] {
  const efs = [8, 10, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256];
  const variant = (ef: number, refiner: boolean): Variant => {
    const params = { indexType: zvec.ZVecIndexType.HNSW_RABITQ, ef, isUsingRefiner: refiner };
    return {
      engine: 'zvec',
      key: `ef ${ef}${refiner ? ', refiner' : ''}`,
      largest: refiner && ef === efs.at(-1),
      search: (q) => collection.querySync({ fieldName: FIELD, vector: q, topk: K, params }).map((d) => Number(d.id)),
    };
  };
  return [...efs.map((ef) => variant(ef, true)), ...[16, 64, 256].map((ef) => variant(ef, false))];
}

/** Lowest p50 first; a point stays when no cheaper point of its engine has at least its recall. */
function paretoFront(points: readonly Point[]): Point[] {
  const front: Point[] = [];
  for (const p of [...points].sort((a, b) => a.p50 - b.p50)) if (front.every((f) => f.recall < p.recall)) front.push(p);
  return front;
}

function cheapestReaching(points: readonly Point[], engine: Engine, target: number): Point | null {
  const reaching = points.filter((p) => p.engine === engine && p.recall >= target).sort((a, b) => a.p50 - b.p50);
  return reaching[0] ?? null;
}

async function runSet(set: RecallSet): Promise<SetReport> {
  const prescoreIndex = await defaultIndexOf(set, CACHE);
  const zvecIndex = zvecCollectionOf(set);
  const anon0 = rssAnonBytes();
  const index = await openIndex(prescoreIndex.dir, { calibrate: 'never' });
  const anon1 = rssAnonBytes();
  const collection = zvec.ZVecOpen(zvecIndex.dir, { readOnly: true });
  const anon2 = rssAnonBytes();
  try {
    const variants = [...prescoreVariants(index), ...zvecVariants(collection)];
    const ms = new Map<string, number[]>(variants.map((v) => [`${v.engine}:${v.key}`, []]));
    const recall = new Map<string, number>(variants.map((v) => [`${v.engine}:${v.key}`, 0]));
    // Warm: every query once at each engine's largest setting (the most candidates and the widest
    // beam: it reads every page a smaller setting of the same query needs).
    const largest = variants.filter((v) => v.largest);
    for (const q of set.queries) for (const v of largest) await v.search(q);
    const shuffle = seededShuffle(20261205);
    const order = variants.slice();
    for (let qi = 0; qi < set.queries.length; qi++) {
      shuffle(order);
      for (const v of order) {
        const id = `${v.engine}:${v.key}`;
        const t0 = performance.now();
        const hits = await v.search(set.queries[qi]!);
        ms.get(id)!.push(performance.now() - t0);
        recall.set(id, recall.get(id)! + recallOf(set, qi, hits, K));
      }
      if (qi % 100 === 99) process.stderr.write(`\rpeers ${set.name}: ${qi + 1} of ${set.queries.length} queries`);
    }
    process.stderr.write('\n');
    const points: Point[] = variants.map((v) => {
      const id = `${v.engine}:${v.key}`;
      return { engine: v.engine, key: v.key, recall: recall.get(id)! / set.queries.length, p50: sampleQuantile(ms.get(id)!, 0.5), p99: sampleQuantile(ms.get(id)!, 0.99) };
    });
    const targetRows = targets.map((target) => ({ set: set.name, target, prescore: cheapestReaching(points, 'prescore', target), zvec: cheapestReaching(points, 'zvec', target) }));

    return {
      set: set.name,
      docs: set.base.size,
      dims: set.dims,
      queries: set.queries.length,
      build: { prescore: prescoreIndex.buildMs, zvec: zvecIndex.buildMs },
      fileBytes: { prescore: bytesUnder(prescoreIndex.dir), zvec: bytesUnder(zvecIndex.dir) },
      anonBytes: { prescore: anon1 - anon0, zvec: anon2 - anon1 },
      points,
      targets: targetRows,
    };
  } finally {
    collection.closeSync();
    await index.close();
  }
}

const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const loadStart = loadavg().map((x) => x.toFixed(2));
const reports: SetReport[] = [];
for (const name of sets) {
  const set = await loadRecallSet(name, { queryCount, k: K, cacheDir: join(CACHE, 'truth'), genDir: values['gen-dir'] ?? join(packageRoot(), '.bench', 'gen-200k-768') });
  if (set === null) continue;
  try {
    const r = await runSet(set);
    reports.push(r);
    console.log(
      `\n${r.set}: ${r.docs.toLocaleString()} x ${r.dims}, ${r.queries} queries; files prescore ${mib(r.fileBytes.prescore)}, zvec ${mib(r.fileBytes.zvec)}; ` +
        `anonymous memory at open prescore ${mib(r.anonBytes.prescore)}, zvec ${mib(r.anonBytes.zvec)}; ` +
        `build ${(['prescore', 'zvec'] as const).map((e) => `${e} ${r.build[e] === null ? 'cached' : `${(r.build[e]! / 1000).toFixed(1)} s`}`).join(', ')}`,
    );
    const front = new Set(paretoFront(r.points.filter((p) => p.engine === 'prescore')).concat(paretoFront(r.points.filter((p) => p.engine === 'zvec'))));
    console.log(
      table(
        ['engine', 'setting', 'recall@10', 'p50 ms', 'p99 ms', 'front'],
        [...r.points]
          .sort((a, b) => (a.engine === b.engine ? a.recall - b.recall : a.engine < b.engine ? -1 : 1))
          .map((p) => [p.engine, p.key, f(p.recall, 4), f(p.p50), f(p.p99), front.has(p) ? '*' : '']),
      ),
    );
  } finally {
    set.close();
  }
}
const loadEnd = loadavg().map((x) => x.toFixed(2));
console.log(`\nload average at start ${loadStart.join(' ')}, at end ${loadEnd.join(' ')}`);
console.log(
  table(
    ['set', 'recall@10 target', 'prescore: cheapest', 'recall', 'p50 ms', 'zvec: cheapest', 'recall', 'p50 ms', 'p50 prescore / zvec', '<= 1'],
    reports.flatMap((r) =>
      r.targets.map((t) => {
        const ratio = t.prescore && t.zvec ? t.prescore.p50 / t.zvec.p50 : NaN;
        return [
          t.set,
          String(t.target),
          t.prescore?.key ?? 'not reached',
          f(t.prescore?.recall ?? NaN, 4),
          f(t.prescore?.p50 ?? NaN),
          t.zvec?.key ?? 'not reached',
          f(t.zvec?.recall ?? NaN, 4),
          f(t.zvec?.p50 ?? NaN),
          f(ratio, 2),
          Number.isNaN(ratio) ? '-' : ratio <= 1 ? 'met' : 'MISSED',
        ];
      }),
    ),
  ),
);
if (values.json) writeFileSync(values.json, JSON.stringify({ loadStart, loadEnd, reports }, null, 2));
await Executor.shutdown();
