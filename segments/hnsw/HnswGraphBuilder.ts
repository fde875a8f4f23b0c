import type { HnswGraph } from './HnswGraph.js';
import { HnswGraphSearcher } from './HnswGraphSearcher.js';
import { joinSet } from './JoinSet.js';
import { NeighborQueue } from './NeighborQueue.js';
import { OnHeapHnswGraph, type LevelStore } from './OnHeapHnswGraph.js';
import type { RandomVectorScorerSupplier, UpdateableRandomVectorScorer } from './RandomVectorScorer.js';
import { SplittableRandom } from './SplittableRandom.js';

export const DEFAULT_MAX_CONN = 16;
export const DEFAULT_BEAM_WIDTH = 100;
export const DEFAULT_RAND_SEED = 42;
/** Lucene99HnswVectorsFormat's limits. */
export const MAXIMUM_MAX_CONN = 512;
export const MAXIMUM_BEAM_WIDTH = 3200;

export interface HnswGraphBuilderOptions {
  /** Max connections per node on upper levels (2*M on level 0). Default 16. */
  readonly M?: number;
  /** Candidate queue size while inserting. Default 100. */
  readonly beamWidth?: number;
  /** Seed of the level generator (java.util.SplittableRandom semantics). Default 42, as Lucene. */
  readonly seed?: number | bigint;
  /** Called every `progressEvery` inserted nodes and once at the end of build(). */
  readonly onProgress?: (done: number, total: number) => void;
  readonly progressEvery?: number;
  /**
   * Level-0 lists that the diversity rule leaves shorter than this are filled up to it with the
   * best candidates it rejected (the HNSW paper's keepPrunedConnections). Default 0: Lucene's
   * graph, byte for byte.
   */
  readonly minLevel0Connections?: number;
}

/**
 * The diversity checks stop at the first neighbour that is too similar, and most rejections come
 * from the first one or two, so neighbours are bulk-scored in growing chunks (1, 2, 4, ... up to
 * this): nearly Lucene's score count (one at a time) at a logarithmic number of bulkScore calls.
 */
const MAX_DIVERSITY_CHUNK = 16;

/**
 * Lucene's HnswGraphBuilder (util/hnsw/HnswGraphBuilder.java + NeighborArray.java), single-threaded:
 *
 * - node levels: floor(-ln(U) * ml), ml = 1/ln(M), U from SplittableRandom(seed), U != 0;
 * - insertion: greedy (beam 1) search down to the node's level, then a beamWidth search on each of
 *   its levels, top down, each level seeded with the previous level's results;
 * - neighbour selection, bottom level up: candidates best first, a candidate is kept when it is
 *   more similar to the new node than to every neighbour kept so far (strictly: a neighbour
 *   scoring >= the candidate's score rejects it), up to maxConn (2*M on level 0);
 * - reverse links: appended unsorted to each selected neighbour's list; when a list overflows
 *   (maxConn + 1), it is merged into score order and the worst non-diverse neighbour (scanning from
 *   the worst; unchecked entries against all better ones, checked ones against better unchecked
 *   ones) is dropped, or the worst one when all are diverse;
 * - a node on a new top level becomes the entry node after it is connected.
 *
 * Neighbour lists are scored through bulkScore; hot paths allocate nothing.
 */
export class HnswGraphBuilder {
  readonly graph: OnHeapHnswGraph;
  readonly M: number;
  readonly beamWidth: number;
  private readonly ml: number;
  private readonly random: SplittableRandom;
  private readonly nodeScorer: UpdateableRandomVectorScorer;
  private readonly auxScorer: UpdateableRandomVectorScorer;
  private readonly searcher: HnswGraphSearcher;
  private readonly entryResults = new NeighborQueue(1, false);
  private readonly beamResults: NeighborQueue;
  private readonly scratchNodes: Int32Array[] = [];
  private readonly scratchScores: Float32Array[] = [];
  private readonly scratchCount: number[] = [];
  private readonly eps: Int32Array;
  private readonly mask: Uint8Array;
  private readonly selNodes: Int32Array;
  private readonly selScores: Float32Array;
  private readonly tmpOrds: Int32Array;
  private readonly tmpScores: Float32Array;
  private readonly mergeNodes: Int32Array;
  private readonly mergeScores: Float32Array;
  private readonly unsortedPos: Int32Array;
  private readonly unchecked: Int32Array;
  private added = 0;
  private frozen = false;
  private readonly minLevel0Connections: number;

  constructor(
    readonly supplier: RandomVectorScorerSupplier,
    readonly options: HnswGraphBuilderOptions = {},
  ) {
    const M = options.M ?? DEFAULT_MAX_CONN;
    const beamWidth = options.beamWidth ?? DEFAULT_BEAM_WIDTH;
    if (!Number.isInteger(M) || M <= 0 || M > MAXIMUM_MAX_CONN) throw new RangeError(`maxConn must be in [1, ${MAXIMUM_MAX_CONN}], got ${M}`);
    if (!Number.isInteger(beamWidth) || beamWidth <= 0 || beamWidth > MAXIMUM_BEAM_WIDTH) {
      throw new RangeError(`beamWidth must be in [1, ${MAXIMUM_BEAM_WIDTH}], got ${beamWidth}`);
    }
    this.M = M;
    this.beamWidth = beamWidth;
    const minConn = options.minLevel0Connections ?? 0;
    if (!Number.isInteger(minConn) || minConn < 0 || minConn > 2 * M) throw new RangeError(`minLevel0Connections must be in [0, 2 x M = ${2 * M}], got ${minConn}`);
    this.minLevel0Connections = minConn;
    this.ml = M === 1 ? 1 : 1 / Math.log(M);
    this.random = new SplittableRandom(options.seed ?? DEFAULT_RAND_SEED);
    this.graph = new OnHeapHnswGraph({ maxConn: M, expectedSize: supplier.maxOrd });
    this.nodeScorer = supplier.scorer();
    this.auxScorer = supplier.scorer();
    this.searcher = new HnswGraphSearcher(supplier.maxOrd);
    this.beamResults = new NeighborQueue(beamWidth, false);
    const cap = 2 * M + 1;
    this.eps = new Int32Array(Math.max(beamWidth, 1));
    this.mask = new Uint8Array(Math.max(beamWidth, M + 1));
    this.selNodes = new Int32Array(cap);
    this.selScores = new Float32Array(cap);
    this.tmpOrds = new Int32Array(cap + 1);
    this.tmpScores = new Float32Array(cap + 1);
    this.mergeNodes = new Int32Array(cap + 1);
    this.mergeScores = new Float32Array(cap + 1);
    this.unsortedPos = new Int32Array(cap + 1);
    this.unchecked = new Int32Array(cap + 1);
  }

  /**
   * Inserts the remaining ordinals up to maxOrd in order, then freezes and returns the graph
   * (build-only scores are dropped; no more nodes can be added). onProgress gets cumulative counts.
   */
  build(maxOrd = this.supplier.maxOrd): OnHeapHnswGraph {
    const every = Math.max(1, this.options.progressEvery ?? 1000);
    const onProgress = this.options.onProgress;
    for (let node = this.added; node < maxOrd; node++) {
      this.addGraphNode(node);
      if (onProgress && (node + 1) % every === 0) onProgress(node + 1, maxOrd);
    }
    if (onProgress) onProgress(maxOrd, maxOrd);
    this.graph.freeze();
    this.frozen = true;
    return this.graph;
  }

  /**
   * Starts the graph from `source`, a complete graph over ordinals 0 .. source.size() - 1 of this
   * builder's vectors (Lucene's InitializedHnswGraphBuilder, apache/lucene #12050): every node
   * keeps its levels and neighbour lists, scored again with this builder's scorer (the merged
   * segment's codes, not the source's) and laid out best first; the entry node carries over.
   * build() then inserts only the ordinals after them. Must come before any node is added; the
   * source's lists must fit this builder's M (same maxConn). What it saves: a merge whose largest
   * input is taken over searches for its nodes' neighbours only for the other inputs' docs.
   */
  initializeFrom(source: OnHeapHnswGraph): void {
    if (this.added !== 0) throw new Error('initializeFrom must come before any node is added');
    const n = source.size();
    if (n > this.supplier.maxOrd) throw new RangeError(`the source graph has ${n} nodes, more than the ${this.supplier.maxOrd} vectors being indexed`);
    if (source.maxConn !== this.M) throw new RangeError(`the source graph was built with M ${source.maxConn}, this builder with ${this.M}`);
    if (n === 0 || source.entryNode === -1) return;
    const graph = this.graph;
    const nodesByLevel = Array.from({ length: source.numLevels }, (_, level) => source.getNodesOnLevel(level));
    // Levels top down, so each node is placed on every level it holds before its lists are filled.
    for (let level = source.numLevels - 1; level >= 0; level--) {
      const nodes = nodesByLevel[level];
      for (let i = 0; i < nodes.length; i++) graph.addNode(level, nodes[i]);
    }
    graph.setEntryNode(source.entryNode, source.numLevels - 1);
    const scorer = this.nodeScorer;
    const ords = this.tmpOrds;
    const scores = this.tmpScores;
    for (let level = 0; level < source.numLevels; level++) {
      const from = source.store(level);
      const to = graph.store(level);
      const nodes = nodesByLevel[level];
      for (let i = 0; i < nodes.length; i++) {
        const node = nodes[i];
        const fromBase = source.slot(level, node) * from.stride;
        const cnt = Math.min(from.adj[fromBase], to.capacity - 1);
        for (let j = 0; j < cnt; j++) ords[j] = from.adj[fromBase + 1 + j];
        scorer.setScoringOrdinal(node);
        scorer.bulkScore(ords, cnt, scores);
        this.storeSorted(to, graph.slot(level, node), cnt);
      }
    }
    this.added = n;
  }

  /** Writes tmpOrds/tmpScores[0, cnt) into a slot's list, best score first, as a checked (sorted) list. */
  private storeSorted(store: LevelStore, slot: number, cnt: number): void {
    const ords = this.tmpOrds;
    const scores = this.tmpScores;
    const base = slot * store.stride;
    const adj = store.adj;
    const sc = store.scores!;
    // insertion sort, descending: lists hold at most 2M + 1 entries
    for (let j = 0; j < cnt; j++) {
      const o = ords[j];
      const s = scores[j];
      let k = j - 1;
      while (k >= 0 && sc[base + 1 + k] < s) {
        adj[base + 2 + k] = adj[base + 1 + k];
        sc[base + 2 + k] = sc[base + 1 + k];
        k--;
      }
      adj[base + 2 + k] = o;
      sc[base + 2 + k] = s;
    }
    adj[base] = cnt;
    store.sorted![slot] = cnt;
  }

  /** Vectors scored by the insertion searches so far (diversity checks not included). */
  get searchVisits(): number {
    return this.searcher.visitedSoFar;
  }

  private randomLevel(): number {
    let u: number;
    do u = this.random.nextDouble();
    while (u === 0);
    return Math.trunc(-Math.log(u) * this.ml);
  }

  /** Inserts one node; nodes must be added in ordinal order 0, 1, 2, ... */
  addGraphNode(node: number): void {
    if (this.frozen) throw new Error('the graph is complete (build() froze it)');
    if (node !== this.added) throw new RangeError(`nodes must be added in order: expected ${this.added}, got ${node}`);
    if (node >= this.supplier.maxOrd) throw new RangeError(`node ${node} >= maxOrd ${this.supplier.maxOrd}`);
    this.added++;
    this.insert(node, this.randomLevel());
  }

  /** Adds `node` on levels nodeLevel .. 0 and links it, searching from the entry node down. */
  private insert(node: number, nodeLevel: number): void {
    const graph = this.graph;
    for (let level = nodeLevel; level >= 0; level--) graph.addNode(level, node);
    if (graph.entryNode === -1) {
      graph.setEntryNode(node, nodeLevel);
      return;
    }
    const scorer = this.nodeScorer;
    scorer.setScoringOrdinal(node);
    const searcher = this.searcher;
    const curMaxLevel = graph.numLevels - 1;
    const eps = this.eps;
    eps[0] = graph.entryNode;
    let numEps = 1;

    const entryResults = this.entryResults;
    for (let level = curMaxLevel; level > nodeLevel; level--) {
      entryResults.reset(1);
      searcher.searchLevel(entryResults, scorer, level, eps, numEps, graph, null);
      eps[0] = entryResults.pop();
      numEps = 1;
    }

    const top = Math.min(nodeLevel, curMaxLevel);
    const beam = this.beamResults;
    for (let level = top; level >= 0; level--) {
      beam.reset(this.beamWidth);
      searcher.searchLevel(beam, scorer, level, eps, numEps, graph, null);
      const nodes = this.scratchNodesFor(level);
      const scores = this.scratchScores[level];
      // pop worst first: scratch holds the candidates in ascending score order
      const cnt = beam.size();
      for (let j = 0; j < cnt; j++) {
        scores[j] = beam.topScore();
        nodes[j] = beam.pop();
      }
      this.scratchCount[level] = cnt;
      for (let j = 0; j < cnt; j++) eps[j] = nodes[j];
      numEps = cnt;
    }

    for (let level = 0; level <= top; level++) {
      this.addDiverseNeighbors(level, node, this.scratchNodes[level], this.scratchScores[level], this.scratchCount[level]);
    }
    if (nodeLevel > curMaxLevel) graph.setEntryNode(node, nodeLevel);
  }

  /**
   * Inserts the live nodes of another merged input's graph, `source`, whose node `o` becomes
   * `ordMap[o]` here (-1: deleted), the live ones being exactly the next ordinals (Lucene's
   * MergingHnswGraphBuilder, apache/lucene #14331). Where a node goes in the merged graph tells
   * where its neighbours go: a join set of the source's level 0 (each live node in it or with
   * JOIN_COVER of its neighbours in it: a greedy set cover, joinSet) is inserted as build() inserts,
   * then every other node on level 0 only searches from its source neighbours already inserted,
   * with a beam of `lightBeamWidth` (default 2 x M: the fewest candidates that can fill its list),
   * instead of descending from the entry node with the full beam.
   * A node drawn for an upper level is inserted in full (its upper lists need the descent). On an
   * empty builder the join set starts the graph (a merge of inputs that all have deleted docs, or a
   * segment rewritten without its deleted docs, goes through its own graph this way).
   */
  addGraph(source: HnswGraph, ordMap: Int32Array, lightBeamWidth = 2 * this.M): void {
    if (this.frozen) throw new Error('the graph is complete (build() froze it)');
    const n = source.size();
    if (ordMap.length !== n) throw new RangeError(`ordMap has ${ordMap.length} entries for a graph of ${n} nodes`);
    if (!(Number.isInteger(lightBeamWidth) && lightBeamWidth >= 1)) throw new RangeError(`lightBeamWidth must be a positive integer, got ${lightBeamWidth}`);
    const first = this.added;
    let live = 0;
    for (let o = 0; o < n; o++) {
      const to = ordMap[o]!;
      if (to === -1) continue;
      if (to !== first + live) throw new RangeError(`the live nodes must map to the next ordinals in order: node ${o} maps to ${to}, expected ${first + live}`);
      live++;
    }
    if (first + live > this.supplier.maxOrd) throw new RangeError(`${live} nodes from ordinal ${first} exceed maxOrd ${this.supplier.maxOrd}`);
    this.added += live;
    const level0 = source.store(0);
    const join = joinSet(level0, n, ordMap);
    const inserted = new Uint8Array(n);
    for (let o = 0; o < n; o++) {
      if (join[o] !== 1) continue;
      this.insert(ordMap[o]!, this.randomLevel());
      inserted[o] = 1;
    }
    const beamWidth = Math.min(lightBeamWidth, this.beamWidth);
    const eps = this.eps;
    for (let o = 0; o < n; o++) {
      if (join[o] !== 0) continue;
      const node = ordMap[o]!;
      const nodeLevel = this.randomLevel();
      let numEps = 0;
      const base = o * level0.stride;
      const count = level0.adj[base]!;
      for (let j = 1; j <= count && numEps < eps.length; j++) {
        const u = level0.adj[base + j]!;
        if (inserted[u] === 1) eps[numEps++] = ordMap[u]!;
      }
      if (nodeLevel > 0 || numEps === 0) this.insert(node, nodeLevel);
      else this.insertOnLevel0(node, numEps, beamWidth);
      inserted[o] = 1;
    }
  }

  /** Adds `node` on level 0 only and links it, searching with `beamWidth` from eps[0 .. numEps). */
  private insertOnLevel0(node: number, numEps: number, beamWidth: number): void {
    this.graph.addNode(0, node);
    const scorer = this.nodeScorer;
    scorer.setScoringOrdinal(node);
    const beam = this.beamResults;
    beam.reset(beamWidth);
    this.searcher.searchLevel(beam, scorer, 0, this.eps, numEps, this.graph, null);
    const nodes = this.scratchNodesFor(0);
    const scores = this.scratchScores[0];
    const cnt = beam.size();
    for (let j = 0; j < cnt; j++) {
      scores[j] = beam.topScore();
      nodes[j] = beam.pop();
    }
    this.addDiverseNeighbors(0, node, nodes, scores, cnt);
  }

  private scratchNodesFor(level: number): Int32Array {
    while (this.scratchNodes.length <= level) {
      const n = Math.max(this.beamWidth, this.M + 1);
      this.scratchNodes.push(new Int32Array(n));
      this.scratchScores.push(new Float32Array(n));
      this.scratchCount.push(0);
    }
    return this.scratchNodes[level];
  }

  private addDiverseNeighbors(level: number, node: number, cNodes: Int32Array, cScores: Float32Array, count: number): void {
    const maxConnOnLevel = level === 0 ? 2 * this.M : this.M;
    const mask = this.mask;
    mask.fill(0, 0, count);
    const selNodes = this.selNodes;
    const selScores = this.selScores;
    let sel = 0;
    for (let i = count - 1; sel < maxConnOnLevel && i >= 0; i--) {
      const c = cNodes[i];
      const cs = cScores[i];
      if (this.isDiverse(c, cs, sel)) {
        mask[i] = 1;
        selNodes[sel] = c;
        selScores[sel] = cs;
        sel++;
      }
    }
    if (level === 0 && sel < this.minLevel0Connections) sel = this.fillPruned(cNodes, cScores, count, sel);
    const store = this.graph.store(level);
    const slot = this.graph.slot(level, node);
    const base = slot * store.stride;
    const adj = store.adj;
    const sc = store.scores!;
    adj[base] = sel;
    for (let j = 0; j < sel; j++) {
      adj[base + 1 + j] = selNodes[j];
      sc[base + 1 + j] = selScores[j];
    }
    store.sorted![slot] = sel;
    // reverse links, in candidate order (worst selected first), as Lucene does
    for (let i = 0; i < count; i++) {
      if (mask[i] === 1) this.addAndEnsureDiversity(level, cNodes[i], node, cScores[i]);
    }
  }

  /**
   * Adds the best rejected candidates to the selection until it holds minLevel0Connections (or
   * the candidates run out), marking them for reverse links like the diverse ones, and lays the
   * selection out again in candidate order: a stored list is sorted by descending score, which
   * the overflow pruning (sortList, findWorstNonDiverse) relies on. Returns its new size.
   */
  private fillPruned(cNodes: Int32Array, cScores: Float32Array, count: number, sel: number): number {
    const mask = this.mask;
    let want = this.minLevel0Connections - sel;
    for (let i = count - 1; want > 0 && i >= 0; i--) {
      if (mask[i] === 1) continue;
      mask[i] = 1;
      want--;
    }
    let n = 0;
    for (let i = count - 1; i >= 0; i--) {
      if (mask[i] !== 1) continue;
      this.selNodes[n] = cNodes[i];
      this.selScores[n] = cScores[i];
      n++;
    }
    return n;
  }

  /** True when no already-selected neighbour scores >= `score` against candidate c. */
  private isDiverse(c: number, score: number, sel: number): boolean {
    if (sel === 0) return true;
    const aux = this.auxScorer;
    aux.setScoringOrdinal(c);
    const tmpOrds = this.tmpOrds;
    const tmpScores = this.tmpScores;
    const selNodes = this.selNodes;
    for (let start = 0, chunk = 1; start < sel; start += chunk, chunk = Math.min(chunk * 2, MAX_DIVERSITY_CHUNK)) {
      const n = Math.min(chunk, sel - start);
      for (let j = 0; j < n; j++) tmpOrds[j] = selNodes[start + j];
      aux.bulkScore(tmpOrds, n, tmpScores);
      for (let j = 0; j < n; j++) if (tmpScores[j] >= score) return false;
    }
    return true;
  }

  /** NeighborArray.addAndEnsureDiversity on `owner`'s list. */
  private addAndEnsureDiversity(level: number, owner: number, newNode: number, newScore: number): void {
    const store = this.graph.store(level);
    const slot = this.graph.slot(level, owner);
    const base = slot * store.stride;
    const adj = store.adj;
    const sc = store.scores!;
    let cnt = adj[base];
    adj[base + 1 + cnt] = newNode;
    sc[base + 1 + cnt] = newScore;
    cnt++;
    adj[base] = cnt;
    if (cnt < store.capacity) return;
    const numUnchecked = this.sortList(store, slot, base, cnt);
    const idx = this.findWorstNonDiverse(adj, sc, base, cnt, numUnchecked);
    // removeIndex: everything is sorted after sortList, so the sorted prefix shrinks with the list
    const p = base + 1;
    for (let j = idx; j < cnt - 1; j++) {
      adj[p + j] = adj[p + j + 1];
      sc[p + j] = sc[p + j + 1];
    }
    adj[base] = cnt - 1;
    store.sorted![slot] = cnt - 1;
  }

  /**
   * NeighborArray.sort: merges the unsorted tail (sorted by descending score, stable) into the
   * sorted prefix, the prefix winning ties. Fills this.unchecked with the merged positions of the
   * formerly unsorted entries (ascending) and returns how many there are.
   */
  private sortList(store: LevelStore, slot: number, base: number, cnt: number): number {
    const adj = store.adj;
    const sc = store.scores!;
    const p = base + 1;
    const sortedLen = store.sorted![slot];
    const nu = cnt - sortedLen;
    const pos = this.unsortedPos;
    for (let i = 0; i < nu; i++) {
      const idx = sortedLen + i;
      const s = sc[p + idx];
      let j = i - 1;
      while (j >= 0 && sc[p + pos[j]] < s) {
        pos[j + 1] = pos[j];
        j--;
      }
      pos[j + 1] = idx;
    }
    const mNodes = this.mergeNodes;
    const mScores = this.mergeScores;
    const unchecked = this.unchecked;
    let a = 0;
    let b = 0;
    let out = 0;
    while (a < sortedLen && b < nu) {
      const ub = pos[b];
      if (sc[p + a] >= sc[p + ub]) {
        mNodes[out] = adj[p + a];
        mScores[out] = sc[p + a];
        a++;
      } else {
        mNodes[out] = adj[p + ub];
        mScores[out] = sc[p + ub];
        unchecked[b] = out;
        b++;
      }
      out++;
    }
    for (; a < sortedLen; a++, out++) {
      mNodes[out] = adj[p + a];
      mScores[out] = sc[p + a];
    }
    for (; b < nu; b++, out++) {
      const ub = pos[b];
      mNodes[out] = adj[p + ub];
      mScores[out] = sc[p + ub];
      unchecked[b] = out;
    }
    for (let i = 0; i < cnt; i++) {
      adj[p + i] = mNodes[i];
      sc[p + i] = mScores[i];
    }
    store.sorted![slot] = cnt;
    return nu;
  }

  /** NeighborArray.findWorstNonDiverse on a sorted list; returns the index to remove. */
  private findWorstNonDiverse(adj: Int32Array, sc: Float32Array, base: number, size: number, numUnchecked: number): number {
    const p = base + 1;
    const unchecked = this.unchecked;
    const aux = this.auxScorer;
    const tmpOrds = this.tmpOrds;
    const tmpScores = this.tmpScores;
    let uc = numUnchecked - 1;
    for (let i = size - 1; i > 0; i--) {
      if (uc < 0) break;
      aux.setScoringOrdinal(adj[p + i]);
      const minAccepted = sc[p + i];
      if (i === unchecked[uc]) {
        // an unchecked candidate must be diverse from every better neighbour (scanned from i - 1 down, as Lucene)
        for (let end = i, chunk = 1; end > 0; end -= chunk, chunk = Math.min(chunk * 2, MAX_DIVERSITY_CHUNK)) {
          const n = Math.min(chunk, end);
          for (let j = 0; j < n; j++) tmpOrds[j] = adj[p + end - 1 - j];
          aux.bulkScore(tmpOrds, n, tmpScores);
          for (let j = 0; j < n; j++) if (tmpScores[j] >= minAccepted) return i;
        }
        uc--;
      } else {
        // a checked one only against the better, newly inserted (unchecked) ones
        const n = uc + 1;
        for (let j = 0; j < n; j++) tmpOrds[j] = adj[p + unchecked[j]];
        aux.bulkScore(tmpOrds, n, tmpScores);
        for (let j = 0; j < n; j++) if (tmpScores[j] >= minAccepted) return i;
      }
    }
    return size - 1;
  }
}
