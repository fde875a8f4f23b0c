import { binaryCodeBytes } from '../quantization/BitPacking.js';

/**
 * Lucene104ScalarQuantizedVectorsFormat: the quantized codes of a vector field, `.vemq` (meta)
 * and `.veq` (data), both CodecUtil-framed with a CRC32 footer.
 *
 * `.veq`: header; per field, padding to a 4-byte boundary, then one record per vector in ord
 * order, back to back (records need not be 4-byte aligned): the packed doc code, then the
 * corrective terms lowerInterval, upperInterval, additionalCorrection (float32 LE) and
 * quantizedComponentSum (int32 LE).
 *
 * Doc code per ScalarEncoding, for D dims and D' the encoding's discrete dims (padding
 * components have code 0):
 * - SINGLE_BIT_QUERY_NIBBLE (wire 3, 1 doc bit, 4 query bits): D' = D rounded up to 8; D'/8
 *   bytes, eight components per byte, the first in the most significant bit.
 * - DIBIT_QUERY_NIBBLE (wire 4, 2 doc bits, 4 query bits): D' as for one bit; two bit planes of
 *   D'/8 bytes, first the low bit of every component, then the high bit, each plane packed as
 *   the 1-bit code.
 * - PACKED_NIBBLE (wire 1, 4 bits both sides): D' = D rounded up to 2; D'/2 bytes, byte i holds
 *   component i in its high nibble and component i + D'/2 in its low nibble.
 * - SEVEN_BIT (wire 2, 7 bits both sides) and UNSIGNED_BYTE (wire 0, 8 bits both sides): one
 *   byte per component.
 *
 * `.vemq` per field (field number -1 ends the list): field number, vector encoding, similarity
 * ordinal (int32 each); dims (vint); vectorDataOffset, vectorDataLength (vlong); count (vint);
 * when count > 0: the ScalarEncoding wire number (vint), the centroid (D float32) and c·c
 * (float32); then the ord-to-doc configuration.
 *
 * prescore extensions (meta version 1, SQ_VERSION_PRESCORE_EXTENSIONS): Lucene writes and reads
 * version 0 only, so a segment using an extension is refused by Lucene rather than scored wrongly;
 * a segment using none is written as version 0, byte for byte Lucene's. In version 1, after c·c
 * (when count > 0) come:
 * - centroid rule (byte): 0 = Lucene's (for COSINE, the mean of the unit vectors re-normalised
 *   to length 1), 1 = the plain mean of the unit vectors (COSINE only; for other similarities
 *   the two rules are the same and 0 is written);
 * - transform (byte): 0 = none, 1 = RandomizedHadamard (see that class), followed by its seed
 *   (int64 LE). Doc vectors were rotated (after COSINE normalisation, before centring), and the
 *   centroid is the mean of the rotated vectors; queries must be rotated the same way before
 *   their quantization. The fp32 vectors in `.vec` are never rotated.
 */
export const SQ_META_CODEC = 'Lucene104ScalarQuantizedVectorsFormatMeta';
export const SQ_DATA_CODEC = 'Lucene104ScalarQuantizedVectorsFormatData';
export const SQ_VERSION_START = 0;
/** Meta version of a segment using prescore's centroid rule or rotation (see above). */
export const SQ_VERSION_PRESCORE_EXTENSIONS = 1;
export const SQ_VERSION_CURRENT = SQ_VERSION_PRESCORE_EXTENSIONS;
export const SQ_META_EXTENSION = 'vemq';
export const SQ_DATA_EXTENSION = 'veq';

/** ScalarEncoding wire numbers (the encodings themselves: ScalarEncodings.ts). */
export const ScalarEncoding = {
  UNSIGNED_BYTE: 0,
  PACKED_NIBBLE: 1,
  SEVEN_BIT: 2,
  SINGLE_BIT_QUERY_NIBBLE: 3,
  DIBIT_QUERY_NIBBLE: 4,
} as const;

/** How the centroid is formed for COSINE (see the format description above). */
export type CentroidRule = 'lucene' | 'mean';
export const CENTROID_LUCENE = 0;
export const CENTROID_PLAIN_MEAN = 1;
export const TRANSFORM_NONE = 0;
export const TRANSFORM_RANDOMIZED_HADAMARD = 1;

export const DOC_BITS = 1;
export const QUERY_BITS = 4;
/** Bytes of corrective terms after each code: lower, upper, additional (f32) and component sum (i32). */
export const CORRECTIONS_BYTES = 16;

/** Size of one 1-bit record (code + corrections) for `dims` dimensions. */
export function binaryRecordBytes(dims: number): number {
  return binaryCodeBytes(dims) + CORRECTIONS_BYTES;
}
