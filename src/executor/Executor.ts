import { availableParallelism } from 'node:os';
import type { Task } from '../../query/executor/Task.js';
import type { RunOptions, TaskExecutor } from '../../query/executor/TaskExecutor.js';
import { WorkerPool } from '../../query/executor/WorkerPool.js';
import { createReleaseBoard, publishRelease, releaseInThisThread } from '../../segments/index/releaseBoard.js';
import { distPath } from './packageRoot.js';
import { PING } from './tasks.js';

export interface ExecutorOptions {
  /** Worker threads; default PRESCORE_THREADS or the machine's available parallelism. */
  readonly threads?: number;
}

/**
 * The process-wide executor: one WorkerPool running this package's worker entry (worker.ts, with
 * the task registry handlers.ts), plus the release board every worker watches. First-phase
 * search, graph and segment building, prefetch and fp32 rescoring all run here, off the event
 * loop. The layers below take a TaskExecutor (or a task-running function) as an argument; only
 * the composition root (this folder, the facade, the CLI) reaches for the shared instance.
 */
export class Executor implements TaskExecutor {
  private static shared: Executor | undefined;
  private static backgroundShared: Executor | undefined;
  private static backgroundHolders = 0;
  private readonly pool: WorkerPool;
  private readonly releaseBoard = createReleaseBoard();
  readonly threads: number;

  private constructor(options: ExecutorOptions) {
    this.threads = Math.max(1, options.threads ?? defaultExecutorThreads());
    this.pool = new WorkerPool({
      filename: distPath('src', 'executor', 'workerEntry.cjs'),
      threads: this.threads,
      workerData: { releaseBoard: this.releaseBoard },
    });
  }

  /** The shared executor, created on first use. Options apply only to the first call. */
  static get(options: ExecutorOptions = {}): Executor {
    if (!Executor.shared) Executor.shared = new Executor(options);
    return Executor.shared;
  }

  /**
   * The pool an IndexWriter's background work runs on: the codes and graphs of flushed segments,
   * and merges. Apart from the search executor, as Lucene's ConcurrentMergeScheduler runs merges
   * on threads of their own: a merge holds its worker for as long as it builds the merged graph
   * (minutes for 500k docs), and searches queued behind it on a shared pool timed out (1M x 768
   * through `_bulk`: a search took over 10 s). Two threads, so a flush's build never waits
   * behind the one merge that runs at a time; the OS shares the cores between both pools.
   */
  static background(): Executor {
    if (!Executor.backgroundShared) Executor.backgroundShared = new Executor({ threads: BACKGROUND_THREADS });
    return Executor.backgroundShared;
  }

  /**
   * Holds the background pool for a writer until releaseBackground(): the last release destroys
   * it (its threads would keep the process alive). The search executor's lifetime is the open
   * indexes' (shutdownSearch), so closing the last index never stops a writer's merge or build.
   */
  static retainBackground(): void {
    Executor.backgroundHolders++;
  }

  /** Gives back what retainBackground() took; the last holder's release destroys the background pool. */
  static async releaseBackground(): Promise<void> {
    if (Executor.backgroundHolders === 0) return;
    if (--Executor.backgroundHolders > 0) return;
    const e = Executor.backgroundShared;
    Executor.backgroundShared = undefined;
    await e?.destroy();
  }

  /** True when the shared executor exists (e.g. to decide whether close() must destroy it). */
  static exists(): boolean {
    return Executor.shared !== undefined;
  }

  /** Runs a task on a worker (in search order: see OrderedTaskQueue). */
  run<A, R>(task: Task<A, R>, args: A, options: RunOptions = {}): Promise<R> {
    return this.pool.run(task, args, options);
  }

  /** Tells every worker to free what it holds of index `indexId` (applied before its next task), and frees this thread's share now. */
  releaseIndex(indexId: number): void {
    publishRelease(this.releaseBoard, indexId);
    releaseInThisThread(indexId); // the calling thread's own mappings (rescoring on the caller)
  }

  get queueSize(): number {
    return this.pool.queueSize;
  }

  get pending(): number {
    return this.pool.pending;
  }

  /** Destroys the search executor (the last open index closed). A later get() creates a new one. */
  static async shutdownSearch(): Promise<void> {
    const e = Executor.shared;
    Executor.shared = undefined;
    await e?.destroy();
  }

  /** Destroys the shared pools (tests, CLI exit). A later get() or background() creates a new one. */
  static async shutdown(): Promise<void> {
    const pools = [Executor.shared, Executor.backgroundShared];
    Executor.shared = undefined;
    Executor.backgroundShared = undefined;
    Executor.backgroundHolders = 0;
    await Promise.all(pools.map((e) => e?.destroy()));
  }

  private async destroy(): Promise<void> {
    // Every worker must have finished loading its modules before it is terminated: a worker torn
    // down mid-load (a pool shut down right after an open failed, before the second worker had
    // loaded) aborted the whole process with a V8 fatal error, in require(esm) or in koffi's
    // library load (test/arenas.test.ts: 3 of 41 runs). One short ping per thread, run
    // concurrently, lands on every worker and answers only once it has loaded.
    await Promise.all(Array.from({ length: this.threads }, () => this.pool.run(PING, { sleepMs: 5 }))).catch(() => {});
    await this.pool.destroy();
  }
}

/** Threads of the background pool: one for the merge that runs at a time, one for flushed segments' builds. */
const BACKGROUND_THREADS = 2;

/** The executor's thread count when none is given: PRESCORE_THREADS, else the available parallelism. */
export function defaultExecutorThreads(): number {
  const env = Number(process.env.PRESCORE_THREADS);
  return Number.isInteger(env) && env > 0 ? env : availableParallelism();
}
