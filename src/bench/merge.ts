/**
 * `npm run bench:merge`: how a merge builds its graph, side by side on the same segments.
 *
 *   npm run bench:merge -- [--n 200000] [--dim 768] [--segments 10] [--queries 200] [--rounds 2]
 *                          [--variants largest,join-sets,join-sets:100]
 *
 * A `prescore gen` data set is built (`prescore build`, once, kept under .bench) as `--segments`
 * equal segments, as TieredMergePolicy merges them (10 of a tier at once), and as one segment
 * (the batch build a merge should match). Each round then, per variant in turn: a copy of the
 * segmented index is force-merged to one segment by an IndexWriter with that graph merge
 * (GraphMerge: `largest` takes over the largest input's graph and inserts every other doc one by
 * one; `join-sets` also goes through the other inputs' graphs, `join-sets:B` with B as the beam
 * of the searches of the nodes outside their join sets, default 2 x M), timed (wall, and the process's CPU: the merge runs on a
 * background executor thread of this process), and searched with the data set's queries (k=10,
 * default settings) for recall@10 against exact ground truth, beside the one-segment build.
 */
import { cpSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { openIndex } from '../api/openIndex.js';
import { openIndexWriter } from '../api/openIndexWriter.js';
import { Executor } from '../executor/Executor.js';
import type { GraphMerge } from '../../segments/index/SegmentMergeTask.js';
import { benchDataset, benchIndexVariant, ensureIndex, loadQueries, recallAt, table, type BenchDataset, type QuerySet } from './benchData.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200000' },
    dim: { type: 'string', default: '768' },
    segments: { type: 'string', default: '10' },
    queries: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '2' },
    variants: { type: 'string', default: 'largest,join-sets,join-sets:100' },
  },
});

function parseVariant(v: string): GraphMerge {
  if (v === 'largest') return { kind: 'largest' };
  if (v === 'join-sets') return { kind: 'join-sets' };
  const m = /^join-sets:(\d+)$/.exec(v);
  if (m === null) throw new Error(`--variants: expected largest, join-sets or join-sets:BEAM, got ${v}`);
  return { kind: 'join-sets', lightBeamWidth: Number(m[1]) };
}

/** Recall@10 of an index over the query set (k=10, default search settings). */
async function recallOf(dir: string, queries: QuerySet): Promise<number> {
  const index = await openIndex(dir, { calibrate: 'first-use' });
  try {
    let sum = 0;
    for (let q = 0; q < queries.vectors.length; q++) sum += recallAt(10, (await index.search(queries.vectors[q]!, { k: 10 })).hits, queries.truth[q]!);
    return sum / queries.vectors.length;
  } finally {
    await index.close();
  }
}

interface Measured {
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly recall: number;
  readonly docsFromGraph: number;
}

async function forceMerged(source: BenchDataset, graphMerge: GraphMerge, queries: QuerySet): Promise<Measured> {
  const dir = `${source.indexDir}-merging`;
  rmSync(dir, { recursive: true, force: true });
  cpSync(source.indexDir, dir, { recursive: true });
  try {
    const writer = await openIndexWriter(dir, { mergePolicy: null, graphMerge });
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    await writer.forceMerge(1);
    const seconds = (performance.now() - t0) / 1000;
    const used = process.cpuUsage(cpu);
    const { docsFromGraph } = writer.mergeStats;
    await writer.close();
    return { seconds, cpuSeconds: (used.user + used.system) / 1e6, recall: await recallOf(dir, queries), docsFromGraph };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n = Number(values.n);
  const segments = Number(values.segments);
  const base = benchDataset(n, Number(values.dim), Number(values.queries), n);
  const segmented = benchIndexVariant(base, `seg${segments}`, Math.ceil(n / segments));
  const whole = benchIndexVariant(base, 'seg1', n);
  const wholeBuild = ensureIndex(whole);
  ensureIndex(segmented);
  const queries = await loadQueries(base);
  const variants = values.variants.split(',').map((v) => [v, parseVariant(v)] as const);
  process.stdout.write(`bench:merge ${base.name}: ${segments} segments -> 1, ${queries.vectors.length} queries, load average ${loadavg()[0].toFixed(2)}\n`);
  const oneSegmentRecall = await recallOf(whole.indexDir, queries);
  const runs = new Map<string, Measured[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, graphMerge] of variants) {
      const m = await forceMerged(segmented, graphMerge, queries);
      runs.get(name)!.push(m);
      process.stdout.write(`${JSON.stringify({ round, variant: name, ...m, load: loadavg()[0] })}\n`);
    }
  }
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const reference = mean(runs.get(variants[0]![0])!.map((m) => m.seconds));
  const rows = variants.map(([name]) => {
    const ms = runs.get(name)!;
    const seconds = mean(ms.map((m) => m.seconds));
    return [name, seconds, mean(ms.map((m) => m.cpuSeconds)), `${(reference / seconds).toFixed(2)}x`, mean(ms.map((m) => m.recall)).toFixed(3), ms[0]!.docsFromGraph];
  });
  rows.push(['one-segment build (reference)', wholeBuild?.seconds ?? NaN, NaN, '', oneSegmentRecall.toFixed(3), 0]);
  process.stdout.write(`${table(['variant', 'merge s', 'CPU s', `speed vs ${variants[0]![0]}`, 'recall@10', 'docs taken over'], rows)}\n`);
  process.stdout.write(`load average at the end ${loadavg()[0].toFixed(2)}\n`);
}

main()
  .then(() => Executor.shutdown())
  .catch(async (e: unknown) => {
    process.stderr.write(`bench:merge failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    await Executor.shutdown();
    process.exitCode = 1;
  });
