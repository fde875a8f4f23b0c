import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openLuceneIndex } from '../src/api/openLuceneIndex.js';
import { READ_PATHS } from '../src/api/types.js';
import { Executor } from '../src/executor/Executor.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { LuceneIndexReader } from '../segments/lucene/LuceneIndexReader.js';
import { HnswGraphSearcher } from '../segments/hnsw/HnswGraphSearcher.js';
import { HnswVectorsReader } from '../segments/hnsw/HnswVectorsReader.js';
import { OffHeapHnswGraph } from '../segments/hnsw/OffHeapHnswGraph.js';
import { HeapFloatVectors, MappedFloatVectors, UringFloatVectors, type OffHeapFloatVectors } from '../segments/flat/OffHeapFloatVectors.js';
import { Fp32Similarity } from '../segments/kernels/Fp32Similarity.js';
import { Kernels } from '../segments/kernels/Kernels.js';
import { OffHeapFp32Scorer } from '../segments/flat/OffHeapFp32Scorer.js';
import type { SegmentHandle } from '../segments/index/SegmentHandle.js';
import { readSliceBytes } from '../segments/store/FileSlice.js';
import { IoUring, closeFile, openForRead } from '../segments/store/native/IoUring.js';
import { MappedFile } from '../segments/store/native/MappedFile.js';
import { MappedBytes, PreadBytes, type RandomAccessBytes } from '../segments/store/RandomAccessBytes.js';
import { GraphPrefetcher, newGraphCounters, policyReads, RESIDENT_RUN, ResidencyStreak } from '../query/prefetch/GraphPrefetcher.js';
import { prefetchPolicy, POLICY_STATE_INTS } from '../query/prefetch/PrefetchPolicy.js';
import { fixtureVector, LUCENE_FIXTURE_ZIPS, luceneCosine, unzipLuceneFixture } from './support/luceneFixtures.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

afterAll(async () => {
  await Executor.shutdown();
});

/** Live docs with a vector, per fixture (fixtures README: doc 7 deleted, doc 35 has no vector). */
const LIVE_DOCS: Record<(typeof LUCENE_FIXTURE_ZIPS)[number], number[]> = {
  'index.9.12.3-cfs.zip': Array.from({ length: 36 }, (_, i) => i).filter((d) => d !== 7 && d !== 35),
  'index.10.0.0-cfs.zip': Array.from({ length: 36 }, (_, i) => i).filter((d) => d !== 7 && d !== 35),
  'int7_hnsw.9.12.3.zip': Array.from({ length: 30 }, (_, i) => i),
};

describe("first phase on Lucene's own graph, in place", () => {
  for (const zip of LUCENE_FIXTURE_ZIPS) {
    it(`${zip}: ef >= doc count returns every live doc with its exact Lucene COSINE score, on every read path, and no sidecar`, async () => {
      const dir = unzipLuceneFixture(zip);
      const sidecarDir = join(mkdtempSync(join(tmpdir(), 'prescore-nosidecar-')), 'sidecar');
      const index = await openLuceneIndex(dir, { field: 'knn_field', firstPhase: 'graph', sidecarDir });
      try {
        const live = LIVE_DOCS[zip];
        for (const q of [Float32Array.of(0.2, -0.1, 0.5), Float32Array.of(-0.3, 0.4, -1)]) {
          const results = await Promise.all(READ_PATHS.map((readPath) => index.search(q, { k: live.length, numCandidates: 100, readPath })));
          const hits = results[0].hits;
          expect(hits.map((h) => h.doc).sort((a, b) => a - b)).toEqual(live);
          for (const h of hits) {
            expect(Math.abs(h.score - luceneCosine(q, fixtureVector(h.doc))), `doc ${h.doc}`).toBeLessThanOrEqual(1e-6);
          }
          for (const r of results) {
            expect(r.hits).toEqual(hits);
            expect(r.stats.firstPhaseExact).toBe(true);
            // Rescoring reused the exact scores: no fp32 vector was read a second time.
            expect(r.stats.pagesPrefetched + r.stats.readsBeforePrefetch).toBe(0);
            expect(r.stats.firstPhaseIo!.scored).toBeGreaterThanOrEqual(live.length);
          }
        }
        expect((await index.describe()).firstPhase).toBe('graph');
      } finally {
        await index.close();
        rmSync(dir, { recursive: true, force: true });
      }
      expect(existsSync(sidecarDir)).toBe(false);
    });
  }

  it("the fixtures' segments carry Lucene-written graphs (so the test above searched them, not a scan)", async () => {
    const dir = unzipLuceneFixture('index.10.0.0-cfs.zip');
    try {
      const reader = await LuceneIndexReader.open(dir, { field: 'knn_field', firstPhase: 'graph', buildSegment: () => Promise.reject(new Error('graph mode builds nothing')) });
      expect(reader.sidecarDir).toBeNull();
      const withGraph = reader.leaves.map((l) => l.reader.handle).filter((h) => h.graph !== null);
      expect(withGraph.length).toBe(4);
      for (const h of withGraph) {
        const g = h.graph!;
        const graph = OffHeapHnswGraph.open(HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix), g.fieldNumber, new MappedBytes(g.vex))!;
        expect(graph.size).toBe(h.vectors.size);
        expect(h.quantized).toBeNull();
        graph.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// 12k rather than 50k docs: on this shared 2-core VM a 50k-doc build takes minutes under load,
// and two 6k-doc segments already have three-level graphs whose searches take hundreds of hops.
describe('a generated 12k x 32 index searched on disk', () => {
  let idx: TestIndex;
  let handles: SegmentHandle[];

  beforeAll(async () => {
    // Lucene's own code settings (no rotation, Lucene's centroid): the graph the prefetch cases below were written against.
    // Lucene's graph (build beam 100, lists not filled), not the builder's defaults: the lookahead
    // expectations below need a search that reads ahead in vain at least once, which this data's
    // Lucene graph gives.
    idx = await buildTestIndex({
      n: 12_000,
      dims: 32,
      segmentDocs: 6_000,
      queries: 12,
      seed: '13',
      extra: { beamWidth: 100, minConnections: 0, quantization: { rotation: false, centroid: 'lucene' } },
    });
    handles = DirectoryReader.open(idx.dir).leaves.map((l) => l.reader.handle);
  }, 300_000);

  afterAll(() => idx?.cleanup());

  /** The segment's fp32 vectors on the heap (the reference scorer's input). */
  function heapVectors(h: SegmentHandle): Float32Array {
    const bytes = readSliceBytes({ path: h.vectors.path, name: h.vectors.path, offset: h.vectors.offset, length: h.vectors.size * h.vectors.byteSize });
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  }

  it("prescore's .vex is Lucene's layout: the off-heap graph has the in-memory graph's levels, entry point and lists", () => {
    for (const h of handles) {
      const g = h.graph!;
      const reader = HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix);
      const heap = reader.graph(g.fieldNumber)!;
      const off = OffHeapHnswGraph.open(reader, g.fieldNumber, new PreadBytes(g.vex))!;
      try {
        expect(off.numLevels).toBe(heap.numLevels);
        expect(off.entryNode).toBe(heap.entryNode);
        expect(off.size).toBe(heap.size());
        const dst = new Int32Array(off.maxListLength);
        for (let level = 0; level < heap.numLevels; level++) {
          for (const node of heap.getNodesOnLevel(level).filter((_, i) => level > 0 || i % 97 === 0)) {
            const n = off.neighbors(level, node, dst);
            expect(Array.from(dst.subarray(0, n))).toEqual(Array.from(heap.getNeighbors(level, node)));
          }
        }
      } finally {
        off.close();
      }
    }
  });

  it('returns exactly what HnswGraphSearcher returns on the same graph and fp32 scorer, with prefetch on or off, lookahead, mmap or io_uring', async () => {
    const kernels = await Kernels.load();
    const ring = IoUring.open(256);
    try {
      for (const h of handles) {
        const g = h.graph!;
        const reader = HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix);
        const heapGraph = reader.graph(g.fieldNumber)!;
        const floats = heapVectors(h);
        const reference = new HnswGraphSearcher(heapGraph.size());
        const onHeap = new HeapFloatVectors(floats, h.dims);

        const vecFile = MappedFile.open(h.vectors.path, h.vectors.offset, h.vectors.size * h.vectors.byteSize, { advice: 'random' });
        const fd = openForRead(h.vectors.path);
        const mappedVectors = new MappedFloatVectors(vecFile, h.dims, h.vectors.size);
        const uringVectors = new UringFloatVectors(ring, fd, h.vectors.path, h.vectors.offset, h.dims, h.vectors.size, 64);
        const vexMapped = new MappedBytes(g.vex);
        const vexPread = new PreadBytes(g.vex);
        const graphs: [string, RandomAccessBytes][] = [
          ['mapped .vex', vexMapped],
          ['pread .vex', vexPread],
        ];
        const searcher = new HnswGraphSearcher();
        const stamps = new Int32Array(h.vectors.size);
        let gen = 0;
        const policyState = new Int32Array(POLICY_STATE_INTS);
        try {
          for (let qi = 0; qi < 6; qi++) {
            const q = idx.queries.slice(qi * idx.dims, (qi + 1) * idx.dims);
            const sim = new Fp32Similarity(kernels, h.similarity, q, h.dims);
            for (const [k, ef] of [
              [10, 10],
              [10, 100],
              [50, 64],
            ]) {
              const want = reference.search(new OffHeapFp32Scorer(onHeap, sim), heapGraph, k, ef);
              for (const [what, bytes] of graphs) {
                const graph = OffHeapHnswGraph.open(reader, g.fieldNumber, bytes)!;
                const variants: [string, OffHeapFloatVectors, boolean, number][] = [
                  ['mmap, no prefetch', mappedVectors, false, 0],
                  ['mmap, prefetch', mappedVectors, true, 0],
                  ['mmap, prefetch + lookahead 2', mappedVectors, true, 2],
                  ['io_uring, no prefetch', uringVectors, false, 0],
                  ['io_uring, prefetch + lookahead 2', uringVectors, true, 2],
                ];
                for (const [how, vectors, prefetchOn, lookahead] of variants) {
                  const counters = newGraphCounters();
                  const reads =
                    vectors === mappedVectors
                      ? policyReads(prefetchPolicy('adaptive'), vecFile, h.vectors.byteSize, policyState, 0, counters)
                      : { start: (ord: number) => uringVectors.read(ord), flush: () => uringVectors.submit() };
                  const prefetch = prefetchOn ? new GraphPrefetcher(reads, stamps, ++gen, { initial: 2, cap: 16 }, counters, null) : null;
                  const got = searcher.searchLists(new OffHeapFp32Scorer(vectors, sim), graph, k, { ef, prefetch, lookahead });
                  uringVectors.quiesce();
                  const label = `${what}, ${how}, query ${qi}, k ${k} ef ${ef}`;
                  expect(Array.from(got.ords), label).toEqual(Array.from(want.ords));
                  expect(Array.from(got.scores), label).toEqual(Array.from(want.scores));
                  expect(got.visited, label).toBe(want.visited);
                  if (prefetchOn) {
                    expect(counters.maxDistance, label).toBeGreaterThanOrEqual(2);
                    expect(counters.wasted, label).toBeLessThanOrEqual(counters.readAhead);
                    if (lookahead === 0) expect(counters.readAhead).toBe(0);
                  }
                }
              }
            }
          }
        } finally {
          vexMapped.close();
          vexPread.close();
          uringVectors.close();
          closeFile(fd);
          vecFile.close();
        }
      }
    } finally {
      ring.close();
    }
  });

  /** The first segment's graph over a mapped `.vex`, and a scorer of query 0 over its mapped fp32 vectors. */
  async function firstSegment() {
    const kernels = await Kernels.load();
    const h = handles[0];
    const g = h.graph!;
    const graph = OffHeapHnswGraph.open(HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix), g.fieldNumber, new MappedBytes(g.vex))!;
    const vecFile = MappedFile.open(h.vectors.path, h.vectors.offset, h.vectors.size * h.vectors.byteSize);
    const sim = new Fp32Similarity(kernels, h.similarity, idx.queries.slice(0, idx.dims), h.dims);
    const scorer = new OffHeapFp32Scorer(new MappedFloatVectors(vecFile, h.dims, h.vectors.size), sim);
    const close = () => {
      graph.close();
      vecFile.close();
    };
    return { h, graph, inner: scorer, close };
  }

  it('the distance ramps once and is kept across hops; lookahead reads ahead and counts what it wasted', async () => {
    const { h, graph, inner, close } = await firstSegment();
    try {
      // Every start reports I/O: the distance doubles from 1 to the cap and never restarts per hop.
      const issued: number[] = [];
      const counters = newGraphCounters();
      const reads = { start: (ord: number) => (issued.push(ord), true), flush: () => {} };
      const hook = new GraphPrefetcher(reads, new Int32Array(h.vectors.size), 1, { initial: 1, cap: 32 }, counters, null);
      // Every vector is started before it is scored, except the entry points (scored before any hop).
      const unstarted: number[] = [];
      const startedSet = new Set<number>();
      const scorer = {
        maxOrd: inner.maxOrd,
        score: (ord: number) => {
          for (let i = startedSet.size; i < issued.length; i++) startedSet.add(issued[i]);
          if (!startedSet.has(ord)) unstarted.push(ord);
          return inner.score(ord);
        },
        bulkScore: (ords: Int32Array, n: number, out: Float32Array) => inner.bulkScore(ords, n, out),
      };
      new HnswGraphSearcher().searchLists(scorer, graph, 10, { ef: 100, prefetch: hook, lookahead: 2 });
      expect(counters.maxDistance).toBe(32);
      expect(unstarted[0]).toBe(graph.entryNode);
      expect(unstarted.length).toBeLessThanOrEqual(graph.numLevels > 1 ? 2 : 1);
      expect(new Set(issued).size).toBe(issued.length); // nothing is started twice in a search
      expect(counters.readAhead).toBeGreaterThan(0);
      expect(counters.wasted).toBeGreaterThan(0);
      expect(counters.wasted).toBeLessThan(counters.readAhead);
    } finally {
      close();
    }
  });

  it('a segment found resident stops paying for prefetch (hops scored in bulk, a probe every 32nd hop) and a cold probe resumes prefetching at once', async () => {
    const { h, graph, inner, close } = await firstSegment();
    try {
      const calls = { score: 0, bulk: 0 };
      const scorer = {
        maxOrd: inner.maxOrd,
        score: (ord: number) => (calls.score++, inner.score(ord)),
        bulkScore: (ords: Int32Array, n: number, out: Float32Array) => (calls.bulk++, inner.bulkScore(ords, n, out)),
      };
      const searcher = new HnswGraphSearcher();
      const want = searcher.searchLists(inner, graph, 10, { ef: 100 });
      const stamps = new Int32Array(h.vectors.size);
      let gen = 0;
      const streak = new ResidencyStreak();
      let started = 0;
      let probes = 0;
      let cold = false; // whether the pages are in the page cache, for the probe and for every read
      const reads = { start: () => (started++, cold), flush: () => {} };
      const probe = () => (probes++, !cold);
      const search = () => {
        calls.score = calls.bulk = started = probes = 0;
        const counters = newGraphCounters();
        const hook = new GraphPrefetcher(reads, stamps, ++gen, { initial: 1, cap: 16 }, counters, null, streak, probe);
        const got = searcher.searchLists(scorer, graph, 10, { ef: 100, prefetch: hook, lookahead: 2 });
        expect(Array.from(got.ords)).toEqual(Array.from(want.ords));
        expect(Array.from(got.scores)).toEqual(Array.from(want.scores));
        expect(got.visited).toBe(want.visited);
        return counters;
      };

      // Prefetching, every read resident: the streak grows by the reads started.
      let searches = 0;
      while (streak.run < RESIDENT_RUN) {
        search();
        expect(started).toBeGreaterThan(0);
        expect(probes).toBe(0);
        expect(++searches).toBeLessThan(20);
      }
      // Resident: nothing is started, every hop is one bulkScore, one probe per 32 hops from the first.
      const counters = search();
      expect(started).toBe(0);
      expect(calls.score).toBeLessThanOrEqual(2); // the entry points
      expect(calls.bulk).toBeGreaterThan(32);
      expect(probes).toBe(Math.ceil(calls.bulk / 32));
      expect(counters.pagesResident).toBe(probes);
      expect(counters.syscalls).toBe(probes);
      expect(counters.readAhead).toBe(0);

      // Gone cold: the first probe misses, this search prefetches from that hop on, and so do the next ones.
      cold = true;
      search();
      expect(probes).toBe(1);
      expect(started).toBeGreaterThan(want.visited / 2);
      expect(streak.run).toBe(0);
      search();
      expect(probes).toBe(0);
      expect(started).toBeGreaterThan(want.visited / 2);
    } finally {
      close();
    }
  });

  it('end to end: every read path, prefetch on or off and lookahead give identical hits, exact scores, no codes loaded', async () => {
    const codes = await openIndex(idx.dir);
    const graph = await openIndex(idx.dir, { firstPhase: 'graph' });
    const ahead = await openIndex(idx.dir, { firstPhase: 'graph', lookahead: 2 });
    try {
      for (let qi = 0; qi < idx.queries.length / idx.dims; qi++) {
        const q = idx.queries.slice(qi * idx.dims, (qi + 1) * idx.dims);
        const runs = await Promise.all(READ_PATHS.flatMap((readPath) => [graph, ahead].map((index) => index.search(q, { k: 10, numCandidates: 64, oversample: 2, readPath }))));
        for (const r of runs) {
          expect(r.hits).toEqual(runs[0].hits);
          expect(r.stats.firstPhaseExact).toBe(true);
        }
        for (const hit of runs[0].hits) expect(Math.abs(hit.score - idx.similarity.compareAt(q, 0, idx.base, hit.doc * idx.dims, idx.dims))).toBeLessThanOrEqual(1e-6);
        // A doc's first-phase score is exactly its rescored score in the 1-bit mode (one fp32 similarity).
        const c = await codes.search(q, { k: 10, numCandidates: 64, oversample: 2 });
        expect(c.stats.firstPhaseExact).toBe(false);
        const byDoc = new Map(runs[0].hits.map((h) => [h.doc, h.score]));
        for (const h of c.hits) if (byDoc.has(h.doc)) expect(byDoc.get(h.doc)).toBe(h.score);
      }
    } finally {
      await Promise.all([codes.close(), graph.close(), ahead.close()]);
    }
  });
});
