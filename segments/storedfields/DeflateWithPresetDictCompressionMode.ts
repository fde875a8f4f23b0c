import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import type { DataOutput } from '../store/DataOutput.js';
import type { StoredFieldsCompression, UnitCompressor } from './CompressionMode.js';
import { type CompressedUnit, numBlocks } from './CompressionMode.js';

/**
 * BEST_COMPRESSION's compression (Lucene's DeflateWithPresetDictCompressionMode): a unit of L
 * bytes has a dictionary of floor(L / 60) bytes and blocks of ceil((L - dictLength) / 10) bytes,
 * each a raw DEFLATE stream (RFC 1951: no zlib header or checksum), level 6; blocks are deflated
 * with the dictionary preset (zlib's set-dictionary), the dictionary itself without one. Each
 * compressed part carries its own length, so a reader walks the lengths to skip blocks:
 *
 * | field                 | type   | meaning                                               |
 * |-----------------------|--------|-------------------------------------------------------|
 * | dictLength            | vint   | floor(L / 60)                                          |
 * | blockLength           | vint   | ceil((L - dictLength) / 10)                            |
 * | dictCompressedLength  | vint   | 0 when dictLength is 0 (then no bytes follow)          |
 * | dictionary            | bytes  | raw DEFLATE                                            |
 * | per block: length     | vint   |                                                        |
 * | per block: bytes      | bytes  | raw DEFLATE with the dictionary preset                 |
 *
 * Written here through node:zlib (level 6, 32 KiB window, memLevel 8, as Java's Deflater): the
 * streams are valid and Lucene reads them, but node's zlib is not Java's, so the compressed bytes
 * may differ from Lucene's for the same input.
 */
const NUM_SUB_BLOCKS = 10;
const DICT_SIZE_FACTOR = 6;
const LEVEL = 6;

export const DEFLATE_WITH_PRESET_DICT: StoredFieldsCompression = {
  name: 'BEST_COMPRESSION',

  newCompressor(): UnitCompressor {
    return new DeflateWithPresetDictCompressor();
  },

  parseUnit(src: Uint8Array, pos: number, end: number, originalLength: number, unit: CompressedUnit, resource: string): void {
    const input = new ByteArrayDataInput(src, resource, pos, end - pos);
    const dictLength = input.readVInt();
    const blockLength = input.readVInt();
    if (dictLength < 0 || dictLength > originalLength) {
      throw new CorruptIndexException(`invalid dictionary length ${dictLength} for a unit of ${originalLength} bytes`, resource);
    }
    if (blockLength < 0 || (blockLength === 0 && originalLength > dictLength)) {
      throw new CorruptIndexException(`invalid block length ${blockLength} for a unit of ${originalLength} bytes`, resource);
    }
    const n = numBlocks(originalLength, dictLength, blockLength);
    if (n > input.remaining) throw new CorruptIndexException(`DEFLATE unit of ${n} blocks exceeds the chunk`, resource);
    unit.originalLength = originalLength;
    unit.dictLength = dictLength;
    unit.blockLength = blockLength;
    unit.setNumBlocks(n);
    const dictCompressed = input.readVInt();
    if (dictCompressed < 0 || (dictCompressed === 0) !== (dictLength === 0)) {
      throw new CorruptIndexException(`invalid compressed dictionary length ${dictCompressed} for a dictionary of ${dictLength} bytes`, resource);
    }
    unit.dictStart = input.position;
    input.skipBytes(dictCompressed);
    unit.dictEnd = input.position;
    const starts = unit.blockStarts;
    for (let i = 0; i < n; i++) {
      const length = input.readVInt();
      if (length <= 0) throw new CorruptIndexException(`invalid compressed length ${length} of block ${i}`, resource);
      starts[i] = input.position;
      input.skipBytes(length);
    }
    starts[n] = input.position;
    unit.end = input.position;
  },

  decodeDictionary(src: Uint8Array, unit: CompressedUnit, dest: Uint8Array, resource: string): void {
    if (unit.dictLength === 0) return;
    dest.set(inflate(src.subarray(unit.dictStart, unit.dictEnd), unit.dictLength, undefined, 'dictionary', resource), 0);
  },

  decodeBlock(src: Uint8Array, unit: CompressedUnit, block: number, dest: Uint8Array, resource: string): void {
    const dictionary = unit.dictLength === 0 ? undefined : dest.subarray(0, unit.dictLength);
    const bytes = inflate(src.subarray(unit.blockStarts[block], unit.blockStarts[block + 1]), unit.blockSize(block), dictionary, `block ${block}`, resource);
    dest.set(bytes, unit.dictLength);
  },
};

function inflate(compressed: Uint8Array, expected: number, dictionary: Uint8Array | undefined, what: string, resource: string): Uint8Array {
  let out: Uint8Array;
  try {
    out = inflateRawSync(compressed, { maxOutputLength: Math.max(1, expected), ...(dictionary ? { dictionary } : {}) });
  } catch (e) {
    throw new CorruptIndexException(`DEFLATE ${what}: ${(e as Error).message}`, resource);
  }
  if (out.length !== expected) throw new CorruptIndexException(`DEFLATE ${what} inflated to ${out.length} bytes, expected ${expected}`, resource);
  return out;
}

class DeflateWithPresetDictCompressor implements UnitCompressor {
  compress(bytes: Uint8Array, off: number, len: number, out: DataOutput): void {
    const dictLength = Math.floor(len / (NUM_SUB_BLOCKS * DICT_SIZE_FACTOR));
    const blockLength = Math.floor((len - dictLength + NUM_SUB_BLOCKS - 1) / NUM_SUB_BLOCKS);
    out.writeVInt(dictLength);
    out.writeVInt(blockLength);
    const dictionary = bytes.subarray(off, off + dictLength);
    writeDeflated(dictionary, undefined, out);
    for (let start = dictLength; start < len; start += blockLength) {
      const l = Math.min(blockLength, len - start);
      writeDeflated(bytes.subarray(off + start, off + start + l), dictLength === 0 ? undefined : dictionary, out);
    }
  }
}

function writeDeflated(data: Uint8Array, dictionary: Uint8Array | undefined, out: DataOutput): void {
  if (data.length === 0) {
    out.writeVInt(0);
    return;
  }
  const compressed = deflateRawSync(data, { level: LEVEL, ...(dictionary ? { dictionary } : {}) });
  out.writeVInt(compressed.length);
  out.writeBytes(compressed);
}
