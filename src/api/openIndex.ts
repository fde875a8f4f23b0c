import { basename } from 'node:path';
import { Executor } from '../executor/Executor.js';
import { LOAD_RESIDENT } from '../executor/tasks.js';
import { residentFraction } from '../../segments/store/native/PageCache.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { leafOf, type IndexReader } from '../../segments/index/IndexReader.js';
import { openablePath, type SegmentHandle } from '../../segments/index/SegmentHandle.js';
import { loadResidentSegment } from '../../segments/index/SegmentLoader.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { planArenas } from '../../segments/index/Arena.js';
import { ResidentIndex, type ResidentMemory } from '../../segments/index/ResidentIndex.js';
import { IndexSearcher } from '../../query/IndexSearcher.js';
import { KnnFloatVectorQuery, type FirstPhase, type KnnFilter } from '../../query/KnnFloatVectorQuery.js';
import type { SegmentFilter } from '../../segments/index/searchSegment.js';
import { FilterQuery } from '../../query/filter/FilterQuery.js';
import { FilterCache } from '../../query/filter/FilterCache.js';
import { FixedBitSet, NO_MORE_DOCS } from '../../query/filter/FixedBitSet.js';
import { DocValuesFilterLeaf, type FieldTypes } from '../../query/filter/DocValuesFilterLeaf.js';
import { fetchDocuments, NO_FETCH, type FetchContext } from '../../query/fetch/FetchPhase.js';
import { fetchOptions } from './fetchOptions.js';
import { LOAD_SEGMENTS } from '../../query/knn/knnSlice.js';
import { RescoreTopNQuery } from '../../query/RescoreTopNQuery.js';
import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';
import { QueryProfiler } from '../../query/QueryProfiler.js';
import type { RescoreThread } from '../../query/rescore/RescoreThread.js';
import type { KnnThread } from '../../query/knn/KnnThread.js';
import { monotonicMs } from '../../query/executor/clock.js';
import {
  DEFAULT_OVERSAMPLE,
  MAX_K,
  MAX_NUM_CANDIDATES,
  MAX_OVERSAMPLE,
  MAX_RESCORE_CANDIDATES,
  MIN_OVERSAMPLE,
  SEGMENT_SEARCHES,
  type GetOptions,
  type IndexDescription,
  type IndexedDoc,
  type IndexMemory,
  type ReadPath,
  type SearchHit,
  type SearchOptions,
  type CalibrateOptions,
  type RecallUsed,
  type SearchResult,
  type SearchStats,
  type VectorIndex,
} from './types.js';
import { type CalibrateWhen, IndexRecallCalibration } from '../calibration/IndexRecallCalibration.js';
import { RecallTargetError } from '../calibration/RecallTargetError.js';
import { bestSetting, MAX_RECALL_TARGET, MIN_RECALL_TARGET, type RecallCalibration, settingFor } from '../../segments/index/RecallCalibration.js';
import type { ProgressStream } from '../progress/Progress.js';

/** Four decimals, rounded down: a lower bound shown is never more than was measured. */
function floor4(x: number): number {
  return Math.floor(x * 10_000 + 1e-6) / 10_000;
}

/**
 * What a search that names no oversample, numCandidates or recallTarget aims for on an index with
 * a calibration (without one it runs DEFAULT_OVERSAMPLE): the recall@10 a production default is
 * expected to give. A fixed oversample cannot: 5 gave 0.93 on the demo and 0.90 on the generated
 * 1M x 1024 set, and 3 is enough on MiniLM (docs/recall-and-tuning.md). bench:recall-target: the
 * 0.95 target reached 0.960 / 0.964 / 0.966 / 0.965 on held-out Fashion-MNIST cosine / euclidean,
 * MiniLM and gen 200k x 768 queries, at oversample 3 / 3 / 2 / 4.
 */
export const DEFAULT_RECALL_TARGET = 0.95;

/** The smallest HNSW beam per segment when the caller gives none (see defaultBeam). */
export const DEFAULT_NUM_CANDIDATES = 200;
/**
 * Without num_candidates, the beam is max(DEFAULT_NUM_CANDIDATES, DEFAULT_EF_PER_CANDIDATE x the
 * k x oversample candidates kept) (defaultBeam): a beam of exactly k' returns the graph's noisy
 * top k' of 1-bit scores, and at small k' a proportional margin alone is too narrow.
 * bench:recall, HNSW minus the exhaustive scan at equal candidates, recall@10, 1000 queries,
 * `prescore gen` 1M x 1024 as built (8 x 131k segments), os1 / os2 / os3 / os5 / os10:
 * - max(100, 4 k') (the previous default): -0.006 / -0.012 / -0.011 / -0.008, 8,920 visits at os5;
 * - max(200, 4 k'): -0.003 / -0.007 / -0.008 / -0.008 / -0.007, the same 8,920 visits at os5;
 * - 4 k' + 100: -0.004 / -0.008 / -0.007 / -0.007 / -0.006, 11,649 visits at os5, and warm
 *   (bench:profile 200k x 768, os5) p50 1.11 ms against 0.96 at beam 200, recall 0.9754 vs 0.9752;
 * - max(100, 8 k'): -0.006 / -0.008 / -0.006 / -0.006 / -0.004, 14,244 visits.
 * On Fashion-MNIST (one 60k segment) a beam of max(100, k') lost 0.013 at os5, 4 k' 0.008.
 */
export const DEFAULT_EF_PER_CANDIDATE = 4;

/** The HNSW beam per segment of a search keeping `candidates` (k x oversample) that names no num_candidates. */
export function defaultBeam(candidates: number): number {
  return Math.min(MAX_NUM_CANDIDATES, Math.max(DEFAULT_NUM_CANDIDATES, candidates * DEFAULT_EF_PER_CANDIDATE));
}

export interface OpenIndexOptions {
  /** Name reported by describe() and used by the HTTP API; default the directory's base name. */
  readonly name?: string;
  /** Default read path of this index's searches. */
  readonly readPath?: ReadPath;
  readonly prefetchPolicy?: PrefetchPolicyName;
  /** Executor threads (only when this open creates the process's executor). */
  readonly threads?: number;
  readonly ioConcurrency?: number;
  /**
   * At most this many bytes of segment data per shared arena (default: what wasm32 allows, ~4 GiB
   * less the workers' scratch). For tests: a small value spreads a small index over several arenas.
   */
  readonly arenaBytes?: number;
  /**
   * Where the first phase runs: 'codes' (default) over 1-bit codes and graphs each worker holds in
   * memory; 'graph' over the segments' own HNSW graph and fp32 vectors read in place from disk
   * (exact scores, nothing held in RAM, neighbour reads prefetched on the read path's budget).
   */
  readonly firstPhase?: FirstPhase;
  /** 'graph' first phase: next candidates whose neighbours are read ahead (default DEFAULT_GRAPH_LOOKAHEAD). */
  readonly lookahead?: number;
  /** Where rescoring runs by default (see RescoreThread; default `adaptive`). */
  readonly rescoreThread?: RescoreThread;
  /** Where the first phase runs by default (see KnnThread; default `adaptive`). */
  readonly knnThread?: KnnThread;
  /**
   * When an index without a recall calibration (`recall.cal`) measures one (see CalibrateWhen):
   * default 'open', in the background for indexes of at least CALIBRATE_AT_OPEN_DOCS live docs.
   */
  readonly calibrate?: CalibrateWhen;
  /**
   * The recall@10 that searches naming no oversample, numCandidates or recallTarget aim for, once
   * the index has a calibration (default: the target stored with it, else DEFAULT_RECALL_TARGET;
   * null: none, such searches run DEFAULT_OVERSAMPLE). Without a calibration they run DEFAULT_OVERSAMPLE.
   */
  readonly recallTarget?: number | null;
  /** Progress of a calibration on stderr (default), off, or to a stream. */
  readonly calibrationProgress?: boolean | ProgressStream;
}

let openCount = 0;

/**
 * A filtered search rescores every accepted doc when the filter accepts at most this many (over
 * all segments): then its hits are the exact top k among them. Rescoring 1,000 docs costs about
 * what rescoring k x oversample = 50 does when warm times 20 (fp32 dot products, ~0.3 us each at
 * 1024 dims), and lifts recall to 1 where the 1-bit first phase would pick 50 of them. Measured on
 * gen 1M x 1024, filters accepting 0.1% (1,000 docs), 100 queries: recall@10 1.000 / 1.000 / 1.000
 * (uniform / correlated / anti-correlated) at about 3 ms more per search, against 1.000 / 0.993 /
 * 0.979 when only the first phase's best 50 are rescored. Elasticsearch makes the same trade: a
 * filter matching fewer docs than num_candidates is searched exactly.
 */
export const RESCORE_ALL_ACCEPTED = 1_000;

/**
 * Every search option, so that one the library does not know (a typo, or an option of another
 * version such as `recall_target`) is refused rather than silently ignored, as the HTTP API
 * refuses unknown fields. The Record type makes the compiler ask for each new option here.
 */
const SEARCH_OPTION_KEYS: Readonly<Record<keyof SearchOptions, true>> = {
  k: true,
  numCandidates: true,
  oversample: true,
  readPath: true,
  prefetchPolicy: true,
  recallTarget: true,
  signal: true,
  profile: true,
  rescoreThread: true,
  knnThread: true,
  leaderReadAhead: true,
  segmentSearch: true,
  callerThread: true,
  filter: true,
  source: true,
  fields: true,
  docvalueFields: true,
};

/** What hits carry, from the search's (or a get's) source / fields / docvalue_fields options. */

/** The filter's accepted docs per leaf, computed once for this search (the facade and the query both ask), and the time that took. */
function onceForThisSearch(filter: KnnFilter): KnnFilter & { readonly ms: number } {
  const byLeaf = new Map<number, SegmentFilter>();
  let ms = 0;
  return {
    accepted(leaf) {
      let f = byLeaf.get(leaf.ord);
      if (f === undefined) {
        const t0 = performance.now();
        byLeaf.set(leaf.ord, (f = filter.accepted(leaf)));
        ms += performance.now() - t0;
      }
      return f;
    },
    get ms() {
      return ms;
    },
    toString: () => filter.toString(),
  };
}

/** Opens prescore's own index directory (see `prescore build`). */
export async function openIndex(dir: string, options: OpenIndexOptions = {}): Promise<VectorIndex> {
  return openReader(DirectoryReader.open(dir), options);
}

/** Wraps any IndexReader (prescore's or a Lucene directory's) as a VectorIndex. */
export async function openReader(reader: IndexReader, options: OpenIndexOptions = {}): Promise<VectorIndex> {
  if (options.recallTarget != null) checkRecallTarget(options.recallTarget, 'recallTarget');
  const executor = Executor.get({ threads: options.threads });
  let resident: ResidentIndex | null = null;
  let searcher: IndexSearcher;
  const firstPhase = options.firstPhase ?? 'codes';
  const warm = warmedUp.get(executor)?.has(firstPhase) === true;
  let calibration: RecallCalibration | null;
  try {
    calibration = IndexRecallCalibration.readStored(reader);
    // The codes and graphs are read once for the process, into shared arenas, one task per
    // segment (segments load in parallel on the workers; the event loop stays free). The on-disk
    // first phase holds none: it maps the graph and vectors on first use.
    if (options.firstPhase !== 'graph') {
      resident = await ResidentIndex.load(reader, {
        threads: executor.threads,
        arenaBytes: options.arenaBytes,
        // A small segment (a refresh's) loads here at once: a task would wait for a free worker,
        // and while merges and builds hold them that held the refresh for seconds.
        load: (handle) => (residentBytes(handle) <= LOAD_HERE_BYTES ? Promise.resolve(loadResidentSegment(handle)) : executor.run(LOAD_RESIDENT, { handle })),
      });
    }
    searcher = new IndexSearcher(resident ? resident.reader : reader, {
      executor,
      readPath: options.readPath,
      prefetchPolicy: options.prefetchPolicy,
      ioConcurrency: options.ioConcurrency,
      rescoreThread: options.rescoreThread,
      knnThread: options.knnThread,
    });
    // Each worker makes its instances over the arenas and its per-segment state now, not in the
    // first query. Concurrent tasks land on distinct idle workers, so `threads` of them reach every
    // worker. A reopen (the pool has served an index already) does not wait for them: they wait
    // for every worker, however long a merge or a build holds one (a refresh waited seconds).
    if (resident) {
      const segments = resident.reader.leaves.map((l) => l.reader.handle);
      const loading = Promise.all(Array.from({ length: executor.threads }, () => executor.run(LOAD_SEGMENTS, { segments })));
      if (warm)
        loading.catch(() => {}); // a search sends a worker what it has not loaded (SegmentRefs)
      else await loading;
    }
  } catch (e) {
    release(executor, reader.id, resident);
    if (openCount === 0) await Executor.shutdownSearch();
    throw e;
  }
  openCount++;
  const index = new SearchableIndex(options.name ?? basename(reader.dir), reader, searcher, resident, executor, calibration, {
    firstPhase: options.firstPhase ?? 'codes',
    lookahead: options.lookahead ?? DEFAULT_GRAPH_LOOKAHEAD,
    calibrate: options.calibrate ?? 'open',
    recallTarget: options.recallTarget,
    calibrationProgress: options.calibrationProgress,
  });
  const warmed = warmedUp.get(executor) ?? new Set<FirstPhase>();
  if (!warm) {
    await warmUp(index, resident ? resident.reader : reader, executor.threads);
    warmed.add(firstPhase);
    warmedUp.set(executor, warmed);
  }
  index.calibration.startAtOpen();
  return index;
}

/** A recall target must be a fraction a calibration can measure. */
function checkRecallTarget(target: number, name: string): void {
  if (!(typeof target === 'number' && target >= MIN_RECALL_TARGET && target <= MAX_RECALL_TARGET)) {
    throw new RangeError(`${name} must be a recall@10 in [${MIN_RECALL_TARGET}, ${MAX_RECALL_TARGET}], got ${String(target)}`);
  }
}

/** Segments whose codes and graph take at most this many bytes load on the calling thread at open (~1-2 ms). */
const LOAD_HERE_BYTES = 4 * 2 ** 20;

function residentBytes(handle: SegmentHandle): number {
  const r = handle.resident;
  return r === null ? 0 : r.bytes.codes + r.bytes.graph;
}

/**
 * The first phases whose warm-up each executor's workers (and this thread) have run: it compiles
 * code, so it is needed once per pool, not per open. A refresh reopens the index every second
 * while writes come, and would pay its warm-up searches (4 rounds) on each.
 */
const warmedUp = new WeakMap<Executor, Set<FirstPhase>>();

/** Frees what `readerId` and its resident segments hold on every thread (the reader's state first, then arenas no open index holds). */
function release(executor: Executor | null, readerId: number, resident: ResidentIndex | null): void {
  const arenas = resident?.release() ?? [];
  if (!executor) return;
  executor.releaseIndex(readerId);
  for (const id of arenas) executor.releaseIndex(id);
}

/**
 * Default read-ahead of the 'graph' first phase: the neighbours of the next 2 candidates. Measured
 * (`npm run bench:graph`, 500k x 768, 2 segments, 200 queries, variants interleaved, load 6-8): on
 * the default read path (mmap+parallel) capped at 25% of .vec + .vex, p50 1.99x lower than prefetch
 * off with lookahead 2 against 1.66x without, 3% of the reads wasted; fully resident -7.8% against
 * +4.0%. Lookahead 8 gained little more capped (2.09x) for 9% wasted reads.
 */
export const DEFAULT_GRAPH_LOOKAHEAD = 2;

/**
 * Rounds of warm-up searches at open: each round runs `threads` searches at once with the first
 * phase and rescoring on the executor (so every worker runs both), then one on the calling thread,
 * so that the JIT has compiled every path a query can take before the first one arrives. Six
 * sequential searches (the earlier warm-up) ran nearly all on the calling thread once placement
 * became adaptive. Measured (1M x 1024, 8 segments, 2 workers, fp32 cold, 100 requests/s from the
 * first second through the HTTP server without its own warm-up): 0 rounds, 0.5-0.65 s per answer
 * for 3 s; 24 rounds, 0.33 s in the first quarter second, 25 ms from 1.25 s. The HTTP request path
 * needs its own warm-up for the rest (src/http/warmUp.ts), so the engine's stays short: its
 * searches are part of the open, and with the first phase on disk each of them reads cold pages.
 */
const WARMUP_ROUNDS = 4;

async function warmUp(index: VectorIndex, reader: IndexReader, threads: number): Promise<void> {
  const centroids = reader.leaves.map((l) => l.reader.handle.quantized?.centroid).filter((c): c is Float32Array => c !== undefined);
  if (centroids.length === 0) return;
  // Segment centroids, nudged so that queries differ (a zero vector is no query).
  let n = 0;
  const query = () => {
    const i = n++;
    const c = centroids[i % centroids.length];
    return Float32Array.from(c, (v, j) => v + (j === i % c.length ? 0.01 : 0));
  };
  for (let round = 0; round < WARMUP_ROUNDS; round++) {
    await Promise.all(Array.from({ length: threads }, () => index.search(query(), { k: 10, knnThread: 'executor', rescoreThread: 'executor' })));
    await index.search(query(), { k: 10, knnThread: 'caller', rescoreThread: 'caller' });
  }
}

class SearchableIndex implements VectorIndex {
  private closed = false;
  /** Filter bitsets per segment, on this (the calling) thread. */
  private readonly filterCache = new FilterCache();
  private readonly types: FieldTypes = (field) => this.reader.mapping?.field(field);
  private get fetchContext(): FetchContext {
    return { reader: this.reader, vectorField: this.reader.field.name, types: this.types, fieldPaths: () => this.reader.mapping?.fieldPaths ?? [] };
  }

  /** What oversample reaches what recall on this index (recallTarget searches). */
  readonly calibration: IndexRecallCalibration;
  private readonly threads: number;

  constructor(
    readonly name: string,
    readonly reader: IndexReader,
    readonly searcher: IndexSearcher,
    private readonly resident: ResidentIndex | null,
    executor: Executor,
    calibration: RecallCalibration | null,
    private readonly firstPhase: {
      readonly firstPhase: FirstPhase;
      readonly lookahead: number;
      readonly calibrate: CalibrateWhen;
      readonly recallTarget?: number | null;
      readonly calibrationProgress?: boolean | ProgressStream;
    },
  ) {
    this.threads = executor.threads;
    this.calibration = new IndexRecallCalibration(calibration, reader, executor, this, {
      when: firstPhase.calibrate,
      beam: defaultBeam,
      progress: firstPhase.calibrationProgress,
      onError: (e) => {
        if (!this.closed) console.error(`prescore: index ${name}: recall calibration: ${e instanceof Error ? e.message : String(e)}`);
      },
    });
  }

  /**
   * The oversample and beam a search with a recall target runs with, from the calibration: the
   * cheapest setting measured to reach the target (settingFor). An asked-for target no setting reaches is
   * refused; the index's default target then takes the best setting measured, saying so.
   */
  private async recallSetting(options: SearchOptions): Promise<{ oversample: number | undefined; numCandidates: number | undefined; recall?: RecallUsed }> {
    const asked = options.recallTarget;
    if (asked !== undefined) {
      checkRecallTarget(asked, 'recallTarget');
      if (options.oversample !== undefined || options.numCandidates !== undefined) {
        throw new RangeError('recallTarget chooses oversample and numCandidates: give either recallTarget or those, not both');
      }
    }
    const target = asked ?? (options.oversample === undefined && options.numCandidates === undefined ? this.defaultRecallTarget() : undefined);
    if (target === undefined) return { oversample: options.oversample, numCandidates: options.numCandidates };
    // A default target does not wait for a calibration under way: until it lands, the default search runs.
    const calibration = asked !== undefined ? await this.calibration.require() : this.calibration.get();
    if (calibration === null) return { oversample: undefined, numCandidates: undefined };
    let point = settingFor(calibration, target) ?? bestSetting(calibration);
    if (point.lowerBound < target && asked !== undefined) {
      throw new RecallTargetError(
        `recall target ${asked} is above what index ${this.name}'s calibration measured: at best recall@${calibration.k} >= ${floor4(point.lowerBound)} (oversample ${point.oversample})`,
      );
    }
    // k x oversample candidates are at most MAX_RESCORE_CANDIDATES: an asked target that needs more
    // is refused; the default target takes the largest measured setting that fits, saying so.
    if (Math.ceil(options.k * point.oversample) > MAX_RESCORE_CANDIDATES) {
      if (asked !== undefined) {
        throw new RecallTargetError(
          `recall target ${asked} needs oversample ${point.oversample}: k ${options.k} x ${point.oversample} exceeds ${MAX_RESCORE_CANDIDATES} candidates; lower k`,
        );
      }
      const fits = calibration.points.filter((p) => Math.ceil(options.k * p.oversample) <= MAX_RESCORE_CANDIDATES);
      if (fits.length === 0) return { oversample: undefined, numCandidates: undefined };
      // The best bound among them (a larger oversample's smaller beam can reach less than its default one).
      point = fits.reduce((best, p) => (p.lowerBound > best.lowerBound ? p : best));
    }
    // The beam measured at the calibration's k; at another k never less than the default beam of
    // its candidates (a beam measured for 10 hits says nothing of a smaller one for 100).
    const numCandidates = options.k === calibration.k ? point.numCandidates : Math.max(point.numCandidates, defaultBeam(Math.ceil(options.k * point.oversample)));
    return {
      oversample: point.oversample,
      numCandidates,
      recall: { target, oversample: point.oversample, numCandidates, calibratedRecall: floor4(point.lowerBound), reached: point.lowerBound >= target },
    };
  }

  async calibrate(options: CalibrateOptions = {}): Promise<RecallCalibration> {
    if (this.closed) throw new Error(`index ${this.name} is closed`);
    if (options.defaultTarget != null) checkRecallTarget(options.defaultTarget, 'defaultTarget');
    // One under way (from open) measured without these options: let it end, then measure as asked.
    if (this.calibration.measuring) await this.calibration.require().catch(() => {});
    return this.calibration.measure({ ...options, mustStore: true });
  }

  private defaultRecallTarget(): number | undefined {
    const calibration = this.calibration.get();
    if (calibration === null || this.firstPhase.recallTarget === null) return undefined;
    return this.firstPhase.recallTarget ?? calibration.defaultTarget ?? DEFAULT_RECALL_TARGET;
  }

  get dims(): number {
    return this.reader.field.dims;
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    const profiler = options.profile instanceof QueryProfiler ? options.profile : options.profile ? new QueryProfiler('library') : null;
    const enteredAt = profiler ? monotonicMs() : 0;
    if (this.closed) throw new Error(`index ${this.name} is closed`);
    for (const key in options) {
      if (!Object.hasOwn(SEARCH_OPTION_KEYS, key)) throw new RangeError(`unknown search option ${JSON.stringify(key)}; known: ${Object.keys(SEARCH_OPTION_KEYS).join(', ')}`);
    }
    const { k } = options;
    if (!(Number.isInteger(k) && k >= 1 && k <= MAX_K)) throw new RangeError(`k must be an integer in [1, ${MAX_K}], got ${k}`);
    const setting =
      options.recallTarget !== undefined || (options.oversample === undefined && options.numCandidates === undefined && this.defaultRecallTarget() !== undefined)
        ? await this.recallSetting(options)
        : null;
    const oversample = (setting ? setting.oversample : options.oversample) ?? DEFAULT_OVERSAMPLE;
    const numCandidates = setting ? setting.numCandidates : options.numCandidates;
    if (!(oversample >= MIN_OVERSAMPLE && oversample <= MAX_OVERSAMPLE)) {
      throw new RangeError(`oversample must be in [${MIN_OVERSAMPLE}, ${MAX_OVERSAMPLE}], got ${oversample}`);
    }
    if (numCandidates !== undefined && !(Number.isInteger(numCandidates) && numCandidates >= k && numCandidates <= MAX_NUM_CANDIDATES)) {
      throw new RangeError(`numCandidates must be an integer in [k, ${MAX_NUM_CANDIDATES}], got ${numCandidates}`);
    }
    if (options.segmentSearch !== undefined && !(SEGMENT_SEARCHES as readonly string[]).includes(options.segmentSearch)) {
      throw new RangeError(`segmentSearch must be one of ${SEGMENT_SEARCHES.join(', ')}, got ${String(options.segmentSearch)}`);
    }
    if (vector.length !== this.dims) throw new RangeError(`vector has ${vector.length} dims, index ${this.name} has ${this.dims}`);
    if (this.reader.field.similarity === VectorSimilarityFunction.COSINE && vector.every((x) => x === 0)) {
      throw new RangeError(`the query vector is all zeros; cosine similarity is undefined for a zero vector (index ${this.name} is cosine)`);
    }
    const field = this.reader.field.name;
    let candidates = Math.ceil(k * oversample);
    if (candidates > MAX_RESCORE_CANDIDATES) {
      throw new RangeError(`k x oversample must be at most ${MAX_RESCORE_CANDIDATES}, got ${k} x ${oversample} = ${candidates}`);
    }
    const filter = options.filter ? onceForThisSearch(options.filter instanceof FilterQuery ? this.knnFilter(options.filter) : options.filter) : null;
    if (filter) {
      // Few accepted docs: rescore every one of them (exact top k, recall 1) rather than the first
      // phase's best k x oversample, which the 1-bit estimate may order wrongly.
      const accepted = this.reader.leaves.reduce((a, leaf) => a + filter.accepted(leaf).cardinality, 0);
      if (accepted <= RESCORE_ALL_ACCEPTED) candidates = Math.max(1, Math.min(accepted, MAX_RESCORE_CANDIDATES));
    }
    const knn = new KnnFloatVectorQuery(field, vector, candidates, {
      numCandidates: numCandidates !== undefined ? Math.max(candidates, numCandidates) : defaultBeam(candidates),
      firstPhase: this.firstPhase.firstPhase,
      lookahead: this.firstPhase.lookahead,
      segmentSearch: options.segmentSearch,
      filter,
    });
    const query = RescoreTopNQuery.createFullPrecisionRescorerQuery(knn, vector, field, k);
    profiler?.phase('library.prepare', enteredAt);
    const outcome = await this.searcher.search(query, k, {
      readPath: options.readPath,
      prefetchPolicy: options.prefetchPolicy,
      signal: options.signal,
      profile: profiler ?? undefined,
      rescoreThread: options.rescoreThread,
      knnThread: options.knnThread,
      leaderReadAhead: options.leaderReadAhead,
      callerThread: options.callerThread,
    });
    const hitsAt = profiler ? monotonicMs() : 0;
    const leaves = this.reader.leaves;
    const fetch = fetchOptions(options);
    const fetched =
      fetch === NO_FETCH
        ? null
        : fetchDocuments(
            this.fetchContext,
            outcome.topDocs.scoreDocs.map((sd) => sd.doc),
            fetch,
          );
    const hits: SearchHit[] = outcome.topDocs.scoreDocs.map((sd, i) => {
      const leaf = leafOf(leaves, sd.doc);
      const hit: SearchHit = { id: leaf.reader.id(sd.doc - leaf.docBase), doc: sd.doc, score: sd.score };
      const f = fetched?.[i];
      return f === undefined ? hit : { ...hit, ...(f.source ? { source: f.source } : {}), ...(f.fields ? { fields: f.fields } : {}) };
    });
    let stats: SearchStats = filter ? { ...outcome.stats, timings: { ...outcome.stats.timings, filterMs: Math.round(filter.ms * 1000) / 1000 } } : outcome.stats;
    if (setting?.recall) stats = { ...stats, recall: setting.recall };
    if (!profiler) return { hits, totalHits: outcome.topDocs.totalHits.value, stats };
    profiler.phase('library.hits', hitsAt);
    return { hits, totalHits: outcome.topDocs.totalHits.value, stats: { ...stats, profile: profiler.toProfile() } };
  }

  /** A filter query as the first phase takes it: each segment's bitset from the cache (built on a miss), its cardinality. */
  private knnFilter(query: FilterQuery): KnnFilter {
    return {
      accepted: (leaf) => {
        const fl = DocValuesFilterLeaf.of(leaf, this.types);
        const bits = fl === null ? new FixedBitSet(leaf.reader.maxDoc) : this.filterCache.bitset(query, fl);
        return { bits: bits.bits, cardinality: bits.cardinality() };
      },
      toString: () => query.toString(),
    };
  }

  mapping(): Record<string, unknown> | null {
    return this.reader.mapping?.toJSON() ?? null;
  }

  async get(id: string, options: GetOptions = { source: true }): Promise<IndexedDoc | null> {
    if (this.closed) throw new Error(`index ${this.name} is closed`);
    for (const leaf of this.reader.leaves) {
      const fl = DocValuesFilterLeaf.of(leaf, this.types);
      const local = fl === null ? -1 : fl.docForId(id);
      if (local < 0 || (fl!.liveDocs !== null && ((fl!.liveDocs[local >>> 5]! >>> (local & 31)) & 1) === 0)) continue;
      return this.storedFields().document(leaf.docBase + local, options);
    }
    return null;
  }

  async count(filter: KnnFilter | FilterQuery | null = null): Promise<number> {
    if (this.closed) throw new Error(`index ${this.name} is closed`);
    const f = filter === null ? null : filter instanceof FilterQuery ? this.knnFilter(filter) : filter;
    let n = 0;
    for (const leaf of this.reader.leaves) {
      if (f !== null) n += f.accepted(leaf).cardinality;
      else n += leaf.reader.liveDocs ? new FixedBitSet(leaf.reader.maxDoc, leaf.reader.liveDocs).cardinality() : leaf.reader.maxDoc;
    }
    return n;
  }

  async match(filter: FilterQuery, options: GetOptions & { readonly from: number; readonly size: number }): Promise<{ total: number; hits: IndexedDoc[] }> {
    if (this.closed) throw new Error(`index ${this.name} is closed`);
    const f = this.knnFilter(filter);
    const want = options.from + options.size;
    const docs: number[] = [];
    let total = 0;
    for (const leaf of this.reader.leaves) {
      const accepted = f.accepted(leaf);
      total += accepted.cardinality;
      const bits = new FixedBitSet(leaf.reader.maxDoc, accepted.bits);
      for (let d = bits.nextSetBit(0); docs.length < want && d !== NO_MORE_DOCS; d = d + 1 < leaf.reader.maxDoc ? bits.nextSetBit(d + 1) : NO_MORE_DOCS)
        docs.push(leaf.docBase + d);
    }
    const page = docs.slice(options.from, want);
    const fetched = fetchDocuments(this.fetchContext, page, fetchOptions(options));
    return { total, hits: page.map((doc, i) => ({ doc, ...fetched[i]! })) };
  }

  storedFields(): { document(doc: number, options?: GetOptions): IndexedDoc } {
    return {
      document: (doc, options = { source: true }) => {
        const [f] = fetchDocuments(this.fetchContext, [doc], fetchOptions(options));
        return { doc, ...f! };
      },
    };
  }

  /** The generation of the commit served (a prescore index directory), else null. */
  commitGeneration(): number | null {
    return this.reader instanceof DirectoryReader ? this.reader.commit.generation : null;
  }

  /** False once the directory holds a newer commit than this index serves (also when the reader cannot tell). */
  isCurrent(): boolean {
    return this.reader.isCurrent?.() ?? false;
  }

  async describe(): Promise<IndexDescription> {
    const described = describeReader(this.reader, this.name, this.searcher.readPath, { threads: this.threads, held: this.resident?.memory() });
    const recallTarget = this.defaultRecallTarget();
    return {
      ...described,
      firstPhase: this.firstPhase.firstPhase,
      calibration: this.calibration.get(),
      calibrating: this.calibration.measuring,
      ...(recallTarget !== undefined ? { recallTarget } : {}),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.calibration.close();
    // Tasks whose slices searches took back may still be queued: they answer at once, and must
    // before the pool is destroyed (an answer after that is an error in the pool).
    await this.searcher.takenBack.drained();
    this.reader.close();
    // Workers free this index's per-segment state and mappings, and the arenas of segments no
    // open index shares; the last open index takes the pool with it.
    release(Executor.exists() ? Executor.get() : null, this.reader.id, this.resident);
    if (--openCount === 0) await Executor.shutdownSearch();
  }
}

/**
 * What `GET /v1/indexes` and `prescore info` report: field, dims, similarity, segments, bytes,
 * the fraction of fp32 vector pages in the page cache (mincore), and the memory the first phase
 * holds: measured for an open index (`held`), else planned for `threads` workers. Needs no executor.
 */
export function describeReader(
  reader: IndexReader,
  name: string,
  defaultReadPath: ReadPath,
  memory: { readonly threads: number; readonly held?: ResidentMemory },
): IndexDescription {
  const segments = reader.leaves.map((l) => ({
    name: l.reader.name,
    docBase: l.docBase,
    docs: l.reader.maxDoc,
    hasGraph: l.reader.handle.graph !== null,
    bytes: l.reader.bytes,
  }));
  const bytes = { vectors: 0, codes: 0, graph: 0, total: 0 };
  let resident = 0;
  for (const s of reader.leaves) {
    bytes.vectors += s.reader.bytes.vectors;
    bytes.codes += s.reader.bytes.codes;
    bytes.graph += s.reader.bytes.graph;
    const v = s.reader.handle.vectors;
    // Through the reader's held descriptor: the file may have been deleted by a rebuild in place.
    if (v.size > 0) resident += residentFraction(openablePath(v)) * s.reader.bytes.vectors;
  }
  bytes.total = bytes.vectors + bytes.codes + bytes.graph;
  return {
    name,
    dir: reader.dir,
    field: reader.field.name,
    similarity: reader.field.similarity.userName,
    dims: reader.field.dims,
    docs: reader.maxDoc,
    segments,
    bytes,
    residentFraction: bytes.vectors > 0 ? resident / bytes.vectors : 0,
    defaultReadPath,
    memory: describeMemory(reader, memory.threads, memory.held),
  };
}

/** Bytes the first phase holds (or, before open, would hold) in RAM: codes, graphs, per-worker scratch. */
function describeMemory(reader: IndexReader, threads: number, held?: ResidentMemory): IndexMemory {
  const m =
    held ??
    planArenas(
      reader.leaves.map((l) => l.reader.handle),
      { threads },
    ).bytes;
  const scratch = threads * m.scratchPerWorker;
  const vectors = reader.leaves.reduce((a, l) => a + l.reader.handle.vectors.size, 0);
  return {
    state: held ? 'held' : 'planned',
    codes: m.codes,
    graphs: m.graphs,
    scratchPerWorker: m.scratchPerWorker,
    scratchClaimed: held?.scratchClaimed ?? 0,
    workers: threads,
    total: m.codes + m.graphs + scratch,
    arenas: m.arenas,
    bytesPerVector: vectors > 0 ? (m.codes + m.graphs) / vectors : 0,
  };
}
