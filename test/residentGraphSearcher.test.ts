import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Executor } from '../src/executor/Executor.js';
import { GEN_SIMILARITIES } from '../src/gen/DatasetSpec.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { HnswGraphSearcher, type KnnSearchResult } from '../segments/hnsw/HnswGraphSearcher.js';
import { HnswVectorsReader } from '../segments/hnsw/HnswVectorsReader.js';
import type { OnHeapHnswGraph } from '../segments/hnsw/OnHeapHnswGraph.js';
import { ResidentGraphSearcher } from '../segments/hnsw/ResidentGraphSearcher.js';
import { Kernels } from '../segments/kernels/Kernels.js';
import { BinaryQuantizedScorer, type ResidentRecords } from '../segments/quantized/BinaryQuantizedScorer.js';
import { QueryQuantizer } from '../segments/quantized/QueryQuantizer.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { mulberry32 } from '../src/gen/Rng.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { EncodedQuantizedScorer, EncodedVectorScorer } from '../segments/quantized/EncodedVectorScorer.js';
import { encodingForBits } from '../segments/quantized/ScalarEncodings.js';
import { RandomizedHadamard } from '../segments/quantization/RandomizedHadamard.js';

/** One graph segment opened twice over the same resident records: all-JS and wasm level 0. */
interface Fixture {
  readonly index: TestIndex;
  readonly js: HnswGraphSearcher;
  /** The JS searcher's graph. */
  readonly graph: OnHeapHnswGraph;
  /** A fresh copy of the graph (a ResidentGraphSearcher takes its graph over). */
  readonly openGraph: () => OnHeapHnswGraph;
  readonly scorer: BinaryQuantizedScorer;
  readonly setQuery: (q: Float32Array) => void;
  readonly kernels: Kernels;
  readonly records: ResidentRecords;
}

const fixtures = new Map<string, Fixture>();

/** Opens the index's single segment over a fresh kernels instance (records loaded, nothing else). */
async function openFixture(index: TestIndex): Promise<Fixture> {
  const handle = DirectoryReader.open(index.dir).leaves[0].reader.handle;
  const q = handle.quantized!;
  const g = handle.graph!;
  const openGraph = (): OnHeapHnswGraph => HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix).graph(g.fieldNumber)!;
  const graph = openGraph();
  const kernels = await Kernels.load();
  const recordsPtr = kernels.alloc(q.count * q.recordBytes);
  kernels.u8().set(readFileSync(q.path).subarray(q.offset, q.offset + q.count * q.recordBytes), recordsPtr);
  const planesPtr = kernels.alloc(4 * q.codeBytes);
  const records = { kernels, recordsPtr, count: q.count, codeBytes: q.codeBytes, recordBytes: q.recordBytes };
  const sim = VectorSimilarityFunction.fromOrdinal(handle.similarity);
  const quantizer = new QueryQuantizer(sim, handle.dims);
  const scorer = new BinaryQuantizedScorer(records, {
    planesPtr,
    lower: 0,
    upper: 0,
    additionalCorrection: 0,
    componentSum: 0,
    dims: handle.dims,
    similarity: handle.similarity,
    centroidDP: q.centroidDP,
  });
  const setQuery = (v: Float32Array): void => {
    const qq = quantizer.quantize(v, q.centroid, kernels.u8().subarray(planesPtr, planesPtr + 4 * q.codeBytes));
    scorer.query = { ...scorer.query, planesPtr, lower: qq.lower, upper: qq.upper, additionalCorrection: qq.additionalCorrection, componentSum: qq.componentSum };
  };
  return { index, js: new HnswGraphSearcher(q.count), graph, openGraph, scorer, setQuery, kernels, records };
}

beforeAll(async () => {
  for (const similarity of GEN_SIMILARITIES) {
    const index = await buildTestIndex({ n: 2500, dims: 72, segmentDocs: 2500, flatThreshold: 0, similarity, queries: 30 });
    fixtures.set(similarity, await openFixture(index));
  }
}, 120_000);

afterAll(async () => {
  for (const f of fixtures.values()) f.index.cleanup();
  await Executor.shutdown();
});

/** Runs `use` with a ResidentGraphSearcher over a fresh copy of the fixture's graph, released afterwards. */
function withResident(f: Fixture, use: (resident: ResidentGraphSearcher) => void, live: Uint32Array | null = null): void {
  const resident = ResidentGraphSearcher.load(f.kernels, f.records, f.openGraph(), live);
  try {
    use(resident);
  } finally {
    resident.release();
  }
}

function queries(f: Fixture): Float32Array[] {
  const d = f.index.dims;
  return Array.from({ length: f.index.queries.length / d }, (_, i) => f.index.queries.subarray(i * d, (i + 1) * d));
}

function expectSame(actual: KnnSearchResult, expected: KnnSearchResult): void {
  expect([...actual.ords]).toEqual([...expected.ords]);
  expect([...actual.scores]).toEqual([...expected.scores]);
  expect(actual.visited).toBe(expected.visited);
  expect(actual.earlyTerminated).toBe(expected.earlyTerminated);
}

describe('ResidentGraphSearcher (level 0 in wasm) returns exactly what HnswGraphSearcher returns', () => {
  for (const similarity of GEN_SIMILARITIES) {
    it(`${similarity}: same ords, scores and visited count for k 1..100 and ef 1..150`, () => {
      const f = fixtures.get(similarity)!;
      withResident(f, (resident) => {
        for (const [i, v] of queries(f).entries()) {
          f.setQuery(v);
          for (const [k, ef] of [
            [10, 100],
            [1, 1],
            [50, 20],
            [100, 150],
          ]) {
            const expected = f.js.search(f.scorer, f.graph, k, ef);
            expect(expected.ords.length, `query ${i}`).toBe(k);
            expectSame(resident.search(f.scorer, k, ef), expected);
          }
        }
      });
    });
  }

  it('keeps only live ords (a bitset), as acceptOrds does, while still traversing deleted nodes', () => {
    const f = fixtures.get('cosine')!;
    const rng = mulberry32(3);
    const live = new Uint32Array(Math.ceil(f.records.count / 32));
    for (let o = 0; o < f.records.count; o++) if (rng() < 0.6) live[o >>> 5] |= 1 << (o & 31);
    withResident(
      f,
      (resident) => {
        for (const v of queries(f)) {
          f.setQuery(v);
          const expected = f.js.search(f.scorer, f.graph, 20, 80, live);
          for (const o of expected.ords) expect((live[o >>> 5] >>> (o & 31)) & 1).toBe(1);
          expectSame(resident.search(f.scorer, 20, 80), expected);
        }
      },
      live,
    );
  });

  describe('with a filter (accepted ords), plain and as a filtered traversal with seeds', () => {
    /** A random filter of about `fraction` of the ords, and `n` of its ords as seeds. */
    function filterOf(count: number, fraction: number, seed: number, n: number): { bits: Uint32Array; accepted: number[]; seeds: Int32Array } {
      const rng = mulberry32(seed);
      const bits = new Uint32Array(Math.ceil(count / 32));
      const accepted: number[] = [];
      for (let o = 0; o < count; o++) {
        if (rng() < fraction) {
          bits[o >>> 5] |= 1 << (o & 31);
          accepted.push(o);
        }
      }
      const seeds = Int32Array.from({ length: Math.min(n, accepted.length) }, (_, i) => accepted[Math.floor((i * accepted.length) / Math.max(1, n))]!);
      return { bits, accepted, seeds };
    }

    for (const fraction of [0.5, 0.1, 0.02]) {
      it(`${fraction * 100}% accepted: the same ords, scores and visits as the JS searcher, every hit accepted`, () => {
        const f = fixtures.get('cosine')!;
        const { bits, seeds } = filterOf(f.records.count, fraction, 11 + fraction * 100, 8);
        withResident(f, (resident) => {
          for (const v of queries(f)) {
            f.setQuery(v);
            for (const twoHop of [false, true]) {
              for (const withSeeds of [false, true]) {
                const traversal = { twoHop, seeds: withSeeds ? seeds : null };
                const expected = f.js.search(f.scorer, f.graph, 10, 40, bits, Infinity, null, traversal);
                for (const o of expected.ords) expect((bits[o >>> 5] >>> (o & 31)) & 1).toBe(1);
                expectSame(resident.search(f.scorer, 10, 40, Infinity, { bits, ...traversal }), expected);
                // And the JS search over the resident graph (searchJs) agrees with both.
                expectSame(resident.searchJs(f.scorer, 10, 40, null, Infinity, { bits, ...traversal }), expected);
              }
            }
          }
        });
      });
    }

    it('scores only accepted ords in a filtered traversal (fewer visits than the plain filtered search) and stops at the visit limit alike', () => {
      const f = fixtures.get('euclidean')!;
      const { bits, seeds } = filterOf(f.records.count, 0.05, 5, 4);
      withResident(f, (resident) => {
        let plain = 0;
        let twoHop = 0;
        for (const v of queries(f)) {
          f.setQuery(v);
          plain += resident.search(f.scorer, 10, 40, Infinity, { bits, twoHop: false, seeds: null }).visited;
          twoHop += resident.search(f.scorer, 10, 40, Infinity, { bits, twoHop: true, seeds }).visited;
          for (const limit of [1, 3, 20, 60]) {
            const expected = f.js.search(f.scorer, f.graph, 10, 40, bits, limit, null, { twoHop: true, seeds });
            expectSame(resident.search(f.scorer, 10, 40, limit, { bits, twoHop: true, seeds }), expected);
          }
        }
        expect(twoHop).toBeLessThan(plain);
      });
    });

    it("measures how much of the query's neighbourhood a filter accepts: more for its nearest docs, less for its farthest, ~s for a uniform one", () => {
      // Random vectors (no clusters) and 2,500 nodes, where two hops reach ~40% of the graph: the
      // contrast is weak here (on clustered 1M x 1024 data: 0.99 for the nearest clusters, 0 for
      // the farthest; bench:filter's nearby column), but its direction must hold.
      const f = fixtures.get('dot_product')!;
      withResident(f, (resident) => {
        f.setQuery(queries(f)[0]!);
        const all = f.js.search(f.scorer, f.graph, f.records.count, f.records.count);
        const s = 0.05;
        const n = Math.floor(f.records.count * s);
        const bitsOf = (ords: ArrayLike<number>) => {
          const bits = new Uint32Array(Math.ceil(f.records.count / 32));
          for (let i = 0; i < ords.length; i++) bits[ords[i]! >>> 5] |= 1 << (ords[i]! & 31);
          return bits;
        };
        const nearest = resident.nearbyAcceptance(f.scorer, bitsOf(all.ords.subarray(0, n)));
        const farthest = resident.nearbyAcceptance(f.scorer, bitsOf(all.ords.subarray(f.records.count - n)));
        expect(nearest).toBeGreaterThan(1.5 * s);
        expect(farthest).toBeLessThan(1.5 * s);
        expect(nearest).toBeGreaterThan(1.5 * farthest);
        expect(Math.abs(resident.nearbyAcceptance(f.scorer, filterOf(f.records.count, 0.3, 17, 0).bits) - 0.3)).toBeLessThan(0.1);
        expect(resident.nearbyAcceptance(f.scorer, new Uint32Array(Math.ceil(f.records.count / 32)))).toBe(0);
      });
    });

    it('finds the accepted docs through the seeds when the entry point is far from them', () => {
      // Accept only the 1% of ords that score worst for the query: the descent lands among the
      // best; with seeds among the accepted ones the traversal still returns accepted hits.
      const f = fixtures.get('dot_product')!;
      withResident(f, (resident) => {
        const v = queries(f)[0]!;
        f.setQuery(v);
        const all = f.js.search(f.scorer, f.graph, f.records.count, f.records.count);
        const worst = [...all.ords].slice(-Math.ceil(f.records.count / 100));
        const bits = new Uint32Array(Math.ceil(f.records.count / 32));
        for (const o of worst) bits[o >>> 5] |= 1 << (o & 31);
        const seeds = Int32Array.from(worst.slice(0, 4));
        const r = resident.search(f.scorer, 5, 20, Infinity, { bits, twoHop: true, seeds });
        expect(r.ords.length).toBe(5);
        for (const o of r.ords) expect(worst).toContain(o);
      });
    });
  });

  it('stops at the visit limit exactly where the JS searcher stops, and reports early termination', () => {
    const f = fixtures.get('euclidean')!;
    withResident(f, (resident) => {
      f.setQuery(queries(f)[0]);
      const unlimited = f.js.search(f.scorer, f.graph, 10, 100).visited;
      for (const limit of [1, 5, 37, Math.floor(unlimited / 2), unlimited, unlimited + 1, 10_000]) {
        const expected = f.js.search(f.scorer, f.graph, 10, 100, null, limit);
        expectSame(resident.search(f.scorer, 10, 100, limit), expected);
        expect(expected.earlyTerminated).toBe(limit <= unlimited);
      }
    });
  });

  it('returns every node, best first, when the queue covers the whole graph', () => {
    const f = fixtures.get('dot_product')!;
    withResident(f, (resident) => {
      f.setQuery(queries(f)[1]);
      const n = f.graph.size();
      const r = resident.search(f.scorer, n + 10, n + 10);
      expectSame(r, f.js.search(f.scorer, f.graph, n + 10, n + 10));
      expect(new Set(r.ords).size).toBe(n);
      for (let i = 1; i < r.ords.length; i++) {
        expect(r.scores[i] < r.scores[i - 1] || (r.scores[i] === r.scores[i - 1] && r.ords[i] > r.ords[i - 1])).toBe(true);
      }
    });
  });

  it('takes the graph over (its heap level 0 is released) and still answers the JS search the same way', () => {
    const f = fixtures.get('max_inner_product')!;
    const graph = f.openGraph();
    const resident = ResidentGraphSearcher.load(f.kernels, f.records, graph, null);
    try {
      expect(graph.store(0).adj.length).toBe(0);
      for (const v of queries(f).slice(0, 10)) {
        f.setQuery(v);
        const expected = f.js.search(f.scorer, f.graph, 10, 60);
        expectSame(resident.searchJs(f.scorer, 10, 60), expected);
        expect(graph.store(0).adj.length).toBe(0);
        expectSame(resident.search(f.scorer, 10, 60), expected);
      }
    } finally {
      resident.release();
    }
  });

  it('searchJs as the very first search of a fresh kernels instance: scratch is reserved before the level-0 view is taken', async () => {
    // Scoring's first call allocates scratch; were that to grow the memory under the JS
    // searcher's view of level 0, every list would read as empty.
    const f = await openFixture(fixtures.get('cosine')!.index);
    withResident(f, (resident) => {
      f.setQuery(queries(f)[2]);
      const got = resident.searchJs(f.scorer, 10, 100);
      expectSame(got, f.js.search(f.scorer, f.graph, 10, 100));
      expect(got.ords.length).toBe(10);
    });
  });

  it('rejects a query that does not fit the records (similarity ordinal, dims)', () => {
    const f = fixtures.get('cosine')!;
    const resident = ResidentGraphSearcher.load(f.kernels, f.records, f.openGraph(), null);
    const query = f.scorer.query;
    try {
      f.scorer.query = { ...query, similarity: 7 };
      expect(() => resident.search(f.scorer, 10, 100)).toThrow(/similarity ordinal 7/);
      f.scorer.query = { ...query, dims: 128 };
      expect(() => resident.searchJs(f.scorer, 10, 100)).toThrow(/128 dims/);
    } finally {
      f.scorer.query = query;
      resident.release();
    }
  });

  it('takes visit limits as Lucene does, as a count: a fractional or negative limit is rejected', () => {
    const f = fixtures.get('euclidean')!;
    withResident(f, (resident) => {
      f.setQuery(queries(f)[3]);
      for (const limit of [3.5, -1, Number.NaN]) expect(() => resident.search(f.scorer, 10, 100, limit)).toThrow(/visit limit/);
      expectSame(resident.search(f.scorer, 10, 100, 0), f.js.search(f.scorer, f.graph, 10, 100, null, 0));
    });
  });

  it('frees its kernel memory on release and refuses use afterwards', () => {
    const f = fixtures.get('cosine')!;
    const before = f.kernels.heapStats();
    const resident = ResidentGraphSearcher.load(f.kernels, f.records, f.openGraph(), null);
    f.setQuery(queries(f)[0]);
    resident.search(f.scorer, 10, 100);
    resident.release();
    expect(f.kernels.heapStats()).toEqual(before);
    expect(() => resident.search(f.scorer, 10, 100)).toThrow(/after release/);
  });
});

describe('ResidentGraphSearcher on multi-bit codes (level 0 in wasm) returns what the JS searcher returns with the JS estimator', () => {
  /** One graph segment of `bits`-bit codes; the JS side scores the heap records in plain JS (EncodedVectorScorer). */
  async function multiBitFixture(bits: 2 | 4 | 7 | 8, similarity: (typeof GEN_SIMILARITIES)[number]) {
    const index = await buildTestIndex({
      n: 900,
      dims: 52,
      segmentDocs: 900,
      flatThreshold: 0,
      similarity,
      queries: 12,
      extra: { quantization: { bits, rotation: bits !== 4 } },
    });
    const handle = DirectoryReader.open(index.dir).leaves[0].reader.handle;
    const q = handle.quantized!;
    expect(q.bits).toBe(bits);
    const g = handle.graph!;
    const openGraph = (): OnHeapHnswGraph => HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix).graph(g.fieldNumber)!;
    const kernels = await Kernels.load();
    const heapRecords = readFileSync(q.path).subarray(q.offset, q.offset + q.count * q.recordBytes);
    const recordsPtr = kernels.alloc(heapRecords.length);
    kernels.u8().set(heapRecords, recordsPtr);
    const enc = encodingForBits(bits);
    const codePtr = kernels.alloc(enc.queryCodeBytes(handle.dims));
    const records = { kernels, recordsPtr, count: q.count, codeBytes: q.codeBytes, recordBytes: q.recordBytes };
    const quantizer = new QueryQuantizer(VectorSimilarityFunction.fromOrdinal(handle.similarity), handle.dims);
    const rotation = q.rotationSeed === null ? null : new RandomizedHadamard(handle.dims, q.rotationSeed);
    const scorers = (v: Float32Array) => {
      const code = new Uint8Array(enc.queryCodeBytes(handle.dims));
      const qq = quantizer.quantize(v, q.centroid, code, enc, rotation);
      kernels.u8().set(code, codePtr);
      const corr = {
        lower: qq.lower,
        upper: qq.upper,
        additionalCorrection: qq.additionalCorrection,
        componentSum: qq.componentSum,
        dims: handle.dims,
        similarity: handle.similarity,
        centroidDP: q.centroidDP,
      };
      return { wasm: new EncodedQuantizedScorer(enc, records, { codePtr, ...corr }), js: new EncodedVectorScorer(enc, handle.dims, heapRecords, { code, ...corr }) };
    };
    return { index, openGraph, kernels, records, scorers };
  }

  // Every encoding, and every similarity across them (each case builds an index).
  const cases = [
    [2, 'cosine'],
    [2, 'euclidean'],
    [2, 'max_inner_product'],
    [4, 'dot_product'],
    [7, 'euclidean'],
    [8, 'cosine'],
  ] as const;
  for (const [bits, similarity] of cases) {
    it(`${bits}-bit, ${similarity}: same ords, scores and visited count, with and without a visit limit`, async () => {
      const f = await multiBitFixture(bits, similarity);
      const graph = f.openGraph();
      const js = new HnswGraphSearcher(graph.size());
      const resident = ResidentGraphSearcher.load(f.kernels, f.records, f.openGraph(), null);
      try {
        const d = f.index.dims;
        for (let i = 0; i < f.index.queries.length / d; i++) {
          const { wasm, js: reference } = f.scorers(f.index.queries.subarray(i * d, (i + 1) * d));
          for (const [k, ef, limit] of [
            [10, 100, Infinity],
            [1, 1, Infinity],
            [50, 20, Infinity],
            [10, 100, 150],
          ]) {
            const expected = js.search(reference, graph, k, ef, null, limit);
            expectSame(resident.search(wasm, k, ef, limit), expected);
            expectSame(resident.searchJs(wasm, k, ef, null, limit), expected);
          }
          wasm.release();
        }
      } finally {
        resident.release();
        f.index.cleanup();
      }
    });
  }

  it('rejects a multi-bit query whose code does not fit the records', async () => {
    const f = await multiBitFixture(4, 'cosine');
    const resident = ResidentGraphSearcher.load(f.kernels, f.records, f.openGraph(), null);
    try {
      const { wasm } = f.scorers(f.index.queries.subarray(0, f.index.dims));
      wasm.query = { ...wasm.query, dims: 2 * f.index.dims };
      expect(() => resident.search(wasm, 10, 100)).toThrow(/does not score these records/);
      wasm.query = { ...wasm.query, dims: f.index.dims, similarity: 9 };
      expect(() => resident.search(wasm, 10, 100)).toThrow(/similarity ordinal 9/);
      wasm.release();
    } finally {
      resident.release();
      f.index.cleanup();
    }
  });
});
