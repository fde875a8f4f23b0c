import { NeighborQueue, nextUpFloat } from './NeighborQueue.js';
import { FloatHeap, type GlobalSimilarityQueue } from './GlobalSimilarityQueue.js';
import { StoredNeighborLists, type HnswGraph, type NeighborLists } from './HnswGraph.js';
import { NO_PREFETCH, type NeighborPrefetch } from './NeighborPrefetch.js';
import type { RandomVectorScorer } from './RandomVectorScorer.js';

/**
 * Which ordinals may be returned: a predicate, anything with Lucene's Bits.get, or a bitset as
 * 32-bit words (bit i = words[i >>> 5] >>> (i & 31) & 1; the same bits as a FixedBitSet's longs).
 */
export type AcceptOrds = ((ord: number) => boolean) | { get(ord: number): boolean } | Uint32Array;

export interface KnnSearchResult {
  /** Top ordinals, by score descending then ordinal ascending. */
  readonly ords: Int32Array;
  readonly scores: Float32Array;
  /** Vectors scored (Lucene's visitedCount, the per-leaf totalHits). */
  readonly visited: number;
  /** The visit limit stopped the search (Lucene's totalHits relation GREATER_THAN_OR_EQUAL_TO). */
  readonly earlyTerminated: boolean;
}

export function acceptPredicate(accept: AcceptOrds | null | undefined): ((ord: number) => boolean) | null {
  if (accept == null) return null;
  if (typeof accept === 'function') return accept;
  if (accept instanceof Uint32Array) {
    const words = accept;
    return (o) => ((words[o >>> 5] >>> (o & 31)) & 1) === 1;
  }
  const bits = accept;
  return (o) => bits.get(o);
}

/**
 * A filtered search that traverses accepted ords only (the ACORN idea, as Lucene's
 * FilteredHnswGraphSearcher): a hop scores the expanded node's accepted neighbours and, through
 * each rejected neighbour, that neighbour's accepted neighbours (two hops), so the beam moves
 * among accepted docs even where most of a neighbourhood is filtered out, and filtered-out docs
 * are never scored. Seeds (accepted ords, e.g. sampled from the filter) join the descent's entry
 * point, so that a filter whose docs lie away from the query's region is still reached.
 */
export interface FilteredTraversal {
  /** Cross rejected neighbours to their accepted neighbours. */
  readonly twoHop: boolean;
  /** Extra level-0 entry points. */
  readonly seeds: Int32Array | null;
}

export interface GraphSearchOptions {
  /** Level-0 queue size; the effective size is max(k, ef). Default k. */
  readonly ef?: number;
  readonly acceptOrds?: AcceptOrds | null;
  /** Stop once this many vectors were scored (earlyTerminated). Default: no limit. */
  readonly visitedLimit?: number;
  /** The query's cross-segment queue when searching as one of several segments (MultiLeafKnnCollector). */
  readonly global?: GlobalSimilarityQueue | null;
  /**
   * With acceptOrds: traverse the accepted ords only (FilteredTraversal), instead of scoring every
   * visited node and collecting the accepted ones. Default false.
   */
  readonly filteredTraversal?: boolean;
  /** Extra level-0 entry points (accepted ords), besides the one the descent finds. */
  readonly seeds?: Int32Array | null;
  /** Told what will be read before it is read; default NO_PREFETCH (reads fault or block when scored). */
  readonly prefetch?: NeighborPrefetch | null;
  /**
   * How many of the next candidates' neighbour lists to decode while the current hop's reads are
   * in flight, so their unvisited neighbours can be read ahead with what is left of the budget
   * (0: none). Only with a prefetch hook.
   */
  readonly lookahead?: number;
}

/**
 * Lucene's HnswGraphSearcher over any NeighborLists: a graph on the heap, resident in kernel
 * memory, or read in place from `.vex` (OffHeapHnswGraph). Greedy descent (ef = 1) through the
 * upper levels from the entry node, then a beam search on level 0 with a result queue of
 * max(k, ef); the best k are returned. Equal scores resolve to the smaller ordinal (NeighborQueue).
 *
 * The prefetch hook (NeighborPrefetch) sees every hop's unvisited neighbours before the first is
 * scored and paces the scoring; without one (NO_PREFETCH) a hop is one bulkScore call. Hits,
 * scores and visit counts do not depend on the hook: it only decides when reads are issued.
 *
 * One instance holds reusable scratch (queues, a generation-stamped visited array, neighbour
 * buffers), so a search allocates only its result arrays. Not thread-safe; use one per worker.
 */
export class HnswGraphSearcher {
  private readonly candidates = new NeighborQueue(128, true);
  private readonly results = new NeighborQueue(128, false);
  private visited: Int32Array;
  private gen = 0;
  private nbrOrds = new Int32Array(64);
  private nbrScores = new Float32Array(64);
  /** Lookahead: the next candidates' unvisited neighbours (up to four lists). */
  private ahead = new Int32Array(256);
  private visitedCount = 0;
  private visitLimit = Infinity;
  /** The query's cross-segment queue when searching as one of several segments (MultiLeafKnnCollector). */
  private global: GlobalSimilarityQueue | null = null;
  private readonly multi = new MultiLeafState();
  private epScratch = new Int32Array(1);
  /** Filtered traversal: the expanded node's list, kept while its rejected neighbours' lists are read. */
  private hop1 = new Int32Array(64);
  private readonly stored = new StoredNeighborLists();

  constructor(maxOrd = 0) {
    this.visited = new Int32Array(Math.max(1, maxOrd));
  }

  /** Scored vectors since the last resetCounters(). */
  get visitedSoFar(): number {
    return this.visitedCount;
  }

  resetCounters(visitLimit = Infinity): void {
    this.visitedCount = 0;
    this.visitLimit = visitLimit;
  }

  /**
   * Approximate top-k. `ef` (default k) is the level-0 queue size; the effective size is max(k, ef).
   * With a visitedLimit, the search stops once that many vectors were scored (earlyTerminated).
   */
  search(
    scorer: RandomVectorScorer,
    graph: HnswGraph,
    k: number,
    ef = k,
    acceptOrds?: AcceptOrds | null,
    visitedLimit = Infinity,
    global: GlobalSimilarityQueue | null = null,
    traversal: FilteredTraversal | null = null,
  ): KnnSearchResult {
    return this.run(scorer, this.stored.reset(graph), k, ef, acceptPredicate(acceptOrds), visitedLimit, global, NO_PREFETCH, 0, traversal);
  }

  /** The same search over any NeighborLists (a graph read in place), with an optional prefetch hook. */
  searchLists(scorer: RandomVectorScorer, graph: NeighborLists, k: number, options: GraphSearchOptions = {}): KnnSearchResult {
    const prefetch = options.prefetch ?? NO_PREFETCH;
    const lookahead = prefetch === NO_PREFETCH ? 0 : (options.lookahead ?? 0);
    const traversal = options.filteredTraversal || options.seeds ? { twoHop: options.filteredTraversal === true, seeds: options.seeds ?? null } : null;
    return this.run(
      scorer,
      graph,
      k,
      options.ef ?? k,
      acceptPredicate(options.acceptOrds),
      options.visitedLimit ?? Infinity,
      options.global ?? null,
      prefetch,
      lookahead,
      traversal,
    );
  }

  private run(
    scorer: RandomVectorScorer,
    graph: NeighborLists,
    k: number,
    ef: number,
    accept: ((ord: number) => boolean) | null,
    visitedLimit: number,
    global: GlobalSimilarityQueue | null,
    prefetch: NeighborPrefetch,
    lookahead: number,
    traversal: FilteredTraversal | null = null,
  ): KnnSearchResult {
    this.resetCounters(visitedLimit);
    this.global = global;
    if (k <= 0 || graph.size === 0) return { ords: new Int32Array(0), scores: new Float32Array(0), visited: 0, earlyTerminated: false };
    const results = this.results;
    results.reset(Math.max(k, ef));
    this.ensureNeighborBuffers(graph.maxListLength);
    const ep = this.findBestEntryPoint(scorer, graph, prefetch);
    if (ep !== -1) {
      const seeds = traversal?.seeds ?? null;
      const numEps = 1 + (seeds?.length ?? 0);
      if (this.epScratch.length < numEps) this.epScratch = new Int32Array(numEps);
      const eps = this.epScratch;
      eps[0] = ep;
      if (seeds) eps.set(seeds, 1);
      const twoHop = traversal?.twoHop === true && accept !== null;
      if (twoHop) this.ensureTwoHopBuffers(graph.maxListLength);
      this.beam(results, scorer, 0, eps, numEps, graph, accept, prefetch, lookahead, twoHop);
    }
    prefetch.finish();
    this.global = null;
    const take = Math.min(k, results.size());
    while (results.size() > take) results.pop();
    const ords = new Int32Array(take);
    const scores = new Float32Array(take);
    for (let i = take - 1; i >= 0; i--) {
      scores[i] = results.topScore();
      ords[i] = results.pop();
    }
    return { ords, scores, visited: this.visitedCount, earlyTerminated: this.visitedCount >= this.visitLimit };
  }

  /**
   * The greedy descent alone (levels numLevels-1 .. 1): the level-0 entry point, or -1 when the
   * graph is empty or the visit limit was reached; visitedSoFar counts the vectors it scored.
   * For searchers that run level 0 elsewhere (ResidentGraphSearcher).
   */
  descend(scorer: RandomVectorScorer, graph: HnswGraph, visitedLimit = Infinity): number {
    this.resetCounters(visitedLimit);
    if (graph.size() === 0) return -1;
    const lists = this.stored.reset(graph);
    this.ensureNeighborBuffers(lists.maxListLength);
    return this.findBestEntryPoint(scorer, lists, NO_PREFETCH);
  }

  private newGeneration(size: number): void {
    if (this.visited.length < size) {
      this.visited = new Int32Array(Math.max(size, Math.ceil(this.visited.length * 1.5)));
      this.gen = 0;
    }
    if (this.gen === 0x7fffffff) {
      this.visited.fill(0);
      this.gen = 0;
    }
    this.gen++;
  }

  private ensureNeighborBuffers(n: number): void {
    if (this.nbrOrds.length >= n) return;
    this.nbrOrds = new Int32Array(n);
    this.nbrScores = new Float32Array(n);
    this.ahead = new Int32Array(4 * n);
  }

  /** A filtered traversal's hop holds a list and its neighbours' lists: n + n * n ords at most. */
  private ensureTwoHopBuffers(n: number): void {
    if (this.hop1.length < n + 1) this.hop1 = new Int32Array(n + 1);
    const want = n + n * n;
    if (this.nbrOrds.length >= want) return;
    this.nbrOrds = new Int32Array(want);
    this.nbrScores = new Float32Array(want);
  }

  /**
   * The filtered traversal's hop from `node` (FilteredTraversal): its accepted unvisited
   * neighbours, and for each rejected one, that neighbour's accepted unvisited neighbours (two
   * hops), into nbrOrds, marking each visited; at most `budget` (the first one beyond it is marked
   * but not taken). A rejected neighbour is marked visited too: it is crossed once, never scored.
   * Once the hop holds half as many accepted nodes as `node` has neighbours, rejected neighbours are
   * no longer crossed (marked visited only): where the filter passes many docs, two-hop lists
   * would cost checks without adding candidates the beam needs.
   */
  private unvisitedTwoHop(graph: NeighborLists, level: number, node: number, budget: number, accept: (ord: number) => boolean): number {
    const visited = this.visited;
    const gen = this.gen;
    const ords = this.nbrOrds;
    // seek() may reuse one buffer for every list: keep this one while the others are read.
    const own = this.hop1;
    let base = graph.seek(level, node);
    let lists = graph.lists;
    const cnt = lists[base];
    for (let j = 0; j <= cnt; j++) own[j] = lists[base + j];
    let n = 0;
    for (let j = 1; j <= cnt; j++) {
      const f = own[j];
      if (visited[f] === gen) continue;
      visited[f] = gen;
      if (accept(f)) {
        if (n >= budget) return n;
        ords[n++] = f;
        continue;
      }
      // A hop that has gathered half a list's worth of accepted nodes crosses no more rejected
      // ones: the beam then moves as an unfiltered search's does, and a filter that passes half
      // the docs is searched like the unfiltered graph (gathering a full list scored ~2x the
      // unfiltered search's nodes at 50 % on gen 1M x 1024).
      if (2 * n >= cnt) continue;
      base = graph.seek(level, f);
      lists = graph.lists;
      const cnt2 = lists[base];
      for (let i = 1; i <= cnt2; i++) {
        const g = lists[base + i];
        if (!accept(g) || visited[g] === gen) continue;
        visited[g] = gen;
        if (n >= budget) return n;
        ords[n++] = g;
      }
    }
    return n;
  }

  /**
   * Copies `node`'s not yet visited neighbours on `level` into nbrOrds (marking them visited) and
   * returns how many; at most `budget`, the first one beyond it is marked but not taken (Lucene).
   */
  private unvisited(graph: NeighborLists, level: number, node: number, budget: number): number {
    const visited = this.visited;
    const gen = this.gen;
    const ords = this.nbrOrds;
    const base = graph.seek(level, node);
    const lists = graph.lists;
    const cnt = lists[base];
    let n = 0;
    for (let j = 1; j <= cnt; j++) {
      const f = lists[base + j];
      if (visited[f] === gen) continue;
      visited[f] = gen;
      if (n >= budget) break;
      ords[n++] = f;
    }
    return n;
  }

  /**
   * Scores nbrOrds[0..n) into nbrScores, telling the hook first: in one bulkScore when it has
   * nothing to pace, else one by one as it allows. On level 0 the next candidates' neighbours may
   * be handed to it as read-ahead while the hop's reads are in flight.
   */
  private scoreHop(scorer: RandomVectorScorer, graph: NeighborLists, n: number, prefetch: NeighborPrefetch, lookahead: number, minAccepted: number): void {
    const ords = this.nbrOrds;
    const scores = this.nbrScores;
    let ready = prefetch.hop(ords, n);
    if (lookahead > 0 && prefetch.spare() > 0) this.lookahead(graph, prefetch, lookahead, minAccepted);
    if (ready >= n) {
      scorer.bulkScore(ords, n, scores);
      return;
    }
    for (let i = 0; i < n; i++) {
      if (i >= ready) ready = prefetch.next(i);
      scores[i] = scorer.score(ords[i]);
    }
  }

  /**
   * The neighbours of the best `count` waiting candidates (heap positions 0 .. count-1: the next
   * candidate and the better of its children) that are not visited yet, handed to the hook as
   * read-ahead. Candidates the stopping rule would not expand are skipped. Decoding their lists
   * reads adjacency the search would read anyway once they are expanded.
   */
  private lookahead(graph: NeighborLists, prefetch: NeighborPrefetch, count: number, minAccepted: number): void {
    const candidates = this.candidates;
    const visited = this.visited;
    const gen = this.gen;
    const ahead = this.ahead;
    let m = 0;
    const upTo = Math.min(count, candidates.size());
    for (let c = 0; c < upTo; c++) {
      if (candidates.scoreAt(c) < minAccepted) continue;
      const base = graph.seek(0, candidates.nodeAt(c));
      const lists = graph.lists;
      const cnt = lists[base];
      for (let j = 1; j <= cnt && m < ahead.length; j++) {
        const f = lists[base + j];
        if (visited[f] !== gen) ahead[m++] = f;
      }
    }
    if (m > 0) prefetch.lookahead(ahead, m);
  }

  /** Greedy descent through levels numLevels-1 .. 1; -1 when the graph is empty or the visit limit hit. */
  private findBestEntryPoint(scorer: RandomVectorScorer, graph: NeighborLists, prefetch: NeighborPrefetch): number {
    let ep = graph.entryNode;
    if (ep === -1 || graph.numLevels === 1) return ep;
    this.newGeneration(graph.size);
    const visited = this.visited;
    const gen = this.gen;
    let best = scorer.score(ep);
    this.visitedCount++;
    for (let level = graph.numLevels - 1; level >= 1; level--) {
      visited[ep] = gen;
      let foundBetter = true;
      while (foundBetter) {
        foundBetter = false;
        const n = this.unvisited(graph, level, ep, Infinity);
        if (n === 0) continue;
        if (this.visitedCount + n >= this.visitLimit) {
          this.visitedCount = Math.min(this.visitLimit, this.visitedCount + n);
          return -1;
        }
        this.scoreHop(scorer, graph, n, prefetch, 0, 0);
        this.visitedCount += n;
        const ords = this.nbrOrds;
        const scores = this.nbrScores;
        for (let i = 0; i < n; i++) {
          if (scores[i] > best) {
            best = scores[i];
            ep = ords[i];
            foundBetter = true;
          }
        }
      }
    }
    return ep;
  }

  /**
   * Lucene's searchLevel: beam search on one level from the entry points, collecting into
   * `results` (a min-heap whose maxSize is the beam width). Candidates are expanded best first; a
   * neighbour becomes a candidate when it scores above the worst kept result (once results is
   * full). The search stops when the best candidate does not beat that bound, except that one
   * candidate scoring exactly the bound is still expanded (Lucene 10's nextUp/shouldExploreMinSim
   * rule, which keeps duplicate-heavy data from stalling or exploding). Neighbour lists are scored
   * with one bulkScore call per expanded node.
   */
  searchLevel(
    results: NeighborQueue,
    scorer: RandomVectorScorer,
    level: number,
    eps: Int32Array,
    numEps: number,
    graph: HnswGraph,
    accept: ((ord: number) => boolean) | null,
  ): void {
    const lists = this.stored.reset(graph);
    this.ensureNeighborBuffers(lists.maxListLength);
    this.beam(results, scorer, level, eps, numEps, lists, accept, NO_PREFETCH, 0);
  }

  private beam(
    results: NeighborQueue,
    scorer: RandomVectorScorer,
    level: number,
    eps: Int32Array,
    numEps: number,
    graph: NeighborLists,
    accept: ((ord: number) => boolean) | null,
    prefetch: NeighborPrefetch,
    lookahead: number,
    twoHop = false,
  ): void {
    this.newGeneration(graph.size);
    const visited = this.visited;
    const gen = this.gen;
    const candidates = this.candidates;
    candidates.clear();
    const k = results.maxSize;
    const limit = this.visitLimit;

    for (let i = 0; i < numEps; i++) {
      const ep = eps[i];
      if (visited[ep] === gen) continue;
      visited[ep] = gen;
      if (this.visitedCount >= limit) break;
      const s = scorer.score(ep);
      this.visitedCount++;
      candidates.add(ep, s);
      if (accept === null || accept(ep)) results.insertWithOverflow(ep, s);
    }

    const ords = this.nbrOrds;
    const scores = this.nbrScores;
    // Lucene's MultiLeafKnnCollector on level 0: scores are shared with the other segments of the
    // query, and a segment that cannot compete globally raises its bar (greediness 0.9).
    const multi = level === 0 && this.global !== null ? this.multi.reset(k, this.global, this.visitedCount) : null;
    let minAccepted = nextUpFloat(results.size() >= k ? results.topScore() : -Infinity);
    let shouldExploreMinSim = true;

    while (candidates.size() > 0 && this.visitedCount < limit) {
      const top = candidates.topScore();
      if (top < minAccepted) {
        if (shouldExploreMinSim && nextUpFloat(top) === minAccepted) shouldExploreMinSim = false;
        else break;
      }
      const node = candidates.pop();
      const n = twoHop ? this.unvisitedTwoHop(graph, level, node, limit - this.visitedCount, accept!) : this.unvisited(graph, level, node, limit - this.visitedCount);
      if (n === 0) continue;
      this.scoreHop(scorer, graph, n, prefetch, lookahead, minAccepted);
      this.visitedCount += n;
      for (let i = 0; i < n; i++) {
        const s = scores[i];
        if (s >= minAccepted) {
          const f = ords[i];
          candidates.add(f, s);
          prefetch.candidate(f);
          if (accept === null || accept(f)) {
            const localUpdated = results.insertWithOverflow(f, s);
            const full = results.size() >= k;
            const local = full ? results.topScore() : -Infinity;
            if (multi !== null) {
              if (multi.collect(s, full, this.visitedCount) || localUpdated) minAccepted = nextUpFloat(multi.minCompetitive(local));
            } else if (localUpdated) {
              minAccepted = nextUpFloat(local);
            }
          }
        }
      }
    }
  }
}

/** Greediness of globally non-competitive search, and how often (in visited nodes) a segment syncs. */
const GREEDINESS = 0.9;
const SYNC_INTERVAL = 256;

/**
 * The per-segment side of Lucene's MultiLeafKnnCollector: the segment's k best so far are
 * offered to the query's global queue every SYNC_INTERVAL visited nodes; once the segment has k
 * results, its bar is max(local k-th, min(local top-(1-greediness)k-th, global k-th)).
 */
class MultiLeafState {
  private nonCompetitive = new FloatHeap(1);
  private updates = new FloatHeap(1);
  private scratch = new Float32Array(1);
  private global: GlobalSimilarityQueue | null = null;
  private kCollected = false;
  private cachedGlobalMin = -Infinity;
  private nextSync = 0;

  reset(k: number, global: GlobalSimilarityQueue, visited: number): this {
    const greedy = Math.max(1, Math.round((1 - GREEDINESS) * k));
    if (this.nonCompetitive.capacity !== greedy) this.nonCompetitive = new FloatHeap(greedy);
    if (this.updates.capacity !== k) {
      this.updates = new FloatHeap(k);
      this.scratch = new Float32Array(k);
    }
    this.nonCompetitive.clear();
    this.updates.clear();
    this.global = global;
    this.kCollected = false;
    this.cachedGlobalMin = -Infinity;
    this.nextSync = visited + SYNC_INTERVAL;
    return this;
  }

  /** Records a collected score; true when the competitive bar may have moved. */
  collect(score: number, localFull: boolean, visited: number): boolean {
    const first = !this.kCollected && localFull;
    if (first) this.kCollected = true;
    this.updates.offer(score);
    let changed = this.nonCompetitive.offer(score);
    if (this.kCollected && (first || visited >= this.nextSync)) {
      this.nextSync = visited + SYNC_INTERVAL;
      const n = this.updates.drainAscending(this.scratch);
      if (n > 0) {
        this.cachedGlobalMin = this.global!.offer(this.scratch, n);
        changed = true;
      }
    }
    return changed;
  }

  minCompetitive(localMin: number): number {
    if (!this.kCollected) return -Infinity;
    return Math.max(localMin, Math.min(this.nonCompetitive.peek(), this.cachedGlobalMin));
  }
}

/** One-shot convenience over a fresh searcher. */
export function searchGraph(scorer: RandomVectorScorer, graph: HnswGraph, k: number, ef = k, acceptOrds?: AcceptOrds | null, visitedLimit = Infinity): KnnSearchResult {
  return new HnswGraphSearcher(graph.size()).search(scorer, graph, k, ef, acceptOrds, visitedLimit);
}

const EXACT_CHUNK = 256;

/**
 * Flat top-k over every (accepted) ordinal, for segments without a graph, small filtered sets and
 * the fallback when a filtered graph search terminates early. Ordinals are scored in ascending
 * order in chunks (scoreRange when the scorer has it, else bulkScore); a tie never displaces a
 * kept hit, so the lower ordinal wins (Lucene's exact search with a pre-filled HitQueue).
 */
export function exactSearch(scorer: RandomVectorScorer, k: number, acceptOrds?: AcceptOrds | null, visitedLimit = Infinity): KnnSearchResult {
  const maxOrd = scorer.maxOrd;
  if (k <= 0 || maxOrd === 0) return { ords: new Int32Array(0), scores: new Float32Array(0), visited: 0, earlyTerminated: false };
  if (acceptOrds instanceof Uint32Array) return exactSearchBits(scorer, k, acceptOrds, visitedLimit);
  const accept = acceptPredicate(acceptOrds);
  const heap = new NeighborQueue(k, false);
  const ords = new Int32Array(EXACT_CHUNK);
  const scores = new Float32Array(EXACT_CHUNK);
  let visited = 0;
  let early = false;
  for (let start = 0; start < maxOrd && !early; start += EXACT_CHUNK) {
    const end = Math.min(maxOrd, start + EXACT_CHUNK);
    let n = 0;
    if (accept === null) {
      n = end - start;
      if (visited + n > visitedLimit) {
        n = visitedLimit - visited;
        early = true;
      }
      if (scorer.scoreRange) {
        scorer.scoreRange(start, n, scores);
        for (let i = 0; i < n; i++) ords[i] = start + i;
      } else {
        for (let i = 0; i < n; i++) ords[i] = start + i;
        scorer.bulkScore(ords, n, scores);
      }
    } else {
      for (let o = start; o < end; o++) {
        if (!accept(o)) continue;
        if (visited + n >= visitedLimit) {
          early = true;
          break;
        }
        ords[n++] = o;
      }
      if (n > 0) scorer.bulkScore(ords, n, scores);
    }
    visited += n;
    for (let i = 0; i < n; i++) heap.insertWithOverflow(ords[i], scores[i]);
  }
  return drain(heap, visited, early);
}

/**
 * exactSearch over the set bits of an accepted-ords bitset: a word at a time, zero words skipped,
 * so a sparse filter costs its passing ords, not the segment's size. Same order and tie rule.
 */
function exactSearchBits(scorer: RandomVectorScorer, k: number, bits: Uint32Array, visitedLimit: number): KnnSearchResult {
  const maxOrd = scorer.maxOrd;
  const heap = new NeighborQueue(k, false);
  const ords = new Int32Array(EXACT_CHUNK);
  const scores = new Float32Array(EXACT_CHUNK);
  let visited = 0;
  let early = false;
  let n = 0;
  const flush = () => {
    scorer.bulkScore(ords, n, scores);
    visited += n;
    for (let i = 0; i < n; i++) heap.insertWithOverflow(ords[i]!, scores[i]!);
    n = 0;
  };
  const words = Math.min(bits.length, (maxOrd + 31) >>> 5);
  outer: for (let w = 0; w < words; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      const bit = 31 - Math.clz32(word & -word);
      word &= word - 1;
      const o = (w << 5) | bit;
      if (o >= maxOrd) break outer;
      if (visited + n >= visitedLimit) {
        early = true;
        break outer;
      }
      ords[n++] = o;
      if (n === EXACT_CHUNK) flush();
    }
  }
  if (n > 0) flush();
  return drain(heap, visited, early);
}

function drain(heap: NeighborQueue, visited: number, early: boolean): KnnSearchResult {
  const take = heap.size();
  const outOrds = new Int32Array(take);
  const outScores = new Float32Array(take);
  for (let i = take - 1; i >= 0; i--) {
    outScores[i] = heap.topScore();
    outOrds[i] = heap.pop();
  }
  return { ords: outOrds, scores: outScores, visited, earlyTerminated: early };
}
