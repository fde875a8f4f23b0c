/**
 * bench:recall's rows for a set that `prescore build` has built into an index (`--gen-index`):
 * the service's own search on it, with every segment's first phase an exhaustive scan of the
 * codes and then at the default (the graph at the default beam), each followed by the service's
 * fp32 rescoring of k x oversample candidates. So the graph's loss at equal candidates is measured
 * on the segments users get (several segments, graphs built in parallel, the build's default
 * codes), not on one graph built in this process; the in-process rows cannot afford a 1M graph.
 *
 * Latency is the whole search's mean per query (first phase + rescoring, warm, one at a time);
 * bytes per vector are what the open index holds for codes and graphs.
 */
import { openReader } from '../api/openIndex.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import type { SearchOptions } from '../api/types.js';
import { recallOf, type RecallSet } from './recallData.js';

/** One first phase's figures per oversample. */
export interface ServedRow {
  readonly phase: 'exhaustive' | 'hnsw';
  readonly recall: Record<number, number>;
  readonly searchMs: Record<number, number>;
  readonly visited: Record<number, number>;
}

export interface ServedIndex {
  readonly bits: number;
  readonly rotated: boolean;
  /** Codes + graphs the open index holds, per vector. */
  readonly bytesPerVector: number;
  readonly rows: readonly ServedRow[];
}

export async function servedRows(set: RecallSet, indexDir: string, oversamples: readonly number[], k: number): Promise<ServedIndex> {
  const reader = DirectoryReader.open(indexDir);
  const codes = reader.leaves[0]?.reader.handle.quantized;
  const bits = codes?.bits ?? 1;
  const rotated = (codes?.rotationSeed ?? null) !== null;
  const index = await openReader(reader, { calibrate: 'first-use' });
  try {
    const description = await index.describe();
    if (description.docs !== set.base.size) {
      throw new Error(`bench:recall: ${indexDir} holds ${description.docs} docs, the set ${set.name} has ${set.base.size}; build the index from this set`);
    }
    const rows: ServedRow[] = [];
    for (const segmentSearch of ['exhaustive', 'auto'] as const) {
      const recall: Record<number, number> = {};
      const searchMs: Record<number, number> = {};
      const visited: Record<number, number> = {};
      for (const os of oversamples) {
        let rec = 0,
          ms = 0,
          vis = 0;
        const options: SearchOptions = { k, oversample: os, segmentSearch };
        for (let qi = 0; qi < set.queries.length; qi++) {
          const t0 = performance.now();
          const r = await index.search(set.queries[qi], options);
          ms += performance.now() - t0;
          vis += r.stats.visited;
          rec += recallOf(
            set,
            qi,
            Int32Array.from(r.hits, (h) => Number(h.id)),
            k,
          );
        }
        recall[os] = rec / set.queries.length;
        searchMs[os] = ms / set.queries.length;
        visited[os] = vis / set.queries.length;
      }
      rows.push({ phase: segmentSearch === 'auto' ? 'hnsw' : 'exhaustive', recall, searchMs, visited });
    }
    return { bits, rotated, bytesPerVector: description.memory.bytesPerVector, rows };
  } finally {
    await index.close();
  }
}
