import type { RescoreCounters } from '../prefetch/RescoreCounters.js';
import type { EntryScorer } from './EntryScorer.js';
import type { RescoreTaskArgs } from './RescoreTask.js';

/** What a vector reader works on: one task's entries, its counters, trace and scorer. */
export interface RescoreRun {
  readonly args: RescoreTaskArgs;
  readonly counters: RescoreCounters;
  /** 1 once entry i's prefetch (or read submission) was issued: reading before it is counted. */
  readonly prefetched: Uint8Array;
  /** +(i+1) prefetch issued for entry i, -(i+1) entry i scored (when tracing). */
  readonly trace: number[] | null;
  readonly scorer: EntryScorer;
}
