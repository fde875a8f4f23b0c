import { IndexWriter, type IndexWriterOptions } from '../../segments/index/IndexWriter.js';
import type { TaskExecutor } from '../../query/executor/TaskExecutor.js';
import { Executor } from '../executor/Executor.js';
import { segmentBuilder, segmentMerger } from '../executor/tasks.js';

/** IndexWriterOptions, and the executor that builds flushed segments. */
export interface OpenIndexWriterOptions extends IndexWriterOptions {
  /** Where flushed segments get their codes and graphs; default the process-wide executor. */
  readonly executor?: TaskExecutor;
}

/**
 * An IndexWriter on `dir` whose flushed segments are quantized and get their graphs on the
 * executor's workers, as `prescore build`'s do.
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
export function openIndexWriter(dir: string, options: OpenIndexWriterOptions = {}): Promise<IndexWriter> {
  const { executor, ...writer } = options;
  const pool = executor ?? Executor.get();
  return IndexWriter.open(dir, { buildSegment: segmentBuilder(pool), mergeSegments: segmentMerger(pool) }, writer);
}
