import { acceptPredicate, type AcceptOrds, type KnnSearchResult } from './HnswGraphSearcher.js';
import { NeighborQueue, nextUpFloat } from './NeighborQueue.js';
import type { NeighborPrefetch } from './NeighborPrefetch.js';
import type { OffHeapHnswGraph } from './OffHeapHnswGraph.js';
import type { RandomVectorScorer } from './RandomVectorScorer.js';

export interface OffHeapSearchOptions {
  /** Level-0 queue size; the effective size is max(k, ef). Default k. */
  readonly ef?: number;
  readonly acceptOrds?: AcceptOrds | null;
  readonly visitedLimit?: number;
  /** Told what will be read before it is read; null: no prefetch (reads fault or block one at a time). */
  readonly prefetch?: NeighborPrefetch | null;
  /**
   * How many of the next candidates' neighbour lists to decode while the current hop's reads are
   * in flight, so their unvisited neighbours can be read ahead with what is left of the budget
   * (0: none). Only with a prefetch hook.
   */
  readonly lookahead?: number;
}

/**
 * Lucene's HnswGraphSearcher over a graph read in place (OffHeapHnswGraph): the same greedy
 * descent through the upper levels from the entry node, the same level-0 beam search (result
 * queue of max(k, ef), candidates best first, the nextUp stopping rule, the visit limit), so
 * ords, scores and visit counts equal HnswGraphSearcher's on the same graph and scorer. What it
 * adds is the prefetch hook: when a candidate is expanded, its unvisited neighbours are handed
 * to the hook before the first of them is scored, and neighbours are scored one by one in list
 * order so the hook can keep its reads a distance ahead of scoring across hops.
 *
 * Reusable scratch (queues, generation-stamped visited array, neighbour buffers); not thread-safe.
 */
export class OffHeapGraphSearcher {
  private readonly candidates = new NeighborQueue(128, true);
  private readonly results = new NeighborQueue(128, false);
  private visited = new Int32Array(1);
  private gen = 0;
  private ords = new Int32Array(64);
  private ahead = new Int32Array(64);
  private aheadList = new Int32Array(64);
  private readonly range = new Float64Array(2);
  private visitedCount = 0;
  private visitLimit = Infinity;

  search(scorer: RandomVectorScorer, graph: OffHeapHnswGraph, k: number, options: OffHeapSearchOptions = {}): KnnSearchResult {
    this.visitedCount = 0;
    this.visitLimit = options.visitedLimit ?? Infinity;
    const prefetch = options.prefetch ?? null;
    if (k <= 0 || graph.size === 0) return { ords: new Int32Array(0), scores: new Float32Array(0), visited: 0, earlyTerminated: false };
    if (this.ords.length < graph.maxListLength) {
      this.ords = new Int32Array(graph.maxListLength);
      this.aheadList = new Int32Array(graph.maxListLength);
      this.ahead = new Int32Array(graph.maxListLength * 4);
    }
    const accept = acceptPredicate(options.acceptOrds);
    const results = this.results;
    results.reset(Math.max(k, options.ef ?? k));
    const ep = this.findBestEntryPoint(scorer, graph, prefetch);
    if (ep !== -1) this.searchLevel0(results, scorer, ep, graph, accept, prefetch, prefetch ? (options.lookahead ?? 0) : 0);
    prefetch?.finish();
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

  private newGeneration(size: number): void {
    if (this.visited.length < size) {
      this.visited = new Int32Array(size);
      this.gen = 0;
    }
    if (this.gen === 0x7fffffff) {
      this.visited.fill(0);
      this.gen = 0;
    }
    this.gen++;
  }

  /** Greedy descent through levels numLevels-1 .. 1; -1 when the visit limit is hit. */
  private findBestEntryPoint(scorer: RandomVectorScorer, graph: OffHeapHnswGraph, prefetch: NeighborPrefetch | null): number {
    let ep = graph.entryNode;
    if (graph.numLevels === 1) return ep;
    this.newGeneration(graph.size);
    const visited = this.visited;
    const gen = this.gen;
    const ords = this.ords;
    let best = scorer.score(ep);
    this.visitedCount++;
    for (let level = graph.numLevels - 1; level >= 1; level--) {
      visited[ep] = gen;
      let foundBetter = true;
      while (foundBetter) {
        foundBetter = false;
        const cnt = graph.neighbors(level, ep, ords);
        let n = 0;
        for (let j = 0; j < cnt; j++) {
          const f = ords[j];
          if (visited[f] === gen) continue;
          visited[f] = gen;
          ords[n++] = f;
        }
        if (n === 0) continue;
        if (this.visitedCount + n >= this.visitLimit) {
          this.visitedCount = Math.min(this.visitLimit, this.visitedCount + n);
          return -1;
        }
        prefetch?.hop(ords, n);
        let bestOrd = -1;
        for (let i = 0; i < n; i++) {
          prefetch?.next(i);
          // float32, as HnswGraphSearcher's bulkScore output array stores it
          const s = Math.fround(scorer.score(ords[i]));
          if (s > best) {
            best = s;
            bestOrd = ords[i];
          }
        }
        this.visitedCount += n;
        if (bestOrd !== -1) {
          ep = bestOrd;
          foundBetter = true;
        }
      }
    }
    return ep;
  }

  /** Lucene's searchLevel on level 0 from one entry point (see HnswGraphSearcher.searchLevel). */
  private searchLevel0(
    results: NeighborQueue,
    scorer: RandomVectorScorer,
    ep: number,
    graph: OffHeapHnswGraph,
    accept: ((ord: number) => boolean) | null,
    prefetch: NeighborPrefetch | null,
    lookahead: number,
  ): void {
    this.newGeneration(graph.size);
    const visited = this.visited;
    const gen = this.gen;
    const candidates = this.candidates;
    candidates.clear();
    const k = results.maxSize;
    const limit = this.visitLimit;
    const range = this.range;

    visited[ep] = gen;
    if (this.visitedCount < limit) {
      const s = scorer.score(ep);
      this.visitedCount++;
      candidates.add(ep, s);
      if (accept === null || accept(ep)) results.insertWithOverflow(ep, s);
    }

    const ords = this.ords;
    let minAccepted = nextUpFloat(results.size() >= k ? results.topScore() : -Infinity);
    let shouldExploreMinSim = true;

    while (candidates.size() > 0 && this.visitedCount < limit) {
      const top = candidates.topScore();
      if (top < minAccepted) {
        if (shouldExploreMinSim && nextUpFloat(top) === minAccepted) shouldExploreMinSim = false;
        else break;
      }
      const node = candidates.pop();
      const cnt = graph.neighbors(0, node, ords);
      const budget = limit - this.visitedCount;
      let n = 0;
      for (let j = 0; j < cnt; j++) {
        const f = ords[j];
        if (visited[f] === gen) continue;
        visited[f] = gen;
        if (n >= budget) break;
        ords[n++] = f;
      }
      if (n === 0) continue;
      if (prefetch !== null) {
        prefetch.hop(ords, n);
        if (lookahead > 0 && prefetch.spare() > 0) this.lookahead(graph, prefetch, lookahead, minAccepted);
      }
      for (let i = 0; i < n; i++) {
        prefetch?.next(i);
        const f = ords[i];
        const s = Math.fround(scorer.score(f));
        this.visitedCount++;
        if (s >= minAccepted) {
          candidates.add(f, s);
          if (prefetch !== null && prefetch.wantsAdjacency(f)) {
            graph.listRange(0, f, range);
            prefetch.candidate(range[0], range[1]);
          }
          if (accept === null || accept(f)) {
            if (results.insertWithOverflow(f, s)) minAccepted = nextUpFloat(results.size() >= k ? results.topScore() : -Infinity);
          }
        }
      }
    }
  }

  /**
   * The neighbours of the best `count` waiting candidates (heap positions 0 .. count-1: the next
   * candidate and the better of its children) that are not visited yet, handed to the hook as
   * read-ahead. Candidates the stopping rule would not expand are skipped. Decoding their lists
   * reads adjacency the search would read anyway once they are expanded.
   */
  private lookahead(graph: OffHeapHnswGraph, prefetch: NeighborPrefetch, count: number, minAccepted: number): void {
    const candidates = this.candidates;
    const visited = this.visited;
    const gen = this.gen;
    const ahead = this.ahead;
    const list = this.aheadList;
    let m = 0;
    const upTo = Math.min(count, candidates.size());
    for (let c = 0; c < upTo; c++) {
      if (candidates.scoreAt(c) < minAccepted) continue;
      const cnt = graph.neighbors(0, candidates.nodeAt(c), list);
      for (let j = 0; j < cnt && m < ahead.length; j++) {
        const f = list[j];
        if (visited[f] !== gen) ahead[m++] = f;
      }
    }
    if (m > 0) prefetch.lookahead(ahead, m);
  }
}
