import { defineTask } from '../../query/executor/Task.js';
import type { GenSimilarity } from './DatasetSpec.js';
import { type FilterColumns, FilteredScorer, FilterEvaluator, type FilterIndex } from './FilteredScorer.js';
import { prepareQueries } from './GroundTruth.js';
import { readRowBlocks } from './groundTruthTask.js';
import { groundTruthKernels } from './WasmPrefilter.js';

export interface FilteredGroundTruthArgs {
  /** The base .fvecs file (ids are row numbers). */
  readonly path: string;
  readonly dim: number;
  readonly firstRow: number;
  readonly rows: number;
  /** The chunk's queries x dim (a view of shared memory: no copy per task). */
  readonly queries: Float32Array;
  /** The chunk's filters, compiled from their Query DSL and indexed (indexFilters). */
  readonly filters: FilterIndex;
  readonly k: number;
  readonly similarity: GenSimilarity;
  /** cluster, u and tags of every base row (shared memory). */
  readonly columns: FilterColumns;
  /** Rows scored so far are Atomics.add-ed into counter[0] (for a progress bar). */
  readonly counter?: BigInt64Array;
  /** 'auto' (default): the wasm prefilter when the kernels load, else pure JS. */
  readonly kernel?: 'auto' | 'wasm' | 'js';
}

export interface FilteredGroundTruthResult {
  /** queries x perQuery slots, query-major like the filters. */
  readonly slots: number;
  readonly k: number;
  /** slots x k ids, best first; a slot's unused places are -1. */
  readonly ids: Int32Array;
  readonly scores: Float64Array;
  /** Docs of the range that pass each slot's filter. */
  readonly counts: Int32Array;
  readonly kernel: 'wasm' | 'js';
  readonly rescored: number;
}

/** Executor task `gen.filteredGroundTruth` (registered in src/executor/handlers.ts). */
export const GEN_FILTERED_GROUND_TRUTH = defineTask<FilteredGroundTruthArgs, FilteredGroundTruthResult>('gen.filteredGroundTruth');

/** Bytes of base vectors read per block. */
const READ_BLOCK_BYTES = 4 << 20;
/** Cap on the wasm score matrix (queries x block docs, float32). */
const SCORE_BLOCK_BYTES = 8 << 20;

/**
 * Reads base rows [firstRow, firstRow + rows) once and returns, for every (query, filter) of the
 * chunk, the exact top-k of the rows that pass the filter (ranking keys as in GroundTruth.ts;
 * the caller merges ranges and finalizes the scores), and how many rows passed.
 */
export async function filteredGroundTruthRange(args: FilteredGroundTruthArgs): Promise<FilteredGroundTruthResult> {
  const { path, dim, firstRow, rows, k, similarity, counter } = args;
  const queries = prepareQueries(args.queries, dim);
  const filters = new FilterEvaluator(args.filters);
  const rowInts = dim + 1;
  let blockRows = Math.max(2, Math.floor(READ_BLOCK_BYTES / (rowInts * 4)));
  const kernels = args.kernel === 'js' ? null : await groundTruthKernels();
  if (args.kernel === 'wasm' && !kernels) throw new Error('gen.filteredGroundTruth: wasm kernels unavailable');
  if (kernels) blockRows = Math.max(2, Math.min(blockRows, Math.floor(SCORE_BLOCK_BYTES / (4 * queries.count))));
  blockRows = Math.min(blockRows, Math.max(1, rows));
  const scorer = new FilteredScorer(kernels, queries, filters, args.columns, blockRows, similarity, k);
  try {
    readRowBlocks(path, dim, firstRow, rows, blockRows, (floats, n, firstId) => {
      scorer.score(floats, 1, rowInts, n, firstId);
      if (counter) Atomics.add(counter, 0, BigInt(n));
    });
  } finally {
    scorer.release();
  }
  const top = scorer.top.resultRows();
  return {
    slots: filters.queries * filters.perQuery,
    k: top.k,
    ids: top.ids,
    scores: top.scores,
    counts: scorer.counts,
    kernel: kernels ? 'wasm' : 'js',
    rescored: scorer.rescored,
  };
}
