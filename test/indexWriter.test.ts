import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { DocumentError } from '../segments/document/DocumentParser.js';
import { IndexWriter, VersionConflictError } from '../segments/index/IndexWriter.js';
import { Executor } from '../src/executor/Executor.js';
import { segmentBuilder } from '../src/executor/tasks.js';
import { TieredMergePolicy } from '../segments/index/TieredMergePolicy.js';
import { Mapping } from '../segments/document/Mapping.js';
import { readLatestCommit } from '../segments/index/CommitPoint.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { parseLiveDocs } from '../segments/lucene/LiveDocs.js';
import { openChecksummed } from '../segments/codec/CodecUtil.js';
import { LockObtainFailedException } from '../segments/store/DirectoryLock.js';
import { TermQuery } from '../query/filter/index.js';
import { buildTestIndex } from './support/testIndex.js';

/**
 * The library's IndexWriter: documents added, updated and deleted by id while the index exists,
 * made durable and visible by a commit, in the same formats as a build (deletions as Lucene's
 * `.liv` generations), one writer per directory.
 */
const roots: string[] = [];
const tempDir = () => {
  const root = mkdtempSync(join(tmpdir(), 'prescore-writer-'));
  roots.push(root);
  return join(root, 'index');
};
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const DIMS = 16;
const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.cos(i * 0.37 + j * 1.3) + (j === i % DIMS ? 0.5 : 0)));
const doc = (i: number, extra: Record<string, unknown> = {}) => ({ vector: vector(i), title: `doc ${i}`, color: ['red', 'green', 'blue'][i % 3], rank: i, ...extra });
const cosine = { dims: DIMS, similarity: VectorSimilarityFunction.COSINE };

describe('IndexWriter', () => {
  it('creates an index whose committed documents are searchable with their source, and not before the commit', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    for (let i = 0; i < 300; i++) writer.addDocument(doc(i), `d${i}`);
    const before = await openIndex(dir);
    expect(await before.count!()).toBe(0);
    await before.close();

    await writer.commit();
    const idx = await openIndex(dir);
    const r = await idx.search(Float32Array.from(vector(42)), { k: 3, source: true });
    expect(r.hits[0]).toMatchObject({ id: 'd42', source: { title: 'doc 42', color: 'red', rank: 42 } });
    expect(await idx.count!()).toBe(300);
    expect(await idx.count!(new TermQuery('color', 'green'))).toBe(100);
    await idx.close();
    await writer.close();
  });

  it('commits the ops up to its checkpoint only: an update arriving while a commit syncs leaves the old version in that commit', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    writer.updateDocument('a', doc(1));
    writer.updateDocument('gone', doc(2));
    await writer.commit();
    writer.updateDocument('b', doc(3));
    writer.deleteDocument('gone');
    // The next commit's translog sync gives the event loop to other requests, as a server's does:
    // an update of 'a' (a deletion in a committed segment plus a new buffered version) lands then.
    const translog = (writer as unknown as { translog: { sync(): Promise<void> } }).translog;
    const sync = translog.sync.bind(translog);
    let armed = true;
    translog.sync = () => {
      const p = sync();
      if (armed) {
        armed = false;
        writer.updateDocument('a', doc(4));
      }
      return p;
    };
    await writer.commit();
    // The commit holds 'a' as it was (its new version is an op after the checkpoint, not yet
    // durable: a crash now must find the old version, not neither) and the delete before it.
    const committed = await openIndex(dir);
    expect((await committed.get!('a', { source: true }))?.source).toMatchObject({ rank: 1 });
    expect(await committed.get!('gone')).toBeNull();
    expect(await committed.count!()).toBe(2);
    await committed.close();
    expect(writer.getDocument('a')).toMatchObject({ version: 2 }); // the writer sees the update
    await writer.commit(); // the next commit holds it
    const next = await openIndex(dir);
    expect((await next.get!('a', { source: true }))?.source).toMatchObject({ rank: 4 });
    expect(await next.count!()).toBe(2);
    await next.close();
    await writer.close();
  });

  it('replaces a document on update and removes it on delete, in buffered, flushed and committed docs alike', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    for (let i = 0; i < 100; i++) writer.addDocument(doc(i), `d${i}`);
    await writer.commit(); // d0..d99 committed
    for (let i = 100; i < 150; i++) writer.addDocument(doc(i), `d${i}`);
    await writer.flush(); // d100..d149 in a flushed segment
    for (let i = 150; i < 200; i++) writer.addDocument(doc(i), `d${i}`); // buffered

    expect(writer.updateDocument('d5', doc(500, { title: 'moved' })).result).toBe('updated');
    expect(writer.updateDocument('d120', doc(620, { title: 'moved too' })).result).toBe('updated');
    expect(writer.updateDocument('d180', doc(780)).result).toBe('updated');
    expect(writer.updateDocument('new', doc(900)).result).toBe('created');
    expect(writer.deleteDocuments('d6', 'd130', 'd190', 'absent')).toBe(3);
    expect(writer.numDocs).toBe(200 + 1 - 3);
    expect(writer.hasDocument('d6')).toBe(false);
    expect(writer.hasDocument('d5')).toBe(true);
    await writer.commit();

    const idx = await openIndex(dir);
    expect(await idx.count!()).toBe(198);
    for (const id of ['d6', 'd130', 'd190']) expect(await idx.get!(id)).toBeNull();
    expect((await idx.get!('d5'))!.source).toMatchObject({ title: 'moved', rank: 500 });
    expect((await idx.get!('d120'))!.source).toMatchObject({ title: 'moved too' });
    // The old vectors no longer find their docs; the new ones do.
    const old = await idx.search(Float32Array.from(vector(5)), { k: 1 });
    expect(old.hits[0]!.id).not.toBe('d5');
    expect((await idx.search(Float32Array.from(vector(500)), { k: 1 })).hits[0]!.id).toBe('d5');
    expect((await idx.search(Float32Array.from(vector(6)), { k: 200 })).hits.map((h) => h.id)).not.toContain('d6');
    await idx.close();
    await writer.close();
  });

  it('writes deletions of a built index as a new Lucene .liv generation per commit, never rewriting a segment', async () => {
    const t = await buildTestIndex({ n: 3000, dims: 32, segmentDocs: 1000, flatThreshold: 500 });
    roots.push(t.root);
    const segmentFiles = () => readdirSync(t.dir).filter((f) => f.startsWith('_') && !f.endsWith('.liv'));
    const before = segmentFiles();
    const writer = await openIndexWriter(t.dir);
    const deleted = Array.from({ length: 100 }, (_, i) => String(i * 29)); // ids of a vector build are row numbers
    expect(writer.deleteDocuments(...deleted)).toBe(100);
    await writer.commit();
    expect(segmentFiles()).toEqual(before);
    const commit = readLatestCommit(t.dir);
    expect(commit.segments.map((s) => [s.delGen, s.delCount])).toEqual([
      [1, 35],
      [1, 34],
      [1, 31],
    ]);
    const liv = openChecksummed(new Uint8Array(readFileSync(join(t.dir, '_0_1.liv'))), '_0_1.liv');
    expect(parseLiveDocs(liv, commit.segments[0]!.id, 1000, 1, 35).isLive(29)).toBe(false);

    // Searching through the graphs, a deleted doc's own vector no longer finds it.
    const idx = await openIndex(t.dir);
    for (const id of deleted.slice(0, 20)) {
      const r = await idx.search(t.base.subarray(Number(id) * 32, (Number(id) + 1) * 32), { k: 10 });
      expect(r.hits.map((h) => h.id)).not.toContain(id);
    }
    expect(await idx.count!()).toBe(2900);
    await idx.close();

    writer.deleteDocuments('1');
    await writer.commit();
    expect(readLatestCommit(t.dir).segments[0]).toMatchObject({ delGen: 2, delCount: 36 });
    expect(existsSync(join(t.dir, '_0_1.liv'))).toBe(false);
    expect(existsSync(join(t.dir, '_0_2.liv'))).toBe(true);
    await writer.close();
  }, 60_000);

  it('drops a segment whose every document is deleted', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    for (let i = 0; i < 10; i++) writer.addDocument(doc(i), `a${i}`);
    await writer.commit();
    for (let i = 0; i < 10; i++) writer.addDocument(doc(i), `b${i}`);
    await writer.commit();
    expect(readLatestCommit(dir).segments).toHaveLength(2);
    writer.deleteDocuments(...Array.from({ length: 10 }, (_, i) => `a${i}`));
    await writer.commit();
    const segments = readLatestCommit(dir).segments;
    expect(segments.map((s) => s.name)).toEqual(['_1']);
    expect(readdirSync(dir).filter((f) => f.startsWith('_0.') || f.startsWith('_0_'))).toEqual([]);
    await writer.close();
  });

  it('fails a bad document alone, naming the field, and keeps the good ones', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: { ...cosine, mapping: Mapping.parse({ properties: { rank: { type: 'integer' } } }) } });
    writer.addDocument(doc(1), 'good');
    writer.addDocument({ vector: Float32Array.from(vector(2)), title: 'typed' }, 'typed'); // a typed array is a vector too
    expect(() => writer.addDocument({ title: 'no vector' }, 'x')).toThrow(DocumentError);
    expect(() => writer.addDocument({ vector: [1, 2, 3] }, 'x')).toThrow(/field \[vector\]: the vector has 3 dims/);
    expect(() => writer.addDocument({ vector: vector(2), rank: 'high' }, 'x')).toThrow(/field \[rank\]/);
    expect(() => writer.addDocument({ vector: new Array(DIMS).fill(0) }, 'x')).toThrow(/all zeros/);
    expect(() => writer.addDocument(doc(3), '')).toThrow(/non-empty/);
    await writer.commit();
    const idx = await openIndex(dir);
    expect(await idx.count!()).toBe(2);
    expect(await idx.get!('x')).toBeNull();
    expect((await idx.get!('typed'))!.source).toEqual({ title: 'typed' });
    await idx.close();
    await writer.close();
  });

  it('keeps the mapping it grows (dynamic fields) in the commit, and keeps field numbers across segments', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    writer.addDocument(doc(1), 'a');
    await writer.commit();
    writer.addDocument(doc(2, { size: 'XL', weight: 2.5 }), 'b');
    await writer.close();
    const mapping = Mapping.parse(JSON.parse(readLatestCommit(dir).userData.get('mapping')!));
    expect(mapping.field('size')?.type).toBe('keyword');
    expect(mapping.field('weight')?.type).toBe('float');
    const idx = await openIndex(dir);
    expect(await idx.count!(new TermQuery('color', 'blue'))).toBe(1);
    expect(await idx.count!(new TermQuery('size', 'XL'))).toBe(1);
    await idx.close();
  });

  it('discards what was not committed on rollback, files included', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    for (let i = 0; i < 20; i++) writer.addDocument(doc(i), `d${i}`);
    await writer.commit();
    const indexFiles = () =>
      readdirSync(dir)
        .filter((f) => !f.startsWith('translog-') && f !== 'write.lock')
        .sort();
    const committed = indexFiles();
    writer.addDocument(doc(99), 'later');
    writer.deleteDocuments('d1');
    await writer.flush();
    expect(indexFiles().length).toBeGreaterThan(committed.length);
    await writer.rollback();
    expect(indexFiles()).toEqual(committed);
    const idx = await openIndex(dir);
    expect(await idx.count!()).toBe(20);
    await idx.close();
    // Nor do the discarded writes come back from the translog.
    const again = await openIndexWriter(dir);
    expect(again.recovered.ops).toBe(0);
    expect(again.hasDocument('later')).toBe(false);
    expect(again.hasDocument('d1')).toBe(true);
    await again.close();
  });

  it('is the only writer of its directory', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    await expect(openIndexWriter(dir)).rejects.toThrow(LockObtainFailedException);
    await writer.close();
    const again = await openIndexWriter(dir);
    await again.close();
    await expect(openIndexWriter(tempDir())).rejects.toThrow(/no prescore index .* pass create/);
  });

  it('says when writes outrun its flushes (what a server answers 429 for), and recovers once they catch up', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine, ramBufferBytes: 4_000 });
    // Flushes start as the buffer fills but run one at a time: adds in one synchronous burst outrun them.
    for (let i = 0; i < 100 && !writer.overloaded; i++) writer.addDocument(doc(i), `d${i}`);
    expect(writer.overloaded).toBe(true);
    expect(writer.indexingBytes).toBeGreaterThan(8_000);
    await writer.flush();
    expect(writer.overloaded).toBe(false);
    expect(writer.indexingBytes).toBe(0);
    await writer.close();
  });

  it('says when merges fall behind the segments (merge debt), and recovers once they catch up', async () => {
    const dir = tempDir();
    /** Lucene's policy whose merges are stalled: segments pile up beyond its budget. */
    class StalledMerges extends TieredMergePolicy {
      stalled = true;
      override findMerge(segments: Parameters<TieredMergePolicy['findMerge']>[0]) {
        return this.stalled ? null : super.findMerge(segments);
      }
    }
    const policy = new StalledMerges({ segmentsPerTier: 2, maxMergeAtOnce: 2 });
    const writer = await openIndexWriter(dir, { create: cosine, mergePolicy: policy });
    // Budget: 2 segments per tier; the bound: 5 merges of 2 behind, so more than 5 segments beyond it.
    for (let i = 0; i < 7; i++) {
      writer.addDocument(doc(i), `d${i}`);
      await writer.commit();
    }
    expect(writer.mergeDebt).toBe(5);
    expect(writer.overloaded).toBe(false);
    writer.addDocument(doc(7), 'd7');
    await writer.commit();
    expect(writer.mergeDebt).toBe(6);
    expect(writer.backpressure).toMatch(/merges are behind: 8 segments, 6 beyond the merge policy's budget \(limit 5\)/);
    // The merges resume: what a server calls when it sheds a write starts the next one at once.
    policy.stalled = false;
    writer.catchUp();
    expect((writer as unknown as { merging: Promise<void> | null }).merging).not.toBeNull(); // a merge runs
    await writer.forceMerge(2); // waits for it, then merges the rest down
    expect(writer.mergeDebt).toBe(0);
    expect(writer.overloaded).toBe(false);
    await writer.close();
  });

  it('counts merge debt as Lucene sizes tiers: segments beyond segmentsPerTier at each size', () => {
    const policy = new TieredMergePolicy({ segmentsPerTier: 10, maxMergeAtOnce: 10 });
    const tiny = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `_${i}`, maxDoc: 100, delCount: 0, bytesPerDoc: 1_000 }));
    expect(policy.segmentsOverBudget(tiny(10))).toBe(0); // one tier of floor-sized segments
    expect(policy.segmentsOverBudget(tiny(25))).toBe(15);
    expect(policy.segmentsOverBudget([])).toBe(0);
  });

  it('flushes on its own when the buffer outgrows its RAM budget', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine, ramBufferBytes: 20_000 });
    for (let i = 0; i < 200; i++) writer.addDocument(doc(i), `d${i}`);
    expect(writer.numBufferedDocs).toBeLessThan(200);
    await writer.commit();
    expect(readLatestCommit(dir).segments.length).toBeGreaterThan(1);
    expect(readLatestCommit(dir).segments.reduce((a, s) => a + s.maxDoc, 0)).toBe(200);
    await writer.close();
  });
});

describe("IndexWriter's versions (Elasticsearch's _seq_no and _version)", () => {
  it("numbers every write, counts each id's versions across commits and reopening, and checks create and if_seq_no", async () => {
    const dir = tempDir();
    let writer = await openIndexWriter(dir, { create: cosine });
    expect(writer.updateDocument('a', doc(1))).toEqual({ result: 'created', seqNo: 0, version: 1 });
    expect(writer.updateDocument('b', doc(2))).toEqual({ result: 'created', seqNo: 1, version: 1 });
    expect(writer.updateDocument('a', doc(3))).toEqual({ result: 'updated', seqNo: 2, version: 2 });
    await writer.commit();
    expect(writer.updateDocument('a', doc(4))).toEqual({ result: 'updated', seqNo: 3, version: 3 }); // found in the committed segment
    await writer.flush();
    expect(() => writer.updateDocument('a', doc(5), { opType: 'create' })).toThrow(VersionConflictError);
    expect(() => writer.updateDocument('a', doc(5), { ifSeqNo: 2, ifPrimaryTerm: 1 })).toThrow(/required seqNo \[2\].*current document has seqNo \[3\]/);
    expect(writer.updateDocument('a', doc(5), { ifSeqNo: 3, ifPrimaryTerm: 1 })).toEqual({ result: 'updated', seqNo: 4, version: 4 });
    expect(writer.deleteDocument('b')).toEqual({ result: 'deleted', seqNo: 5, version: 2 });
    // A deleted id's version is remembered for 60 s (Elasticsearch's delete tombstones, index.gc_deletes).
    expect(writer.deleteDocument('b')).toEqual({ result: 'not_found', seqNo: 6, version: 3 });
    expect(() => writer.deleteDocument('zz', { ifSeqNo: 0 })).toThrow(/no document was found/);
    expect(writer.updateDocument('b', doc(2), { opType: 'create' })).toEqual({ result: 'created', seqNo: 7, version: 4 }); // continues from the tombstone
    expect(writer.deleteDocument('b')).toMatchObject({ result: 'deleted', version: 5 });
    await writer.close();

    writer = await openIndexWriter(dir);
    const a = writer.getDocument('a')!;
    expect({ seqNo: a.seqNo, version: a.version }).toEqual({ seqNo: 4, version: 4 });
    expect(JSON.parse(new TextDecoder().decode(a.source))).toEqual({ title: 'doc 5', color: 'blue', rank: 5 });
    expect(Array.from(a.vector)).toEqual(vector(5).map(Math.fround));
    expect(writer.getDocument('b')).toBeNull();
    expect(writer.updateDocument('c', doc(6))).toMatchObject({ seqNo: 9, version: 1 });
    await writer.close();
  });
});

describe("IndexWriter's merges", () => {
  const small = new TieredMergePolicy({ floorSegmentBytes: 1, segmentsPerTier: 2, maxMergeAtOnce: 3 });

  it('merges small segments after commits, keeping every live doc, its version and source, and deletions made meanwhile', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine, mergePolicy: small });
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 30; i++) writer.addDocument(doc(round * 30 + i), `d${round * 30 + i}`);
      writer.updateDocument('d0', doc(1000 + round)); // d0 moves to a newer segment each round
      writer.deleteDocuments(`d${round * 30 + 7}`);
      await writer.commit();
    }
    await writer.close(); // waits for the running merge
    expect(writer.mergeStats.merges).toBeGreaterThan(0);
    expect(writer.mergeStats.failure).toBeNull();
    const commit = readLatestCommit(dir);
    expect(commit.segments.length).toBeLessThan(6);
    const idx = await openIndex(dir);
    expect(await idx.count!()).toBe(180 - 6);
    expect((await idx.get!('d0'))!.source).toMatchObject({ rank: 1005 });
    expect(await idx.get!('d37')).toBeNull();
    for (const i of [1, 45, 100, 179]) {
      const hits = (await idx.search(Float32Array.from(vector(i)), { k: 5 })).hits;
      expect(hits.find((h) => h.id === `d${i}`)?.score).toBeCloseTo(1, 5); // its own vector, whole after the merges
    }
    await idx.close();
    const again = await openIndexWriter(dir);
    expect(again.getDocument('d0')!.version).toBe(7); // created, then 6 updates: versions survive the merges
    await again.close();
  });

  it('forceMerge(1) rewrites the index as one segment without its deleted docs', async () => {
    const t = await buildTestIndex({ n: 2000, dims: 32, segmentDocs: 500, flatThreshold: 300 });
    roots.push(t.root);
    const writer = await openIndexWriter(t.dir, { mergePolicy: null });
    const deleted = Array.from({ length: 400 }, (_, i) => String(i * 5));
    writer.deleteDocuments(...deleted);
    await writer.forceMerge(1);
    expect(writer.mergeStats).toMatchObject({ docsFromGraph: 0, docsJoined: 1600 }); // every input has deletes: none taken over, all joined
    const segments = readLatestCommit(t.dir).segments;
    expect(segments).toHaveLength(1);
    expect(segments[0]).toMatchObject({ maxDoc: 1600, delCount: 0, hasGraph: true });
    await writer.close();
    const idx = await openIndex(t.dir);
    expect(await idx.count!()).toBe(1600);
    let found = 0;
    for (let i = 1; i < 2000; i += 37) {
      if (i % 5 === 0) continue;
      const r = await idx.search(t.base.subarray(i * 32, (i + 1) * 32), { k: 1 });
      if (r.hits[0]!.id === String(i)) found++;
    }
    expect(found).toBeGreaterThanOrEqual(40); // of 43 self-queries through the merged graph
    await idx.close();
  }, 60_000);

  it('forceMerge merges only committed segments: one flushed just after its commit is merged on the next turn', async () => {
    const t = await buildTestIndex({ n: 600, dims: 16, segmentDocs: 200, flatThreshold: 1000 });
    roots.push(t.root);
    const writer = await openIndexWriter(t.dir, { mergePolicy: null });
    // A concurrent writer's flush lands between forceMerge's commit and its choice of segments.
    const commit = writer.commit.bind(writer);
    let landed = false;
    writer.commit = async (userData) => {
      const generation = await commit(userData);
      if (!landed) {
        landed = true;
        writer.updateDocument('late', { vector: Array.from(t.base.subarray(0, 16)) });
        await writer.flush(); // the smallest segment, not in any commit yet
      }
      return generation;
    };
    await writer.forceMerge(1);
    expect(readLatestCommit(t.dir).segments).toHaveLength(1);
    expect(writer.mergeStats).toMatchObject({ merges: 2, docs: 600 + 601, failure: null });
    await writer.close();
  });

  it('closing the last open index stops only the search executor: a flush building on the background pool finishes', async () => {
    const t = await buildTestIndex({ n: 300, dims: 16, segmentDocs: 300, flatThreshold: 100 });
    roots.push(t.root);
    const index = await openIndex(t.dir);
    const writer = await openIndexWriter(t.dir, { mergePolicy: null });
    for (let i = 0; i < 200; i++) writer.addDocument({ vector: Array.from(t.base.subarray(i * 16, (i + 1) * 16)) }, `new${i}`);
    const flushing = writer.flush(); // its codes and graph are built on the background pool
    await index.close();
    await flushing;
    await writer.commit();
    expect(readLatestCommit(t.dir).segments.map((s) => [s.maxDoc, s.hasGraph])).toEqual([
      [300, true],
      [200, true],
    ]);
    await writer.close();
  });

  it('a forceMerge whose merge fails throws to its caller, leaves every doc in place, and leaves no rejection unhandled', async () => {
    const t = await buildTestIndex({ n: 600, dims: 16, segmentDocs: 200, flatThreshold: 1000 });
    roots.push(t.root);
    const writer = await IndexWriter.open(
      t.dir,
      { buildSegment: segmentBuilder(Executor.get()), mergeSegments: () => Promise.reject(new Error('no space left on device')) },
      { mergePolicy: null },
    );
    await expect(writer.forceMerge(1)).rejects.toThrow(/no space left/);
    expect(readLatestCommit(t.dir).segments).toHaveLength(3);
    expect(writer.numDocs).toBe(600);
    await writer.close(); // an unhandled rejection would fail the run here or after
  });

  it("a merge starts its graph from its largest input without deletions (#12050): that input's docs come first, the others go in through their graphs' join sets (#14331)", async () => {
    const t = await buildTestIndex({ n: 2000, dims: 32, segmentDocs: 800, flatThreshold: 300 }); // segments of 800, 800 and 400 docs
    roots.push(t.root);
    const writer = await openIndexWriter(t.dir, { mergePolicy: null });
    writer.deleteDocuments(...Array.from({ length: 100 }, (_, i) => String(1000 + i * 3))); // from the second segment only
    await writer.forceMerge(1);
    // The other two inputs' docs (the second's live ones) went in through their graphs' join sets.
    expect(writer.mergeStats).toMatchObject({ merges: 1, docs: 1900, docsFromGraph: 800, docsJoined: 700 + 400, failure: null });
    await writer.close();
    const reader = DirectoryReader.open(t.dir);
    const merged = reader.leaves[0]!.reader;
    expect(Array.from({ length: 800 }, (_, d) => merged.id(d))).toEqual(Array.from({ length: 800 }, (_, i) => String(i))); // the first segment's, in its order
    reader.close();
    const idx = await openIndex(t.dir);
    let found = 0;
    for (let i = 1; i < 2000; i += 37) {
      const r = await idx.search(t.base.subarray(i * 32, (i + 1) * 32), { k: 1 });
      if (r.hits[0]!.id === String(i)) found++;
    }
    expect(found).toBeGreaterThanOrEqual(50); // of 55 self-queries (some deleted), through the taken-over and the inserted nodes
    await idx.close();
  }, 60_000);
});

describe('DirectoryReader.openIfChanged', () => {
  it('returns null while the reader is current, and a reader of the new commit after one', async () => {
    const dir = tempDir();
    const writer = await openIndexWriter(dir, { create: cosine });
    writer.addDocument(doc(1), 'a');
    await writer.commit();
    const reader = DirectoryReader.open(dir);
    expect(DirectoryReader.openIfChanged(reader)).toBeNull();
    writer.deleteDocuments('a');
    writer.addDocument(doc(2), 'b');
    await writer.commit();
    const next = DirectoryReader.openIfChanged(reader)!;
    expect(next.commit.generation).toBeGreaterThan(reader.commit.generation);
    expect(reader.leaves.map((l) => l.reader.id(0))).toEqual(['a']); // the old reader still reads its commit
    expect(next.leaves.map((l) => l.reader.id(0))).toEqual(['b']);
    reader.close();
    next.close();
    await writer.close();
  });
});
