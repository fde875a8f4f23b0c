import type { ReadPath } from '../ReadPath.js';
import { round3 } from '../QueryStatsCollector.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import type { ValuesSpec } from '../DoubleValuesSource.js';
import { budgetShare, withBudget } from '../prefetch/IoBudget.js';
import { POLICY_STATE_INTS, believedResident, type PrefetchPolicyName } from '../prefetch/PrefetchPolicy.js';
import { callerTurns, executorIdle, type SearchContext, type Searcher } from '../Query.js';
import type { TaskHop } from '../executor/TaskHop.js';
import { RESCORE_RING, type RescoreTaskArgs, type RescoreTaskResult, type VectorIo } from './RescoreTask.js';
import { rescoreRing } from './rescoreRing.js';
import { runOnSegments } from '../SegmentRefs.js';

export interface RescoreInput {
  /** Leaf ord of each candidate, candidates in (leaf, doc) order. */
  readonly leafOrds: Int32Array;
  readonly ords: Int32Array;
  readonly firstPhase: Float32Array | null;
  readonly spec: ValuesSpec;
  readonly needsScores: boolean;
  /** Per candidate, 1 when the first phase already issued its read (LeaderReadAhead); null: none did. */
  readonly readAhead: Uint8Array | null;
}

/** What each read path does: how many tasks share the ring, how vectors are read, what is prefetched. */
interface PathShape {
  readonly parallel: boolean;
  readonly io: VectorIo;
  readonly prefetch: (policy: PrefetchPolicyName) => PrefetchPolicyName | 'none';
  /** Whether RescoreThread `adaptive` may move the ring to the calling thread when the pages are believed resident. */
  readonly placeable: boolean;
}

const PATHS: Record<ReadPath, PathShape> = {
  // Stock baseline: one thread faults pages in one at a time (queue depth 1).
  mmap: { parallel: false, io: 'mmap', prefetch: () => 'none', placeable: false },
  // One thread runs the ring and issues madvise(WILLNEED) for every entry that enters it.
  'mmap+prefetch': { parallel: false, io: 'mmap', prefetch: (p) => p, placeable: true },
  // The ring is split across the executor's workers: several threads issue prefetches and score.
  'mmap+parallel': { parallel: true, io: 'mmap', prefetch: (p) => p, placeable: true },
  // No mmap: positioned reads submitted through io_uring, many in flight per worker.
  pread: { parallel: true, io: 'uring', prefetch: () => 'always', placeable: false },
};

/**
 * The prefetch policy with which the first phase should read its hits' leaders ahead of this
 * rescoring (SearchContext.hitsReadAhead), or undefined: not on paths that read without the
 * page cache's prefetch (`mmap`, the stock baseline; `pread`, its own reads into buffers), not
 * when docs are scored in order with their first-phase scores. Whether the first phase then reads
 * ahead (the search's setting, the list's length, warm leaves) is its own decision.
 */
export function hitsReadAhead(ctx: SearchContext, needsScores: boolean): PrefetchPolicyName | undefined {
  if (needsScores) return undefined;
  const shape = PATHS[ctx.readPath];
  const policy = shape.prefetch(ctx.prefetchPolicy);
  return shape.io === 'mmap' && policy !== 'none' ? policy : undefined;
}

export interface RescorePlan {
  readonly tasks: { readonly args: RescoreTaskArgs; readonly from: number; readonly to: number }[];
  readonly total: number;
  /** Run the (single) task on the calling thread instead of the executor (see RescoreThread). */
  readonly onCaller: boolean;
}

/**
 * Cold rings of at most this many candidates go to the calling thread when the executor is idle
 * (RescoreThread `adaptive`). Cold, the time is the device's: the ring's madvise(WILLNEED) puts
 * every read in flight from one thread, and what the executor adds is its round trip. Measured
 * (1M x 1024 cold, 8 segments, single stream, k=10 oversample 5, 200 queries, against the same
 * pages read by io_uring O_DIRECT all in flight): rescoring p50 / p99 2.32 / 9.81 ms on the
 * executor (two tasks: queue 0.54 + run 1.27 + return 0.30 ms at p50) against 1.36 / 5.78 ms on
 * the caller, the device 1.03 / 4.76 and 0.93 / 5.06 ms. Larger rings stay on the workers: the
 * calling thread's event loop waits for the whole ring (at k=100, 500 pages, ~10-20 ms).
 */
export const COLD_CALLER_CANDIDATES = 64;

/**
 * Whether the search's rescoring goes to the calling thread: forced, or adaptive with every
 * touched file believed resident, or adaptive with a short ring while nothing else waits for the
 * executor or the calling thread (CallerThread.free: a cold ring's page faults hold the event
 * loop for the device's time, which other requests must not wait behind). A warm ring stays on
 * the caller even then: it is tens of microseconds of scoring, less than the hop it saves.
 */
function rescoreOnCaller(searcher: Searcher, ctx: SearchContext, input: RescoreInput, shape: PathShape): boolean {
  if (ctx.rescoreThread === 'caller') return true;
  if (ctx.rescoreThread !== 'adaptive' || !shape.placeable) return false;
  if (input.ords.length <= COLD_CALLER_CANDIDATES && executorIdle(searcher) && callerTurns(ctx).thread.free()) return true;
  let last = -1;
  for (let i = 0; i < input.leafOrds.length; i++) {
    const leafOrd = input.leafOrds[i];
    if (leafOrd === last) continue; // candidates come in (leaf, doc) order
    last = leafOrd;
    if (!believedResident(ctx.prefetchPolicy, searcher.policyState, leafOrd * POLICY_STATE_INTS)) return false;
  }
  return true;
}

/**
 * Splits the candidates into executor tasks for the context's read path. Contiguous slices keep
 * each task's entries in (segment, doc) order, so every task's ring still spans segments.
 */
export function planRescore(searcher: Searcher, ctx: SearchContext, input: RescoreInput): RescorePlan {
  const shape = PATHS[ctx.readPath];
  const n = input.ords.length;
  const onCaller = rescoreOnCaller(searcher, ctx, input, shape);
  const parallel = shape.parallel && !input.needsScores && !onCaller;
  const taskCount = parallel ? Math.max(1, Math.min(searcher.executor.threads, Math.ceil(n / 16))) : 1;
  const leaves = searcher.reader.leaves;
  const tasks: RescorePlan['tasks'] = [];
  const cap = budgetShare(searcher.ioConcurrency, searcher.initialPrefetchDistance, taskCount);
  for (let t = 0; t < taskCount; t++) {
    const from = Math.floor((t * n) / taskCount);
    const to = Math.floor(((t + 1) * n) / taskCount);
    const segments: SegmentHandle[] = [];
    const slotOf = new Map<number, number>();
    const seg = new Int32Array(to - from);
    const policySlots: number[] = [];
    for (let i = from; i < to; i++) {
      const leafOrd = input.leafOrds[i];
      let s = slotOf.get(leafOrd);
      if (s === undefined) {
        s = segments.length;
        slotOf.set(leafOrd, s);
        segments.push(leaves[leafOrd].reader.handle);
        policySlots.push(leafOrd * POLICY_STATE_INTS);
      }
      seg[i - from] = s;
    }
    tasks.push({
      from,
      to,
      args: {
        segments,
        seg,
        ords: input.ords.subarray(from, to),
        firstPhase: input.firstPhase ? input.firstPhase.subarray(from, to) : null,
        readAhead: input.readAhead ? input.readAhead.subarray(from, to) : null,
        spec: input.spec,
        mode: input.needsScores ? 'inOrder' : 'ring',
        io: shape.io,
        prefetch: input.needsScores ? 'none' : shape.prefetch(ctx.prefetchPolicy),
        policyState: searcher.policyState,
        policySlots: Int32Array.from(policySlots),
        distance: { initial: Math.min(searcher.initialPrefetchDistance, cap), cap },
        trace: ctx.trace === true,
      },
    });
  }
  return { tasks, total: n, onCaller };
}

export async function runRescorePlan(searcher: Searcher, ctx: SearchContext, plan: RescorePlan): Promise<{ scores: Float32Array; hasValue: Uint8Array }> {
  const scores = new Float32Array(plan.total);
  const hasValue = new Uint8Array(plan.total);
  const profiler = ctx.profiler ?? null;
  ctx.stats.rescoredOn = plan.onCaller ? 'caller' : 'executor';
  await withBudget(plan.tasks.length, async () => {
    const hops: TaskHop[][] = plan.tasks.map(() => []);
    const callerMs = new Float64Array(plan.tasks.length);
    const results = await Promise.all(
      plan.tasks.map(async (t, i): Promise<RescoreTaskResult> => {
        if (!plan.onCaller) {
          const { segments, ...rest } = t.args;
          return runOnSegments(searcher.executor, RESCORE_RING, segments, rest, { order: ctx.startedAt, hops: profiler ? hops[i] : undefined });
        }
        const turn = callerTurns(ctx).next();
        if (turn) await turn;
        const at = performance.now();
        const r = await rescoreRing(t.args);
        callerMs[i] = performance.now() - at;
        return r;
      }),
    );
    ctx.signal?.throwIfAborted();
    results.forEach((r, i) => {
      const { from, to } = plan.tasks[i];
      if (profiler) {
        const hop = hops[i][0] as TaskHop | undefined;
        if (hop) profiler.hops.push(hop);
        profiler.rescore.push({
          on: plan.onCaller ? 'caller' : 'executor',
          threadId: r.threadId,
          entries: to - from,
          runMs: round3(hop ? hop.runMs : callerMs[i]),
          pagesPrefetched: r.counters.pagesPrefetched,
          pagesResident: r.counters.pagesResident,
          syscalls: r.counters.syscalls,
        });
      }
      scores.set(r.scores, from);
      hasValue.set(r.hasValue, from);
      ctx.stats.addIo(r.counters);
      if (r.counters.pagesPrefetched + r.counters.pagesResident > 0) ctx.stats.prefetchThreads.add(r.threadId);
      if (r.trace) {
        const trace = (ctx.stats.trace ??= []);
        for (const e of r.trace) trace.push(e > 0 ? e + from : e - from);
      }
    });
  });
  return { scores, hasValue };
}
