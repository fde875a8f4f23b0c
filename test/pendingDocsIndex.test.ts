import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { PendingDocsIndex } from '../src/api/PendingDocsIndex.js';
import { ReopeningIndex } from '../src/http/ReopeningIndex.js';
import type { SearchOptions, VectorIndex } from '../src/api/types.js';
import { BooleanQuery, FieldExistsQuery, SortedNumericDocValuesRangeQuery, TermQuery, type FilterQuery } from '../query/filter/index.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';

/**
 * Near-real-time search without a segment: a reader of the last commit plus the writer's writes
 * since (IndexWriter.pendingDocs) answers searches, filters, counts, gets and filter-only pages
 * exactly as a reader of a commit made at that moment does: new docs found with their source,
 * replaced docs found once in their new version, deleted docs gone.
 */
const root = mkdtempSync(join(tmpdir(), 'prescore-pending-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DIMS = 16;
const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.cos(i * 0.37 + j * 1.3) + (j === i % DIMS ? 0.5 : 0)));
const doc = (i: number, extra: Record<string, unknown> = {}) => ({ vector: vector(i), color: ['red', 'green', 'blue'][i % 3], rank: i, ...extra });
// Every doc rescored at fp32: both views answer exactly, so they must agree hit for hit.
const exact = (k: number, extra: Partial<SearchOptions> = {}): SearchOptions => ({ k, oversample: 100, segmentSearch: 'exhaustive', ...extra });

const filters: (FilterQuery | null)[] = [
  null,
  new TermQuery('color', 'green'),
  new SortedNumericDocValuesRangeQuery('rank', 20, 60),
  new BooleanQuery({ should: [new TermQuery('color', 'red'), new FieldExistsQuery('tag')] }),
];

async function answers(index: VectorIndex, queries: readonly number[]) {
  const out: unknown[] = [];
  for (const q of queries)
    for (const filter of filters) {
      const r = await index.search(Float32Array.from(vector(q)), exact(5, { filter, source: true }));
      out.push(r.hits.map((h) => ({ id: h.id, score: h.score, source: h.source })));
      out.push(await index.count!(filter));
    }
  const page = await index.match!(new TermQuery('color', 'blue'), { from: 10, size: 30, source: true });
  out.push(page.total, page.hits.map((h) => [h.id, h.source]).sort());
  for (const id of ['d3', 'd4', 'd7', 'n2', 'missing']) out.push((await index.get!(id))?.source ?? null);
  return out;
}

describe('PendingDocsIndex', () => {
  it('answers searches, filters, counts and gets as a reader of a commit made now would', async () => {
    const dir = join(root, 'nrt');
    const writer = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE } });
    for (let i = 0; i < 80; i++) writer.addDocument(doc(i), `d${i}`);
    await writer.commit();
    const committed = await openIndex(dir);

    // Since the commit: new docs (one with a field the commit never saw), a committed doc
    // replaced, one deleted, one new doc replaced and one new doc deleted.
    for (let i = 0; i < 12; i++) writer.addDocument(doc(100 + i, i === 5 ? { tag: 'fresh' } : {}), `n${i}`);
    writer.updateDocument('d3', doc(3, { color: 'blue', rank: 1000 }));
    writer.deleteDocument('d4');
    writer.updateDocument('n2', doc(102, { color: 'red' }));
    writer.deleteDocument('n7');
    const pending = writer.pendingDocs();
    expect(pending.docs.map((d) => d.id)).toEqual(['n0', 'n1', 'n3', 'n4', 'n5', 'n6', 'n8', 'n9', 'n10', 'n11', 'd3', 'n2']);
    expect(pending.hiddenIds).toEqual(['d3', 'd4']);
    const view = new PendingDocsIndex(committed, pending);

    const top = await view.search(Float32Array.from(vector(104)), exact(3, { source: true }));
    expect(top.hits[0]).toMatchObject({ id: 'n4', source: { color: 'blue', rank: 104 } });
    expect(top.hits[0]!.score).toBeCloseTo(1, 5);
    const replaced = await view.search(Float32Array.from(vector(3)), exact(10));
    expect(replaced.hits.filter((h) => h.id === 'd3')).toHaveLength(1);
    expect((await view.search(Float32Array.from(vector(4)), exact(10))).hits.some((h) => h.id === 'd4')).toBe(false);
    expect(await view.count!()).toBe(80 - 1 + 11);
    expect(view.mapping()).toMatchObject({ properties: { tag: { type: 'keyword' } } }); // mapped by a doc no commit holds yet
    expect(await view.get!('d3')).toMatchObject({ id: 'd3', source: { color: 'blue', rank: 1000 } });

    const queries = [3, 4, 7, 40, 102, 105, 111];
    const seen = await answers(view, queries);
    await writer.commit();
    const now = await openIndex(dir);
    expect(seen).toEqual(await answers(now, queries));

    const closing = view.close(); // closes `committed` too
    expect(view.close()).toBe(closing);
    await Promise.all([closing, now.close()]);
    await writer.close();
  });

  it('records no pending write for a delete that hides nothing (an id never committed, or written and deleted since)', async () => {
    const dir = join(root, 'ghosts');
    const writer = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE } });
    writer.addDocument(doc(1), 'kept');
    await writer.commit();
    for (let i = 0; i < 50; i++) writer.deleteDocument(`ghost${i}`);
    writer.addDocument(doc(2), 'brief');
    writer.deleteDocument('brief');
    // Else a server would see writes pending that no commit ever clears, and commit for them again and again.
    expect(writer.pendingWrites).toEqual({ ids: 0, hidden: 0 });
    expect(writer.pendingDocs()).toMatchObject({ docs: [], hiddenIds: [] });
    writer.deleteDocument('kept');
    expect(writer.pendingWrites).toEqual({ ids: 1, hidden: 1 });
    await writer.close();
  });

  it("a reopen that brings no writes (SIGHUP) after one that brought them still serves the writer's writes", async () => {
    const dir = join(root, 'sighup');
    const writer = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE } });
    writer.addDocument(doc(1), 'a');
    await writer.commit();
    const reopen = () => openIndex(dir);
    const served = await ReopeningIndex.wrap(await reopen(), reopen);
    writer.addDocument(doc(2), 'b');
    await served.refresh(() => writer.pendingDocs());
    await writer.commit(); // holds b
    writer.addDocument(doc(3), 'c'); // after that commit
    await served.refresh(); // as SIGHUP does
    expect(await served.get!('b')).toMatchObject({ id: 'b' });
    expect(await served.get!('c')).toMatchObject({ id: 'c' });
    expect(await served.count!()).toBe(3);
    await served.close();
    await writer.close();
  });

  it('refuses writes that follow another commit than the index serves', async () => {
    const dir = join(root, 'stale');
    const writer = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE } });
    const old = await openIndex(dir);
    writer.addDocument(doc(1), 'a');
    await writer.commit();
    writer.addDocument(doc(2), 'b');
    expect(() => new PendingDocsIndex(old, writer.pendingDocs())).toThrow(/the pending writes follow commit \d+, the index is at commit \d+/);
    await old.close();
    await writer.close();
  });
});
