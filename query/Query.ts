import type { ReadPath } from '../src/api/types.js';
import type { PrefetchPolicyName } from './prefetch/PrefetchPolicy.js';
import type { QueryStatsCollector } from './QueryStatsCollector.js';
import type { IndexSearcher } from './IndexSearcher.js';

/** Per-search settings and accumulators, threaded through every rewrite. */
export interface SearchContext {
  readonly readPath: ReadPath;
  readonly prefetchPolicy: PrefetchPolicyName;
  readonly signal?: AbortSignal;
  readonly stats: QueryStatsCollector;
  /** Record the rescoring event order (prefetch/score per entry) in the stats; for tests and debugging. */
  readonly trace?: boolean;
}

/**
 * A query that reaches its final form by rewriting (Lucene style: kNN and rescoring do all their
 * work in rewrite and end as a DocAndScoreQuery). `rewrite` returns `this` when already final.
 */
export abstract class Query {
  abstract rewrite(searcher: IndexSearcher, ctx: SearchContext): Promise<Query>;
  abstract toString(): string;
}
