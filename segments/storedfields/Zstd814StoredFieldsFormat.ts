import { decompress as zstdDecompress } from 'fzstd';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import type { CompressedUnit, StoredFieldsCompression, UnitCompressor } from './CompressionMode.js';
import type { StoredFieldsModeParams } from './Lucene90StoredFieldsFormat.js';

/**
 * Elasticsearch's Zstd814StoredFieldsFormat (the default stored fields of Elasticsearch 8.16+
 * indices): Lucene90StoredFieldsFormat's files and chunks exactly (`.fdt/.fdx/.fdm`, layout in
 * Lucene90StoredFieldsFormat.ts), with `.fdt` codec `ZstdStoredFields814` and each compressed unit
 * one Zstandard frame, without a dictionary and without blocks:
 *
 * | field             | type  | meaning                                                         |
 * |-------------------|-------|-----------------------------------------------------------------|
 * | compressedLength  | vint  | bytes of the frame                                              |
 * | frame             | bytes | a Zstandard frame (RFC 8878) of the whole unit                   |
 *
 * A unit of 0 bytes is written as nothing at all. The segment attribute
 * `Zstd814StoredFieldsFormat.mode` says BEST_SPEED (zstd level 0, chunks of 14 KiB or 128 docs) or
 * BEST_COMPRESSION (level 3, chunks of 240 KiB or 2,048 docs); a reader needs neither, the chunk
 * size is in `.fdm`.
 *
 * Read only (decoded by fzstd, a pure-JS Zstandard decoder): prescore does not write this format.
 * The frame header's content size, when present, must be the unit's length before anything is
 * allocated for the frame.
 */
export const ZSTD814_FORMAT_NAME = 'ZstdStoredFields814';
export const ZSTD814_MODE_KEY = 'Zstd814StoredFieldsFormat.mode';

const ZSTD_MAGIC = 0xfd2fb528;

export const ZSTD814_COMPRESSION: StoredFieldsCompression = {
  name: 'ZSTD',

  newCompressor(): UnitCompressor {
    throw new Error(`${ZSTD814_FORMAT_NAME}: writing Zstandard stored fields is not supported (read only)`);
  },

  parseUnit(src: Uint8Array, pos: number, end: number, originalLength: number, unit: CompressedUnit, resource: string): void {
    const input = new ByteArrayDataInput(src, resource, pos, end - pos);
    const length = input.readVInt();
    if (length <= 0 || length > input.remaining) throw new CorruptIndexException(`invalid zstd frame length ${length} (${input.remaining} bytes left in the chunk)`, resource);
    unit.originalLength = originalLength;
    unit.dictLength = 0;
    unit.blockLength = originalLength;
    unit.setNumBlocks(1);
    unit.dictStart = unit.dictEnd = input.position;
    unit.blockStarts[0] = input.position;
    unit.blockStarts[1] = input.position + length;
    unit.end = input.position + length;
  },

  decodeDictionary(): void {
    // no dictionary
  },

  decodeBlock(src: Uint8Array, unit: CompressedUnit, _block: number, dest: Uint8Array, resource: string): void {
    const frame = src.subarray(unit.blockStarts[0], unit.blockStarts[1]);
    const declared = frameContentSize(frame, resource);
    if (declared !== undefined && declared !== unit.originalLength) {
      throw new CorruptIndexException(`zstd frame declares ${declared} bytes, the unit has ${unit.originalLength}`, resource);
    }
    let out: Uint8Array;
    try {
      out = zstdDecompress(frame);
    } catch (e) {
      throw new CorruptIndexException(`zstd: ${(e as Error).message}`, resource);
    }
    if (out.length !== unit.originalLength) throw new CorruptIndexException(`zstd frame decompressed to ${out.length} bytes, expected ${unit.originalLength}`, resource);
    dest.set(out, 0);
  },
};

/** The Frame_Content_Size of a Zstandard frame header, or undefined when the header omits it. */
function frameContentSize(frame: Uint8Array, resource: string): number | undefined {
  if (frame.length < 6) throw new CorruptIndexException(`zstd frame of ${frame.length} bytes is too short`, resource);
  const magic = (frame[0] | (frame[1] << 8) | (frame[2] << 16) | (frame[3] << 24)) >>> 0;
  if (magic !== ZSTD_MAGIC) throw new CorruptIndexException(`not a zstd frame (magic 0x${magic.toString(16)})`, resource);
  const descriptor = frame[4];
  const fcsFlag = descriptor >>> 6;
  const singleSegment = (descriptor >>> 5) & 1;
  const dictIdBytes = [0, 1, 2, 4][descriptor & 3];
  const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  if (fcsBytes === 0) return undefined;
  let p = 5 + (singleSegment ? 0 : 1) + dictIdBytes;
  if (p + fcsBytes > frame.length) throw new CorruptIndexException('zstd frame header past the end of the frame', resource);
  let size = 0;
  for (let i = 0, mul = 1; i < fcsBytes; i++, mul *= 256) size += frame[p++] * mul;
  return fcsBytes === 2 ? size + 256 : size;
}

/** Reading parameters of Elasticsearch's zstd stored fields (chunk sizes only matter to a writer). */
export const ZSTD814_STORED_FIELDS: StoredFieldsModeParams = {
  name: 'ZSTD814',
  formatName: ZSTD814_FORMAT_NAME,
  chunkSize: (16 - 2) * 1024,
  maxDocsPerChunk: 128,
  blockShift: 10,
  compression: ZSTD814_COMPRESSION,
};
