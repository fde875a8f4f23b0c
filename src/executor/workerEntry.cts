/**
 * The file piscina's workers load. piscina loads a worker file with `require()` first; for an ES
 * module that is Node's require(esm), which on Node 20.20 once aborted a test process
 * (`v8::Module::IsGraphAsync must be used on an instantiated module`, a race in require(esm) that
 * later Node versions fixed). This CommonJS entry is required instead, and loads the real worker
 * (worker.ts, an ES module) with import(): no require(esm) at all. After the first task a call
 * costs one function call more.
 */
import type { TaskMessage } from '../../query/executor/WorkerPool.js';

type Run = (message: TaskMessage) => unknown;

let run: Run | null = null;
let loading: Promise<Run> | null = null;

function load(): Promise<Run> {
  loading ??= import('./worker.js').then((m: { default: Run }) => (run = m.default));
  return loading;
}

module.exports = function workerEntry(message: TaskMessage): unknown {
  return run !== null ? run(message) : load().then((r) => r(message));
};
