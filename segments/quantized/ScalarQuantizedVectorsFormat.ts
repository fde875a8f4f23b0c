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
 *
 * Doc intervals: a multi-bit build with an extension (and any build asking for it) rescales each doc's
 * lowerInterval and upperInterval by one factor so that its dequantized vector has no shrinkage
 * along itself (segments/quantization/UnbiasedInterval.ts). That needs no meta entry: the bytes
 * mean what they mean in Lucene's format (the interval of the doc's grid) and every reader scores
 * them with the same estimator; only the values differ from what Lucene's optimizer picks.
 *
 * The rest of this comment details the 1-bit encoding, the one the first phase scores most:
 *
 * Lucene104ScalarQuantizedVectorsFormat with the SINGLE_BIT_QUERY_NIBBLE encoding: the 1-bit OSQ
 * codes the first phase scores, a meta file `.vemq` and a data file `.veq`
 * (`<segment>_<suffix>.vemq|.veq`). prescore writes them for its own segments and for Lucene
 * sidecars (ScalarQuantizedVectorsWriter) and reads them back (ScalarQuantizedVectorsReader);
 * the raw vectors stay in the flat `.vemf/.vec` pair. Lucene's own `.veq` codes (other
 * encodings) are never read. Little-endian throughout.
 *
 * `.vemq` (note the order differs from `.vemf`: dims comes before the offsets, count is a vint):
 *
 * | field              | type           | meaning / check                                              |
 * |--------------------|----------------|--------------------------------------------------------------|
 * | index header       |                | codec `Lucene104ScalarQuantizedVectorsFormatMeta`, version 0, segment id, suffix |
 * | then per field:    |                |                                                              |
 * | field number       | int32          | -1 ends the list                                             |
 * | vector encoding    | int32          | of the raw vectors: 1 FLOAT32 (not checked here; the flat delegate checks it) |
 * | similarity         | int32          | 0..3, as in `.vemf`                                          |
 * | dims (D)           | vint           | the real dimension, > 0                                      |
 * | vectorDataOffset   | vlong          | where record 0 starts in `.veq` (4-byte aligned)             |
 * | vectorDataLength   | vlong          | must equal count x recordBytes and end before the `.veq` footer |
 * | count              | vint           | records (ords), >= 0                                         |
 * | if count > 0:      |                |                                                              |
 * | scalar encoding    | vint           | must be 3 = SINGLE_BIT_QUERY_NIBBLE (else "too new or old")  |
 * | centroid           | float32 x D    | the segment's centroid c (unit length for COSINE)            |
 * | centroidDP         | float32        | c . c                                                        |
 * | ord-to-doc config  |                | as in `.vemf` (segments/flat/OrdToDoc.ts); prescore writes dense |
 * | end marker         | int32 -1       |                                                              |
 * | footer             |                | CRC32, verified whole at open                                |
 *
 * `.veq`: index header (codec `Lucene104ScalarQuantizedVectorsFormatData`, same version, id and
 * suffix), zero padding to vectorDataOffset, then `count` records in ord order, back to back with
 * no alignment (a 100-dim record is 29 bytes), then (sparse fields only) the ord-to-doc data,
 * then the footer (structural check at open, full CRC32 in checkIntegrity()).
 *
 * One 1-bit record, D dims, codeBytes = ceil(D / 8), recordBytes = codeBytes + 16:
 *
 * | offset          | field                | type                 | meaning                                  |
 * |-----------------|----------------------|----------------------|------------------------------------------|
 * | 0               | code                 | codeBytes bytes      | one bit per dim, MSB first: dim 8j + k is bit (7 - k) of byte j; the padding bits past D are 0 |
 * | codeBytes       | lowerInterval a_x    | float32              | the OSQ interval's lower end             |
 * | codeBytes + 4   | upperInterval u_x    | float32              | its upper end                            |
 * | codeBytes + 8   | additionalCorrection | float32              | ‖x - c‖² for EUCLIDEAN, x . c otherwise  |
 * | codeBytes + 12  | componentSum x1      | int32                | the number of 1 bits of the code         |
 *
 * e.g. D = 768: 96 + 16 = 112 bytes; D = 100: 13 + 16 = 29 bytes. The kernels score records
 * where they lie (kernel memory holds a copy of the `.veq` payload in the same layout; the graph
 * builder also keeps, per doc, a 4-bit "query record": the 4 planes below followed by the same
 * 16 bytes of corrections, in memory only).
 *
 * The 4-bit query (never on disk, quantized per segment against its centroid by QueryQuantizer):
 * 4 bit planes of codeBytes bytes each, plane p at byte p x codeBytes, LSB plane first. Plane p
 * holds bit p of every dim's 4-bit code, packed MSB-first like the doc code (dim 8j + k is bit
 * (7 - k) of byte j of the plane). The 1-bit x 4-bit dot product is then
 * qc = Σ_p popcount(plane_p AND code) << p (Kernels.int4BitDotProduct). The scoring kernel
 * (kernels.wat, osqScore) first copies the planes to scratch with each plane zero-padded to a
 * 16-byte stride (codeBytes rounded up to 16) and then reads each doc code in whole 16-byte
 * chunks: bytes past the code are the record's own corrections, which meet zero plane bytes and
 * add nothing. With the doc's a_x, u_x, x1, corr_x (its additionalCorrection) and the query's
 * a_y, u_y, y1 (sum of its codes), corr_y, the estimator computes in float32, left to right: l_x = u_x - a_x, l_y = (u_y - a_y) x float32(1/15),
 * s = (a_x a_y) D + (a_y l_x) x1 + (a_x l_y) y1 + (l_x l_y) qc (D the real dims), then
 * EUCLIDEAN 1 / (1 + max((corr_y + corr_x) - 2s, 0)); otherwise s' = s + ((corr_y + corr_x) - centroidDP),
 * DOT_PRODUCT/COSINE (1 + clamp(s', -1, 1)) / 2, MAXIMUM_INNER_PRODUCT s' < 0 ? 1 / (1 - s') : s' + 1.
 * Worked example (D = 8): doc bits [1,0,1,1,0,0,1,0] pack to 0xB2; query codes
 * [15,0,7,8,3,12,1,0] transpose to planes [0xAA, 0xA8, 0xA4, 0x94]; qc = 31.
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
