import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import { distPath } from './packageRoot.js';
import type { TaskArgs, TaskName, TaskResult } from './handlers.js';
import { createReleaseBoard, publishRelease } from './releaseBoard.js';

export interface ExecutorOptions {
  /** Worker threads; default PRESCORE_THREADS or the machine's available parallelism. */
  readonly threads?: number;
}

export interface RunOptions {
  /**
   * Aborts the task. Careful: piscina terminates the worker when a task is aborted while
   * running, dropping everything the worker holds (open segments); search code checks its signal
   * between tasks instead.
   */
  readonly signal?: AbortSignal;
  /** ArrayBuffers/MessagePorts to move (not copy) into the worker. */
  readonly transferList?: readonly (ArrayBuffer | import('node:worker_threads').MessagePort)[];
}

/**
 * The process-wide task executor: one piscina pool, the analogue of Lucene's
 * IndexSearcher TaskExecutor. First-phase search, graph and segment building, prefetch and
 * fp32 rescoring all run here, off the event loop. Tasks are named (see handlers.ts) so the
 * call site is typed: `executor.run('knn.segment', args)`.
 */
export class Executor {
  private static shared: Executor | undefined;
  private readonly pool: Piscina;
  private readonly releaseBoard = createReleaseBoard();
  readonly threads: number;

  private constructor(options: ExecutorOptions) {
    this.threads = Math.max(1, options.threads ?? defaultThreads());
    const filename = distPath('src', 'executor', 'worker.js');
    if (!existsSync(filename)) throw new Error(`worker bundle missing at ${filename}: run \`npm run build\``);
    this.pool = new Piscina({
      filename,
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: 60_000,
      // Admission control happens before the executor (HTTP layer); inside, tasks are never rejected.
      maxQueue: Infinity,
      workerData: { releaseBoard: this.releaseBoard },
    });
  }

  /** The shared executor, created on first use. Options apply only to the first call. */
  static get(options: ExecutorOptions = {}): Executor {
    if (!Executor.shared) Executor.shared = new Executor(options);
    return Executor.shared;
  }

  /** True when the shared executor exists (e.g. to decide whether close() must destroy it). */
  static exists(): boolean {
    return Executor.shared !== undefined;
  }

  run<N extends TaskName>(name: N, args: TaskArgs<N>, options: RunOptions = {}): Promise<TaskResult<N>> {
    return this.pool.run(
      { name, args },
      { signal: options.signal ?? null, transferList: options.transferList as never },
    ) as Promise<TaskResult<N>>;
  }

  /** Tells every worker to free what it holds of index `indexId` (applied before its next task). */
  releaseIndex(indexId: number): void {
    publishRelease(this.releaseBoard, indexId);
  }

  get queueSize(): number {
    return this.pool.queueSize;
  }

  /** Destroys the shared pool (tests, CLI exit). A later get() creates a new one. */
  static async shutdown(): Promise<void> {
    const e = Executor.shared;
    Executor.shared = undefined;
    if (e) await e.pool.destroy();
  }
}

function defaultThreads(): number {
  const env = Number(process.env.PRESCORE_THREADS);
  return Number.isInteger(env) && env > 0 ? env : availableParallelism();
}
