import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { FastCompressionHashTable, MAX_DISTANCE, compressWithDictionary, decompress } from '../compress/LZ4.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import { ByteArrayDataOutput, type DataOutput } from '../store/DataOutput.js';
import type { StoredFieldsCompression, UnitCompressor } from './CompressionMode.js';
import { type CompressedUnit, numBlocks } from './CompressionMode.js';

/**
 * BEST_SPEED's compression (Lucene's LZ4WithPresetDictCompressionMode): a unit of L bytes has a
 * dictionary of min(64 KiB, floor(L / 20)) bytes and blocks of ceil((L - dictLength) / 10) bytes,
 * so about 10 blocks, each LZ4-compressed (segments/compress/LZ4.ts) with the dictionary preset.
 * The compressed lengths come first, so a reader skips blocks without decoding them:
 *
 * | field                | type               | meaning                                                |
 * |----------------------|--------------------|--------------------------------------------------------|
 * | dictLength           | vint               | min(65536, floor(L / 20))                               |
 * | blockLength          | vint               | ceil((L - dictLength) / 10) (0 when L is 0)             |
 * | dictCompressedLength | vint               | LZ4 bytes of the dictionary (at least 1: an empty block is a zero token) |
 * | blockCompressedLength| vint per block     | LZ4 bytes of each block                                 |
 * | dictionary           | LZ4 block          | the dictionary, compressed alone                        |
 * | blocks               | LZ4 blocks         | each compressed with the dictionary in front of it      |
 *
 * The compressor keeps one LZ4 hash table for its whole life (dictionary and blocks, chunk after
 * chunk), never cleared, as Lucene's does: that, with the same inputs, makes the bytes Lucene's.
 */
const NUM_SUB_BLOCKS = 10;
const DICT_SIZE_FACTOR = 2;

export const LZ4_WITH_PRESET_DICT: StoredFieldsCompression = {
  name: 'BEST_SPEED',

  newCompressor(): UnitCompressor {
    return new LZ4WithPresetDictCompressor();
  },

  parseUnit(src: Uint8Array, pos: number, end: number, originalLength: number, unit: CompressedUnit, resource: string): void {
    const input = new ByteArrayDataInput(src, resource, pos, end - pos);
    const dictLength = input.readVInt();
    const blockLength = input.readVInt();
    checkLengths(dictLength, blockLength, originalLength, resource);
    const n = numBlocks(originalLength, dictLength, blockLength);
    // every block costs at least a length byte: refuse counts the chunk cannot hold before allocating
    if (n > input.remaining) throw new CorruptIndexException(`LZ4 unit of ${n} blocks exceeds the chunk`, resource);
    unit.originalLength = originalLength;
    unit.dictLength = dictLength;
    unit.blockLength = blockLength;
    unit.setNumBlocks(n);
    const dictCompressed = input.readVInt();
    const starts = unit.blockStarts;
    // block lengths are read first; their data follows the dictionary's
    for (let i = 0; i < n; i++) starts[i + 1] = input.readVInt();
    unit.dictStart = input.position;
    unit.dictEnd = unit.dictStart + dictCompressed;
    starts[0] = unit.dictEnd;
    for (let i = 0; i < n; i++) {
      if (starts[i + 1] < 0) throw new CorruptIndexException(`negative compressed block length ${starts[i + 1]}`, resource);
      starts[i + 1] += starts[i];
    }
    unit.end = starts[n];
    if (dictCompressed < 0 || unit.end > end) {
      throw new CorruptIndexException(`LZ4 unit ends at ${unit.end}, past the end of its chunk (${end})`, resource);
    }
  },

  decodeDictionary(src: Uint8Array, unit: CompressedUnit, dest: Uint8Array, resource: string): void {
    const end = decompress(src, unit.dictStart, unit.dictEnd, dest, 0, unit.dictLength, resource);
    if (end !== unit.dictEnd) throw new CorruptIndexException(`LZ4 dictionary used ${end - unit.dictStart} of its ${unit.dictEnd - unit.dictStart} bytes`, resource);
  },

  decodeBlock(src: Uint8Array, unit: CompressedUnit, block: number, dest: Uint8Array, resource: string): void {
    const start = unit.blockStarts[block];
    const stop = unit.blockStarts[block + 1];
    const end = decompress(src, start, stop, dest, unit.dictLength, unit.blockSize(block), resource);
    if (end !== stop) throw new CorruptIndexException(`LZ4 block ${block} used ${end - start} of its ${stop - start} bytes`, resource);
  },
};

function checkLengths(dictLength: number, blockLength: number, originalLength: number, resource: string): void {
  if (dictLength < 0 || dictLength > originalLength || dictLength > MAX_DISTANCE) {
    throw new CorruptIndexException(`invalid dictionary length ${dictLength} for a unit of ${originalLength} bytes`, resource);
  }
  if (blockLength < 0 || (blockLength === 0 && originalLength > dictLength)) {
    throw new CorruptIndexException(`invalid block length ${blockLength} for a unit of ${originalLength} bytes`, resource);
  }
}

class LZ4WithPresetDictCompressor implements UnitCompressor {
  private readonly hashTable = new FastCompressionHashTable();
  /** The compressed dictionary and blocks, held until their lengths are written. */
  private readonly compressed = new ByteArrayDataOutput(1 << 16);
  /**
   * [dictionary | current block]: LZ4 needs the dictionary right before the bytes it compresses.
   * Bounded: the writer never compresses a unit of more than 2 x chunkSize bytes.
   */
  private buffer = new Uint8Array(0);

  compress(bytes: Uint8Array, off: number, len: number, out: DataOutput): void {
    const dictLength = Math.min(MAX_DISTANCE, Math.floor(len / (NUM_SUB_BLOCKS * DICT_SIZE_FACTOR)));
    const blockLength = Math.floor((len - dictLength + NUM_SUB_BLOCKS - 1) / NUM_SUB_BLOCKS);
    if (this.buffer.length < dictLength + blockLength) this.buffer = new Uint8Array(dictLength + blockLength);
    const buffer = this.buffer;
    out.writeVInt(dictLength);
    out.writeVInt(blockLength);
    this.compressed.reset();
    buffer.set(bytes.subarray(off, off + dictLength), 0);
    this.compressBlock(0, dictLength, out);
    for (let start = dictLength; start < len; start += blockLength) {
      const l = Math.min(blockLength, len - start);
      buffer.set(bytes.subarray(off + start, off + start + l), dictLength);
      this.compressBlock(dictLength, l, out);
    }
    out.writeBytes(this.compressed.toBytes());
  }

  private compressBlock(dictLength: number, len: number, out: DataOutput): void {
    const before = this.compressed.length;
    compressWithDictionary(this.buffer, 0, dictLength, len, this.compressed, this.hashTable);
    out.writeVInt(this.compressed.length - before);
  }
}
