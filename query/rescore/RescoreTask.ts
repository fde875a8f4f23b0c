import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import type { ValuesSpec } from '../DoubleValuesSource.js';
import type { PrefetchPolicyName } from '../prefetch/PrefetchPolicy.js';
import type { RescoreCounters } from '../prefetch/RescoreCounters.js';
import { defineTask } from '../executor/Task.js';
import type { SegmentRefs, UnknownSegments } from '../SegmentRefs.js';

/**
 * How a rescoring task reads fp32 vectors: in place through the worker's mapping (`mmap`), or by
 * buffered io_uring reads into a page-aligned buffer (`uring`). There is deliberately no O_DIRECT
 * variant: measured against buffered reads (250k x 1024, k=100 x5, fp32 evicted, cgroup 0.75 GiB)
 * it won nothing cold (rescore p50 within noise over 7 interleaved rounds in two runs, 14-30% more
 * disk reads since it cannot reuse cached pages) and was 1.8-2.6x slower warm, where every read
 * still goes to the disk.
 */
export type VectorIo = 'mmap' | 'uring';

/** One executor task's share of the rescoring: entries in (segment, doc) order, spanning segments. */
export interface RescoreTaskArgs {
  /** The distinct segments this task touches; `seg[i]` indexes into it. */
  readonly segments: readonly SegmentHandle[];
  readonly seg: Int32Array;
  /** Vector ordinal of each entry in its segment, or -1 when the doc has no vector (scores 0). */
  readonly ords: Int32Array;
  /** First-phase scores, present when the values source needs them. */
  readonly firstPhase: Float32Array | null;
  /** Per entry, 1 when the first phase already issued its read (LeaderReadAhead): the ring issues no prefetch for it. */
  readonly readAhead: Uint8Array | null;
  readonly spec: ValuesSpec;
  /**
   * `ring`: deferred scoring behind prefetch (an entry is prefetched when it enters the ring and
   * scored when it leaves). `inOrder`: each entry read and scored as it arrives, no prefetch
   * (used when the values source needs first-phase scores).
   */
  readonly mode: 'ring' | 'inOrder';
  readonly io: VectorIo;
  /** 'none' disables prefetch (the stock mmap baseline). */
  readonly prefetch: PrefetchPolicyName | 'none';
  /** Shared per-leaf policy state and each segment's slot in it. */
  readonly policyState: Int32Array;
  readonly policySlots: Int32Array;
  readonly distance: { readonly initial: number; readonly cap: number };
  readonly trace: boolean;
}

export interface RescoreTaskResult {
  readonly scores: Float32Array;
  /** 1 when the entry got a value (has a vector), 0 otherwise (Lucene then scores it 0). */
  readonly hasValue: Uint8Array;
  readonly counters: RescoreCounters;
  /** +(i+1) prefetch issued for entry i, -(i+1) entry i scored, in event order (when tracing). */
  readonly trace: Int32Array | null;
  /** The worker thread that ran the task (observability: prefetch issuance spreads over threads). */
  readonly threadId: number;
}

/** RescoreTaskArgs as they cross to a worker: the segments by key once the worker has their handles. */
export type RescoreTaskMessage = Omit<RescoreTaskArgs, 'segments'> & { readonly segments: SegmentRefs };

/** Executor task `rescore.ring` (handler: rescoreRingTask). */
export const RESCORE_RING = defineTask<RescoreTaskMessage, RescoreTaskResult | UnknownSegments>('rescore.ring');
