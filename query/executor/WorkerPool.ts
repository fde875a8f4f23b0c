import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import type { Task } from './Task.js';
import type { RunOptions, TaskExecutor } from './TaskExecutor.js';
import { monotonicMs } from './clock.js';
import type { TimedResult } from './TaskHop.js';
import { OrderedTaskQueue, type TaskOrder } from './OrderedTaskQueue.js';
import { unwrapWorkerAnswer, type WorkerFailure } from './WorkerFailure.js';

export interface WorkerPoolOptions {
  /** The compiled worker entry: a module whose default export takes `{ name, args }`. */
  readonly filename: string;
  readonly threads: number;
  /** Handed to every worker as `workerData`. */
  readonly workerData?: unknown;
}

/** The message a worker entry receives. */
export interface TaskMessage {
  readonly name: string;
  readonly args: unknown;
  /** Answer with a TimedResult (worker start and end times) instead of the bare result. */
  readonly timed?: boolean;
}

/**
 * A TaskExecutor over a piscina pool of a fixed number of threads. Admission control happens
 * before the executor (the HTTP layer), so inside, tasks are never rejected: the queue is unbounded.
 */
export class WorkerPool implements TaskExecutor {
  private readonly pool: Piscina;
  readonly threads: number;
  private inFlight = 0;

  constructor(options: WorkerPoolOptions) {
    this.threads = Math.max(1, options.threads);
    if (!existsSync(options.filename)) throw new Error(`worker bundle missing at ${options.filename}: run \`npm run build\``);
    this.pool = new Piscina({
      filename: options.filename,
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: 60_000,
      maxQueue: Infinity,
      taskQueue: new OrderedTaskQueue(),
      workerData: options.workerData,
    });
  }

  run<A, R>(task: Task<A, R>, args: A, options: RunOptions = {}): Promise<R> {
    this.inFlight++;
    const settled = () => this.inFlight--;
    const p = this.submit(task, args, options);
    p.then(settled, settled);
    return p;
  }

  /** Tasks submitted and not yet settled. */
  get pending(): number {
    return this.inFlight;
  }

  private submit<A, R>(task: Task<A, R>, args: A, options: RunOptions): Promise<R> {
    const hops = options.hops;
    const runOptions = { signal: options.signal ?? null, transferList: options.transferList as never };
    // The queue's key rides on the message under piscina's symbol; structured clone drops it.
    const order: TaskOrder = { order: options.order ?? monotonicMs() };
    if (!hops)
      return (this.pool.run({ name: task.name, args, [Piscina.queueOptionsSymbol]: order } satisfies TaskMessage, runOptions) as Promise<R | WorkerFailure>).then(
        unwrapWorkerAnswer,
      );
    const submittedAt = monotonicMs();
    return (
      this.pool.run({ name: task.name, args, timed: true, [Piscina.queueOptionsSymbol]: order } satisfies TaskMessage, runOptions) as Promise<TimedResult | WorkerFailure>
    ).then((answer) => {
      const r = unwrapWorkerAnswer(answer);
      const resolvedAt = monotonicMs();
      hops.push({
        task: task.name,
        threadId: r.threadId,
        submittedAt,
        queueMs: r.startedAt - submittedAt,
        runMs: r.endedAt - r.startedAt,
        returnMs: resolvedAt - r.endedAt,
      });
      return r.value as R;
    });
  }

  /** Tasks waiting for a thread. */
  get queueSize(): number {
    return this.pool.queueSize;
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
