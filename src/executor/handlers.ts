/**
 * The registry of executor tasks: name -> handler. Each handler runs inside a worker thread;
 * its argument and result must be structured-cloneable (typed arrays, plain objects,
 * SharedArrayBuffers). Keep one line per task; the types below are derived from this map.
 */
import { ping } from './pingTask.js';
import { genChunk } from '../gen/genChunkTask.js';
import { groundTruthRange } from '../gen/groundTruthTask.js';
import { rescoreRing } from '../../query/rescore/rescoreRing.js';
import { knnSlice, loadSegments } from '../../query/knn/knnSlice.js';
import { buildSegment } from '../../segments/index/SegmentBuildTask.js';

export const handlers = {
  ping,
  'gen.chunk': genChunk,
  'gen.groundTruth': groundTruthRange,
  'rescore.ring': rescoreRing,
  'knn.slice': knnSlice,
  'index.load': loadSegments,
  'index.buildSegment': buildSegment,
} as const;

export type TaskName = keyof typeof handlers;
export type TaskArgs<N extends TaskName> = Parameters<(typeof handlers)[N]>[0];
export type TaskResult<N extends TaskName> = Awaited<ReturnType<(typeof handlers)[N]>>;
