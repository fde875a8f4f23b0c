import { buildIndex as buildWith, type BuildOptions as BuilderOptions, type BuildReport } from '../../segments/index/IndexBuilder.js';
import type { TaskExecutor } from '../../query/executor/TaskExecutor.js';
import { Executor } from '../executor/Executor.js';
import { segmentBuilder } from '../executor/tasks.js';
import { stderrProgress } from '../progress/stderrProgress.js';

/** What {@link buildIndex} builds: the input, the output directory and the codes, graphs and segments. */
export interface BuildOptions extends BuilderOptions {
  /** Show progress bars on stderr. Default true. */
  readonly progress?: boolean;
  /** Where segments are built; default the process-wide executor. */
  readonly executor?: TaskExecutor;
}

/**
 * `prescore build` as a library call: the segment builder with its segments built in parallel on
 * the executor and progress bars on stderr.
 *
 * @example
 *   await buildIndex({ input: 'data/ds/base.fvecs', out: 'data/idx', similarity: VectorSimilarityFunction.COSINE });
 */
export function buildIndex(options: BuildOptions): Promise<BuildReport> {
  const { progress, executor, ...builder } = options;
  return buildWith(builder, {
    buildSegment: segmentBuilder(executor ?? Executor.get()),
    progress: stderrProgress(progress ?? true),
  });
}

export type { BuildReport };
