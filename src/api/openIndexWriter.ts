import { IndexWriter, type IndexWriterOptions } from '../../segments/index/IndexWriter.js';
import type { TaskExecutor } from '../../query/executor/TaskExecutor.js';
import { Executor } from '../executor/Executor.js';
import { stepAsideForSearches } from '../../query/CallerThread.js';
import { segmentBuilder, segmentMerger } from '../executor/tasks.js';

/** IndexWriterOptions, and the executor that builds flushed segments and merges. */
export interface OpenIndexWriterOptions extends IndexWriterOptions {
  /** Where flushed segments get their codes and graphs, and merges run; default the process-wide background pool (Executor.background), apart from searches. */
  readonly executor?: TaskExecutor;
}

/** The background pool, looked up at each task (a pool shut down with the last open index is made again). */
const BACKGROUND: TaskExecutor = {
  get threads() {
    return Executor.background().threads;
  },
  run: (task, args, options) => Executor.background().run(task, args, options),
};

/**
 * An IndexWriter on `dir` whose flushed segments are quantized and get their graphs, and whose
 * merges run, on worker threads of their own (not the search executor's).
 *
 * @example
 * ```ts
 * const writer = await openIndexWriter('data/live', { create: { dims: 3, similarity: VectorSimilarityFunction.COSINE } });
 * writer.addDocument({ vector: [0.1, 0.2, 0.3], title: 'first' }, 'doc-1');
 * writer.deleteDocuments('doc-0');
 * await writer.commit(); // durable, and visible to readers opened (or reopened) from now on
 * await writer.close();
 * ```
 */
export async function openIndexWriter(dir: string, options: OpenIndexWriterOptions = {}): Promise<IndexWriter> {
  const { executor, ...writer } = options;
  const pool = executor ?? BACKGROUND;
  // The background pool lives while a writer that uses it is open (closing the last open index
  // stops only the search executor).
  if (executor === undefined) Executor.retainBackground();
  const closed = executor === undefined ? () => Executor.releaseBackground() : undefined;
  try {
    return await IndexWriter.open(
      dir,
      { buildSegment: segmentBuilder(pool), mergeSegments: segmentMerger(pool), stepAside: stepAsideForSearches, ...(closed ? { closed } : {}) },
      writer,
    );
  } catch (e) {
    await closed?.();
    throw e;
  }
}
