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
