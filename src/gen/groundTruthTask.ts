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
  const rowBytes = rowInts * 4;
  let blockRows = Math.max(2, Math.floor(READ_BLOCK_BYTES / rowBytes));
  const kernels = args.kernel === 'js' ? null : await groundTruthKernels();
  if (args.kernel === 'wasm' && !kernels) throw new Error('gen.groundTruth: wasm kernels unavailable');
  if (kernels) blockRows = Math.max(2, Math.min(blockRows, Math.floor(SCORE_BLOCK_BYTES / (4 * queries.count))));
  blockRows = Math.min(blockRows, Math.max(1, rows));
  const prefilter = kernels ? new WasmPrefilter(kernels, queries, blockRows, similarity, k) : null;
  const buffer = new ArrayBuffer(blockRows * rowBytes);
  const bytes = new Uint8Array(buffer);
  const ints = new Int32Array(buffer);
  const floats = new Float32Array(buffer);
  const scratch = new ScoreScratch();
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
      if (prefilter) prefilter.score(floats, 1, rowInts, n, firstRow + done, top);
      else scoreDocs(queries, floats, 1, rowInts, n, firstRow + done, similarity, top, scratch);
      done += n;
      if (counter) Atomics.add(counter, 0, n);
    }
  } finally {
    closeSync(fd);
    prefilter?.release();
  }
  return { ...top.result(), kernel: prefilter ? 'wasm' : 'js', rescored: prefilter?.rescored ?? 0 };
}
