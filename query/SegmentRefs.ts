import type { SegmentHandle } from '../segments/index/SegmentHandle.js';
import { knownSegment, rememberSegments } from '../segments/index/WorkerSegments.js';
import type { Task } from './executor/Task.js';
import type { RunOptions, TaskExecutor } from './executor/TaskExecutor.js';

/**
 * The segments a task works on, as they cross to a worker: their keys, plus the whole handles
 * only when the worker has not seen them yet. A handle is a tree of objects with a shared
 * WebAssembly.Memory in it; cloning it into every task measured 61 us per round trip against 25 us
 * for the keys alone (200k x 768, two segments per task, raw worker round trip), on a path whose
 * whole warm query is ~0.8 ms. Workers keep the handles they were given (WorkerSegments), so
 * after `index.load` warms every worker at open, a query sends keys only.
 */
export interface SegmentRefs {
  readonly keys: readonly string[];
  /** Present on the retry after a worker answered UnknownSegments (or for a handle never sent). */
  readonly handles: readonly SegmentHandle[] | null;
}

/** A worker's answer when it lacks a handle the keys name: the caller sends the task again with handles. */
export interface UnknownSegments {
  readonly unknownSegments: true;
}

const UNKNOWN: UnknownSegments = { unknownSegments: true };

export function isUnknownSegments(r: unknown): r is UnknownSegments {
  return typeof r === 'object' && r !== null && (r as Partial<UnknownSegments>).unknownSegments === true;
}

/**
 * Worker side: the handles the refs name, remembering any sent along; UnknownSegments when a key
 * is not known here and no handles came with it.
 */
export function resolveSegments(refs: SegmentRefs): readonly SegmentHandle[] | UnknownSegments {
  if (refs.handles) {
    rememberSegments(refs.handles);
    return refs.handles;
  }
  const out: SegmentHandle[] = new Array(refs.keys.length);
  for (let i = 0; i < refs.keys.length; i++) {
    const h = knownSegment(refs.keys[i]!);
    if (!h) return UNKNOWN;
    out[i] = h;
  }
  return out;
}

/**
 * Caller side: runs `task` with the segments as keys, and once more with the whole handles if
 * the worker that took it had not seen them (it then keeps them).
 */
export async function runOnSegments<A extends { readonly segments: SegmentRefs }, R>(
  executor: TaskExecutor,
  task: Task<A, R | UnknownSegments>,
  handles: readonly SegmentHandle[],
  args: Omit<A, 'segments'>,
  options?: RunOptions,
): Promise<R> {
  const keys = handles.map((h) => h.key);
  const first = await executor.run(task, { ...args, segments: { keys, handles: null } } as unknown as A, options);
  if (!isUnknownSegments(first)) return first;
  const second = await executor.run(task, { ...args, segments: { keys, handles } } as unknown as A, options);
  if (isUnknownSegments(second)) throw new Error(`${task.name}: the worker did not take the segment handles it was sent`);
  return second;
}
