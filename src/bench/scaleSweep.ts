/**
 * `npm run bench:scale -- --sweep`: how segment size trades first-phase cost against recall, on
 * the 1,000,000 x 1024 cosine set. The same data is built with several --segment-docs values
 * (build time and peak RSS recorded per build), every index is opened in this process, and each
 * query runs on every variant in rotating order (so machine noise hits them alike): recall@10
 * after fp32 rescoring at oversample 3 and 5, first-phase p50/p99 and docs visited per query, at
 * num_candidates 100 and 200 (or the `--num-candidates` list; 0 is the server's default beam), to
 * compare at equal recall, with the search's whole latency and the CPU it took on all of the
 * process's threads. One extra variant shares the top-k bar across the first variant's segments
 * (KnnOptions.multiLeaf).
 *
 *   npm run bench:scale -- --sweep [--n 1000000] [--segment-docs default,250000,500000,1000000] [--queries 1000]
 *     [--num-candidates 100,200] [--keep]
 *
 * A `--segment-docs` entry `N:B` builds N docs per segment with an HNSW construction beam of B
 * (`prescore build --beam-width B`, into `idx-<tag>-segN-bwB`) instead of the builder's default (200).
 *
 * `default` is the builder's default policy (at 1M: 131,072 docs, 8 segments), which is
 * bench:scale's own 1M index and stays. The other variants are 4 GB each; without --keep each is
 * deleted after the run.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { defaultBeam, openIndex } from '../api/openIndex.js';
import { Executor } from '../executor/Executor.js';
import type { VectorIndex } from '../api/types.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { leafOf } from '../../segments/index/IndexReader.js';
import { IndexSearcher } from '../../query/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../../query/KnnFloatVectorQuery.js';
import { RescoreTopNQuery } from '../../query/RescoreTopNQuery.js';
import { benchDataset, benchIndexVariant, ensureIndex, loadQueries, recallAt, summarize, table, type BenchDataset, type BuildFacts } from './benchData.js';

/** One built variant: docs per segment (undefined: the builder's default policy) and, optionally, the construction beam. */
export interface SweepLayout {
  readonly segmentDocs: number | undefined;
  readonly beamWidth?: number;
}

export interface SweepOptions {
  /** The variants; `segmentDocs` undefined: the builder's default policy (bench:scale's own 1M index, kept). */
  readonly layouts: readonly SweepLayout[];
  readonly n: number;
  readonly queries: number;
  readonly keep: boolean;
  /** HNSW beams per segment to compare (0: the default beam, defaultBeam); default 100 and 200. */
  readonly numCandidates?: readonly number[];
}

const K = 10;
const OVERSAMPLES = [3, 5] as const;

/** numCandidates 0: the default beam. */
type Search = (q: Float32Array, oversample: number, numCandidates: number) => Promise<{ ids: readonly { id: string }[]; firstPhaseMs: number; visited: number }>;

interface Variant {
  readonly label: string;
  readonly segments: number;
  readonly build: BuildFacts | null;
  readonly search: Search;
}

export async function segmentSweep(options: SweepOptions): Promise<void> {
  const base = benchDataset(options.n, 1024, options.queries);
  const beams = options.numCandidates ?? [100, 200];
  const variants: Variant[] = [];
  const toDelete: string[] = [];
  const closers: (() => Promise<void> | void)[] = [];
  let first: BenchDataset | null = null;
  for (const { segmentDocs: docs, beamWidth } of options.layouts) {
    const bw = beamWidth === undefined ? '' : `-bw${beamWidth}`;
    const ds = docs === undefined ? benchIndexVariant(base, `scale${bw}`, undefined, undefined, beamWidth) : benchIndexVariant(base, `seg${docs}${bw}`, docs, undefined, beamWidth);
    first ??= ds;
    const build = ensureIndex(ds);
    if (docs !== undefined) toDelete.push(ds.indexDir, `${ds.indexDir}.build.json`);
    const index = await openIndex(ds.indexDir, { calibrate: 'first-use' });
    closers.push(() => index.close());
    const d = await index.describe();
    const label = `${docs === undefined ? 'default policy: ' : ''}${d.segments[0].docs.toLocaleString()} docs${beamWidth === undefined ? '' : `, build beam ${beamWidth}`}`;
    variants.push({ label, segments: d.segments.length, build, search: viaIndex(index) });
  }
  // The first variant again, with the top-k bar shared across its segments (Lucene's MultiLeafKnnCollector).
  const reader = DirectoryReader.open(first!.indexDir);
  closers.unshift(() => reader.close());
  const searcher = new IndexSearcher(reader, { executor: Executor.get() });
  variants.push({ label: `${variants[0].label}, multiLeaf`, segments: reader.leaves.length, build: null, search: viaMultiLeaf(searcher, reader) });

  const { vectors, truth } = await loadQueries(base);
  process.stderr.write(`sweep: warming up ${variants.length} variants\n`);
  for (const q of vectors.slice(0, 100)) for (const v of variants) await v.search(q, 5, 100);

  const keyOf = (v: number, os: number, nc: number) => `${v}/${os}/${nc}`;
  const recall = new Map<string, number[]>();
  const firstPhase = new Map<string, number[]>();
  const visited = new Map<string, number[]>();
  const latency = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const push = (m: Map<string, number[]>, key: string, x: number) => (m.get(key) ?? m.set(key, []).get(key)!).push(x);
  for (let i = 0; i < vectors.length; i++) {
    for (let j = 0; j < variants.length; j++) {
      const v = (i + j) % variants.length;
      for (const nc of beams) {
        for (const os of OVERSAMPLES) {
          // process.cpuUsage counts every thread of the process: the workers' share of the search too.
          const cpuAt = process.cpuUsage();
          const at = performance.now();
          const r = await variants[v].search(vectors[i], os, nc);
          const ms = performance.now() - at;
          const used = process.cpuUsage(cpuAt);
          const key = keyOf(v, os, nc);
          push(recall, key, recallAt(K, r.ids, truth[i]));
          push(firstPhase, key, r.firstPhaseMs);
          push(visited, key, r.visited);
          push(latency, key, ms);
          push(cpu, key, (used.user + used.system) / 1000);
        }
      }
    }
    if (i % 100 === 99) process.stderr.write(`sweep: ${i + 1}/${vectors.length} queries\n`);
  }

  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const rows: (string | number)[][] = [];
  const json: Record<string, unknown>[] = [];
  variants.forEach((v, vi) => {
    for (const nc of beams) {
      const r3 = mean(recall.get(keyOf(vi, 3, nc))!);
      const r5 = mean(recall.get(keyOf(vi, 5, nc))!);
      const fp = summarize(firstPhase.get(keyOf(vi, 5, nc))!);
      const vis = mean(visited.get(keyOf(vi, 5, nc))!);
      const total = summarize(latency.get(keyOf(vi, 5, nc))!);
      const cpuMs = mean(cpu.get(keyOf(vi, 5, nc))!);
      const beam = nc === 0 ? `default (${defaultBeam(K * 5)})` : nc;
      rows.push([
        v.label,
        v.segments,
        beam,
        r3.toFixed(4),
        r5.toFixed(4),
        fp.p50,
        fp.p99,
        total.p50,
        cpuMs.toFixed(2),
        Math.round(vis),
        v.build ? `${(v.build.seconds / 60).toFixed(1)} min` : '-',
        v.build ? v.build.peakRssGiB : '-',
      ]);
      json.push({
        variant: v.label,
        segments: v.segments,
        numCandidates: nc === 0 ? null : nc,
        recallAt10: { oversample3: r3, oversample5: r5 },
        firstPhaseMsOversample5: fp,
        totalMsOversample5: total,
        cpuMsPerSearchOversample5: cpuMs,
        visitedOversample5: vis,
        build: v.build,
      });
    }
  });
  const threads = Executor.get().threads;
  process.stdout.write(
    [
      `bench:scale --sweep  ${options.n.toLocaleString()} x 1024 cosine, ${vectors.length} queries, k=10, warm, ${threads} executor threads; variants interleaved query by query`,
      "first phase, search p50, CPU (all threads, mean) and visited at oversample 5 (k' = 50); build: prescore build in a child process, this machine",
      table(
        [
          'segment size',
          'segments',
          'num_candidates',
          'recall@10 os3',
          'recall@10 os5',
          'first-phase p50 ms',
          'p99 ms',
          'search p50 ms',
          'cpu ms/search',
          'visited/q',
          'build',
          'build peak RSS GiB',
        ],
        rows,
      ),
    ].join('\n') + '\n',
  );
  writeFileSync(`${base.indexDir}-sweep.json`, JSON.stringify(json, null, 2));
  for (const close of closers) await close();
  await Executor.shutdown();
  if (!options.keep) for (const p of toDelete) rmSync(p, { recursive: true, force: true });
}

function viaIndex(index: VectorIndex): Search {
  return async (q, oversample, numCandidates) => {
    const r = await index.search(q, { k: K, oversample, numCandidates: numCandidates === 0 ? undefined : numCandidates });
    return { ids: r.hits, firstPhaseMs: r.stats.timings.firstPhaseMs, visited: r.stats.visited };
  };
}

function viaMultiLeaf(searcher: IndexSearcher, reader: DirectoryReader): Search {
  return async (q, oversample, numCandidates) => {
    const candidates = K * oversample;
    const knn = new KnnFloatVectorQuery('vector', q, candidates, {
      numCandidates: numCandidates === 0 ? defaultBeam(candidates) : Math.max(candidates, numCandidates),
      multiLeaf: true,
    });
    const { topDocs, stats } = await searcher.search(RescoreTopNQuery.createFullPrecisionRescorerQuery(knn, q, 'vector', K), K);
    const ids = topDocs.scoreDocs.map((sd) => {
      const leaf = leafOf(reader.leaves, sd.doc);
      return { id: leaf.reader.id(sd.doc - leaf.docBase) };
    });
    return { ids, firstPhaseMs: stats.timings.firstPhaseMs, visited: stats.visited };
  };
}
