import type { DataOutput } from '../store/DataOutput.js';

/**
 * How a stored-fields mode compresses the serialized docs of a chunk (Lucene's CompressionMode).
 * Both of Lucene90StoredFieldsFormat's modes write a **unit** (one call of the compressor: a whole
 * chunk, or one slice of a sliced chunk) the same way: the first bytes of the unit are a
 * dictionary, compressed alone; the rest is cut into blocks of `blockLength` bytes (the last one
 * shorter), each compressed independently with the dictionary preset. A reader can then
 * decompress the dictionary and just the blocks that hold the doc it wants.
 *
 * | field        | type | meaning                                                              |
 * |--------------|------|----------------------------------------------------------------------|
 * | dictLength   | vint | bytes of the dictionary (the unit's first bytes)                      |
 * | blockLength  | vint | bytes per block; ceil((unit length - dictLength) / blockLength) blocks follow |
 * | ...          |      | the compressed dictionary and blocks, as the mode lays them out       |
 *
 * A unit of 0 bytes is still written by the compressor but never read.
 */
export interface StoredFieldsCompression {
  /** Lucene's name of the mode (`BEST_SPEED`, `BEST_COMPRESSION`). */
  readonly name: string;
  /** A compressor for one writer: it may keep state across calls (LZ4's hash table does). */
  newCompressor(): UnitCompressor;
  /**
   * Reads the layout of the unit at src[pos, end) holding `originalLength` (> 0) bytes into `unit`:
   * where its compressed dictionary and blocks lie. Throws CorruptIndexException naming `resource`.
   */
  parseUnit(src: Uint8Array, pos: number, end: number, originalLength: number, unit: CompressedUnit, resource: string): void;
  /** Decompresses the unit's dictionary into dest[0, dictLength). */
  decodeDictionary(src: Uint8Array, unit: CompressedUnit, dest: Uint8Array, resource: string): void;
  /**
   * Decompresses block `block` into dest[dictLength, dictLength + unit.blockSize(block)), with the
   * dictionary already in dest[0, dictLength).
   */
  decodeBlock(src: Uint8Array, unit: CompressedUnit, block: number, dest: Uint8Array, resource: string): void;
}

export interface UnitCompressor {
  /** Compresses bytes[off, off + len) as one unit onto `out`. */
  compress(bytes: Uint8Array, off: number, len: number, out: DataOutput): void;
}

/** The layout of one compressed unit inside the loaded bytes of a chunk (positions in `src`). */
export class CompressedUnit {
  originalLength = 0;
  dictLength = 0;
  blockLength = 0;
  numBlocks = 0;
  dictStart = 0;
  dictEnd = 0;
  /** Block i's compressed bytes are src[blockStarts[i], blockStarts[i + 1]). */
  blockStarts = new Float64Array(16);
  /** Position right after the unit. */
  end = 0;

  /** Uncompressed bytes of block i. */
  blockSize(i: number): number {
    return Math.min(this.blockLength, this.originalLength - this.dictLength - i * this.blockLength);
  }

  /** Sizes the block table for n blocks (grown, never shrunk). */
  setNumBlocks(n: number): void {
    this.numBlocks = n;
    if (this.blockStarts.length < n + 1) this.blockStarts = new Float64Array(Math.max(n + 1, this.blockStarts.length * 2));
  }
}

/** The number of blocks a unit of `originalLength` bytes with these dictionary and block lengths has. */
export function numBlocks(originalLength: number, dictLength: number, blockLength: number): number {
  return originalLength > dictLength ? Math.ceil((originalLength - dictLength) / blockLength) : 0;
}
