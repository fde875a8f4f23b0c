import { move } from 'piscina';
import { CHUNK_ROWS, type ModelSpec } from './DatasetSpec.js';
import { drawFields, type FieldColumns } from './DocFields.js';
import { EmbeddingModel } from './EmbeddingModel.js';
import { parseSeed, Rng } from './Rng.js';

export interface GenChunkArgs {
  readonly spec: ModelSpec;
  /** STREAM_BASE or STREAM_QUERY. */
  readonly stream: number;
  /** The first chunk (of CHUNK_ROWS rows) to generate. */
  readonly firstChunk: number;
  /** Rows to generate from firstChunk * CHUNK_ROWS (whole chunks, except at the end of the stream). */
  readonly rows: number;
  /**
   * Base rows with `--filters`: the rows' metadata is written here, at the rows' own indexes
   * (shared memory, so nothing comes back through the result): the generating cluster of each
   * vector, and u, tags and ts from their own stream (DocFields.ts).
   */
  readonly fields?: FieldColumns;
}

/**
 * Generates rows of one stream, chunk by chunk: chunk c always draws from Rng(seed, stream, c),
 * so the bytes do not depend on which worker runs it or how chunks are grouped into tasks.
 */
export function generateRows(args: GenChunkArgs): Float32Array {
  const model = EmbeddingModel.for(args.spec);
  const seed = parseSeed(args.spec.seed);
  const D = model.dim;
  const out = new Float32Array(args.rows * D);
  const first = args.firstChunk * CHUNK_ROWS;
  for (let done = 0, c = args.firstChunk; done < args.rows; c++) {
    const rows = Math.min(CHUNK_ROWS, args.rows - done);
    model.sample(Rng.from(seed, args.stream, c), rows, out, done * D, args.fields?.cluster, first + done);
    done += rows;
  }
  if (args.fields) drawFields(args.spec.seed, args.firstChunk, args.rows, args.fields);
  return out;
}

/** Executor task `gen.chunk`: the rows come back transferred, not copied. */
export function genChunk(args: GenChunkArgs): Float32Array {
  return move(generateRows(args)) as unknown as Float32Array;
}
