import type { TestIndex } from './testIndex.js';

/**
 * The exact top k docs of a test index for `query` among the docs `accepts` allows, by the
 * index's fp32 similarity (Lucene's scores), best first, equal scores by lower doc: the reference a
 * search's hits are checked against.
 */
export function exactTopK(index: TestIndex, query: Float32Array, k: number, accepts: (doc: number) => boolean): number[] {
  const scored: { doc: number; score: number }[] = [];
  for (let d = 0; d < index.n; d++) {
    if (!accepts(d)) continue;
    scored.push({ doc: d, score: index.similarity.compare(query, index.base.subarray(d * index.dims, (d + 1) * index.dims)) });
  }
  scored.sort((a, b) => b.score - a.score || a.doc - b.doc);
  return scored.slice(0, k).map((h) => h.doc);
}
