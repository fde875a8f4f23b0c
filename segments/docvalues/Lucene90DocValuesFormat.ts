/**
 * Lucene90DocValuesFormat: per-document values of a segment's fields (the doc values Lucene
 * 9.0 to 10.x writes, and Elasticsearch's keyword, numeric, date and boolean fields by default).
 * Read by Lucene90DocValuesProducer, written by Lucene90DocValuesConsumer.
 *
 * Files (per segment and per-field-format suffix S, e.g. `Lucene90_0`, taken from the fields'
 * `PerFieldDocValuesFormat.format` / `.suffix` attributes; inside `_N.cfs` for a compound segment;
 * a doc-values update of generation G is `_N_<G base 36>_S.*`, always a plain file):
 *
 * | file       | codec                          | versions | what                                  |
 * |------------|--------------------------------|----------|---------------------------------------|
 * | `_N_S.dvm` | `Lucene90DocValuesMetadata`    | 0-2      | one entry per field: where and how     |
 * | `_N_S.dvd` | `Lucene90DocValuesData`        | 0-2      | doc sets, packed values, terms         |
 * | `_N_S.dvs` | `Lucene90DocValuesSkipIndex`   | 1-2      | skip index of fields that have one     |
 *
 * Versions: 0 is what Lucene 9.x and the 10.x releases before the separate skip file write (the
 * fixtures, 9.12.3 and 10.0.0, are version 0), with the skip index (10.0+, fields whose `.fnm`
 * skip-index byte is RANGE) inside `.dvd`; 1 moves the skip index into its own `.dvs` file; 2 adds
 * maxValueCount to each skip-index entry. The rest of the layout is the same in all three. A meta
 * file and its data (and skip) files must carry the same version, segment id and suffix. Newer
 * versions are refused (IndexFormatTooNewOrOldException) rather than guessed at.
 *
 * Every file starts with the CodecUtil index header (codec, version, segment id, suffix S) and
 * ends with the CodecUtil footer (CRC-32); segments/codec/CodecUtil.ts documents both. Numbers are
 * little-endian; "long" is a signed int64 (exact: minimums, GCDs, table entries and skip-index
 * bounds can be any int64), vint/vlong are Lucene's 7-bit varints.
 *
 * ## `.dvm`: the metadata, read whole and CRC-checked at open
 *
 * After the header, one entry per field that has doc values, in field order, then int32 -1 and
 * the footer:
 *
 * | field             | type  | meaning                                                               |
 * |-------------------|-------|-----------------------------------------------------------------------|
 * | field number      | int32 | the `.fnm` number; -1 ends the list                                    |
 * | type              | byte  | 0 NUMERIC, 1 BINARY, 2 SORTED, 3 SORTED_SET, 4 SORTED_NUMERIC (must match the `.fnm` type) |
 * | skip index        |       | only when the `.fnm` says the field has one (RANGE): SkipIndexMeta below |
 * | the type's entry  |       | below                                                                 |
 *
 * SkipIndexMeta: int64 offset and int64 length of the field's skip index (in `.dvd` for version 0,
 * in `.dvs` from version 1), int64 maxValue, int64 minValue (over every value of the field; an
 * empty field has Long.MIN_VALUE / Long.MAX_VALUE), int32 docCount (docs with a value), int32
 * maxDocID (-1 when empty), and from version 2 int32 maxValueCount (the most values one doc has).
 *
 * DocsWithField (part of every entry): int64 offset, int64 length, int16 jumpTableEntryCount, byte
 * denseRankPower. Offset -2: no doc has a value; -1: every doc of the segment has one (both with
 * length 0 and -1 / -1 for the last two); otherwise an IndexedDISI of that length at that offset of
 * `.dvd` (segments/lucene/IndexedDISI.ts: SPARSE / DENSE / ALL blocks of 65536 docs, then its jump
 * table), with denseRankPower 9. A doc's rank in that set (its "index") is where its values are.
 *
 * NUMERIC: NumericEntry. Also the ords of SORTED and SORTED_SET fields and the values of
 * SORTED_NUMERIC fields.
 *
 * | field                 | type        | meaning                                                        |
 * |-----------------------|-------------|----------------------------------------------------------------|
 * | docs with field       |             | DocsWithField                                                  |
 * | numValues             | int64       | values stored (one per doc for NUMERIC and SORTED)              |
 * | tableSize             | int32       | -1: no table; 2..256: that many int64 table entries follow, ascending (values are table[packed]); < -1: values in blocks of 2^(-2 - tableSize) values (always 2^14) |
 * | table                 | int64 x n   | the distinct values, when tableSize >= 0                        |
 * | bitsPerValue          | byte        | 0: every value is `min` and nothing is stored; 1,2,4,8,12,16,20,24,28,32,40,48,56,64: the packed width; 0xFF with blocks |
 * | min                   | int64       | value = min + gcd x packed (wrapping in int64); 0 with a table; Long.MAX_VALUE for an empty field |
 * | gcd                   | int64       | >= 1 when packed; 1 with a table; 0 when every value is equal  |
 * | valuesOffset          | int64       | where the packed values start in `.dvd`                         |
 * | valuesLength          | int64       | their length                                                   |
 * | valueJumpTableOffset  | int64       | blocks: `.dvd` offset of the block offsets table; else -1       |
 *
 * Values in `.dvd`, in index order: one DirectWriter table of numValues values of bitsPerValue
 * bits (segments/packed/DirectWriter.ts: a little-endian bit stream plus 0-3 padding bytes); or,
 * with blocks, per block of 2^14 values: byte bpv, int64 block min, and unless bpv is 0 (every value
 * of the block is the block min) int32 byteLength followed by that many bytes of DirectWriter
 * table (value = block min + gcd x packed); then the block offsets table: one int64 absolute `.dvd`
 * offset per block, then int64 the table's own offset.
 *
 * BINARY:
 *
 * | field              | type  | meaning                                                            |
 * |--------------------|-------|--------------------------------------------------------------------|
 * | dataOffset         | int64 | the values, concatenated in index order, in `.dvd`                  |
 * | dataLength         | int64 |                                                                    |
 * | docs with field    |       | DocsWithField                                                      |
 * | numDocsWithField   | int32 |                                                                    |
 * | minLength          | int32 | Integer.MAX_VALUE when no doc has a value                          |
 * | maxLength          | int32 | equal to minLength: fixed width, value i at i x length             |
 * | addressesOffset    | int64 | only when maxLength > minLength: numDocsWithField + 1 start offsets into the data, as DirectMonotonic (segments/packed/DirectMonotonicWriter.ts) |
 * | blockShift         | vint  | of the addresses (16)                                              |
 * | addresses meta     |       | DirectMonotonic block entries                                      |
 * | addressesLength    | int64 |                                                                    |
 *
 * SORTED: NumericEntry of the ords (one per doc, 0..valueCount-1; no table, min 0, gcd 1, or
 * bitsPerValue 0 for a single term), then TermsDict.
 *
 * SORTED_SET: byte multiValued. 0: no doc has more than one value, and the SORTED layout follows.
 * 1: the SORTED_NUMERIC layout of the ords (ascending and distinct within a doc), then TermsDict.
 *
 * SORTED_NUMERIC: NumericEntry of every value (a doc's values ascending, in index order), then
 * int32 numDocsWithField; when numValues > numDocsWithField (some doc has several values):
 * int64 addressesOffset, vint blockShift (16), DirectMonotonic meta of numDocsWithField + 1 start
 * positions (doc index i owns values [addr(i), addr(i+1))), int64 addressesLength.
 *
 * TermsDict: the sorted distinct terms (unsigned byte order) of a SORTED / SORTED_SET field.
 *
 * | field                      | type  | meaning                                                   |
 * |----------------------------|-------|-----------------------------------------------------------|
 * | valueCount                 | vlong | number of terms (ords are 0..valueCount-1)                |
 * | blockShift                 | int32 | of both address tables (16)                                |
 * | block addresses meta       |       | DirectMonotonic of ceil(valueCount / 64) block start offsets, relative to termsDataOffset |
 * | maxTermLength              | int32 |                                                           |
 * | maxBlockLength             | int32 | the largest uncompressed block (first term excluded)       |
 * | termsDataOffset / Length   | int64 x 2 | the blocks in `.dvd`                                  |
 * | block addresses Offset / Length | int64 x 2 | their packed data in `.dvd`                     |
 * | termsIndexShift            | int32 | reverse index every 2^10 = 1024 terms                      |
 * | index addresses meta       |       | DirectMonotonic of 1 + ceil(valueCount / 1024) offsets into the index bytes |
 * | termsIndexOffset / Length  | int64 x 2 | the reverse-index bytes                               |
 * | index addresses Offset / Length | int64 x 2 |                                                 |
 *
 * Terms blocks (64 terms each): vint length and the bytes of the block's first term, stored
 * plainly (a term lookup binary-searches blocks by reading only these); then, when the block has
 * more terms, vint uncompressedLength and the LZ4 compression (segments/compress/LZ4.ts) of the
 * other terms, compressed with the first term as a preset dictionary. Each of those terms is a
 * byte token (low nibble: the length of the prefix shared with the previous term, up to 15; high
 * nibble: suffix length - 1, up to 15), vint (prefix - 15) when the nibble is 15, vint
 * (suffix - 16) when the high nibble is 15, then the suffix bytes.
 *
 * Reverse index: for each ord k x 1024, the shortest prefix of that term that sorts after term
 * k x 1024 - 1 (nothing for ord 0), back to back; addresses give each one's start plus the end.
 * A lookup binary-searches these prefixes, then the first terms of the 16 blocks they cover,
 * then scans one block.
 *
 * ## Skip index (`.dvd` in version 0, `.dvs` from version 1) of NUMERIC, SORTED, SORTED_SET and
 * SORTED_NUMERIC fields whose `.fnm` asks for one
 *
 * A run of intervals of at least 4096 docs with values each (the writer here, like recent Lucene,
 * extends an interval while the next doc continues a gap-free run of one constant single value;
 * readers do not depend on where intervals end). Interval i is written as byte levels (1-4),
 * then for level = levels - 1 down to 0 one 28-byte record: int32 maxDocID, int32 minDocID, int64
 * maxValue, int64 minValue, int32 docCount. Level L summarises the 8^L intervals starting at i,
 * and is written at interval i only when i is a multiple of 8^L with 8^L intervals left (in runs
 * of at most 8^3 intervals). Values are the field's longs (ords for sorted types).
 *
 * Sizes: one DocsWithField is 19 bytes of meta; a NUMERIC entry 19 + 8 + 4 + 1 + 40 = 72 bytes
 * without a table.
 */
export const DV_DATA_CODEC = 'Lucene90DocValuesData';
export const DV_META_CODEC = 'Lucene90DocValuesMetadata';
export const DV_SKIP_CODEC = 'Lucene90DocValuesSkipIndex';
export const DV_DATA_EXTENSION = 'dvd';
export const DV_META_EXTENSION = 'dvm';
export const DV_SKIP_EXTENSION = 'dvs';

/** Lucene 9.x and 10.x up to the separate skip file. What prescore writes. */
export const DV_VERSION_START = 0;
/** The skip index moves from `.dvd` to `.dvs`. */
export const DV_VERSION_SKIPPER_SEPARATE_FILE = 1;
/** Skip-index entries gain int32 maxValueCount. */
export const DV_VERSION_SKIPPER_MAX_VALUE_COUNT = 2;
export const DV_VERSION_CURRENT = DV_VERSION_SKIPPER_MAX_VALUE_COUNT;

/** The per-field format name and the attributes that route a field to it. */
export const LUCENE90_DOC_VALUES_FORMAT = 'Lucene90';
export const DV_FORMAT_KEY = 'PerFieldDocValuesFormat.format';
export const DV_SUFFIX_KEY = 'PerFieldDocValuesFormat.suffix';

/** The type byte of a `.dvm` entry. */
export const DvType = {
  NUMERIC: 0,
  BINARY: 1,
  SORTED: 2,
  SORTED_SET: 3,
  SORTED_NUMERIC: 4,
} as const;

export const DIRECT_MONOTONIC_BLOCK_SHIFT = 16;
export const NUMERIC_BLOCK_SHIFT = 14;
export const NUMERIC_BLOCK_SIZE = 1 << NUMERIC_BLOCK_SHIFT;
export const TERMS_DICT_BLOCK_LZ4_SHIFT = 6;
export const TERMS_DICT_BLOCK_SIZE = 1 << TERMS_DICT_BLOCK_LZ4_SHIFT;
export const TERMS_DICT_REVERSE_INDEX_SHIFT = 10;
export const TERMS_DICT_REVERSE_INDEX_SIZE = 1 << TERMS_DICT_REVERSE_INDEX_SHIFT;

/** Docs per skip-index interval (at least; a constant run may extend it). */
export const SKIP_INDEX_INTERVAL_SIZE = 4096;
/** Each level summarises 2^3 = 8 intervals of the level below. */
export const SKIP_INDEX_LEVEL_SHIFT = 3;
export const SKIP_INDEX_MAX_LEVEL = 4;
/** One level record: maxDocID, minDocID, maxValue, minValue, docCount. */
export const SKIP_INDEX_RECORD_BYTES = 28;

/** DocsWithField offsets that are not offsets. */
export const DOCS_WITH_FIELD_NONE = -2;
export const DOCS_WITH_FIELD_ALL = -1;

/** Lucene's Long.MIN_VALUE / MAX_VALUE, the bounds an empty field records. */
export const LONG_MIN = -(2n ** 63n);
export const LONG_MAX = 2n ** 63n - 1n;
