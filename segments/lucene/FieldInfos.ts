import { checkIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { generationToString, segmentFileName } from './IndexFileNames.js';
import type { IndexDirectory, SegmentDirectory } from './LuceneDirectory.js';
import { expectEnd } from './LuceneFormat.js';

/**
 * `.fnm`, Lucene94FieldInfosFormat: the segment's fields. `_N.fnm` (in the compound file when
 * the segment has one) or, after field-infos updates, `_N_<fieldInfosGen base 36>.fnm` (always a
 * plain file, with the generation as header suffix). Read only, CRC-verified. Little-endian:
 *
 * | field               | type           | meaning / check                                          |
 * |---------------------|----------------|----------------------------------------------------------|
 * | index header        |                | codec `Lucene94FieldInfos`, format 0..2, the segment id, suffix '' or the generation |
 * | field count         | vint           | >= 0                                                     |
 * | per field:          |                |                                                          |
 * | name                | string         | unique                                                   |
 * | number              | vint           | >= 0, unique                                             |
 * | flags               | byte           | 0x1 term vectors, 0x2 omit norms, 0x4 payloads, 0x8 soft-deletes field, 0x10 parent field (format >= 1); other bits must be 0 (format 2 tolerates 0x20) |
 * | index options       | byte           | 0 NONE .. 4 DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS       |
 * | doc-values type     | byte           | 0 NONE, 1 NUMERIC, 2 BINARY, 3 SORTED, 4 SORTED_SET, 5 SORTED_NUMERIC |
 * | doc-values skip index | byte (format >= 2 only) | 0 NONE, 1 RANGE                                 |
 * | dvGen               | int64          |                                                          |
 * | attributes          | map of strings | for a vector field: `PerFieldKnnVectorsFormat.format` (e.g. `Lucene99HnswVectorsFormat`) and `PerFieldKnnVectorsFormat.suffix` (e.g. `0`); the field's files use the suffix `<format>_<suffix>` |
 * | point dims          | vint           | if != 0: vint index dims (<= point dims), vint bytes per dim |
 * | vector dims         | vint           | 0 = not a vector field                                    |
 * | vector encoding     | byte           | 0 BYTE, 1 FLOAT32                                         |
 * | vector similarity   | byte           | 0 EUCLIDEAN, 1 DOT_PRODUCT, 2 COSINE, 3 MAXIMUM_INNER_PRODUCT |
 * | footer              |                | CRC32; nothing may remain before it                      |
 */
export const FIELD_INFOS_CODEC = 'Lucene94FieldInfos';
export const FIELD_INFOS_FORMAT_START = 0;
/** Adds the parent-field flag (0x10); no layout change. */
export const FIELD_INFOS_FORMAT_PARENT_FIELD = 1;
/** Lucene 10.0+: one more byte per field, the doc-values skip-index type, right after the doc-values type byte. */
export const FIELD_INFOS_FORMAT_DOCVALUE_SKIPPER = 2;
export const FIELD_INFOS_FORMAT_CURRENT = FIELD_INFOS_FORMAT_DOCVALUE_SKIPPER;
export const FIELD_INFOS_EXTENSION = 'fnm';

export const FieldFlags = {
  STORE_TERMVECTOR: 0x1,
  OMIT_NORMS: 0x2,
  STORE_PAYLOADS: 0x4,
  SOFT_DELETES_FIELD: 0x8,
  PARENT_FIELD: 0x10,
} as const;

export const INDEX_OPTIONS = ['NONE', 'DOCS', 'DOCS_AND_FREQS', 'DOCS_AND_FREQS_AND_POSITIONS', 'DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS'] as const;
export type IndexOptions = (typeof INDEX_OPTIONS)[number];
export const DOC_VALUES_TYPES = ['NONE', 'NUMERIC', 'BINARY', 'SORTED', 'SORTED_SET', 'SORTED_NUMERIC'] as const;
export type DocValuesType = (typeof DOC_VALUES_TYPES)[number];
export const DOC_VALUES_SKIP_INDEX_TYPES = ['NONE', 'RANGE'] as const;
export type DocValuesSkipIndexType = (typeof DOC_VALUES_SKIP_INDEX_TYPES)[number];
/** VectorEncoding ordinals: the byte in `.fnm`, the int32 in `.vemf`/`.vem`. */
export const VECTOR_ENCODINGS = ['BYTE', 'FLOAT32'] as const;
export type VectorEncodingName = (typeof VECTOR_ENCODINGS)[number];
/** Similarity ordinals, the same numbers in `.fnm`, `.vemf`, `.vem` and `.vemq` (VectorSimilarityFunction.ts). */
export const VECTOR_SIMILARITIES = ['EUCLIDEAN', 'DOT_PRODUCT', 'COSINE', 'MAXIMUM_INNER_PRODUCT'] as const;
export type VectorSimilarityName = (typeof VECTOR_SIMILARITIES)[number];

/** PerFieldKnnVectorsFormat attributes naming a vector field's format and its per-segment suffix. */
export const KNN_FORMAT_KEY = 'PerFieldKnnVectorsFormat.format';
export const KNN_SUFFIX_KEY = 'PerFieldKnnVectorsFormat.suffix';

export interface FieldInfo {
  readonly name: string;
  readonly number: number;
  /** The raw flags byte. */
  readonly flags: number;
  readonly storeTermVector: boolean;
  readonly omitNorms: boolean;
  readonly storePayloads: boolean;
  readonly isSoftDeletesField: boolean;
  readonly isParentField: boolean;
  readonly indexOptions: IndexOptions;
  readonly docValuesType: DocValuesType;
  /** 'NONE' for formats < 2 (the byte does not exist there). */
  readonly docValuesSkipIndexType: DocValuesSkipIndexType;
  readonly dvGen: number;
  readonly attributes: ReadonlyMap<string, string>;
  readonly pointDimensionCount: number;
  readonly pointIndexDimensionCount: number;
  readonly pointNumBytes: number;
  /** 0 = not a vector field. */
  readonly vectorDimension: number;
  readonly vectorEncoding: VectorEncodingName;
  readonly vectorSimilarity: VectorSimilarityName;
  readonly vectorSimilarityOrdinal: number;
}

export class FieldInfos {
  private readonly byName = new Map<string, FieldInfo>();
  private readonly byNumber = new Map<number, FieldInfo>();

  constructor(
    readonly fields: readonly FieldInfo[],
    /** The `.fnm` format version (0..2). */
    readonly format: number,
    /** The logical file the infos were read from (e.g. `_0.cfs[_0.fnm]` or `_0_1.fnm`). */
    readonly resource: string,
  ) {
    for (const f of fields) {
      if (this.byName.has(f.name)) throw new CorruptIndexException(`duplicate field name ${f.name}`, resource);
      if (this.byNumber.has(f.number)) throw new CorruptIndexException(`duplicate field number ${f.number} (${this.byNumber.get(f.number)!.name}, ${f.name})`, resource);
      this.byName.set(f.name, f);
      this.byNumber.set(f.number, f);
    }
  }

  get size(): number {
    return this.fields.length;
  }

  fieldInfo(nameOrNumber: string | number): FieldInfo | undefined {
    return typeof nameOrNumber === 'string' ? this.byName.get(nameOrNumber) : this.byNumber.get(nameOrNumber);
  }

  get hasVectorValues(): boolean {
    return this.fields.some((f) => f.vectorDimension > 0);
  }
}

/**
 * Reads the segment's current field infos: `_N.fnm` from the segment directory (inside the
 * compound file if any), or, when the commit has field-infos updates (fieldInfosGen != -1), the
 * generation file `_N_<gen base36>.fnm`, which Lucene always writes outside the compound file
 * with the generation as the header suffix.
 */
export function readFieldInfos(dir: IndexDirectory, segDir: SegmentDirectory, segmentName: string, segmentId: Uint8Array, fieldInfosGen: number): FieldInfos {
  let input: ByteArrayDataInput;
  let suffix: string;
  if (fieldInfosGen === -1) {
    suffix = '';
    input = segDir.openChecksummed(segmentFileName(segmentName, suffix, FIELD_INFOS_EXTENSION));
  } else {
    suffix = generationToString(fieldInfosGen);
    input = dir.openChecksummed(segmentFileName(segmentName, suffix, FIELD_INFOS_EXTENSION));
  }
  return parseFieldInfos(input, segmentId, suffix);
}

export function parseFieldInfos(input: ByteArrayDataInput, segmentId: Uint8Array, suffix: string): FieldInfos {
  const r = input.resource;
  const { version: format } = checkIndexHeader(input, FIELD_INFOS_CODEC, FIELD_INFOS_FORMAT_START, FIELD_INFOS_FORMAT_CURRENT, segmentId, suffix);
  const size = input.readVInt();
  if (size < 0) throw new CorruptIndexException(`invalid field count ${size}`, r);
  const fields: FieldInfo[] = [];
  for (let i = 0; i < size; i++) {
    const name = input.readString();
    const number = input.readVInt();
    if (number < 0) throw new CorruptIndexException(`invalid field number for field: ${name}, fieldNumber=${number}`, r);
    const flags = input.readByte();
    // Format 2 readers tolerate 0x20 (a doc-values-skipper flag that never shipped as a flag).
    const unused = format >= FIELD_INFOS_FORMAT_DOCVALUE_SKIPPER ? 0xc0 : 0xe0;
    if (flags & unused) throw new CorruptIndexException(`unused bits are set "${flags.toString(2)}" (field ${name})`, r);
    if (format < FIELD_INFOS_FORMAT_PARENT_FIELD && flags & 0xf0) {
      throw new CorruptIndexException(`parent field bit is set but shouldn't "${flags.toString(2)}" (field ${name})`, r);
    }
    const indexOptions = enumByte(INDEX_OPTIONS, input.readSignedByte(), 'IndexOptions', name, r);
    const docValuesType = enumByte(DOC_VALUES_TYPES, input.readSignedByte(), 'docvalues', name, r);
    const docValuesSkipIndexType =
      format >= FIELD_INFOS_FORMAT_DOCVALUE_SKIPPER ? enumByte(DOC_VALUES_SKIP_INDEX_TYPES, input.readSignedByte(), 'docvaluesskipindex', name, r) : 'NONE';
    const dvGen = input.readLong();
    const attributes = input.readMapOfStrings();
    const pointDimensionCount = input.readVInt();
    let pointIndexDimensionCount = pointDimensionCount;
    let pointNumBytes = 0;
    if (pointDimensionCount !== 0) {
      pointIndexDimensionCount = input.readVInt();
      pointNumBytes = input.readVInt();
    }
    const vectorDimension = input.readVInt();
    const vectorEncoding = enumByte(VECTOR_ENCODINGS, input.readSignedByte(), 'vector encoding', name, r);
    const simOrd = input.readSignedByte();
    const vectorSimilarity = enumByte(VECTOR_SIMILARITIES, simOrd, 'distance function', name, r);
    if (pointDimensionCount < 0 || pointIndexDimensionCount < 0 || pointNumBytes < 0 || pointIndexDimensionCount > pointDimensionCount) {
      throw new CorruptIndexException(`invalid fieldinfo for field: ${name}, fieldNumber=${number}: bad point dimensions`, r);
    }
    if (vectorDimension < 0) throw new CorruptIndexException(`invalid fieldinfo for field: ${name}, fieldNumber=${number}: vector dimension ${vectorDimension}`, r);
    fields.push({
      name,
      number,
      flags,
      storeTermVector: (flags & FieldFlags.STORE_TERMVECTOR) !== 0,
      omitNorms: (flags & FieldFlags.OMIT_NORMS) !== 0,
      storePayloads: (flags & FieldFlags.STORE_PAYLOADS) !== 0,
      isSoftDeletesField: (flags & FieldFlags.SOFT_DELETES_FIELD) !== 0,
      isParentField: format >= FIELD_INFOS_FORMAT_PARENT_FIELD && (flags & FieldFlags.PARENT_FIELD) !== 0,
      indexOptions,
      docValuesType,
      docValuesSkipIndexType,
      dvGen,
      attributes,
      pointDimensionCount,
      pointIndexDimensionCount,
      pointNumBytes,
      vectorDimension,
      vectorEncoding,
      vectorSimilarity,
      vectorSimilarityOrdinal: simOrd,
    });
  }
  expectEnd(input);
  return new FieldInfos(fields, format, r);
}

function enumByte<T extends string>(values: readonly T[], b: number, what: string, field: string, resource: string): T {
  if (b < 0 || b >= values.length) throw new CorruptIndexException(`invalid ${what} byte: ${b} (field ${field})`, resource);
  return values[b];
}
