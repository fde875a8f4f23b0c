/**
 * One measured process of bench:graph (the parent evicts the files first and may confine it to a
 * memory cgroup): open the index once per variant, run every query on every variant, print one
 * JSON line. Variants are interleaved query by query in this one process; variant v runs query
 * (i + v * Q / V) mod Q at step i, so two variants never read the same query's vectors within
 * Q / V steps of each other (by then the capped page cache has turned over) and every variant
 * still runs every query once.
 */
import { rssAnonBytes, storageReadBytes } from './procFiles.js';
import { parseArgs } from 'node:util';
import { openIndex } from '../api/openIndex.js';
import type { ReadPath, VectorIndex } from '../api/types.js';
import { benchDataset, loadQueries, recallAt } from './benchData.js';

export interface GraphVariant {
  readonly name: string;
  readonly firstPhase: 'codes' | 'graph';
  readonly readPath: ReadPath;
  readonly ioConcurrency: number;
  readonly lookahead: number;
  readonly oversample: number;
}

export interface VariantResult {
  readonly name: string;
  readonly latencyMs: number[];
  readonly firstPhaseMs: number[];
  /** Bytes this process read from storage during each query (/proc/self/io read_bytes). */
  readonly readBytes: number[];
  readonly scored: number;
  readonly prefetched: number;
  readonly readAhead: number;
  readonly wasted: number;
  readonly maxDistance: number;
  readonly recall: number;
}

export const K = 10;
export const NUM_CANDIDATES = 100;

export function variants(budgets: readonly [number, number]): GraphVariant[] {
  const [lo, hi] = budgets;
  const g = (name: string, readPath: ReadPath, ioConcurrency: number, lookahead: number): GraphVariant => ({
    name,
    firstPhase: 'graph',
    readPath,
    ioConcurrency,
    lookahead,
    oversample: 1,
  });
  return [
    g('graph, prefetch off (mmap)', 'mmap', lo, 0),
    g(`graph, prefetch on (madvise), budget ${lo}`, 'mmap+prefetch', lo, 0),
    g(`graph, prefetch on (madvise), budget ${hi}`, 'mmap+prefetch', hi, 0),
    g(`graph, prefetch + lookahead 2 (madvise), budget ${lo}`, 'mmap+prefetch', lo, 2),
    g(`graph, prefetch + lookahead 2 (madvise), budget ${hi}`, 'mmap+prefetch', hi, 2),
    g(`graph, prefetch on (io_uring reads, mmap+parallel), budget ${hi}`, 'mmap+parallel', hi, 0),
    g(`graph, prefetch + lookahead 2 (io_uring reads, mmap+parallel), budget ${hi}`, 'mmap+parallel', hi, 2),
    g(`graph, prefetch + lookahead 8 (io_uring reads, mmap+parallel), budget ${hi}`, 'mmap+parallel', hi, 8),
    g(`graph, pread (io_uring into buffers), budget ${hi}`, 'pread', hi, 0),
    { name: '1-bit codes in RAM + fp32 rescoring (oversample 5)', firstPhase: 'codes', readPath: 'mmap+parallel', ioConcurrency: hi, lookahead: 0, oversample: 5 },
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      n: { type: 'string' },
      dim: { type: 'string' },
      queries: { type: 'string' },
      budgets: { type: 'string' },
      variants: { type: 'string' },
      warm: { type: 'boolean' },
      probe: { type: 'boolean' },
    },
  });
  const ds = benchDataset(Number(values.n), Number(values.dim), Number(values.queries), Number.NaN);
  const budgets = (values.budgets ?? '16,256').split(',').map(Number) as [number, number];
  const all = variants(budgets);
  // --variants 0,1,5: a subset of the rows (by position), for quick comparisons.
  const vs = values.variants ? values.variants.split(',').map((i) => all[Number(i)]) : all;
  const { vectors, truth } = await loadQueries(ds, values.probe ? 1 : Number(values.queries));
  const indexes: VectorIndex[] = [];
  for (const v of vs)
    indexes.push(await openIndex(ds.indexDir, { calibrate: 'first-use', firstPhase: v.firstPhase, ioConcurrency: v.ioConcurrency, lookahead: v.lookahead, readPath: v.readPath }));
  const search = (v: number, q: number) => indexes[v].search(vectors[q], { k: K, numCandidates: NUM_CANDIDATES, oversample: vs[v].oversample, readPath: vs[v].readPath });
  if (values.probe) {
    for (let v = 0; v < vs.length; v++) await search(v, 0);
    process.stdout.write(`${JSON.stringify({ rssAnonBytes: rssAnonBytes() })}\n`);
    await Promise.all(indexes.map((i) => i.close()));
    return;
  }
  const Q = vectors.length;
  const V = vs.length;
  if (values.warm) for (let q = 0; q < Q; q++) for (let v = 0; v < V; v++) await search(v, q);
  const results = vs.map(() => ({
    latencyMs: [] as number[],
    firstPhaseMs: [] as number[],
    readBytes: [] as number[],
    scored: 0,
    prefetched: 0,
    readAhead: 0,
    wasted: 0,
    maxDistance: 0,
    recall: 0,
  }));
  const stride = Math.max(1, Math.floor(Q / V));
  for (let i = 0; i < Q; i++) {
    for (let j = 0; j < V; j++) {
      const v = (i + j) % V; // rotate which variant goes first
      const q = (i + v * stride) % Q;
      const b0 = storageReadBytes();
      const t0 = performance.now();
      const r = await search(v, q);
      const ms = performance.now() - t0;
      const out = results[v];
      out.readBytes.push(storageReadBytes() - b0);
      out.latencyMs.push(ms);
      out.firstPhaseMs.push(r.stats.timings.firstPhaseMs);
      out.recall += recallAt(K, r.hits, truth[q]) / Q;
      const io = r.stats.firstPhaseIo;
      if (io) {
        out.scored += io.scored;
        out.prefetched += io.pagesPrefetched;
        out.readAhead += io.readAhead;
        out.wasted += io.wasted;
        out.maxDistance = Math.max(out.maxDistance, io.maxPrefetchDistance);
      }
    }
  }
  const payload: VariantResult[] = vs.map((v, i) => ({ name: v.name, ...results[i] }));
  process.stdout.write(`${JSON.stringify({ queries: Q, rssAnonBytes: rssAnonBytes(), results: payload })}\n`);
  await Promise.all(indexes.map((i) => i.close()));
}

if (process.argv[1] && /graphRun\.js$/.test(process.argv[1])) await main();
