/**
 * Lucene90StoredFieldsFormat: the stored fields of a segment (what a search returns with its hits,
 * e.g. Elasticsearch's `_id` and `_source`), in three CodecUtil-framed files with CRC32 footers.
 * Written by Lucene 9.0 to 10.x (and by StoredFieldsWriter), read by StoredFieldsReader.
 * Little-endian throughout (the CodecUtil header and footer excepted).
 *
 * Documents are buffered, serialized, until the buffer holds at least `chunkSize` bytes or
 * `maxDocsPerChunk` documents; then the buffer is written as one **chunk**: a small header (doc
 * counts and lengths) followed by the compressed bytes of all its documents. Compressing many
 * small documents together is what makes the format compact. A reader finds the chunk of a doc
 * through `.fdx`, decompresses (part of) the chunk, and decodes the doc's field records.
 *
 * ## Modes
 *
 * The mode is the segment attribute `Lucene90StoredFieldsFormat.mode` in `.si`, and also shows in
 * the `.fdt` codec name:
 *
 * | mode              | `.fdt` codec                    | chunkSize          | maxDocsPerChunk | compression (see the mode's module)        |
 * |-------------------|---------------------------------|--------------------|-----------------|--------------------------------------------|
 * | BEST_SPEED        | `Lucene90StoredFieldsFastData`  | 81,920 (10 x 8 KiB) | 1,024          | LZ4 with a preset dictionary (LZ4WithPresetDict) |
 * | BEST_COMPRESSION  | `Lucene90StoredFieldsHighData`  | 491,520 (10 x 48 KiB) | 4,096        | raw DEFLATE level 6 with a preset dictionary (DeflateWithPresetDict) |
 *
 * Both use blockShift 10 for the `.fdx` arrays.
 *
 * ## `.fdt` (fields data; codec per mode, version 1)
 *
 * | field           | type                | meaning                                                                 |
 * |-----------------|---------------------|-------------------------------------------------------------------------|
 * | index header    |                     | codec per mode, version 1, segment id, segment suffix (`""` by default) |
 * | chunk*          |                     | one per chunk, in doc order (below)                                      |
 * | footer          | 16 bytes            | CRC32 of everything before                                               |
 *
 * A chunk of n docs:
 *
 * | field            | type               | meaning / check                                                        |
 * |------------------|--------------------|------------------------------------------------------------------------|
 * | docBase          | vint               | the chunk's first doc; must equal the doc base `.fdx` gives             |
 * | token            | vint               | n << 2 \| dirty << 1 \| sliced. dirty: written by finish() before the chunk was full. sliced: the serialized docs reached 2 x chunkSize, and were compressed as consecutive slices of chunkSize bytes (the last one shorter), each an independent compressed unit |
 * | numStoredFields  | n ints             | fields per doc (StoredFieldsInts; a single vint when n = 1)            |
 * | lengths          | n ints             | serialized bytes per doc (StoredFieldsInts; a single vint when n = 1); a doc has length 0 exactly when it has 0 fields |
 * | compressed docs  | 1 or more units    | the docs' serialized bytes back to back, compressed by the mode (one unit, or one per slice) |
 *
 * StoredFieldsInts (n >= 2): a byte bpv, then
 * - bpv 0: every value is equal; a vint holds it.
 * - bpv 8/16/32: the values as unsigned 8/16/32-bit ints. Each full block of 128 values is 16/32/64
 *   int64 LE words, word i holding values i, i + 16, i + 32, ... (8 bits), i, i + 32, ... (16 bits)
 *   or i, i + 64 (32 bits), the first of them in the word's most significant bits; the remaining
 *   < 128 values follow one by one as LE bytes/shorts/ints.
 *
 * A serialized doc is its fields, each a record `vlong (fieldNumber << 3 | type)` then the value:
 *
 * | type | value              | encoding (StoredFieldValues)                                           |
 * |------|--------------------|------------------------------------------------------------------------|
 * | 0    | string             | vint UTF-8 length, UTF-8 bytes                                          |
 * | 1    | bytes              | vint length, bytes                                                      |
 * | 2    | int                | zig-zag vint                                                            |
 * | 3    | float              | ZFloat: 1 byte for integers -1..125, 4 bytes for other positive floats, 5 for negative ones |
 * | 4    | long               | TLong: a header byte (2 bits: unit ms/s/h/day, 1 continuation bit, 5 low bits of the zig-zag value), then a vlong of the remaining bits |
 * | 5    | double             | ZDouble: 1 byte for integers -1..124, 5 bytes when exactly a float, 8 for other positive doubles, 9 for negative ones |
 *
 * ## `.fdx` (fields index; codec `Lucene90FieldsIndexIdx`, version 0)
 *
 * | field           | type                  | meaning                                                              |
 * |-----------------|-----------------------|----------------------------------------------------------------------|
 * | index header    |                       | codec `Lucene90FieldsIndexIdx`, version 0, segment id, segment suffix |
 * | doc bases       | DirectMonotonic data  | numChunks + 1 values: the first doc of every chunk, then maxDoc       |
 * | start pointers  | DirectMonotonic data  | numChunks + 1 values: the `.fdt` offset of every chunk, then the end of the last chunk (maxPointer) |
 * | footer          | 16 bytes              |                                                                      |
 *
 * Reading doc d: binary-search the doc bases for the last chunk whose base <= d; its start
 * pointer is where the chunk starts and the next one where it ends.
 *
 * ## `.fdm` (fields meta; codec `Lucene90FieldsIndexMeta`, version 1)
 *
 * | field                  | type              | meaning / check                                            |
 * |------------------------|-------------------|------------------------------------------------------------|
 * | index header           |                   | codec `Lucene90FieldsIndexMeta`, version 1 (<= the `.fdt` version), segment id, suffix |
 * | chunkSize              | vint              | the mode's chunk size (the slice size of sliced chunks)   |
 * | maxDoc                 | int32             | docs in the segment                                        |
 * | blockShift             | int32             | DirectMonotonic block shift (10)                           |
 * | numChunks + 1          | int32             | values in each `.fdx` array                                |
 * | docBasesStart          | int64             | `.fdx` offset of the doc-base array                        |
 * | doc-base blocks        | DirectMonotonic meta | per block of 2^blockShift values: min int64, average float32, data offset int64, bitsPerValue byte |
 * | startPointersStart     | int64             | `.fdx` offset of the start-pointer array (= end of the doc bases) |
 * | start-pointer blocks   | DirectMonotonic meta |                                                         |
 * | startPointersEnd       | int64             | end of the start-pointer array in `.fdx`                   |
 * | maxPointer             | int64             | end of the last chunk in `.fdt` (= where its footer starts) |
 * | numChunks              | vlong             | chunks written                                             |
 * | numDirtyChunks         | vlong             | chunks flushed before they were full (<= numChunks)        |
 * | numDirtyDocs           | vlong             | docs in those chunks (>= numDirtyChunks; 0 exactly when numDirtyChunks is 0) |
 * | footer                 | 16 bytes          |                                                            |
 *
 * The dirty counters let a merge decide whether copying compressed chunks as they are would keep
 * too many half-empty chunks; a reader only checks their consistency.
 */

import type { StoredFieldsCompression } from './CompressionMode.js';
import { DEFLATE_WITH_PRESET_DICT } from './DeflateWithPresetDictCompressionMode.js';
import { LZ4_WITH_PRESET_DICT } from './LZ4WithPresetDictCompressionMode.js';

/** Segment attribute (in `.si`) naming the mode. */
export const MODE_KEY = 'Lucene90StoredFieldsFormat.mode';

export const FIELDS_EXTENSION = 'fdt';
export const INDEX_EXTENSION = 'fdx';
export const META_EXTENSION = 'fdm';

export const INDEX_CODEC_NAME = 'Lucene90FieldsIndex';
export const META_CODEC = `${INDEX_CODEC_NAME}Meta`;
export const INDEX_CODEC = `${INDEX_CODEC_NAME}Idx`;

/** `.fdt` (and `.fdm`) version: Lucene 9.0 to 10.x write 1. */
export const VERSION_START = 1;
export const VERSION_CURRENT = 1;
/** `.fdm` accepts versions from 0 up to the `.fdt` version. */
export const META_VERSION_START = 0;
/** `.fdx` version. */
export const INDEX_VERSION_START = 0;
export const INDEX_VERSION_CURRENT = 0;

/** Field record types (low 3 bits of a record's vlong). */
export const STRING = 0;
export const BYTE_ARR = 1;
export const NUMERIC_INT = 2;
export const NUMERIC_FLOAT = 3;
export const NUMERIC_LONG = 4;
export const NUMERIC_DOUBLE = 5;
export const TYPE_BITS = 3;
export const TYPE_MASK = 7;

export type StoredFieldsModeName = 'BEST_SPEED' | 'BEST_COMPRESSION';

/** The parameters of a mode, as Lucene90StoredFieldsFormat fixes them. */
export interface StoredFieldsModeParams {
  /** The mode's name (BEST_SPEED, BEST_COMPRESSION; other formats built on these files name theirs). */
  readonly name: string;
  /** The `.fdt` codec name. */
  readonly formatName: string;
  readonly chunkSize: number;
  readonly maxDocsPerChunk: number;
  readonly blockShift: number;
  readonly compression: StoredFieldsCompression;
}

export const BEST_SPEED: StoredFieldsModeParams = {
  name: 'BEST_SPEED',
  formatName: 'Lucene90StoredFieldsFastData',
  chunkSize: 10 * 8 * 1024,
  maxDocsPerChunk: 1024,
  blockShift: 10,
  compression: LZ4_WITH_PRESET_DICT,
};

export const BEST_COMPRESSION: StoredFieldsModeParams = {
  name: 'BEST_COMPRESSION',
  formatName: 'Lucene90StoredFieldsHighData',
  chunkSize: 10 * 48 * 1024,
  maxDocsPerChunk: 4096,
  blockShift: 10,
  compression: DEFLATE_WITH_PRESET_DICT,
};

export const STORED_FIELDS_MODES: readonly StoredFieldsModeParams[] = [BEST_SPEED, BEST_COMPRESSION];

export function modeByName(name: string): StoredFieldsModeParams {
  const mode = STORED_FIELDS_MODES.find((m) => m.name === name);
  if (!mode) throw new Error(`unknown stored fields mode ${name} (expected ${STORED_FIELDS_MODES.map((m) => m.name).join(' or ')})`);
  return mode;
}
