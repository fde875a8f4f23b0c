import { threadId } from 'node:worker_threads';
import { threadKernels } from '../../segments/kernels/threadKernels.js';
import { newCounters } from '../prefetch/RescoreCounters.js';
import { compileSpec } from './compileSpec.js';
import { EntryScorer } from './EntryScorer.js';
import { readMapped } from './readMapped.js';
import { readThroughUring } from './readThroughUring.js';
import type { RescoreRun } from './RescoreRun.js';
import type { RescoreTaskArgs, RescoreTaskMessage, RescoreTaskResult } from './RescoreTask.js';
import { resolveSegments, type UnknownSegments } from '../SegmentRefs.js';

/**
 * The worker side of rescoring (executor task `rescore.ring`). Vectors are read in place: through
 * this worker's own read-only mapping of the segment's `.vec` (mmap paths, zero copy; readMapped),
 * or into a page-aligned buffer by io_uring (pread path; readThroughUring). Mappings, descriptors
 * and the ring are opened once per worker and reused by every query until the index is closed
 * (workerIoCache).
 */
export async function rescoreRing(args: RescoreTaskArgs): Promise<RescoreTaskResult> {
  const n = args.ords.length;
  const counters = newCounters();
  const trace: number[] | null = args.trace ? [] : null;
  const first = args.segments[0];
  const compiled = compileSpec(args.spec, first.similarity, first.dims, await threadKernels());
  const scorer = new EntryScorer(compiled, args.firstPhase, counters, trace, n);
  const run: RescoreRun = { args, counters, prefetched: new Uint8Array(n), trace, scorer };
  try {
    if (args.io === 'mmap') readMapped(run);
    else readThroughUring(run);
  } finally {
    compiled.release();
  }
  return { scores: scorer.scores, hasValue: scorer.hasValue, counters, trace: trace ? Int32Array.from(trace) : null, threadId };
}

/** Executor task `rescore.ring`: the message's segment keys resolved to this worker's handles, then the ring. */
export async function rescoreRingTask(message: RescoreTaskMessage): Promise<RescoreTaskResult | UnknownSegments> {
  const segments = resolveSegments(message.segments);
  if (!Array.isArray(segments)) return segments as UnknownSegments;
  return rescoreRing({ ...message, segments });
}
