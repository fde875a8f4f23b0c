/**
 * The registry of executor tasks: name -> handler. Each handler runs inside a worker thread;
 * its argument and result must be structured-cloneable (typed arrays, plain objects,
 * SharedArrayBuffers). Keep one line per task; the types below are derived from this map.
 */
import { ping } from './pingTask.js';

export const handlers = {
  ping,
} as const;

export type TaskName = keyof typeof handlers;
export type TaskArgs<N extends TaskName> = Parameters<(typeof handlers)[N]>[0];
export type TaskResult<N extends TaskName> = Awaited<ReturnType<(typeof handlers)[N]>>;
