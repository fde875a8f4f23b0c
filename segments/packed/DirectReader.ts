import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { isSupportedBitsPerValue } from './DirectWriter.js';

const TWO_32 = 0x1_0000_0000;

/**
 * Random access to values written by DirectWriter (a little-endian bit stream of fixed-width
 * unsigned values, see DirectWriter.ts) held in memory. Reads only the bytes a value spans, so it
 * does not depend on the writer's trailing padding; every read is bounds-checked against the
 * given byte range. Values wider than 2^53 throw instead of losing precision.
 */
export class DirectReader {
  private readonly mask: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly bitsPerValue: number,
    /** Absolute position of value 0 in `bytes`. */
    readonly offset = 0,
    /** End of the readable range (exclusive). */
    readonly end = bytes.length,
    readonly resource = 'packed ints',
  ) {
    if (!isSupportedBitsPerValue(bitsPerValue)) throw new CorruptIndexException(`unsupported bitsPerValue ${bitsPerValue}`, resource);
    if (offset < 0 || end > bytes.length || offset > end) throw new CorruptIndexException(`invalid packed range [${offset}, ${end})`, resource);
    this.mask = bitsPerValue >= 32 ? 0xffffffff : (1 << bitsPerValue) - 1;
  }

  get(index: number): number {
    const bpv = this.bitsPerValue;
    const bitPos = index * bpv;
    const p = this.offset + Math.floor(bitPos / 8);
    const shift = bitPos & 7;
    const nBytes = (shift + bpv + 7) >>> 3;
    if (index < 0 || p + nBytes > this.end) {
      throw new CorruptIndexException(`packed value ${index} (${bpv} bits) reads past the end of its range`, this.resource);
    }
    const b = this.bytes;
    if (bpv > 32) {
      // 40/48/56/64: byte aligned
      const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
      let hi = 0;
      for (let k = nBytes - 1; k >= 4; k--) hi = hi * 256 + b[p + k];
      if (hi >= 0x20_0000) throw new CorruptIndexException(`packed value ${index} exceeds 2^53`, this.resource);
      return hi * TWO_32 + lo;
    }
    if (nBytes <= 4) {
      let w = 0;
      for (let k = 0; k < nBytes; k++) w |= b[p + k] << (8 * k);
      return ((w >>> shift) & this.mask) >>> 0;
    }
    // 5 bytes: 28 or 32 bits at an odd nibble/bit position
    const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
    const v = Math.floor((lo + b[p + 4] * TWO_32) / 2 ** shift);
    return bpv === 32 ? v % TWO_32 : v % 2 ** bpv;
  }
}

/**
 * Bytes a value of `bpv` bits spans when it starts at bit `shift` (0-7) of a byte: at most 4 for
 * widths up to 32 (28 is the only width that starts mid-byte and ends on a byte boundary), and
 * bpv / 8 for the byte-aligned widths above 32.
 */
export function packedSpan(shift: number, bpv: number): number {
  return (shift + bpv + 7) >>> 3;
}

/**
 * The packed value starting at bit `shift` of bytes[p], as a number: exact for every width up to
 * 48 bits, and for wider values below 2^53 (use readPackedBigIntAt when a 56- or 64-bit value may
 * be larger). Reads only the bytes the value spans (no reliance on the writer's padding).
 */
export function readPackedAt(bytes: Uint8Array, p: number, shift: number, bpv: number): number {
  if (bpv <= 32) {
    let w = bytes[p];
    if (shift + bpv > 8) w |= bytes[p + 1] << 8;
    if (shift + bpv > 16) w |= bytes[p + 2] << 16;
    if (shift + bpv > 24) w |= bytes[p + 3] << 24;
    return bpv === 32 ? w >>> 0 : (w >>> shift) & ((1 << bpv) - 1);
  }
  const lo = (bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24)) >>> 0;
  let hi = 0;
  for (let k = (bpv >>> 3) - 1; k >= 4; k--) hi = hi * 256 + bytes[p + k];
  return hi * TWO_32 + lo;
}

/** The packed value starting at bit `shift` of bytes[p] as an exact unsigned bigint (any width, 64 included). */
export function readPackedBigIntAt(bytes: Uint8Array, p: number, shift: number, bpv: number): bigint {
  if (bpv <= 32) return BigInt(readPackedAt(bytes, p, shift, bpv));
  const lo = (bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24)) >>> 0;
  let hi = 0;
  for (let k = (bpv >>> 3) - 1; k >= 4; k--) hi = hi * 256 + bytes[p + k]; // < 2^32
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * Decodes `count` consecutive packed values whose first one starts at bit 0 of bytes[p] into
 * out[outOffset..]: one tight loop per width (the bulk path of doc-values columns). Values wider
 * than 2^53 come out rounded: callers check the encoding's bounds first, or use decodePackedBigInt.
 */
export function decodePacked(bytes: Uint8Array, p: number, bpv: number, count: number, out: Float64Array | Int32Array | Uint32Array, outOffset: number): void {
  let o = outOffset;
  const end = outOffset + count;
  switch (bpv) {
    case 1:
      for (let i = 0; o < end; i++, o++) out[o] = (bytes[p + (i >>> 3)] >>> (i & 7)) & 1;
      return;
    case 2:
      for (let i = 0; o < end; i++, o++) out[o] = (bytes[p + (i >>> 2)] >>> ((i & 3) << 1)) & 3;
      return;
    case 4:
      for (let i = 0; o < end; i++, o++) out[o] = (bytes[p + (i >>> 1)] >>> ((i & 1) << 2)) & 15;
      return;
    case 8:
      for (let q = p; o < end; q++, o++) out[o] = bytes[q];
      return;
    case 16:
      for (let q = p; o < end; q += 2, o++) out[o] = bytes[q] | (bytes[q + 1] << 8);
      return;
    case 24:
      for (let q = p; o < end; q += 3, o++) out[o] = bytes[q] | (bytes[q + 1] << 8) | (bytes[q + 2] << 16);
      return;
    case 32:
      for (let q = p; o < end; q += 4, o++) out[o] = (bytes[q] | (bytes[q + 1] << 8) | (bytes[q + 2] << 16) | (bytes[q + 3] << 24)) >>> 0;
      return;
    default:
      for (let i = 0; o < end; i++, o++) {
        const bit = i * bpv;
        out[o] = readPackedAt(bytes, p + Math.floor(bit / 8), bit & 7, bpv);
      }
  }
}
