import { describe, expect, it } from 'vitest';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { HnswGraphBuilder } from '../segments/hnsw/HnswGraphBuilder.js';
import { JOIN_COVER, joinSet } from '../segments/hnsw/JoinSet.js';
import { exactSearch, HnswGraphSearcher, searchGraph } from '../segments/hnsw/HnswGraphSearcher.js';
import { NeighborQueue, nextUpFloat } from '../segments/hnsw/NeighborQueue.js';
import { OnHeapHnswGraph } from '../segments/hnsw/OnHeapHnswGraph.js';
import { Fp32ScorerSupplier, type RandomVectorScorer } from '../segments/hnsw/RandomVectorScorer.js';
import { SplittableRandom } from '../segments/hnsw/SplittableRandom.js';
import { clusteredVectors } from '../src/bench/hnsw.js';
import { mulberry32 } from '../src/gen/Rng.js';

/** Brute force: every ord scored, sorted by score desc then ord asc. */
function bruteForce(scorer: RandomVectorScorer, k: number, accept?: (o: number) => boolean): { ords: number[]; scores: number[] } {
  const all: { o: number; s: number }[] = [];
  for (let o = 0; o < scorer.maxOrd; o++) if (!accept || accept(o)) all.push({ o, s: scorer.score(o) });
  all.sort((a, b) => b.s - a.s || a.o - b.o);
  const top = all.slice(0, k);
  return { ords: top.map((x) => x.o), scores: top.map((x) => x.s) };
}

function checkInvariants(g: OnHeapHnswGraph): void {
  const n = g.size();
  for (let level = 0; level < g.numLevels; level++) {
    const maxConn = level === 0 ? 2 * g.maxConn : g.maxConn;
    const onLevel = new Set(g.getNodesOnLevel(level));
    for (const node of onLevel) {
      const nbrs = Array.from(g.getNeighbors(level, node));
      expect(nbrs.length).toBeLessThanOrEqual(maxConn);
      expect(new Set(nbrs).size, `duplicate neighbours of ${node} on level ${level}`).toBe(nbrs.length);
      expect(nbrs).not.toContain(node);
      for (const x of nbrs) {
        expect(x >= 0 && x < n).toBe(true);
        expect(onLevel.has(x), `neighbour ${x} of ${node} is not on level ${level}`).toBe(true);
      }
    }
  }
  expect(g.nodeLevel(g.entryNode)).toBe(g.numLevels - 1);
}

describe('NeighborQueue', () => {
  it('max-heap pops best first; equal scores pop the smaller node first', () => {
    const q = new NeighborQueue(4, true);
    q.add(7, 0.5);
    q.add(3, 0.5);
    q.add(9, 0.9);
    q.add(1, -0);
    q.add(2, 0);
    expect(q.topScore()).toBeCloseTo(0.9);
    expect([q.pop(), q.pop(), q.pop(), q.pop(), q.pop()]).toEqual([9, 3, 7, 2, 1]); // +0 above -0
  });

  it('min-heap with overflow keeps the best; ties evict the larger node', () => {
    const q = new NeighborQueue(2, false);
    expect(q.insertWithOverflow(5, 0.5)).toBe(true);
    expect(q.insertWithOverflow(8, 0.5)).toBe(true);
    expect(q.insertWithOverflow(6, 0.5)).toBe(true); // beats 8 on the tie
    expect(q.insertWithOverflow(9, 0.5)).toBe(false);
    expect(q.insertWithOverflow(1, 0.1)).toBe(false);
    expect(q.topNode()).toBe(6);
    expect([q.pop(), q.pop()]).toEqual([6, 5]);
  });
});

describe('nextUpFloat (Math.nextUp on float32)', () => {
  it('steps to the adjacent float32 toward +infinity', () => {
    expect(nextUpFloat(1)).toBe(Math.fround(1 + 2 ** -23));
    expect(nextUpFloat(-1)).toBe(-Math.fround(1 - 2 ** -24));
    expect(nextUpFloat(0)).toBe(2 ** -149);
    expect(nextUpFloat(-Infinity)).toBe(-3.4028234663852886e38);
    expect(nextUpFloat(Infinity)).toBe(Infinity);
    expect(Number.isNaN(nextUpFloat(NaN))).toBe(true);
  });
});

describe('SplittableRandom', () => {
  it('is deterministic, and seed 42 puts node 4 alone on level 1 among the first 10 (as Lucene 9.12/10.0 did)', () => {
    const a = new SplittableRandom(42);
    const b = new SplittableRandom(42n);
    for (let i = 0; i < 100; i++) expect(a.nextLong()).toBe(b.nextLong());
    const r = new SplittableRandom(42);
    const ml = 1 / Math.log(16);
    const levels = Array.from({ length: 10 }, () => Math.trunc(-Math.log(r.nextDouble()) * ml));
    expect(levels).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
  });
});

describe('OnHeapHnswGraph', () => {
  it('holds 125k nodes at M=16 in a few tens of MB', () => {
    const g = new OnHeapHnswGraph({ maxConn: 16, expectedSize: 125_000 });
    g.addNode(0, 124_999);
    for (let i = 0; i < 125_000; i += 16) g.addNode(1, i);
    expect(g.size()).toBe(125_000);
    const building = g.ramBytesUsed();
    expect(building).toBeLessThan(45 * 2 ** 20);
    g.freeze();
    expect(g.ramBytesUsed()).toBeLessThan(building / 1.8);
  });
});

describe('HnswGraphBuilder + HnswGraphSearcher', () => {
  const n = 2000;
  const dim = 32;
  const all = clusteredVectors(n + 100, dim, 16, 3, true);
  const data = all.subarray(0, n * dim);
  const queries = all.subarray(n * dim);
  const supplier = new Fp32ScorerSupplier(data, dim, VectorSimilarityFunction.DOT_PRODUCT);
  let progressCalls = 0;
  const graph = new HnswGraphBuilder(supplier, { onProgress: () => progressCalls++, progressEvery: 500 }).build();

  it('builds a valid graph and reports progress', () => {
    expect(graph.size()).toBe(n);
    expect(graph.numLevels).toBeGreaterThan(1);
    checkInvariants(graph);
    expect(progressCalls).toBe(5); // 500, 1000, 1500, 2000 and the final call
    // every node reachable from the entry point on level 0
    const seen = new Uint8Array(n);
    const stack = [graph.entryNode];
    seen[graph.entryNode] = 1;
    let reached = 1;
    while (stack.length) for (const y of graph.getNeighbors(0, stack.pop()!)) if (!seen[y]) (seen[y] = 1), reached++, stack.push(y);
    expect(reached).toBe(n);
  });

  it('is deterministic for a seed', () => {
    const again = new HnswGraphBuilder(supplier).build();
    expect(again.entryNode).toBe(graph.entryNode);
    expect(again.numLevels).toBe(graph.numLevels);
    for (let i = 0; i < n; i += 37) expect(again.getNeighbors(0, i)).toEqual(graph.getNeighbors(0, i));
    const other = new HnswGraphBuilder(supplier, { seed: 7 }).build();
    let same = true;
    for (let l = 1; l < Math.min(other.numLevels, graph.numLevels); l++) same &&= String(other.getNodesOnLevel(l)) === String(graph.getNodesOnLevel(l));
    expect(same && other.numLevels === graph.numLevels).toBe(false);
  });

  it('recall@10 >= 0.95 with ef = 100 against brute force', () => {
    const searcher = new HnswGraphSearcher(n);
    let hits = 0;
    const nq = queries.length / dim;
    for (let q = 0; q < nq; q++) {
      const scorer = supplier.queryScorer(queries.subarray(q * dim, (q + 1) * dim));
      const approx = searcher.search(scorer, graph, 10, 100);
      expect(approx.ords.length).toBe(10);
      expect(approx.visited).toBeGreaterThan(0);
      expect(approx.earlyTerminated).toBe(false);
      const exact = new Set(bruteForce(scorer, 10).ords);
      for (const o of approx.ords) if (exact.has(o)) hits++;
      for (let i = 1; i < 10; i++) {
        const ok = approx.scores[i - 1] > approx.scores[i] || (approx.scores[i - 1] === approx.scores[i] && approx.ords[i - 1] < approx.ords[i]);
        expect(ok).toBe(true);
      }
    }
    expect(hits / (nq * 10)).toBeGreaterThanOrEqual(0.95);
  });

  it('a graph started from a graph of its first 70% of ordinals (a merge taking over its largest input) searches as well and inserts only the rest', () => {
    const first = Math.floor(n * 0.7);
    const prefix = new HnswGraphBuilder(new Fp32ScorerSupplier(data.subarray(0, first * dim), dim, VectorSimilarityFunction.DOT_PRODUCT)).build();
    const builder = new HnswGraphBuilder(supplier);
    builder.initializeFrom(prefix);
    const fresh = new HnswGraphBuilder(supplier);
    const initialized = builder.build();
    const rebuilt = fresh.build();
    checkInvariants(initialized);
    expect(initialized.size()).toBe(n);
    expect(initialized.entryNode).toBe(prefix.entryNode);
    // the taken-over nodes keep their levels
    for (let level = 1; level < prefix.numLevels; level++) for (const node of prefix.getNodesOnLevel(level)) expect(initialized.nodeLevel(node)).toBeGreaterThanOrEqual(level);
    // only the last 30% were searched for (the fresh build also searched for the first 70%)
    expect(builder.searchVisits).toBeLessThan(fresh.searchVisits * 0.6);
    const recall = (g: OnHeapHnswGraph) => {
      const searcher = new HnswGraphSearcher(n);
      let hits = 0;
      const nq = queries.length / dim;
      for (let q = 0; q < nq; q++) {
        const scorer = supplier.queryScorer(queries.subarray(q * dim, (q + 1) * dim));
        const exact = new Set(bruteForce(scorer, 10).ords);
        for (const o of searcher.search(scorer, g, 10, 100).ords) if (exact.has(o)) hits++;
      }
      return hits / (nq * 10);
    };
    expect(recall(initialized)).toBeGreaterThanOrEqual(recall(rebuilt) - 0.01);
  });

  it('a graph merged through join sets (apache/lucene #14331) from three inputs, one with deleted docs, searches as well and searches less while inserting', () => {
    // Inputs: [0, 800) taken over, [800, 1400) joined, [1400, 2000) joined with every 5th doc deleted.
    const cut = (from: number, to: number) => data.subarray(from * dim, to * dim);
    const graphOf = (v: Float32Array) => new HnswGraphBuilder(new Fp32ScorerSupplier(v, dim, VectorSimilarityFunction.DOT_PRODUCT)).build();
    const [a, b, c] = [graphOf(cut(0, 800)), graphOf(cut(800, 1400)), graphOf(cut(1400, 2000))];
    const deleted = (o: number) => o % 5 === 0;
    const liveC = Array.from({ length: 600 }, (_, o) => o).filter((o) => !deleted(o));
    const merged = new Float32Array((1400 + liveC.length) * dim);
    merged.set(cut(0, 1400));
    liveC.forEach((o, i) => {
      merged.set(cut(1400 + o, 1401 + o), (1400 + i) * dim);
    });
    const mergedSupplier = new Fp32ScorerSupplier(merged, dim, VectorSimilarityFunction.DOT_PRODUCT);
    const size = mergedSupplier.maxOrd;

    const joined = new HnswGraphBuilder(mergedSupplier);
    joined.initializeFrom(a);
    joined.addGraph(
      b,
      Int32Array.from({ length: 600 }, (_, o) => 800 + o),
      50,
    );
    let next = 1400;
    joined.addGraph(
      c,
      Int32Array.from({ length: 600 }, (_, o) => (deleted(o) ? -1 : next++)),
      50,
    );
    const largestOnly = new HnswGraphBuilder(mergedSupplier);
    largestOnly.initializeFrom(a);
    const fresh = new HnswGraphBuilder(mergedSupplier);
    const [g, g1, g0] = [joined.build(), largestOnly.build(), fresh.build()];
    checkInvariants(g);
    expect(g.size()).toBe(size);
    expect(joined.searchVisits).toBeLessThan(largestOnly.searchVisits * 0.75);
    const recall = (graph: OnHeapHnswGraph) => {
      const searcher = new HnswGraphSearcher(size);
      let hits = 0;
      const nq = queries.length / dim;
      for (let q = 0; q < nq; q++) {
        const scorer = mergedSupplier.queryScorer(queries.subarray(q * dim, (q + 1) * dim));
        const exact = new Set(bruteForce(scorer, 10).ords);
        for (const o of searcher.search(scorer, graph, 10, 100).ords) if (exact.has(o)) hits++;
      }
      return hits / (nq * 10);
    };
    expect(recall(g)).toBeGreaterThanOrEqual(Math.min(recall(g1), recall(g0)) - 0.01);
    // Every node is reachable from the entry node on level 0.
    const seen = new Uint8Array(size);
    const stack = [g.entryNode];
    seen[g.entryNode] = 1;
    while (stack.length > 0) {
      for (const x of g.getNeighbors(0, stack.pop()!)) {
        if (seen[x] === 1) continue;
        seen[x] = 1;
        stack.push(x);
      }
    }
    expect(seen.reduce((s, x) => s + x, 0)).toBe(size);
  });

  it('a join set covers its graph: every live node outside it has two neighbours in it; deleted nodes are neither', () => {
    const ordMap = Int32Array.from({ length: n }, (_, o) => (o % 7 === 3 ? -1 : o));
    const mark = joinSet(graph.store(0), n, ordMap);
    let inSet = 0;
    for (let o = 0; o < n; o++) {
      if (ordMap[o] === -1) {
        expect(mark[o]).toBe(2);
        continue;
      }
      if (mark[o] === 1) {
        inSet++;
        continue;
      }
      const inJoin = Array.from(graph.getNeighbors(0, o)).filter((u) => mark[u] === 1).length;
      expect(inJoin, `node ${o}`).toBeGreaterThanOrEqual(JOIN_COVER);
    }
    expect(inSet).toBeLessThan(n * 0.6); // far fewer searches than nodes
    expect(inSet).toBeGreaterThan(0);
  });

  it('refuses to start from a graph of another M, or once nodes were added', () => {
    const other = new HnswGraphBuilder(new Fp32ScorerSupplier(data.subarray(0, 100 * dim), dim, VectorSimilarityFunction.DOT_PRODUCT), { M: 8 }).build();
    expect(() => new HnswGraphBuilder(supplier).initializeFrom(other)).toThrow(/built with M 8, this builder with 16/);
    const started = new HnswGraphBuilder(supplier);
    started.addGraphNode(0);
    expect(() => started.initializeFrom(graph)).toThrow(/before any node is added/);
  });

  it('refuses a graph whose live nodes are not the next ordinals, or a light beam that is not a positive integer', () => {
    const small = new HnswGraphBuilder(new Fp32ScorerSupplier(data.subarray(0, 100 * dim), dim, VectorSimilarityFunction.DOT_PRODUCT)).build();
    const identity = Int32Array.from({ length: 100 }, (_, o) => o);
    expect(() =>
      new HnswGraphBuilder(supplier).addGraph(
        small,
        identity.map((o) => o + 1),
      ),
    ).toThrow(/node 0 maps to 1, expected 0/);
    expect(() => new HnswGraphBuilder(supplier).addGraph(small, identity.subarray(1))).toThrow(/99 entries for a graph of 100 nodes/);
    expect(() => new HnswGraphBuilder(supplier).addGraph(small, identity, Number.NaN)).toThrow(/lightBeamWidth must be a positive integer, got NaN/);
  });

  it('honours acceptOrds (predicate, Bits, bitset words) and the visit limit', () => {
    const scorer = supplier.queryScorer(queries.subarray(0, dim));
    const even = (o: number) => o % 2 === 0;
    const words = new Uint32Array(Math.ceil(n / 32));
    for (let o = 0; o < n; o += 2) words[o >>> 5] |= 1 << (o & 31);
    const viaFn = searchGraph(scorer, graph, 10, 100, even);
    const viaBits = searchGraph(scorer, graph, 10, 100, { get: even });
    const viaWords = searchGraph(scorer, graph, 10, 100, words);
    expect(Array.from(viaFn.ords).every(even)).toBe(true);
    expect(viaBits.ords).toEqual(viaFn.ords);
    expect(viaWords.ords).toEqual(viaFn.ords);
    const limited = searchGraph(scorer, graph, 10, 100, null, 25);
    expect(limited.earlyTerminated).toBe(true);
    expect(limited.visited).toBeLessThanOrEqual(25);
  });

  it('returns everything, score desc then ord asc, when k covers the graph', () => {
    const small = clusteredVectors(60, 4, 2, 5, true);
    // duplicate vectors make exact ties
    for (let i = 30; i < 60; i++) small.copyWithin(i * 4, (i - 30) * 4, (i - 29) * 4);
    const sup = new Fp32ScorerSupplier(small, 4, VectorSimilarityFunction.EUCLIDEAN);
    const g = new HnswGraphBuilder(sup, { M: 4, beamWidth: 20 }).build();
    checkInvariants(g);
    const scorer = sup.queryScorer(small.subarray(12, 16));
    const r = searchGraph(scorer, g, 60, 100);
    const bf = bruteForce(scorer, 60);
    expect(Array.from(r.ords)).toEqual(bf.ords);
    expect(r.ords[0]).toBe(3); // itself, and its duplicate 33 right after
    expect(r.ords[1]).toBe(33);
  });
});

describe('degenerate data', () => {
  it('builds and searches a graph of identical vectors (every score ties)', () => {
    const dim = 8;
    const v = new Float32Array(400 * dim).fill(0.25);
    const sup = new Fp32ScorerSupplier(v, dim, VectorSimilarityFunction.EUCLIDEAN);
    const g = new HnswGraphBuilder(sup).build();
    checkInvariants(g);
    const r = searchGraph(sup.queryScorer(new Float32Array(dim).fill(0.25)), g, 10, 50);
    expect(r.ords.length).toBe(10);
    expect(new Set(r.scores).size).toBe(1);
    for (let i = 1; i < 10; i++) expect(r.ords[i]).toBeGreaterThan(r.ords[i - 1]);
  });
});

describe('exactSearch', () => {
  it('equals brute force, lower ordinal first on ties, with and without a filter', () => {
    const rnd = mulberry32(9);
    const dim = 8;
    const n = 700; // several chunks
    const v = new Float32Array(n * dim);
    // values from a tiny set so many scores tie exactly
    for (let i = 0; i < v.length; i++) v[i] = Math.floor(rnd() * 3) - 1;
    const sup = new Fp32ScorerSupplier(v, dim, VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT);
    const q = new Float32Array(dim).fill(1);
    const scorer = sup.queryScorer(q);
    for (const k of [1, 10, 100, 700, 1000]) {
      const bf = bruteForce(scorer, k);
      const ex = exactSearch(scorer, k);
      expect(Array.from(ex.ords)).toEqual(bf.ords);
      expect(Array.from(ex.scores)).toEqual(bf.scores);
      expect(ex.visited).toBe(n);
    }
    const accept = (o: number) => o % 3 !== 1;
    const bf = bruteForce(scorer, 50, accept);
    const ex = exactSearch(scorer, 50, accept);
    expect(Array.from(ex.ords)).toEqual(bf.ords);
    // a scorer without scoreRange goes through bulkScore
    const plain: RandomVectorScorer = { maxOrd: scorer.maxOrd, score: (o) => scorer.score(o), bulkScore: (o, c, out) => scorer.bulkScore(o, c, out) };
    expect(Array.from(exactSearch(plain, 33).ords)).toEqual(bruteForce(scorer, 33).ords);
    const limited = exactSearch(scorer, 10, null, 300);
    expect(limited.visited).toBe(300);
    expect(limited.earlyTerminated).toBe(true);
  });
});

describe("filled level-0 lists (minLevel0Connections: the HNSW paper's keepPrunedConnections)", () => {
  // Tight clusters: the diversity rule keeps only a neighbour or two for many of their members.
  const dim = 8;
  const v = clusteredVectors(2000, dim, 40, 11, true);
  const sup = new Fp32ScorerSupplier(v, dim, VectorSimilarityFunction.DOT_PRODUCT);
  const degrees = (g: OnHeapHnswGraph) => g.getNodesOnLevel(0).map((n) => g.getNeighbors(0, n).length);

  it('gives every node at least that many neighbours on level 0, keeping the graph valid', () => {
    const lucene = new HnswGraphBuilder(sup, { M: 8 }).build();
    const filled = new HnswGraphBuilder(sup, { M: 8, minLevel0Connections: 4 }).build();
    checkInvariants(filled);
    // A node's own selection is stored best first, as the overflow pruning expects (the last
    // node's list is its selection alone: no reverse link is appended after it).
    const scorer = sup.scorer();
    const last = filled.size() - 1;
    scorer.setScoringOrdinal(last);
    const scores = Array.from(filled.getNeighbors(0, last), (m) => scorer.score(m));
    expect(scores.length).toBeGreaterThanOrEqual(4);
    for (let j = 1; j < scores.length; j++) expect(scores[j]!).toBeLessThanOrEqual(scores[j - 1]!);
    // Lucene's rule alone leaves some lists short; filled, none is (the first nodes had fewer candidates).
    expect(
      degrees(lucene)
        .slice(10)
        .some((d) => d < 4),
    ).toBe(true);
    expect(Math.min(...degrees(filled).slice(10))).toBeGreaterThanOrEqual(4);
    // Upper levels (searched and linked before level 0 is) are Lucene's graph exactly.
    expect(filled.numLevels).toBe(lucene.numLevels);
    for (let level = 1; level < lucene.numLevels; level++) {
      const nodes = lucene.getNodesOnLevel(level);
      expect(filled.getNodesOnLevel(level)).toEqual(nodes);
      for (const n of nodes) expect(Array.from(filled.getNeighbors(level, n))).toEqual(Array.from(lucene.getNeighbors(level, n)));
    }
  });

  it("is off by default (Lucene's graph) and at most 2 x M", () => {
    const a = new HnswGraphBuilder(sup, { M: 8 }).build();
    const b = new HnswGraphBuilder(sup, { M: 8, minLevel0Connections: 0 }).build();
    expect(degrees(b)).toEqual(degrees(a));
    expect(() => new HnswGraphBuilder(sup, { M: 8, minLevel0Connections: 17 })).toThrow(/minLevel0Connections must be in \[0, 2 x M = 16\], got 17/);
  });
});
