export const VECTOR_FORMATS = ['fvecs', 'ivecs', 'npy', 'jsonl'] as const;
export type VectorFormat = (typeof VECTOR_FORMATS)[number];

/** A run of consecutive rows of a vector file. */
export interface VectorBatch {
  /** 0-based index of the first row of the batch in the file. */
  readonly firstRow: number;
  readonly rows: number;
  /** rows x dims float32, row-major. A fresh array per batch: the consumer may keep or transfer it. */
  readonly vectors: Float32Array;
  /** The user's ids (JSONL only); files without ids leave it out (see `batchIds`). */
  readonly ids?: string[];
}

/**
 * A vector file opened for streaming. Opening reads and validates the header (dims, and the row
 * count where the format has one); `batches` streams and validates the rows with memory bounded
 * by `maxRows`. Each `batches` call is an independent pass from the start of the file, so a
 * builder can make several passes.
 */
export interface VectorSource {
  readonly path: string;
  readonly format: VectorFormat;
  readonly dims: number;
  /** Known up front for fvecs/ivecs/npy; undefined for JSONL. */
  readonly count?: number;
  /** True when rows carry user ids (JSONL); otherwise ids are the row numbers. */
  readonly hasIds: boolean;
  batches(maxRows: number): AsyncIterable<VectorBatch>;
}
