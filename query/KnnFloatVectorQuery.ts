import { DocAndScoreQuery } from './DocAndScoreQuery.js';
import { Query, type SearchContext, type Searcher } from './Query.js';
import type { ScoreDoc } from './ScoreDoc.js';
import { TopDocs } from './TopDocs.js';
import { GlobalSimilarityQueue } from '../segments/hnsw/GlobalSimilarityQueue.js';
import { KNN_SLICE } from './knn/knnSlice.js';
import { monotonicMs } from './executor/clock.js';
import { round3 } from './QueryStatsCollector.js';

export interface KnnOptions {
  /** Graph beam width per segment (HNSW ef); raised to k when smaller. Default: k. */
  readonly numCandidates?: number;
  /**
   * Share scores across segments so a segment that cannot compete stops early (Lucene's
   * MultiLeafKnnCollector, which Lucene uses whenever an index has several segments). Off by
   * default here: with noisy 1-bit scores the greedy global bar ends exploration too early
   * (bench:knn, 1M x 1024, 8 segments, oversample 5: recall@10 0.947 -> 0.896 for p50
   * 3.1 -> 2.7 ms).
   */
  readonly multiLeaf?: boolean;
  /**
   * Where a graph's level-0 search runs: 'wasm' (default; ResidentGraphSearcher) or 'js'
   * (HnswGraphSearcher). Results are identical; 'js' exists for verification and for bench:knn's
   * side-by-side timing.
   */
  readonly graphSearch?: 'wasm' | 'js';
}

/**
 * Lucene's KnnFloatVectorQuery over prescore's first phase: every segment is searched with the
 * 1-bit estimator (HNSW when the segment has a graph, an exhaustive scan otherwise) on the
 * executor, each returns its top k, and the per-segment results are merged into the global top k
 * (score desc, then doc asc; global doc = docBase + doc) — TopDocs.merge semantics.
 */
export class KnnFloatVectorQuery extends Query {
  readonly target: Float32Array;

  constructor(
    readonly field: string,
    target: Float32Array | readonly number[],
    readonly k: number,
    readonly options: KnnOptions = {},
  ) {
    super();
    if (!(Number.isInteger(k) && k >= 1)) throw new RangeError(`k must be a positive integer, got ${k}`);
    this.target = Float32Array.from(target);
    for (let i = 0; i < this.target.length; i++) {
      if (!Number.isFinite(this.target[i])) throw new RangeError(`query vector[${i}] is not a finite float32: ${target[i]}`);
    }
  }

  async rewrite(searcher: Searcher, ctx: SearchContext): Promise<DocAndScoreQuery> {
    const field = searcher.reader.field;
    if (field.name !== this.field) throw new RangeError(`unknown vector field "${this.field}" (the index has "${field.name}")`);
    if (field.dims !== this.target.length) {
      throw new RangeError(`vector dimension mismatch: query has ${this.target.length} dims, field "${field.name}" has ${field.dims}`);
    }
    const started = performance.now();
    const profiler = ctx.profiler ?? null;
    const profile = profiler !== null;
    const ef = Math.max(this.k, this.options.numCandidates ?? this.k);
    const global = this.options.multiLeaf === true && searcher.reader.leaves.length > 1 ? GlobalSimilarityQueue.create(ef) : null;
    const js = this.options.graphSearch === 'js';
    const runOptions = profiler ? { hops: profiler.hops } : undefined;
    const sliceResults = await Promise.all(
      searcher.slices.map((slice) =>
        searcher.executor.run(KNN_SLICE, { segments: slice.handles, target: this.target, k: this.k, ef, global, js, profile }, runOptions),
      ),
    );
    const mergeAt = profiler ? monotonicMs() : 0;
    // Cancellation is checked between phases, never by aborting a running task: piscina would
    // terminate the worker, and with it every segment the worker holds open.
    ctx.signal?.throwIfAborted();
    // Per-leaf TopDocs in leaf order (as Lucene's invokeAll returns them), docs made global.
    const perLeaf: TopDocs[] = new Array(searcher.reader.leaves.length);
    searcher.slices.forEach((slice, s) => {
      slice.leaves.forEach((leaf, i) => {
        const r = sliceResults[s].segments[i];
        ctx.stats.visited += r.visited;
        if (profiler) {
          const segmentMs = sliceResults[s].segmentMs?.[i] ?? 0;
          const quantizeMs = r.quantizeMs ?? 0;
          profiler.segments.push({
            segment: leaf.reader.name,
            threadId: sliceResults[s].threadId,
            quantizeMs: round3(quantizeMs),
            searchMs: round3(segmentMs - quantizeMs),
            visited: r.visited,
          });
        }
        const hits: ScoreDoc[] = [];
        for (let j = 0; j < r.docs.length; j++) hits.push({ doc: leaf.docBase + r.docs[j], score: r.scores[j], shardIndex: leaf.ord });
        perLeaf[leaf.ord] = new TopDocs({ value: r.visited, relation: 'GREATER_THAN_OR_EQUAL_TO' }, hits);
      });
    });
    const merged = TopDocs.merge(this.k, perLeaf.filter(Boolean));
    profiler?.phase('knn.merge', mergeAt);
    ctx.stats.firstPhaseMs += performance.now() - started;
    return new DocAndScoreQuery(merged.scoreDocs);
  }

  toString(): string {
    return `KnnFloatVectorQuery(field=${this.field}, k=${this.k}${this.options.numCandidates ? `, numCandidates=${this.options.numCandidates}` : ''})`;
  }
}
