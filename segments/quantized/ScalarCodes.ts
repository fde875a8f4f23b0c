import { packAsBinary, transposeHalfByte } from '../quantization/BitPacking.js';
import type { ScalarEncodingInfo } from './ScalarEncodings.js';

/**
 * Byte layouts of the doc and query codes per ScalarEncoding (see ScalarQuantizedVectorsFormat.ts
 * for the on-disk description). `codes` holds one code per component, D' entries (padding 0).
 */

/**
 * DIBIT_QUERY_NIBBLE's doc layout: two bit planes of D'/8 bytes each, the low bit of every
 * component first, then the high bit; within a plane the first component is the most significant
 * bit of the first byte (as the 1-bit code). `out[off ..]` receives 2 x D'/8 bytes.
 */
export function transposeDibit(codes: Uint8Array, out: Uint8Array, off: number, length: number): void {
  const planeBytes = length >> 3;
  for (let i = 0, index = 0; i < length; index++) {
    let lo = 0,
      hi = 0;
    for (let j = 7; j >= 0; j--, i++) {
      const q = codes[i];
      lo |= (q & 1) << j;
      hi |= ((q >> 1) & 1) << j;
    }
    out[off + index] = lo;
    out[off + planeBytes + index] = hi;
  }
}

/**
 * PACKED_NIBBLE's doc layout: D'/2 bytes, byte i = (code[i] << 4) | code[i + D'/2] (the first
 * half of the components in the high nibbles).
 */
export function packNibbles(codes: Uint8Array, out: Uint8Array, off: number, length: number): void {
  const half = length >> 1;
  for (let i = 0; i < half; i++) out[off + i] = ((codes[i] & 15) << 4) | (codes[i + half] & 15);
}

/** Writes the doc code of `codes` (D' = enc.discreteDims(dims) entries) at out[off ..]. */
export function packDocCode(enc: ScalarEncodingInfo, dims: number, codes: Uint8Array, out: Uint8Array, off: number): void {
  const length = enc.discreteDims(dims);
  switch (enc.docBits) {
    case 1:
      packAsBinary(codes, out, off, length);
      return;
    case 2:
      transposeDibit(codes, out, off, length);
      return;
    case 4:
      packNibbles(codes, out, off, length);
      return;
    default:
      out.set(codes.subarray(0, length), off);
  }
}

/** Writes the query code the scorers read (4 transposed planes, or one byte per component) into `out`. */
export function packQueryCode(enc: ScalarEncodingInfo, dims: number, codes: Uint8Array, out: Uint8Array): void {
  const length = enc.discreteDims(dims);
  if (enc.docBits <= 2) transposeHalfByte(codes, out.subarray(0, enc.queryCodeBytes(dims)), length);
  else out.set(codes.subarray(0, length));
}

const POPCOUNT = new Uint8Array(256);
for (let i = 1; i < 256; i++) POPCOUNT[i] = (i & 1) + POPCOUNT[i >> 1];

/**
 * qc = Σ query code x doc code over the components, from the packed layouts (the reference the
 * kernels are tested against): bit planes AND + popcount for 1 and 2 doc bits, nibbles unpacked
 * for 4, bytes for 7 and 8.
 */
export function codeDot(enc: ScalarEncodingInfo, dims: number, q: Uint8Array, qOff: number, d: Uint8Array, dOff: number): number {
  const length = enc.discreteDims(dims);
  if (enc.docBits <= 2) {
    const planeBytes = length >> 3;
    let sum = 0;
    for (let r = 0; r < enc.docBits; r++) {
      for (let p = 0; p < 4; p++) {
        let c = 0;
        const qp = qOff + p * planeBytes,
          dp = dOff + r * planeBytes;
        for (let i = 0; i < planeBytes; i++) c += POPCOUNT[q[qp + i] & d[dp + i]];
        sum += c << (p + r);
      }
    }
    return sum;
  }
  let sum = 0;
  if (enc.docBits === 4) {
    const half = length >> 1;
    for (let i = 0; i < half; i++) {
      const b = d[dOff + i];
      sum += q[qOff + i] * (b >> 4) + q[qOff + i + half] * (b & 15);
    }
    return sum;
  }
  for (let i = 0; i < length; i++) sum += q[qOff + i] * d[dOff + i];
  return sum;
}
