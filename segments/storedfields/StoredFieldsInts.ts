import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { DataOutput } from '../store/DataOutput.js';

/**
 * The per-chunk int arrays of Lucene90StoredFieldsFormat (fields per doc, bytes per doc) for a
 * chunk of two or more docs: a byte bpv, then
 *
 * - bpv 0: all values equal, one vint;
 * - bpv 8, 16 or 32: the smallest of these widths that holds every value (as unsigned ints).
 *   Every full block of 128 values is written as 128 x bpv / 64 int64 LE words: with
 *   k = 64 / bpv values per word and w = 128 / k words, word i holds values i, i + w, ..., i + (k - 1) w,
 *   the first in its most significant bpv bits (so a word can be split with shifts alone). The
 *   rest (< 128 values) follow one by one, little-endian, bpv / 8 bytes each.
 */

const BLOCK_SIZE = 128;

export function writeStoredFieldsInts(values: Int32Array, count: number, out: DataOutput): void {
  let allEqual = true;
  for (let i = 1; i < count; i++) {
    if (values[i] !== values[0]) {
      allEqual = false;
      break;
    }
  }
  if (allEqual) {
    out.writeByte(0);
    out.writeVInt(values[0]);
    return;
  }
  let max = 0;
  for (let i = 0; i < count; i++) max |= values[i];
  const bpv = max >>> 0 <= 0xff ? 8 : max >>> 0 <= 0xffff ? 16 : 32;
  out.writeByte(bpv);
  const perWord = 64 / bpv;
  const words = BLOCK_SIZE / perWord;
  let k = 0;
  for (; k + BLOCK_SIZE <= count; k += BLOCK_SIZE) {
    for (let i = 0; i < words; i++) {
      // the word's bytes, least significant first: the last value of the word is lowest
      for (let j = perWord - 1; j >= 0; j--) writeLE(out, values[k + i + j * words], bpv);
    }
  }
  for (; k < count; k++) writeLE(out, values[k], bpv);
}

function writeLE(out: DataOutput, v: number, bpv: number): void {
  for (let b = 0; b < bpv; b += 8) out.writeByte((v >>> b) & 0xff);
}

/** Reads `count` ints written by writeStoredFieldsInts into values[offset, offset + count). */
export function readStoredFieldsInts(input: ByteArrayDataInput, count: number, values: Int32Array, offset: number): void {
  const bpv = input.readByte();
  if (bpv === 0) {
    values.fill(input.readVInt(), offset, offset + count);
    return;
  }
  if (bpv !== 8 && bpv !== 16 && bpv !== 32) throw new CorruptIndexException(`unsupported number of bits per value: ${bpv}`, input.resource);
  const bytes = bpv >>> 3;
  if (input.remaining < count * bytes) throw new CorruptIndexException(`${count} ints of ${bpv} bits read past the end`, input.resource);
  const perWord = 64 / bpv;
  const words = BLOCK_SIZE / perWord;
  let k = 0;
  for (; k + BLOCK_SIZE <= count; k += BLOCK_SIZE) {
    for (let i = 0; i < words; i++) {
      for (let j = perWord - 1; j >= 0; j--) values[offset + k + i + j * words] = readLE(input, bytes);
    }
  }
  for (; k < count; k++) values[offset + k] = readLE(input, bytes);
}

function readLE(input: ByteArrayDataInput, bytes: number): number {
  let v = 0;
  for (let b = 0; b < bytes; b++) v |= input.readByte() << (8 * b);
  return v;
}
