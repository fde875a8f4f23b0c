/** Lucene99HnswVectorsFormat constants (lucene-compat.md §4.5). */
export const HNSW_META_CODEC = 'Lucene99HnswVectorsFormatMeta';
export const HNSW_INDEX_CODEC = 'Lucene99HnswVectorsFormatIndex';
export const HNSW_META_EXTENSION = 'vem';
export const HNSW_INDEX_EXTENSION = 'vex';

/** Neighbour deltas as plain vints. */
export const HNSW_VERSION_START = 0;
/** Neighbour deltas as group-varints (current). */
export const HNSW_VERSION_GROUPVARINT = 1;
export const HNSW_VERSION_CURRENT = HNSW_VERSION_GROUPVARINT;

/** Block shift of the DirectMonotonic neighbour-offset table. */
export const HNSW_DIRECT_MONOTONIC_BLOCK_SHIFT = 16;

/** Lucene's VectorEncoding ordinals as written in `.vem` / `.vemf`. */
export const VectorEncoding = { BYTE: 0, FLOAT32: 1 } as const;
export type VectorEncoding = (typeof VectorEncoding)[keyof typeof VectorEncoding];
