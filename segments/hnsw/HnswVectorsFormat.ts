/**
 * Lucene99HnswVectorsFormat: a segment's HNSW graph, a meta file `.vem` and a graph file `.vex`
 * (`<segment>_<suffix>.vem|.vex`). prescore writes them for its segments above the flat
 * threshold and for Lucene sidecars (HnswVectorsWriter), over the 1-bit scorer, and reads them
 * back (HnswVectorsReader); Lucene's own graphs are not used. Versions 0 and 1 are read, 1 is
 * written. Little-endian.
 *
 * `.vem`:
 *
 * | field             | type     | meaning / check                                                     |
 * |-------------------|----------|---------------------------------------------------------------------|
 * | index header      |          | codec `Lucene99HnswVectorsFormatMeta`, version 0 or 1 (must equal the `.vex` one), segment id, suffix |
 * | then per field:   |          |                                                                     |
 * | field number      | int32    | -1 ends the list; >= 0, no duplicates                                |
 * | vector encoding   | int32    | 0 BYTE, 1 FLOAT32                                                   |
 * | similarity        | int32    | 0..3 (as in `.vemf`)                                                |
 * | vectorIndexOffset | vlong    | where the field's neighbour lists start in `.vex`                   |
 * | vectorIndexLength | vlong    | their byte length (the offset table after them not included); must lie between the `.vex` header and footer |
 * | dims              | vint     | > 0                                                                 |
 * | size              | int32    | nodes = vector ords, >= 0                                           |
 * | M                 | vint     | maxConn, 1..512; a list holds at most 2M neighbours                 |
 * | numLevels         | vint     | 0..64; 0 = no graph (the segment is scanned), and the entry ends here |
 * | per level 1..numLevels-1 | vint count, then count vints | the level's nodes ascending: first absolute, then deltas (count 1..size, each node < size). Level 0 holds all `size` nodes implicitly |
 * | offsetsOffset     | int64    | where the DirectMonotonic offset table starts in `.vex`              |
 * | blockShift        | vint     | 16 (HNSW_DIRECT_MONOTONIC_BLOCK_SHIFT)                               |
 * | offset block metas|          | DirectMonotonic metas for size + Σ upper-level counts values (segments/packed/DirectMonotonicWriter.ts) |
 * | offsetsLength     | int64    | bytes of the offset table                                           |
 * | end marker        | int32 -1 | then the footer (CRC32, verified whole at open)                     |
 *
 * `.vex`: index header (codec `Lucene99HnswVectorsFormatIndex`, same version, id and suffix);
 * then per field, at vectorIndexOffset, one neighbour list per (level, node): level 0 first, each
 * level's nodes ascending. A list is a vint neighbour count n (after de-duplication, n <= 2M),
 * then the n neighbour ords sorted ascending as deltas (first absolute, then gaps): group-varints
 * in version 1, plain vints in version 0. Right after the field's lists comes its offset table
 * (at offsetsOffset): entry k is the start of the k-th list, relative to vectorIndexOffset, the
 * entries in the same order as the lists (level 0 nodes 0..size-1, then each upper level's nodes
 * in the `.vem` order). The file ends with the footer (structural check at open, full CRC32 in
 * checkIntegrity()). The reader range-checks every offset, count and neighbour (< size).
 *
 * The entry point of a search is the first (smallest) node of the top level (node 0 when there
 * is only level 0).
 */
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
