import { closeSync, openSync, readSync } from 'node:fs';
import { defineTask } from '../../query/executor/Task.js';
import type { GenSimilarity } from '../gen/DatasetSpec.js';
import { prepareQueries, ScoreScratch, scoreDocs, TopK, type TopKResult } from '../gen/GroundTruth.js';
import { WasmPrefilter } from '../gen/WasmPrefilter.js';
import { Kernels } from '../../segments/kernels/Kernels.js';

export interface SegmentGroundTruthArgs {
  /** Where a worker opens the segment's fp32 vectors (a `.vec`, or a held descriptor's /proc path). */
  readonly path: string;
  /** Absolute byte offset of ord 0. */
  readonly offset: number;
  readonly dim: number;
  /** Ords [firstOrd, firstOrd + ords) are scored; results name ords. */
  readonly firstOrd: number;
  readonly ords: number;
  /** ord -> segment doc when sparse (null: ord == doc); for the live check. */
  readonly ordToDoc: Int32Array | null;
  /** The segment's live docs (bit per doc; null: none deleted): deleted docs are never neighbours. */
  readonly liveDocs: Uint32Array | null;
  /** queries x dim, in shared memory (no copy per task). */
  readonly queries: Float32Array;
  readonly k: number;
  readonly similarity: GenSimilarity;
  /** Ords scored so far are Atomics.add-ed into counter[0] (a progress bar). */
  readonly counter?: Int32Array;
}

/** Executor task `index.groundTruth` (registered in src/executor/handlers.ts). */
export const SEGMENT_GROUND_TRUTH = defineTask<SegmentGroundTruthArgs, TopKResult>('index.groundTruth');

/** Bytes of vectors read per block. */
const READ_BLOCK_BYTES = 4 << 20;
/** Cap on the wasm score matrix (queries x block docs, float32). */
const SCORE_BLOCK_BYTES = 8 << 20;

/**
 * The exact top-k ords of one range of a segment's vectors for every query (ranking keys as in
 * src/gen/GroundTruth.ts, which the caller finalizes): the vectors are read in blocks with
 * positioned reads, and each run of live docs in a block is scored by the wasm prefilter (or the
 * float64 JS scorer when the kernels do not load), so deleted docs cost nothing but their read.
 */
export async function segmentGroundTruth(args: SegmentGroundTruthArgs): Promise<TopKResult> {
  const { dim, k, ordToDoc, liveDocs, counter } = args;
  const queries = prepareQueries(args.queries, dim);
  const top = new TopK(queries.count, k);
  let blockRows = Math.max(1, Math.floor(READ_BLOCK_BYTES / (dim * 4)));
  blockRows = Math.max(1, Math.min(blockRows, Math.floor(SCORE_BLOCK_BYTES / (4 * queries.count))));
  blockRows = Math.min(blockRows, Math.max(1, args.ords));
  // An instance of its own, dropped after the task: a serving process calibrates in the background,
  // and wasm memory never shrinks (the generator's cached instance would hold ~16 MiB per worker).
  const kernels = await Kernels.load({ initialBytes: 4 * (queries.count * dim + blockRows * dim + queries.count * blockRows) + (1 << 20) }).catch(() => null);
  const prefilter = kernels ? new WasmPrefilter(kernels, queries, blockRows, args.similarity, k) : null;
  const scratch = new ScoreScratch();
  const floats = new Float32Array(blockRows * dim);
  const bytes = new Uint8Array(floats.buffer);
  const live = (ord: number) => {
    if (liveDocs === null) return true;
    const doc = ordToDoc === null ? ord : ordToDoc[ord]!;
    return ((liveDocs[doc >>> 5]! >>> (doc & 31)) & 1) === 1;
  };
  const fd = openSync(args.path, 'r');
  try {
    for (let done = 0; done < args.ords; ) {
      const n = Math.min(blockRows, args.ords - done);
      const first = args.firstOrd + done;
      const want = n * dim * 4;
      for (let got = 0; got < want; ) {
        const r = readSync(fd, bytes, got, want - got, args.offset + first * dim * 4 + got);
        if (r === 0) throw new Error(`${args.path}: vector ${first + Math.floor(got / (dim * 4))}: truncated file`);
        got += r;
      }
      // Runs of live ords: one call each.
      for (let r = 0; r < n; ) {
        if (!live(first + r)) {
          r++;
          continue;
        }
        let end = r + 1;
        while (end < n && live(first + end)) end++;
        if (prefilter) prefilter.score(floats, r * dim, dim, end - r, first + r, top);
        else scoreDocs(queries, floats, r * dim, dim, end - r, first + r, args.similarity, top, scratch);
        r = end;
      }
      if (counter) Atomics.add(counter, 0, n);
      done += n;
    }
  } finally {
    closeSync(fd);
    prefilter?.release();
  }
  return top.resultRows();
}
