/**
 * Lucene99FlatVectorsFormat: the raw vectors of a segment, a meta file `.vemf` and a data file
 * `.vec`, named `<segment>_<suffix>.vemf|.vec`. prescore writes it for its own segments (one
 * dense FLOAT32 field, FlatVectorsWriter) and reads it from Lucene segments in place
 * (FlatVectorsReader); rescoring reads the fp32 vectors straight out of `.vec`. All numbers
 * little-endian (primitives: segments/store/DataOutput.ts).
 *
 * `.vemf`:
 *
 * | field                 | type     | meaning / check                                                    |
 * |-----------------------|----------|--------------------------------------------------------------------|
 * | index header          |          | codec `Lucene99FlatVectorsFormatMeta`, version 0, segment id, suffix (CodecUtil.ts) |
 * | then per field:       |          |                                                                    |
 * | field number          | int32    | -1 here ends the list; duplicates are refused                       |
 * | vector encoding       | int32    | 0 BYTE, 1 FLOAT32 (prescore writes 1)                               |
 * | similarity            | int32    | 0 EUCLIDEAN, 1 DOT_PRODUCT, 2 COSINE, 3 MAXIMUM_INNER_PRODUCT       |
 * | vectorDataOffset      | vlong    | where ord 0 starts in `.vec` (absolute; prescore: 4096-aligned)     |
 * | vectorDataLength      | vlong    | must equal size x dims x (4 FLOAT32, 1 BYTE); the range must end before the `.vec` footer |
 * | dims                  | vint     | > 0                                                                |
 * | size                  | int32    | number of vectors (ords), >= 0                                     |
 * | ord-to-doc config     |          | which docs have a vector and how ords map to docs (OrdToDoc.ts)     |
 * | end marker            | int32 -1 |                                                                    |
 * | footer                |          | CRC32; the whole file is verified at open                          |
 *
 * `.vec`:
 *
 * | field                 | type     | meaning                                                            |
 * |-----------------------|----------|--------------------------------------------------------------------|
 * | index header          |          | codec `Lucene99FlatVectorsFormatData`, same version, id and suffix as `.vemf` |
 * | zero padding          |          | to the field's vectorDataOffset: Lucene pads to 4 bytes, prescore to 4096 (below) |
 * | vectors               | float32 x dims per ord | in ord order, back to back, no per-vector padding: ord i is at vectorDataOffset + i x dims x 4 |
 * | sparse fields only    |          | the IndexedDISI doc set and the ord->doc table (OrdToDoc.ts), at the offsets the meta gives |
 * | footer                |          | CRC32; checked structurally at open, in full by checkIntegrity()   |
 *
 * Worked example: with suffix `Lucene99HnswVectorsFormat_0` the header is
 * 4 + 1 + 29 + 4 + 16 + 1 + 27 = 82 bytes, so Lucene's first vector sits at 84.
 */
export const FLAT_META_CODEC = 'Lucene99FlatVectorsFormatMeta';
export const FLAT_DATA_CODEC = 'Lucene99FlatVectorsFormatData';
export const FLAT_VERSION_START = 0;
export const FLAT_VERSION_CURRENT = 0;
export const FLAT_META_EXTENSION = 'vemf';
export const FLAT_DATA_EXTENSION = 'vec';

/** VectorEncoding ordinals. */
export const VectorEncoding = { BYTE: 0, FLOAT32: 1 } as const;
export type VectorEncoding = (typeof VectorEncoding)[keyof typeof VectorEncoding];

/**
 * prescore aligns the first vector to a page: Lucene only needs 4-byte alignment and reads the
 * offset from the meta file, but with page alignment a 1024-dim fp32 vector is exactly one page,
 * so a cold read costs one I/O instead of two, and O_DIRECT reads need no bounce buffer.
 */
export const PRESCORE_VECTOR_DATA_ALIGNMENT = 4096;

/** `_0` + `Lucene104..._0` + `vec` -> `_0_Lucene104..._0.vec` (Lucene's IndexFileNames.segmentFileName). */
export function segmentFileName(segmentName: string, suffix: string, ext: string): string {
  return `${segmentName}${suffix ? `_${suffix}` : ''}${ext ? `.${ext}` : ''}`;
}
