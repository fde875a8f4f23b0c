import type { MessagePort } from 'node:worker_threads';
import type { Task } from './Task.js';
import type { TaskHop } from './TaskHop.js';

export interface RunOptions {
  /**
   * Aborts the task. Careful: piscina terminates the worker when a task is aborted while
   * running, dropping everything the worker holds (open segments); search code checks its signal
   * between tasks instead.
   */
  readonly signal?: AbortSignal;
  /** ArrayBuffers/MessagePorts to move (not copy) into the worker. */
  readonly transferList?: readonly (ArrayBuffer | MessagePort)[];
  /**
   * When given, the task's round trip is timed (queue wait + argument clone, run, result clone
   * + return; see TaskHop) and appended here when the task settles. Costs two clock reads.
   */
  readonly hops?: TaskHop[];
  /**
   * Queued tasks start lowest order first, ties in submission order; default: the time of
   * submission (clock.ts), i.e. first in, first out. Work that passes the time it began for all
   * its tasks has its later tasks start ahead of work that began after it.
   */
  readonly order?: number;
}

/**
 * Runs named tasks off the calling thread, the analogue of Lucene's TaskExecutor: it knows how
 * many threads it has and how to run a task by name, nothing of what the tasks do.
 */
export interface TaskExecutor {
  readonly threads: number;
  /** Tasks submitted and not yet settled (queued or running); absent when the executor cannot tell. */
  readonly pending?: number;
  run<A, R>(task: Task<A, R>, args: A, options?: RunOptions): Promise<R>;
}
