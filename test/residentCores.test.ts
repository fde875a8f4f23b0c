import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import type { SearchHit, VectorIndex } from '../src/api/types.js';
import { Executor } from '../src/executor/Executor.js';
import { ResidentCores } from '../segments/index/ResidentCores.js';
import type { IndexReader } from '../segments/index/IndexReader.js';
import { loadSegments } from '../query/knn/knnSlice.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/**
 * Readers of successive commits share the segments they have in common (Lucene's
 * SegmentCoreReaders): a segment's codes and graph are loaded once while any open reader holds
 * it, a new commit loads only its new segments, and each reader keeps its own live docs.
 */
let index: TestIndex;

beforeAll(async () => {
  // 4 segments of 1,000 with graphs and a small flat one.
  index = await buildTestIndex({ n: 4600, dims: 72, segmentDocs: 1000, flatThreshold: 700, queries: 20 });
}, 180_000);

afterAll(async () => {
  index?.cleanup();
  await Executor.shutdown();
});

const cores = ResidentCores.process;

function queries(): Float32Array[] {
  const d = index.dims;
  return Array.from({ length: index.queries.length / d }, (_, i) => index.queries.subarray(i * d, (i + 1) * d));
}

async function searchAll(ix: VectorIndex, k = 10): Promise<(readonly SearchHit[])[]> {
  const out: (readonly SearchHit[])[] = [];
  for (const q of queries()) out.push((await ix.search(q, { k, numCandidates: 60 })).hits);
  return out;
}

describe('resident segment cores', () => {
  it('a second reader of the same commit loads no segment, answers the same, and outlives the first', async () => {
    const before = cores.size;
    const first = await openIndex(index.dir, { threads: 2 });
    const held = cores.size - before;
    expect(held).toBe((await first.describe()).segments.length);
    const second = await openIndex(index.dir, { threads: 2 });
    expect(cores.size - before).toBe(held);
    const expected = await searchAll(first);
    expect(await searchAll(second)).toEqual(expected);
    await first.close();
    // The shared arenas stay while the second reader holds them.
    expect(cores.size - before).toBe(held);
    expect(await searchAll(second)).toEqual(expected);
    await second.close();
    expect(cores.size).toBe(before);
  });

  it("a reopen's late `index.load` for a reader closed meanwhile makes no state for it", async () => {
    const ix = await openIndex(index.dir, { threads: 2 });
    const handles = (ix as unknown as { reader: IndexReader }).reader.leaves.map((l) => l.reader.handle);
    expect(await loadSegments({ segments: handles })).toBe(handles.length);
    await ix.close(); // released on every thread, this one at once
    expect(await loadSegments({ segments: handles })).toBe(0);
  });

  it('a reader of a newer commit loads only its new segment, and each reader keeps its own deletions', async () => {
    const before = cores.size;
    const old = await openIndex(index.dir, { threads: 2 });
    const oldHits = await searchAll(old, 3);
    // Delete every query's best hit (they lie in segments with graphs and the flat one) and add a document.
    const deleted = [...new Set(oldHits.map((h) => h[0]!.id))];
    const writer = await openIndexWriter(index.dir);
    writer.deleteDocuments(...deleted);
    const added = Array.from(queries()[0], (v) => v + 1e-3);
    writer.addDocument({ vector: added }, 'added');
    await writer.commit();
    await writer.close();

    const held = cores.size - before;
    const next = await openIndex(index.dir, { threads: 2 });
    try {
      expect(cores.size - before).toBe(held + 1); // the new segment only
      const nextHits = await searchAll(next, 3);
      for (const hits of nextHits) for (const h of hits) expect(deleted).not.toContain(h.id);
      expect(nextHits[0]![0]!.id).toBe('added');
      // The old reader still answers from its commit, deleted docs included.
      expect(await searchAll(old, 3)).toEqual(oldHits);
    } finally {
      await old.close();
      await next.close();
    }
    expect(cores.size).toBe(before);
  });
});
