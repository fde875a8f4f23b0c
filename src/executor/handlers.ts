/**
 * The composition root's task registry: name -> handler, for the worker entry. Each handler runs
 * inside a worker thread; its argument and result must be structured-cloneable (typed arrays,
 * plain objects, SharedArrayBuffers). One line per task; `register` checks at compile time that
 * the handler takes and returns what the task's declaration says.
 */
import type { Task } from '../../query/executor/Task.js';
import { KNN_SLICE, LOAD_SEGMENTS, knnSlice, loadSegments } from '../../query/knn/knnSlice.js';
import { KNN_GRAPH, graphSlice } from '../../query/knn/graphSlice.js';
import { RESCORE_RING } from '../../query/rescore/RescoreTask.js';
import { rescoreRingTask } from '../../query/rescore/rescoreRing.js';
import { buildSegment } from '../../segments/index/SegmentBuildTask.js';
import { mergeSegments } from '../../segments/index/SegmentMergeTask.js';
import { loadResident } from '../../segments/index/SegmentLoader.js';
import { filteredGroundTruthRange, GEN_FILTERED_GROUND_TRUTH } from '../gen/filteredGroundTruthTask.js';
import { genChunk } from '../gen/genChunkTask.js';
import { groundTruthRange } from '../gen/groundTruthTask.js';
import { SEGMENT_GROUND_TRUTH, segmentGroundTruth } from '../calibration/segmentGroundTruthTask.js';
import { ping } from './pingTask.js';
import { BUILD_SEGMENT, GEN_CHUNK, GEN_GROUND_TRUTH, LOAD_RESIDENT, MERGE_SEGMENTS, PING } from './tasks.js';

type Handler = (args: unknown) => unknown;

function register<A, R>(task: Task<A, R>, handler: (args: A) => R | Promise<R>): [string, Handler] {
  return [task.name, handler as Handler];
}

export const handlers: ReadonlyMap<string, Handler> = new Map([
  register(PING, ping),
  register(GEN_CHUNK, genChunk),
  register(GEN_GROUND_TRUTH, groundTruthRange),
  register(GEN_FILTERED_GROUND_TRUTH, filteredGroundTruthRange),
  register(RESCORE_RING, rescoreRingTask),
  register(KNN_SLICE, knnSlice),
  register(KNN_GRAPH, graphSlice),
  register(LOAD_SEGMENTS, loadSegments),
  register(BUILD_SEGMENT, buildSegment),
  register(MERGE_SEGMENTS, mergeSegments),
  register(LOAD_RESIDENT, loadResident),
  register(SEGMENT_GROUND_TRUTH, segmentGroundTruth),
]);
