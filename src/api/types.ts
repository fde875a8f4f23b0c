/**
 * The search facade's public types: what the library's `openIndex` returns and what the HTTP
 * layer depends on. Nothing here knows about segments, workers or files.
 */

import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';
import type { QueryStats } from '../../query/QueryStats.js';
import type { ReadPath } from '../../query/ReadPath.js';

export { READ_PATHS, type ReadPath } from '../../query/ReadPath.js';
export type { QueryStats } from '../../query/QueryStats.js';

export interface SearchOptions {
  /** Hits to return, in [1, 10000]. */
  readonly k: number;
  /** Graph beam width per segment (HNSW ef); at least k. Default: see DEFAULT_NUM_CANDIDATES. */
  readonly numCandidates?: number;
  /** First phase keeps k x oversample candidates for fp32 rescoring, in [1, 100], with k x oversample <= 10000. Default 3. */
  readonly oversample?: number;
  /** Default: the index's configured read path. */
  readonly readPath?: ReadPath;
  /** How prefetching paths decide whether to prefetch a vector (default: the index's, `adaptive`). */
  readonly prefetchPolicy?: PrefetchPolicyName;
  /** Aborts the query (timeouts); the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface SearchHit {
  /** The user-facing document id given at build time (for a Lucene index: the global doc number). */
  readonly id: string;
  /** The global doc number (docBase + segment doc), as Lucene numbers docs. */
  readonly doc: number;
  readonly score: number;
}

export interface SearchResult {
  readonly hits: readonly SearchHit[];
  /** Number of candidates the inner (first-phase) query matched (Lucene's totalHits). */
  readonly totalHits: number;
  readonly stats: QueryStats;
}

export interface SegmentDescription {
  readonly name: string;
  readonly docBase: number;
  readonly docs: number;
  readonly hasGraph: boolean;
  readonly bytes: { readonly vectors: number; readonly codes: number; readonly graph: number };
}

export interface IndexDescription {
  readonly name: string;
  readonly dir: string;
  readonly field: string;
  readonly similarity: string;
  readonly dims: number;
  readonly docs: number;
  readonly segments: readonly SegmentDescription[];
  readonly bytes: { readonly vectors: number; readonly codes: number; readonly graph: number; readonly total: number };
  /** Fraction of fp32 vector pages currently in the page cache (mincore), in [0, 1]. */
  readonly residentFraction: number;
  readonly defaultReadPath: ReadPath;
}

/** An open index. Safe for concurrent searches. */
export interface VectorIndex {
  readonly name: string;
  readonly dims: number;
  search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult>;
  describe(): Promise<IndexDescription>;
  /** Releases mappings and, if this was the last open index, the executor. */
  close(): Promise<void>;
}

export const MAX_K = 10_000;
export const MAX_NUM_CANDIDATES = 10_000;
export const MIN_OVERSAMPLE = 1;
/**
 * Up to 100: 1-bit codes on hard data need oversample 20-50 for recall 0.99 (bench:recall;
 * README "Recall"), bounded by MAX_RESCORE_CANDIDATES and the rescoring I/O budget.
 */
export const MAX_OVERSAMPLE = 100;
/** At most this many first-phase candidates (k x oversample) are rescored per query. */
export const MAX_RESCORE_CANDIDATES = 10_000;
export const DEFAULT_OVERSAMPLE = 3;
