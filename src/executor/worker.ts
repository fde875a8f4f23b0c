import { threadId } from 'node:worker_threads';
import { monotonicMs } from '../../query/executor/clock.js';
import type { TimedResult } from '../../query/executor/TaskHop.js';
import type { TaskMessage } from '../../query/executor/WorkerPool.js';
import { applyReleases } from '../../segments/index/releaseBoard.js';
import { handlers } from './handlers.js';
import { workerFailureOf } from '../../query/executor/WorkerFailure.js';

/**
 * The piscina worker entry: applies pending index releases, then dispatches a named task. An
 * error with properties a clone would drop (an fs error's `code`) is answered as a WorkerFailure,
 * which the pool throws again whole.
 */
export default async function run(message: TaskMessage): Promise<unknown> {
  const handler = handlers.get(message.name);
  if (!handler) throw new Error(`unknown executor task "${String(message.name)}"`);
  try {
    if (message.timed) return await timed(handler, message.args);
    applyReleases();
    return await handler(message.args);
  } catch (e) {
    const failure = workerFailureOf(e);
    if (failure === null) throw e;
    return failure;
  }
}

/** The task with its start and end on the process-wide clock (the caller turns them into a TaskHop). */
async function timed(handler: (args: unknown) => unknown, args: unknown): Promise<TimedResult> {
  const startedAt = monotonicMs();
  applyReleases();
  const value = await handler(args);
  return { value, startedAt, endedAt: monotonicMs(), threadId };
}
