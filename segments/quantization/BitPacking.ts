/**
 * The 1-bit document and 4-bit query layouts of SINGLE_BIT_QUERY_NIBBLE: doc codes packed eight
 * dims per byte, first dim in the most significant bit; query codes transposed into four bit
 * planes of the same packing, LSB plane first. The record layout these feed (and a worked
 * example) is in segments/quantized/ScalarQuantizedVectorsFormat.ts.
 */

/** Rounds `value` up to a multiple of `bucket` (Lucene's OptimizedScalarQuantizer.discretize). */
export function discretize(value: number, bucket: number): number {
  return Math.ceil(value / bucket) * bucket;
}

/** Bytes of a packed 1-bit code for `dims` dimensions (= D'/8, D' = dims rounded up to 8). */
export function binaryCodeBytes(dims: number): number {
  return discretize(dims, 8) >> 3;
}

/**
 * Packs 0/1 codes eight per byte, the first dimension in the most significant bit.
 * codes.length may exceed the real dims (padding entries must be 0).
 */
export function packAsBinary(codes: Uint8Array, packed: Uint8Array, packedOffset = 0, length = codes.length): void {
  for (let i = 0, out = packedOffset; i < length; out++) {
    let byte = 0;
    for (let j = 7; j >= 0 && i < length; j--, i++) byte |= (codes[i] & 1) << j;
    packed[out] = byte;
  }
}

/**
 * Transposes 4-bit codes (values 0..15, length D' a multiple of 8) into four bit planes of D'/8
 * bytes each: plane p holds bit p of every dimension, MSB-first, planes LSB first. `out` must be
 * D'/2 bytes. This lets a 4-bit x 1-bit dot product run as four AND+popcount passes.
 */
export function transposeHalfByte(codes: Uint8Array, out: Uint8Array, length = codes.length): void {
  const planeBytes = out.length >> 2;
  for (let i = 0, index = 0; i < length; index++) {
    let p0 = 0,
      p1 = 0,
      p2 = 0,
      p3 = 0;
    for (let j = 7; j >= 0 && i < length; j--, i++) {
      const q = codes[i];
      p0 |= (q & 1) << j;
      p1 |= ((q >> 1) & 1) << j;
      p2 |= ((q >> 2) & 1) << j;
      p3 |= ((q >> 3) & 1) << j;
    }
    out[index] = p0;
    out[index + planeBytes] = p1;
    out[index + 2 * planeBytes] = p2;
    out[index + 3 * planeBytes] = p3;
  }
}
