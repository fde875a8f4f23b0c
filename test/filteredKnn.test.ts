import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import type { KnnFilter, SegmentFilter, VectorIndex } from '../src/api/types.js';
import { mulberry32 } from '../src/gen/Rng.js';
import { exactTopK } from './support/exactTopK.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/**
 * Pre-filtered kNN through the library: whatever the filter accepts and however each segment is
 * searched (the plan's choice, or a strategy forced), a search returns min(k, accepted) hits, all
 * accepted, and the hits match the exact filtered top k (every accepted doc rescored when few are
 * accepted; close to it otherwise).
 */
let index: TestIndex;
let idx: VectorIndex;

beforeAll(async () => {
  // Three segments, two with graphs: 4000 + 4000 + 1500 docs.
  index = await buildTestIndex({ n: 9500, dims: 48, segmentDocs: 4000, flatThreshold: 2000, similarity: 'cosine', queries: 20 });
  idx = await openIndex(index.dir);
}, 180_000);

afterAll(async () => {
  await idx?.close();
  index?.cleanup();
});

/** A filter accepting the docs `accepts(doc)` says, as SharedArrayBuffer-backed bitsets per segment. */
function filterOf(accepts: (doc: number) => boolean): KnnFilter & { readonly docs: Set<number> } {
  const docs = new Set<number>();
  for (let d = 0; d < index.n; d++) if (accepts(d)) docs.add(d);
  return {
    docs,
    accepted(leaf): SegmentFilter {
      const maxDoc = leaf.reader.maxDoc;
      const bits = new Uint32Array(new SharedArrayBuffer(4 * Math.ceil(maxDoc / 32)));
      let cardinality = 0;
      for (let d = 0; d < maxDoc; d++) {
        if (!docs.has(leaf.docBase + d)) continue;
        bits[d >>> 5]! |= 1 << (d & 31);
        cardinality++;
      }
      return { bits, cardinality };
    },
    toString: () => `test filter (${docs.size} docs)`,
  };
}

const query = (i: number) => index.queries.subarray(i * index.dims, (i + 1) * index.dims);

describe('filtered kNN search', () => {
  it('returns the exact filtered top k when few docs are accepted (every accepted doc is rescored)', async () => {
    for (const fraction of [0.0005, 0.01, 0.08]) {
      const rng = mulberry32(Math.round(fraction * 1e5));
      const filter = filterOf(() => rng() < fraction);
      for (let q = 0; q < 5; q++) {
        const r = await idx.search(query(q), { k: 10, filter });
        const want = exactTopK(index, query(q), 10, (d) => filter.docs.has(d));
        expect(r.hits.map((h) => h.doc)).toEqual(want);
        expect(r.stats.filter?.map((s) => s.cardinality).reduce((a, b) => a + b)).toBe(filter.docs.size);
      }
    }
  });

  it('returns min(k, accepted) hits, all accepted, on every strategy, with the recall of the unfiltered search', async () => {
    // The unfiltered search's recall on these 1-bit codes (48 dims) is the bar.
    let unfiltered = 0;
    for (let q = 0; q < 10; q++) {
      const r = await idx.search(query(q), { k: 10, oversample: 5 });
      const want = new Set(exactTopK(index, query(q), 10, () => true));
      unfiltered += r.hits.filter((h) => want.has(h.doc)).length / 100;
    }
    for (const fraction of [0.5, 0.2]) {
      const rng = mulberry32(7 + fraction * 10);
      const filter = filterOf(() => rng() < fraction);
      for (const segmentSearch of ['auto', 'exhaustive', 'hnsw', 'filtered-hnsw'] as const) {
        let found = 0;
        for (let q = 0; q < 10; q++) {
          const r = await idx.search(query(q), { k: 10, oversample: 5, filter, segmentSearch });
          expect(r.hits).toHaveLength(10);
          for (const h of r.hits) expect(filter.docs.has(h.doc)).toBe(true);
          const want = new Set(exactTopK(index, query(q), 10, (d) => filter.docs.has(d)));
          found += r.hits.filter((h) => want.has(h.doc)).length;
          if (segmentSearch !== 'auto') for (const s of r.stats.filter!) expect(s.strategy === segmentSearch || s.strategy === 'exhaustive').toBe(true);
        }
        expect(found / 100, `${fraction} ${segmentSearch} (unfiltered ${unfiltered})`).toBeGreaterThanOrEqual(unfiltered - 0.05);
      }
    }
  });

  it('returns fewer than k hits only when fewer docs are accepted, and none when none is', async () => {
    const five = filterOf((d) => d % 1901 === 0);
    expect(five.docs.size).toBe(5);
    const r = await idx.search(query(0), { k: 10, filter: five });
    expect(r.hits.map((h) => h.doc).sort((a, b) => a - b)).toEqual([...five.docs].sort((a, b) => a - b));
    const none = await idx.search(query(0), { k: 10, filter: filterOf(() => false) });
    expect(none.hits).toEqual([]);
  });

  it('finds accepted docs that lie far from the query (anti-correlated filter)', async () => {
    const q = query(3);
    // The 3% of docs least similar to the query.
    const ranked = exactTopK(index, q, index.n, () => true);
    const far = new Set(ranked.slice(-Math.round(index.n * 0.03)));
    const filter = filterOf((d) => far.has(d));
    for (const segmentSearch of ['auto', 'filtered-hnsw', 'hnsw'] as const) {
      const r = await idx.search(q, { k: 10, filter, segmentSearch });
      expect(r.hits).toHaveLength(10);
      const want = new Set(exactTopK(index, q, 10, (d) => far.has(d)));
      expect(r.hits.filter((h) => want.has(h.doc)).length, segmentSearch).toBeGreaterThanOrEqual(8);
    }
  });
});
