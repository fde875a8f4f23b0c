/**
 * A Bloom filter over byte strings: `mayContain` is false only for a key never added. 10 bits
 * and 7 probes per key (double hashing of two 32-bit hashes), about a 1% false-positive rate.
 *
 * Keys are hashed as their UTF-8 bytes, so a filter built from a terms dictionary's bytes answers
 * for the same ids given as strings (an ASCII id is hashed from its char codes, with no encoding).
 */
export class BloomFilter {
  private readonly bits: Uint32Array;
  /** Bits - 1 (a power of two). */
  private readonly mask: number;

  constructor(expectedKeys: number) {
    const wanted = Math.max(64, expectedKeys * BITS_PER_KEY);
    const size = 2 ** Math.ceil(Math.log2(wanted));
    this.bits = new Uint32Array(size / 32);
    this.mask = size - 1;
  }

  /** Adds the key whose UTF-8 bytes are `bytes[0, length)`. */
  addBytes(bytes: Uint8Array, length = bytes.length): void {
    hashBytes(bytes, length);
    this.set();
  }

  /** False when `key` was certainly never added. */
  mayContain(key: string): boolean {
    if (!hashString(key)) hashBytes(encoder.encode(key), -1);
    let h = h1;
    for (let i = 0; i < PROBES; i++) {
      const bit = h & this.mask;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
      h = (h + h2) | 0;
    }
    return true;
  }

  /** Bytes the filter holds. */
  get bytes(): number {
    return this.bits.byteLength;
  }

  private set(): void {
    let h = h1;
    for (let i = 0; i < PROBES; i++) {
      const bit = h & this.mask;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
      h = (h + h2) | 0;
    }
  }
}

const BITS_PER_KEY = 10;
/** ln 2 x bits per key, rounded: the probe count that minimises false positives. */
const PROBES = 7;
const encoder = new TextEncoder();

// The last key's two hashes (module state: no allocation per key).
let h1 = 0;
let h2 = 0;

/** FNV-1a and a murmur3-style mix, both over the same bytes; h2 is odd so probes cycle through every bit. */
function finish(a: number, b: number): void {
  b ^= b >>> 16;
  b = Math.imul(b, 0x85ebca6b);
  b ^= b >>> 13;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  h1 = a >>> 0;
  h2 = (b | 1) >>> 0;
}

function hashBytes(bytes: Uint8Array, length: number): void {
  const n = length < 0 ? bytes.length : length;
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  finish(a, b);
}

/** Hashes an ASCII string as its bytes; false (nothing hashed) when it has other characters. */
function hashString(key: string): boolean {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return false;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  finish(a, b);
  return true;
}
