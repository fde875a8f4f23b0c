/**
 * The tasks the service layer runs on the executor (those of query/ are declared beside their
 * handlers there). Each name is registered with its handler in handlers.ts.
 */
import { defineTask, type Task } from '../../query/executor/Task.js';
import type { TaskExecutor } from '../../query/executor/TaskExecutor.js';
import type { SegmentBuildArgs, SegmentBuildResult, SegmentBuilder } from '../../segments/index/SegmentBuildTask.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import type { SegmentMergeArgs, SegmentMergeResult, SegmentMerger } from '../../segments/index/SegmentMergeTask.js';
import type { SegmentLoadResult } from '../../segments/index/SegmentLoader.js';
import type { GenChunkArgs } from '../gen/genChunkTask.js';
import type { PingArgs } from './pingTask.js';
import type { GroundTruthRangeArgs, GroundTruthRangeResult } from '../gen/groundTruthTask.js';

export const PING: Task<PingArgs, { threadId: number }> = defineTask('ping');
export const GEN_CHUNK = defineTask<GenChunkArgs, Float32Array>('gen.chunk');
export const GEN_GROUND_TRUTH = defineTask<GroundTruthRangeArgs, GroundTruthRangeResult>('gen.groundTruth');
export const BUILD_SEGMENT = defineTask<SegmentBuildArgs, SegmentBuildResult>('index.buildSegment');
/** Loads one segment's codes and graph into its arena (the index's open runs one per segment, in parallel). */
export const LOAD_RESIDENT = defineTask<{ readonly handle: SegmentHandle }, SegmentLoadResult>('index.loadResident');

/** Merges segments (reading, writing and building the new one) on a worker: what an IndexWriter takes. */
export const MERGE_SEGMENTS = defineTask<SegmentMergeArgs, SegmentMergeResult>('index.mergeSegments');

/** Runs an IndexWriter's merges on `executor`'s workers. */
export function segmentMerger(executor: TaskExecutor): SegmentMerger {
  return (args) => executor.run(MERGE_SEGMENTS, args);
}

/** Builds segments on `executor`'s workers: what the index builder and the Lucene sidecar take. */
export function segmentBuilder(executor: TaskExecutor): SegmentBuilder {
  return (args) => executor.run(BUILD_SEGMENT, args);
}
