/**
 * The search facade's public types: what the library's `openIndex` returns and what the HTTP
 * layer depends on. Nothing here knows about segments, workers or files.
 */

import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';
import type { QueryStats } from '../../query/QueryStats.js';
import type { ReadPath } from '../../query/ReadPath.js';
import type { QueryProfiler } from '../../query/QueryProfiler.js';
import type { RescoreThread } from '../../query/rescore/RescoreThread.js';
import type { KnnThread } from '../../query/knn/KnnThread.js';
import type { SegmentSearch } from '../../segments/index/SegmentSearchPlan.js';
import type { CallerThread } from '../../query/CallerThread.js';
import type { KnnFilter } from '../../query/KnnFloatVectorQuery.js';
import type { FilterQuery } from '../../query/filter/FilterQuery.js';
import type { RecallCalibration } from '../../segments/index/RecallCalibration.js';

export { READ_PATHS, type ReadPath } from '../../query/ReadPath.js';
export type { QueryStats, FirstPhaseIo } from '../../query/QueryStats.js';
export type { QueryProfile, ProfiledPhase, ProfiledHop, SegmentProfile, RescoreShareProfile, GcPause } from '../../query/QueryProfile.js';
export type { FirstPhaseWhere } from '../../query/knn/KnnThread.js';
export { QueryProfiler } from '../../query/QueryProfiler.js';
export { monotonicMs } from '../../query/executor/clock.js';
export { RESCORE_THREADS, type RescoreThread } from '../../query/rescore/RescoreThread.js';
export { KNN_THREADS, type KnnThread } from '../../query/knn/KnnThread.js';
export { SEGMENT_SEARCHES, type SegmentSearch } from '../../segments/index/SegmentSearchPlan.js';
export { EVENT_LOOP, TURN_BUDGET_MS, type CallerThread } from '../../query/CallerThread.js';
export type { KnnFilter } from '../../query/KnnFloatVectorQuery.js';
export type { SegmentFilter } from '../../segments/index/searchSegment.js';

/** Options of one search through {@link VectorIndex.search}: only `k` is required. */
export interface SearchOptions {
  /** Hits to return, in [1, 10000]. */
  readonly k: number;
  /** Graph beam width per segment (HNSW ef); at least k. Default: max(200, 4 x k x oversample) (defaultBeam in openIndex.ts). */
  readonly numCandidates?: number;
  /** First phase keeps k x oversample candidates for fp32 rescoring, in [1, 100], with k x oversample <= 10000. Default DEFAULT_OVERSAMPLE. */
  readonly oversample?: number;
  /**
   * The recall@10 this search must reach, in [0.01, 0.999]: the index's calibration picks the
   * cheapest oversample and beam measured to reach it (with `oversample`/`numCandidates`: an
   * error). A target no measured setting reaches is an error. `stats.recall` says what ran.
   */
  readonly recallTarget?: number;
  /** Default: the index's configured read path. */
  readonly readPath?: ReadPath;
  /** How prefetching paths decide whether to prefetch a vector (default: the index's, `adaptive`). */
  readonly prefetchPolicy?: PrefetchPolicyName;
  /** Aborts the query (timeouts); the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Adds a per-phase profile to `stats.profile` (entry, per-segment quantization and search,
   * merge, every executor hop with its queue wait and clone costs, rescoring shares, GC).
   * `true`, or a QueryProfiler created at the caller's own entry (the HTTP layer's request arrival).
   */
  readonly profile?: boolean | QueryProfiler;
  /** Where rescoring runs (default: the index's, `adaptive`). Results are identical on every placement. */
  readonly rescoreThread?: RescoreThread;
  /** Where the first phase runs (default: the index's, `adaptive`). Results are identical on every placement. */
  readonly knnThread?: KnnThread;
  /**
   * Whether the first phase starts the fp32 reads of each segment's best hits as soon as that
   * segment is searched, while the others are still searched (the prefetching mmap paths only).
   * Default: for more than 64 candidates (k x oversample), where rescoring waits on the disk
   * longer than the read-ahead costs the first phase (LeaderReadAhead.ts). Results are identical.
   */
  readonly leaderReadAhead?: boolean;
  /**
   * How each segment's first phase is searched: `auto` (default: its HNSW graph, or a flat scan of
   * its codes where the scan is cheaper), `hnsw`, or `exhaustive` (every code scored: the recall
   * ceiling of the codes at k x oversample candidates, which bench:recall compares HNSW against).
   */
  readonly segmentSearch?: SegmentSearch;
  /**
   * The calling thread as this search shares it with the rest of the process: work placed there
   * turns the event loop first and then at least every TURN_BUDGET_MS (between segments), and the
   * adaptive placements use it only while `free()` says nothing else waits for it. Default
   * EVENT_LOOP (always free). A server passes one whose `free()` is false while other requests
   * are held (the HTTP server does), so under load searches go to the executor.
   */
  readonly callerThread?: CallerThread;
  /**
   * Pre-filter: only docs the filter accepts are returned, min(k, accepted) of them (Lucene's
   * KnnFloatVectorQuery filter; Elasticsearch's `knn.filter`). Each segment is searched by the
   * plan for its filter's cardinality (a scan of the accepted codes, the graph with the filter,
   * or a filtered traversal); when few docs are accepted, every one of them is rescored.
   */
  readonly filter?: KnnFilter | FilterQuery | null;
  /**
   * The document source on each hit (Elasticsearch's `_source`): true, false (the default: hits
   * are Lucene's, ids and scores), field patterns to include, or includes/excludes (`*` wildcards)
   * and `excludeVectors` (default true: the vector is left out, as Elasticsearch 9.2 does).
   */
  readonly source?: SourceOption;
  /** Mapped fields (patterns) whose values each hit carries in `fields`, read from its source (Elasticsearch's `fields`). */
  readonly fields?: readonly string[];
  /** Fields whose doc values each hit carries in `fields` (Elasticsearch's `docvalue_fields`); dates take a `format`. */
  readonly docvalueFields?: readonly (string | DocvalueField)[];
}

/** Which part of a document's `_source` a hit or a get carries: all, none, field patterns, or includes/excludes. */
export type SourceOption = boolean | readonly string[] | { readonly includes?: readonly string[]; readonly excludes?: readonly string[]; readonly excludeVectors?: boolean };

/** A `docvalue_fields` entry with a format. */
export interface DocvalueField {
  /** The field (or pattern) whose doc values are returned. */
  readonly field: string;
  /** For dates: `epoch_millis`, or the default ISO 8601 (`strict_date_optional_time`). */
  readonly format?: string;
}

/** A document as `get`, `mget` and `storedFields()` return it. */
export interface IndexedDoc {
  readonly id: string;
  /** Global doc number. */
  readonly doc: number;
  readonly source?: Record<string, unknown>;
  readonly fields?: Record<string, unknown[]>;
}

/** What a fetched document carries (`get`, `mget`, `storedFields()`), as SearchOptions spells it for hits. */
export interface GetOptions {
  /** The `_source` to return (default: all of it). */
  readonly source?: SourceOption;
  /** Mapped fields (patterns) whose values are returned in `fields`. */
  readonly fields?: readonly string[];
  /** Fields whose doc values are returned in `fields`. */
  readonly docvalueFields?: readonly (string | DocvalueField)[];
}

/** One hit of a search: the doc's id, its global doc number and its fp32 score (higher is nearer). */
export interface SearchHit {
  /** The user-facing document id given at build time (for a Lucene index: the global doc number). */
  readonly id: string;
  /** The global doc number (docBase + segment doc), as Lucene numbers docs. */
  readonly doc: number;
  readonly score: number;
  /** The document source, when the search asked for it (SearchOptions.source). */
  readonly source?: Record<string, unknown>;
  /** `fields` / `docvalue_fields` values, when asked for. */
  readonly fields?: Record<string, unknown[]>;
}

/** What {@link VectorIndex.search} answers: the hits, best first, and the search's own figures. */
export interface SearchResult {
  readonly hits: readonly SearchHit[];
  /** Number of candidates the inner (first-phase) query matched (Lucene's totalHits). */
  readonly totalHits: number;
  readonly stats: SearchStats;
}

/** A search's own figures: the engine's, and for a search with a recall target the setting it ran. */
export interface SearchStats extends QueryStats {
  readonly recall?: RecallUsed;
}

/** What {@link VectorIndex.calibrate} measures with. */
export interface CalibrateOptions {
  /** Held-out queries (count x dims floats), searched as given. Default: a sample of the index's own live docs. */
  readonly queries?: Float32Array;
  /** Docs sampled as queries when no held-out ones are given (default 200). */
  readonly sample?: number;
  /** Stored with the calibration as the target of searches that name no setting; default: the one stored before, else none. */
  readonly defaultTarget?: number | null;
}

/** How a search with a recall target ran (its `stats.recall`). */
export interface RecallUsed {
  /** The recall@10 asked for (or the index's default target). */
  readonly target: number;
  readonly oversample: number;
  readonly numCandidates: number;
  /** The calibration's lower confidence bound on recall@10 at this setting. */
  readonly calibratedRecall: number;
  /** False only for an index's default target no measured setting reaches: the best one ran. */
  readonly reached: boolean;
}

/** One segment of an index, as {@link VectorIndex.describe} reports it. */
export interface SegmentDescription {
  readonly name: string;
  readonly docBase: number;
  readonly docs: number;
  readonly hasGraph: boolean;
  readonly bytes: { readonly vectors: number; readonly codes: number; readonly graph: number };
}

/** An open index, as {@link VectorIndex.describe} (and `GET /v1/indexes`) reports it. */
export interface IndexDescription {
  readonly name: string;
  readonly dir: string;
  readonly field: string;
  readonly similarity: string;
  readonly dims: number;
  /** Docs in the segments (deleted ones included, as Lucene's maxDoc), plus those written since the last commit. */
  readonly docs: number;
  /** Docs written since the last commit and searched without a segment (PendingDocsIndex); absent: none. */
  readonly pendingDocs?: number;
  readonly segments: readonly SegmentDescription[];
  readonly bytes: { readonly vectors: number; readonly codes: number; readonly graph: number; readonly total: number };
  /** Fraction of fp32 vector pages currently in the page cache (mincore), in [0, 1]. */
  readonly residentFraction: number;
  readonly defaultReadPath: ReadPath;
  /** Where the first phase runs ('codes': 1-bit codes in RAM; 'graph': the graph and fp32 vectors on disk). */
  readonly firstPhase?: 'codes' | 'graph';
  /** RAM the first phase holds for this index (codes and graphs once per process, scratch per worker). */
  readonly memory: IndexMemory;
  /** What oversample reaches what recall on this index (null: not measured yet; absent: not an open index). */
  readonly calibration?: RecallCalibration | null;
  /** A calibration is being measured. */
  readonly calibrating?: boolean;
  /** The recall target of searches that name none of oversample, numCandidates, recallTarget. */
  readonly recallTarget?: number;
}

/**
 * The first phase's memory, in bytes. `held`: an open index (scratch as planned per worker; the
 * workers claim it as they first search); `planned`: what opening would hold (prescore info).
 */
export interface IndexMemory {
  readonly state: 'held' | 'planned';
  /** 1-bit records: (ceil(dims / 8) + 16) bytes per vector. */
  readonly codes: number;
  /** Neighbour lists (level 0: 4 (2M + 1) bytes per vector; upper levels ~1/M of that) and live-ords bitsets. */
  readonly graphs: number;
  /** Per worker: visit stamps and heaps for the largest segment (12 bytes per vector), queues, query scratch. */
  readonly scratchPerWorker: number;
  /** Scratch regions the workers have claimed in the arenas so far (0 when planned; touched lazily, so an upper bound of what is resident). */
  readonly scratchClaimed: number;
  readonly workers: number;
  /** codes + graphs + workers x scratchPerWorker. */
  readonly total: number;
  /** Shared WebAssembly memories holding the data (each at most 4 GiB). */
  readonly arenas: number;
  /** (codes + graphs) / vectors. */
  readonly bytesPerVector: number;
}

/** An open index. Safe for concurrent searches. */
export interface VectorIndex {
  readonly name: string;
  readonly dims: number;
  /**
   * The `options.k` nearest docs to `vector`: the first phase over every segment, then fp32 rescoring of k x oversample candidates.
   *
   * @example
   * ```ts
   * const { hits } = await index.search(vector, { k: 10, oversample: 3 });
   * ```
   */
  search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult>;
  /** Segments, sizes, memory held and the fraction of fp32 pages resident. */
  describe(): Promise<IndexDescription>;
  /**
   * False once the directory holds a newer commit than the one served (and when the index cannot
   * tell); a server then reopens it on `POST /:index/_refresh` or SIGHUP. Absent: never reopened.
   */
  isCurrent?(): boolean;
  /** The generation of the commit this index serves (a prescore index directory); null or absent: it has none. */
  commitGeneration?(): number | null;
  /** Releases mappings and, if this was the last open index, the executor. */
  close(): Promise<void>;
  /**
   * Measures what oversample and beam reach what recall@10 on this index (its own docs as queries, or
   * held-out ones), keeps it for recallTarget searches and stores it in a prescore index directory.
   *
   * @example
   * ```ts
   * const c = await index.calibrate!({ defaultTarget: 0.95 });
   * const { stats } = await index.search(vector, { k: 10, recallTarget: 0.95 });
   * ```
   */
  calibrate?(options?: CalibrateOptions): Promise<RecallCalibration>;
  /** The index's mapping as Elasticsearch shows it (`GET /:index/_mapping`); null when none is known. */
  mapping?(): Record<string, unknown> | null;
  /** The document with a user-facing id, or null (Elasticsearch's GET `_doc`). */
  get?(id: string, options?: GetOptions): Promise<IndexedDoc | null>;
  /** Live documents a filter accepts (all live documents without one): Elasticsearch's `_count`. */
  count?(filter?: KnnFilter | FilterQuery | null): Promise<number>;
  /** Lucene's IndexSearcher.storedFields(): a document by global doc number. */
  storedFields?(): {
    /** The document with global doc number `doc`. */
    document(doc: number, options?: GetOptions): IndexedDoc;
  };
  /** The docs a filter accepts, in doc order (a filter-only query): `size` of them from `from`, and how many there are. */
  match?(filter: FilterQuery, options: GetOptions & { readonly from: number; readonly size: number }): Promise<{ readonly total: number; readonly hits: readonly IndexedDoc[] }>;
}

/** The largest `k` a search may ask for. */
export const MAX_K = 10_000;
/** The largest `numCandidates` (HNSW beam) a search may ask for. */
export const MAX_NUM_CANDIDATES = 10_000;
/** The smallest `oversample`: rescoring exactly the k first-phase hits. */
export const MIN_OVERSAMPLE = 1;
/**
 * Up to 100: 1-bit codes on hard data need oversample 20-50 for recall 0.99 (bench:recall;
 * docs/recall-and-tuning.md), bounded by MAX_RESCORE_CANDIDATES and the rescoring I/O budget.
 */
export const MAX_OVERSAMPLE = 100;
/** At most this many first-phase candidates (k x oversample) are rescored per query. */
export const MAX_RESCORE_CANDIDATES = 10_000;
/** Measured on the demo (`npm run bench:defaults`, k=10, the default beam): recall@10 0.885 at 3, 0.926 at 5, 0.952 at 8. */
export const DEFAULT_OVERSAMPLE = 5;
