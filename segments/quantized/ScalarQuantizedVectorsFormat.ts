import { binaryCodeBytes } from '../quantization/BitPacking.js';

/** Lucene104ScalarQuantizedVectorsFormat constants (lucene-compat.md §4.4). */
export const SQ_META_CODEC = 'Lucene104ScalarQuantizedVectorsFormatMeta';
export const SQ_DATA_CODEC = 'Lucene104ScalarQuantizedVectorsFormatData';
export const SQ_VERSION_START = 0;
export const SQ_VERSION_CURRENT = 0;
export const SQ_META_EXTENSION = 'vemq';
export const SQ_DATA_EXTENSION = 'veq';

/** ScalarEncoding wire numbers. prescore writes and scores SINGLE_BIT_QUERY_NIBBLE only. */
export const ScalarEncoding = {
  UNSIGNED_BYTE: 0,
  PACKED_NIBBLE: 1,
  SEVEN_BIT: 2,
  SINGLE_BIT_QUERY_NIBBLE: 3,
  DIBIT_QUERY_NIBBLE: 4,
} as const;

export const DOC_BITS = 1;
export const QUERY_BITS = 4;
/** Bytes of corrective terms after each code: lower, upper, additional (f32) and component sum (i32). */
export const CORRECTIONS_BYTES = 16;

/** Size of one 1-bit record (code + corrections) for `dims` dimensions. */
export function binaryRecordBytes(dims: number): number {
  return binaryCodeBytes(dims) + CORRECTIONS_BYTES;
}
