import { DocAndScoreQuery } from './DocAndScoreQuery.js';
import { Query, callerTurns, executorIdle, type LeafSlice, type SearchContext, type Searcher } from './Query.js';
import type { ScoreDoc } from './ScoreDoc.js';
import { TopDocs } from './TopDocs.js';
import { GlobalSimilarityQueue } from '../segments/hnsw/GlobalSimilarityQueue.js';
import { KNN_SLICE, isSliceTaken, knnSlice, takeBack, type KnnSliceArgs, type KnnSliceResult, type SliceTaken } from './knn/knnSlice.js';
import { isUnknownSegments, runOnSegments } from './SegmentRefs.js';
import { KNN_GRAPH, type GraphIo, type GraphSliceArgs } from './knn/graphSlice.js';
import { budgetShare, withBudget } from './prefetch/IoBudget.js';
import { POLICY_STATE_INTS, believedResident, type PrefetchPolicyName } from './prefetch/PrefetchPolicy.js';
import { MIN_READ_AHEAD_CANDIDATES, leaderCount, type LeaderReadAhead } from './prefetch/LeaderReadAhead.js';
import type { LeafReaderContext } from '../segments/index/IndexReader.js';
import type { ReadPath } from './ReadPath.js';
import type { SegmentFilter, SegmentKnnResult } from '../segments/index/searchSegment.js';
import type { SegmentSearch } from '../segments/index/SegmentSearchPlan.js';
import { monotonicMs } from './executor/clock.js';
import { round3 } from './QueryStatsCollector.js';
import type { FirstPhaseWhere } from './knn/KnnThread.js';
import type { TaskHop } from './executor/TaskHop.js';
import type { CallerTurns } from './CallerThread.js';

/** The profile's phase for each placement of the first phase. */
const KNN_PHASE: Record<FirstPhaseWhere, string> = { caller: 'knn.onCaller', executor: 'knn.executor', worker: 'knn.worker', 'caller+executor': 'knn.callerAndExecutor' };

/** Options of {@link KnnFloatVectorQuery} beyond Lucene's constructor arguments. */
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
  /**
   * How each segment of the 'codes' first phase is searched: 'auto' (default) the graph or a flat
   * scan of its codes, whichever a cost model expects to be cheaper (small segments, a beam
   * near the segment's size: segments/index/SegmentSearchPlan.ts); 'hnsw' or 'exhaustive' force
   * one (benchmarks, diagnostics). `stats.exhaustiveSegments` counts the scanned segments.
   */
  readonly segmentSearch?: SegmentSearch;
  /**
   * 'codes' (default): the 1-bit codes and graphs held in the workers' memory. 'graph': the
   * segment's own HNSW graph (`.vex`) and fp32 vectors (`.vec`) searched in place, read through
   * the search's read path, scored with the field's exact similarity; no codes are loaded.
   * Segments are searched alone (`multiLeaf` and `graphSearch` apply to 'codes' only).
   */
  readonly firstPhase?: FirstPhase;
  /** 'graph' first phase: prefetch each hop's unvisited neighbours (default true; false reads them one at a time). */
  readonly neighborPrefetch?: boolean;
  /** 'graph' first phase: how many next candidates' neighbours to read ahead with the budget a hop leaves (default 0). */
  readonly lookahead?: number;
  /** Pre-filter: only docs it accepts are returned, min(k, accepted) of them ('codes' first phase). */
  readonly filter?: KnnFilter | null;
}

/**
 * A kNN query's pre-filter as the first phase needs it: each segment's accepted docs (live docs
 * that match), as a bitset whose words live in a SharedArrayBuffer (the workers read it in place).
 * The facade builds one from a filter query and its cache (query/filter).
 */
export interface KnnFilter {
  /** The live docs of `leaf` the filter accepts. */
  accepted(leaf: LeafReaderContext): SegmentFilter;
  /** The filter as Lucene renders it (for profiles and errors). */
  toString(): string;
}

export const FIRST_PHASES = ['codes', 'graph'] as const;
export type FirstPhase = (typeof FIRST_PHASES)[number];

/**
 * How the graph first phase reads on each read path. A graph search is sequential within a
 * segment (its parallelism is across segments), so `mmap+parallel` prefetches from the searching
 * worker exactly like `mmap+prefetch`; `mmap` is the page-fault baseline.
 */
const GRAPH_PATHS: Record<ReadPath, { readonly io: GraphIo; readonly prefetch: (p: PrefetchPolicyName) => PrefetchPolicyName | 'none' }> = {
  mmap: { io: 'mmap', prefetch: () => 'none' },
  'mmap+prefetch': { io: 'mmap', prefetch: (p) => p },
  'mmap+parallel': { io: 'mmap+uring', prefetch: (p) => p },
  pread: { io: 'uring', prefetch: () => 'always' },
};

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
    if (this.options.firstPhase === 'graph') {
      if (this.options.filter) throw new RangeError('a filtered kNN search needs the codes first phase (firstPhase: codes)');
      return this.rewriteOnDisk(searcher, ctx, ef, started);
    }
    const filterAt = monotonicMs();
    const filters = this.options.filter ? searcher.slices.map((slice) => slice.leaves.map((leaf) => this.options.filter!.accepted(leaf))) : null;
    if (filters) profiler?.phase('knn.filter', filterAt);
    const global = this.options.multiLeaf === true && searcher.reader.leaves.length > 1 ? GlobalSimilarityQueue.create(ef) : null;
    const js = this.options.graphSearch === 'js';
    const args = { target: this.target, k: this.k, ef, global, js, profile, strategy: this.options.segmentSearch };
    const thread = ctx.knnThread ?? 'executor';
    const turns = callerTurns(ctx);
    // Work may land on the calling thread: the event loop first reads (and admits) what has
    // arrived, so the choice below sees those requests (CallerThread.free).
    if (thread !== 'executor' && thread !== 'worker') await turns.next();
    const placement = searcher.knnPlacement.choose(thread, executorIdle(searcher) && turns.thread.free(), searcher.heldInArenas && turns.thread.spare());
    const phaseAt = monotonicMs();
    let sliceResults: KnnSliceResult[];
    let tookMs = Number.NaN;
    try {
      sliceResults = await this.searchSlices(searcher, placement.where, args, ctx, turns, filters);
      tookMs = monotonicMs() - phaseAt;
    } finally {
      searcher.knnPlacement.done(placement, tookMs);
    }
    const mergeAt = monotonicMs();
    profiler?.phase(KNN_PHASE[placement.where], phaseAt);
    ctx.stats.searchedOn = placement.where;
    for (const r of sliceResults) if (r.readAhead) ctx.stats.addReadAhead(r.readAhead.counters);
    // Cancellation is checked between phases, never by aborting a running task: piscina would
    // terminate the worker, and with it every segment the worker holds open.
    ctx.signal?.throwIfAborted();
    const merged = this.merge(searcher, ctx, sliceResults, filters);
    const readAhead = readAheadDocs(searcher, sliceResults);
    profiler?.phase('knn.merge', mergeAt);
    ctx.stats.firstPhaseMs += performance.now() - started;
    return new DocAndScoreQuery(merged.scoreDocs, merged.scoreDocs.length, null, readAhead);
  }

  /**
   * Every slice through the `knn.slice` task code: one executor task each; or here, one after the
   * other; or the first slice here while the executor runs the others (its tasks are posted
   * first, so the workers start while this thread searches), taking back every posted slice that
   * no worker has started by the time this thread is done; or every segment in one task
   * (`worker`), its result handed back slice by slice.
   */
  private async searchSlices(
    searcher: Searcher,
    where: FirstPhaseWhere,
    args: Omit<KnnSliceArgs, 'segments'>,
    ctx: SearchContext,
    turns: CallerTurns,
    filters: readonly (readonly SegmentFilter[])[] | null,
  ): Promise<KnnSliceResult[]> {
    const slices = searcher.slices;
    const profiler = ctx.profiler ?? null;
    const readAhead = (leaves: readonly LeafReaderContext[]) => this.readAhead(searcher, ctx, leaves);
    if (where === 'worker') {
      const handles = slices.flatMap((s) => s.handles);
      const task = { ...args, readAhead: readAhead(slices.flatMap((s) => s.leaves)), filters: filters ? filters.flat() : null };
      const all = untaken(await runOnSegments(searcher.executor, KNN_SLICE, handles, task, { order: ctx.startedAt, hops: profiler?.hops }));
      let at = 0;
      return slices.map((slice, s) => {
        const n = slice.handles.length;
        // The one task's read-ahead is counted once, with the first slice.
        const part = {
          ...all,
          segments: all.segments.slice(at, at + n),
          segmentMs: all.segmentMs ? all.segmentMs.subarray(at, at + n) : null,
          readAhead: s === 0 ? all.readAhead : null,
        };
        at += n;
        return part;
      });
    }
    const here = where === 'caller' ? slices.length : where === 'caller+executor' ? 1 : 0;
    const beforeSegment = () => turns.next();
    const searchHere = async (slice: LeafSlice): Promise<KnnSliceResult> => {
      const r = await knnSlice(
        { ...args, segments: { keys: [], handles: slice.handles }, readAhead: readAhead(slice.leaves), filters: filters?.[slices.indexOf(slice)] ?? null },
        beforeSegment,
      );
      if (isUnknownSegments(r) || isSliceTaken(r)) throw new Error('knn.slice on the calling thread was given its handles and still did not search them');
      return r;
    };
    // Posted slices can be taken back only beside a slice here: Lucene's TaskExecutor likewise runs
    // on the calling thread the tasks no thread has started. Why: a worker parked on an idle VM
    // can take milliseconds to wake (the host must schedule its vCPU), and the search then waited
    // for a slice the caller, done with its own, could have searched. Measured without taking
    // back (1M x 1024, 8 segments, 2 workers, 1000 single-stream searches 3 ms apart): the
    // worker's start came 0.15 ms after the post at p50 but 2.8 ms at p99 (max 4.9), and in 3% of
    // searches after the caller had finished its own slice (1.07 ms p50), by 0.26 ms p50, 2.9 ms
    // p90. Taking back costs nothing at p50 (1.458-1.568 ms against 1.453-1.551, three runs of
    // 1000 interleaved); 1.3-1.8% of searches took a slice back.
    const posting = slices.slice(here);
    const cells = here > 0 && posting.length > 0 ? new Int32Array(new SharedArrayBuffer(4 * posting.length)) : null;
    const hops = posting.map((): TaskHop[] => []);
    const posted = posting.map((slice, j) =>
      runOnSegments(
        searcher.executor,
        KNN_SLICE,
        slice.handles,
        { ...args, claim: cells && { cells, at: j }, readAhead: readAhead(slice.leaves), filters: filters?.[here + j] ?? null },
        { order: ctx.startedAt, hops: profiler ? hops[j] : undefined },
      ),
    );
    // Should a slice here throw, or a slice be taken back, the posted tasks' failure is not left
    // unhandled (awaiting one below still throws).
    for (const p of posted) p.catch(() => {});
    // Here: the codes and graphs are in RAM, nothing waits on the disk.
    const results: KnnSliceResult[] = [];
    for (const slice of slices.slice(0, here)) results.push(await searchHere(slice));
    for (let j = 0; j < posted.length; j++) {
      if (cells !== null && takeBack({ cells, at: j })) {
        ctx.stats.slicesTakenBack++;
        searcher.takenBack.add(posted[j]!);
        results.push(await searchHere(posting[j]!));
      } else {
        results.push(untaken(await posted[j]!));
        profiler?.hops.push(...hops[j]!);
      }
    }
    return results;
  }

  /**
   * The leaders' read-ahead for slices over `leaves`, when the search's rescoring will read this
   * query's hits through the page cache (SearchContext.hitsReadAhead): each segment's share of
   * the k hits (leaderCount). By default only above MIN_READ_AHEAD_CANDIDATES hits.
   */
  private readAhead(searcher: Searcher, ctx: SearchContext, leaves: readonly LeafReaderContext[]): LeaderReadAhead | null {
    const policy = ctx.hitsReadAhead;
    if (policy === undefined || ctx.leaderReadAhead === false) return null;
    if (ctx.leaderReadAhead === undefined && this.k <= MIN_READ_AHEAD_CANDIDATES) return null;
    // Warm (the adaptive policy's long streak of resident probes on every leaf): nothing to read ahead.
    if (leaves.every((l) => believedResident(policy, searcher.policyState, l.ord * POLICY_STATE_INTS))) return null;
    return {
      perSegment: leaderCount(this.k, searcher.reader.leaves.length),
      policy,
      policyState: searcher.policyState,
      policySlots: Int32Array.from(leaves, (l) => l.ord * POLICY_STATE_INTS),
    };
  }

  /**
   * The first phase over the segments' own graphs and fp32 vectors on disk (one `knn.graph` task
   * per slice). Each task's neighbour prefetch gets an equal share of the I/O budget with the
   * other prefetching tasks in flight. The hits carry exact similarities, so rescoring by the
   * same target reuses them (DocAndScoreQuery.exactTarget).
   */
  private async rewriteOnDisk(searcher: Searcher, ctx: SearchContext, ef: number, started: number): Promise<DocAndScoreQuery> {
    const path = GRAPH_PATHS[ctx.readPath];
    const prefetch = this.options.neighborPrefetch === false ? 'none' : path.prefetch(ctx.prefetchPolicy);
    const lookahead = this.options.lookahead ?? 0;
    if (!(Number.isInteger(lookahead) && lookahead >= 0 && lookahead <= 8)) throw new RangeError(`lookahead must be an integer in [0, 8], got ${lookahead}`);
    const cap = budgetShare(searcher.ioConcurrency, searcher.initialPrefetchDistance, searcher.slices.length);
    const args = searcher.slices.map(
      (slice): GraphSliceArgs => ({
        segments: slice.leaves.map((l) => l.reader.handle),
        target: this.target,
        k: this.k,
        ef,
        io: path.io,
        prefetch,
        lookahead,
        distance: { initial: Math.min(searcher.initialPrefetchDistance, cap), cap },
        policyState: searcher.policyState,
        policySlots: Int32Array.from(slice.leaves, (l) => l.ord * POLICY_STATE_INTS),
      }),
    );
    const results = await withBudget(args.length, () => Promise.all(args.map((a) => searcher.executor.run(KNN_GRAPH, a, { order: ctx.startedAt }))));
    ctx.signal?.throwIfAborted();
    for (const r of results) ctx.stats.addGraphIo(r.counters);
    ctx.stats.firstPhaseExact = true;
    const merged = this.merge(searcher, ctx, results);
    ctx.stats.firstPhaseMs += performance.now() - started;
    return new DocAndScoreQuery(merged.scoreDocs, merged.scoreDocs.length, this.target);
  }

  /** Per-leaf TopDocs in leaf order (as Lucene's invokeAll returns them), docs made global, merged to the top k. */
  private merge(
    searcher: Searcher,
    ctx: SearchContext,
    sliceResults: readonly { readonly segments: readonly SegmentKnnResult[]; readonly segmentMs?: Float64Array | null; readonly threadId: number }[],
    filters: readonly (readonly SegmentFilter[])[] | null = null,
  ): TopDocs {
    const profiler = ctx.profiler ?? null;
    const perLeaf: TopDocs[] = new Array(searcher.reader.leaves.length);
    searcher.slices.forEach((slice, s) => {
      slice.leaves.forEach((leaf, i) => {
        const r = sliceResults[s].segments[i];
        ctx.stats.visited += r.visited;
        if (r.strategy === 'exhaustive') ctx.stats.exhaustiveSegments++;
        const filter = filters?.[s]?.[i];
        if (filter)
          ctx.stats.filtered.push({
            segment: leaf.reader.name,
            cardinality: filter.cardinality,
            strategy: r.strategy,
            visited: r.visited,
            nearby: r.nearby ?? filter.cardinality / Math.max(1, leaf.reader.maxDoc),
          });
        if (profiler) {
          const segmentMs = sliceResults[s].segmentMs?.[i] ?? 0;
          const quantizeMs = r.quantizeMs ?? 0;
          profiler.segments.push({
            segment: leaf.reader.name,
            threadId: sliceResults[s].threadId,
            quantizeMs: round3(quantizeMs),
            searchMs: round3(segmentMs - quantizeMs),
            visited: r.visited,
            strategy: r.strategy,
          });
        }
        const hits: ScoreDoc[] = [];
        for (let j = 0; j < r.docs.length; j++) hits.push({ doc: leaf.docBase + r.docs[j], score: r.scores[j], shardIndex: leaf.ord });
        perLeaf[leaf.ord] = new TopDocs({ value: r.visited, relation: 'GREATER_THAN_OR_EQUAL_TO' }, hits);
      });
    });
    return TopDocs.merge(this.k, perLeaf.filter(Boolean));
  }

  toString(): string {
    return `KnnFloatVectorQuery(field=${this.field}, k=${this.k}${this.options.numCandidates ? `, numCandidates=${this.options.numCandidates}` : ''}${this.options.filter ? `, filter=${this.options.filter}` : ''})`;
  }
}

/**
 * The global docs whose fp32 reads the slices' read-ahead issued (each segment's first
 * `leaders[i]` hits), or null when none read ahead. Leaves, their results and the read-ahead
 * counts all run in slice order (the `worker` path's one task reports every slice's counts with
 * the first slice).
 */
function readAheadDocs(searcher: Searcher, sliceResults: readonly KnnSliceResult[]): Set<number> | null {
  if (!sliceResults.some((r) => r.readAhead)) return null;
  const docs = new Set<number>();
  const leaves = searcher.slices.flatMap((slice) => slice.leaves);
  const results = sliceResults.flatMap((r) => r.segments);
  let at = 0;
  for (const r of sliceResults) {
    if (!r.readAhead) continue;
    for (const leaders of r.readAhead.leaders) {
      const leaf = leaves[at]!;
      const hits = results[at++]!;
      for (let j = 0; j < leaders; j++) docs.add(leaf.docBase + hits.docs[j]!);
    }
  }
  return docs;
}

/** A posted slice's result; only a slice this thread took back is answered SLICE_TAKEN, and those are never awaited. */
function untaken(r: KnnSliceResult | SliceTaken): KnnSliceResult {
  if (isSliceTaken(r)) throw new Error('knn.slice: a slice the calling thread did not take back was answered as taken');
  return r;
}
