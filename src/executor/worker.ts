import type { TaskMessage } from '../../query/executor/WorkerPool.js';
import { applyReleases } from '../../segments/index/releaseBoard.js';
import { handlers } from './handlers.js';

/** The piscina worker entry: applies pending index releases, then dispatches a named task. */
export default function run(message: TaskMessage): unknown {
  const handler = handlers.get(message.name);
  if (!handler) throw new Error(`unknown executor task "${String(message.name)}"`);
  applyReleases();
  return handler(message.args);
}
