import { handlers, type TaskName } from './handlers.js';
import { applyReleases } from './releaseBoard.js';

interface TaskMessage {
  readonly name: TaskName;
  readonly args: unknown;
}

/** The piscina worker entry: dispatches a named task to its handler. */
export default function run(message: TaskMessage): unknown {
  const handler = handlers[message.name] as ((args: unknown) => unknown) | undefined;
  if (!handler) throw new Error(`unknown executor task "${String(message.name)}"`);
  applyReleases();
  return handler(message.args);
}
