import { threadId } from 'node:worker_threads';
import { monotonicMs } from '../../query/executor/clock.js';
import type { TimedResult } from '../../query/executor/TaskHop.js';
import type { TaskMessage } from '../../query/executor/WorkerPool.js';
import { applyReleases } from '../../segments/index/releaseBoard.js';
import { handlers } from './handlers.js';

/** The piscina worker entry: applies pending index releases, then dispatches a named task. */
export default function run(message: TaskMessage): unknown {
  const handler = handlers.get(message.name);
  if (!handler) throw new Error(`unknown executor task "${String(message.name)}"`);
  if (message.timed) return timed(handler, message.args);
  applyReleases();
  return handler(message.args);
}

/** The task with its start and end on the process-wide clock (the caller turns them into a TaskHop). */
async function timed(handler: (args: unknown) => unknown, args: unknown): Promise<TimedResult> {
  const startedAt = monotonicMs();
  applyReleases();
  const value = await handler(args);
  return { value, startedAt, endedAt: monotonicMs(), threadId };
}
