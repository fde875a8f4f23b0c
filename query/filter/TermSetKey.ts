import { createHash } from 'node:crypto';
import { valueKey, type FilterValue } from './Values.js';

/** Sets up to this size are spelled out in their key; larger ones are digested. */
export const SPELLED_OUT_TERMS = 64;

/**
 * The canonical key of a set of values (terms, ids), the same whatever their order and
 * repetitions. Small sets list their sorted distinct values. A large set (ACL lists of 100k
 * terms) would cost a string sort (~50-200 ms for 100k) and a megabyte of key: instead each
 * value is hashed to 64 bits (two 32-bit lanes, murmur3-style, over the value's type and UTF-16
 * units), the hashes sorted as integers and deduplicated, and the key is their count and
 * SHA-256. Two different sets share a key only if a value of one collides in 64 bits with a
 * value of the other (~2^-64 per pair).
 */
export function termSetKey(values: readonly FilterValue[]): string {
  if (values.length <= SPELLED_OUT_TERMS) {
    const keys = [...new Set(values.map(valueKey))].sort();
    return `[${keys.join(',')}]`;
  }
  const lanes = new Uint32Array(2 * values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const s = typeof v === 'string' ? v : valueKey(v);
    const seed = typeof v === 'string' ? 0x9747b28c : 0x2545f491;
    let h1 = seed,
      h2 = ~seed;
    for (let k = 0; k < s.length; k++) {
      const c = s.charCodeAt(k);
      h1 = Math.imul(rotl(h1 ^ Math.imul(c, 0xcc9e2d51), 15), 0x1b873593);
      h1 = (Math.imul(rotl(h1, 13), 5) + 0xe6546b64) | 0;
      h2 = Math.imul(rotl(h2 ^ Math.imul(c, 0x85ebca6b), 17), 0xc2b2ae35);
      h2 = (Math.imul(rotl(h2, 11), 9) + 0x4cf5ad43) | 0;
    }
    lanes[2 * i] = fmix(h1 ^ s.length);
    lanes[2 * i + 1] = fmix(h2 ^ Math.imul(s.length, 0x27d4eb2f));
  }
  const hashes = new BigUint64Array(lanes.buffer);
  hashes.sort();
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    if (i > 0 && lanes[2 * i] === lanes[2 * i - 2] && lanes[2 * i + 1] === lanes[2 * i - 1]) continue;
    lanes[2 * n] = lanes[2 * i];
    lanes[2 * n + 1] = lanes[2 * i + 1];
    n++;
  }
  const digest = createHash('sha256')
    .update(new Uint8Array(lanes.buffer, 0, 8 * n))
    .digest('base64url');
  return `#${n}:${digest}`;
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
