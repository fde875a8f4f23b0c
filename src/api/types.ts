/**
 * The search facade's public types: what the library's `openIndex` returns and what the HTTP
 * layer depends on. Nothing here knows about segments, workers or files.
 */

import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';

/**
 * How fp32 vectors are read for rescoring. All paths return identical results.
 * - `mmap`: plain page faults, one at a time (the stock baseline, queue depth 1);
 * - `mmap+prefetch`: madvise(WILLNEED) for the ring from one thread, then fault;
 * - `mmap+parallel`: the ring's prefetch is issued through the executor from several workers;
 * - `pread`: positioned reads with many in flight, no mmap.
 */
export const READ_PATHS = ['mmap', 'mmap+prefetch', 'mmap+parallel', 'pread'] as const;
export type ReadPath = (typeof READ_PATHS)[number];

export interface SearchOptions {
  /** Hits to return, in [1, 10000]. */
  readonly k: number;
  /** Graph beam width per segment (HNSW ef); at least k. Default: see DEFAULT_NUM_CANDIDATES. */
  readonly numCandidates?: number;
  /** First phase keeps k x oversample candidates for fp32 rescoring, in [1, 10]. Default 3. */
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

/** Per-query counters and timings (summed into /metrics by the server). */
export interface QueryStats {
  readonly readPath: ReadPath;
  /** Candidates the first phase handed to rescoring (k x oversample, or fewer). */
  readonly candidates: number;
  /** Docs the first phase visited (scored with the 1-bit estimator), over all segments. */
  readonly visited: number;
  /** Pages for which a prefetch (madvise/read) was issued. */
  readonly pagesPrefetched: number;
  /** Pages found already resident by a residency check (so no prefetch was needed). */
  readonly pagesResident: number;
  /** libc calls made for I/O or residency (madvise, mincore, pread, io_uring_enter). */
  readonly syscalls: number;
  /** fp32 vectors read before their prefetch was issued (must be 0 on prefetching paths). */
  readonly readsBeforePrefetch: number;
  /** Whether scoring was deferred behind prefetch (false when the values source needs scores). */
  readonly deferred: boolean;
  /** The largest prefetch distance the ring reached. */
  readonly maxPrefetchDistance: number;
  readonly timings: {
    readonly firstPhaseMs: number;
    readonly rescoreMs: number;
    readonly totalMs: number;
  };
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
export const MAX_OVERSAMPLE = 10;
export const DEFAULT_OVERSAMPLE = 3;
