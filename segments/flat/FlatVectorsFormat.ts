/** Lucene99FlatVectorsFormat constants (lucene-compat.md §4.3). */
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
