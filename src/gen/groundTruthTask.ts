import { closeSync, openSync, readSync } from 'node:fs';
import type { GenSimilarity } from './DatasetSpec.js';
import { prepareQueries, ScoreScratch, scoreDocs, TopK, type TopKResult } from './GroundTruth.js';
import { groundTruthKernels, WasmPrefilter } from './WasmPrefilter.js';

export interface GroundTruthRangeArgs {
  /** An .fvecs file of base vectors (ids are row numbers). */
  readonly path: string;
  readonly dim: number;
  readonly firstRow: number;
  readonly rows: number;
  /** queries x dim; pass one backed by a SharedArrayBuffer so tasks share it without copies. */
  readonly queries: Float32Array;
  readonly k: number;
  readonly similarity: GenSimilarity;
  /** Rows scored so far are Atomics.add-ed into counter[0] (for a progress bar). */
  readonly counter?: Int32Array;
  /** 'auto' (default): the wasm prefilter when the kernels load, else pure JS. */
  readonly kernel?: 'auto' | 'wasm' | 'js';
}

export interface GroundTruthRangeResult extends TopKResult {
  /** Which scorer ran: both give identical results. */
  readonly kernel: 'wasm' | 'js';
  /** (wasm) pairs that passed the float32 prefilter and were re-scored in float64. */
  readonly rescored: number;
}

/** Bytes of base vectors read per block. */
const READ_BLOCK_BYTES = 4 << 20;
/** Cap on the wasm score matrix (queries x block docs, float32). */
const SCORE_BLOCK_BYTES = 8 << 20;

/**
 * Executor task `gen.groundTruth`: reads base rows [firstRow, firstRow + rows) of an .fvecs file
 * itself (positioned reads, one block at a time) and returns the range's exact top-k for every
 * query as ranking keys (see GroundTruth.ts); the caller merges ranges and finalizes the scores.
 */
export async function groundTruthRange(args: GroundTruthRangeArgs): Promise<GroundTruthRangeResult> {
  const { path, dim, firstRow, rows, k, similarity, counter } = args;
  const queries = prepareQueries(args.queries, dim);
  const top = new TopK(queries.count, k);
  const rowInts = dim + 1;
  let blockRows = Math.max(2, Math.floor(READ_BLOCK_BYTES / (rowInts * 4)));
  const kernels = args.kernel === 'js' ? null : await groundTruthKernels();
  if (args.kernel === 'wasm' && !kernels) throw new Error('gen.groundTruth: wasm kernels unavailable');
  if (kernels) blockRows = Math.max(2, Math.min(blockRows, Math.floor(SCORE_BLOCK_BYTES / (4 * queries.count))));
  blockRows = Math.min(blockRows, Math.max(1, rows));
  const prefilter = kernels ? new WasmPrefilter(kernels, queries, blockRows, similarity, k) : null;
  const scratch = new ScoreScratch();
  try {
    readRowBlocks(path, dim, firstRow, rows, blockRows, (floats, n, firstId) => {
      if (prefilter) prefilter.score(floats, 1, rowInts, n, firstId, top);
      else scoreDocs(queries, floats, 1, rowInts, n, firstId, similarity, top, scratch);
      if (counter) Atomics.add(counter, 0, n);
    });
  } finally {
    prefilter?.release();
  }
  return { ...top.result(), kernel: prefilter ? 'wasm' : 'js', rescored: prefilter?.rescored ?? 0 };
}

/**
 * Reads rows [firstRow, firstRow + rows) of an .fvecs file in blocks of at most `blockRows`
 * (positioned reads into one reused buffer) and hands each block to `onBlock`: the rows as
 * floats with their headers (row r's values at 1 + r * (dim + 1)), the row count and the first
 * row's id. Checks every row's dimension header.
 */
export function readRowBlocks(
  path: string,
  dim: number,
  firstRow: number,
  rows: number,
  blockRows: number,
  onBlock: (floats: Float32Array, count: number, firstId: number) => void,
): void {
  const rowInts = dim + 1;
  const rowBytes = rowInts * 4;
  const buffer = new ArrayBuffer(blockRows * rowBytes);
  const bytes = new Uint8Array(buffer);
  const ints = new Int32Array(buffer);
  const floats = new Float32Array(buffer);
  const fd = openSync(path, 'r');
  try {
    for (let done = 0; done < rows; ) {
      const n = Math.min(blockRows, rows - done);
      const want = n * rowBytes;
      let got = 0;
      while (got < want) {
        const r = readSync(fd, bytes, got, want - got, (firstRow + done) * rowBytes + got);
        if (r === 0) throw new Error(`${path}: row ${firstRow + done + Math.floor(got / rowBytes)}: truncated file`);
        got += r;
      }
      for (let r = 0; r < n; r++) {
        if (ints[r * rowInts] !== dim) {
          throw new Error(`${path}: row ${firstRow + done + r}: dimension header ${ints[r * rowInts]}, expected ${dim}`);
        }
      }
      onBlock(floats, n, firstRow + done);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
}
