import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { FieldInfos } from '../lucene/FieldInfos.js';
import { DirectMonotonicMeta } from '../packed/DirectMonotonicReader.js';
import { isSupportedBitsPerValue } from '../packed/DirectWriter.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { DOCS_WITH_FIELD_ALL, DOCS_WITH_FIELD_NONE, DV_VERSION_SKIPPER_MAX_VALUE_COUNT, DvType, TERMS_DICT_BLOCK_LZ4_SHIFT } from './Lucene90DocValuesFormat.js';

/**
 * The `.dvm` entries, as Lucene90DocValuesFormat.ts lays them out: what the producer knows about
 * each field without touching `.dvd`. Checked while parsing: types against `.fnm`, every offset and
 * length inside the data file, widths and table sizes Lucene can write, counts that agree.
 */
export interface DocsWithFieldEntry {
  /** -2 none, -1 all, else the IndexedDISI's offset in `.dvd`. */
  readonly docsWithFieldOffset: number;
  readonly docsWithFieldLength: number;
  readonly jumpTableEntryCount: number;
  readonly denseRankPower: number;
}

export interface NumericEntry extends DocsWithFieldEntry {
  readonly numValues: number;
  /** The distinct values (packed values are indexes into it), or null. */
  readonly table: BigInt64Array | null;
  /** log2 of the values per block when blocks of varying widths are used, else -1. */
  readonly blockShift: number;
  /** 0 = constant (every value is min); 0xFF with blocks. */
  readonly bitsPerValue: number;
  readonly minValue: bigint;
  readonly gcd: bigint;
  readonly valuesOffset: number;
  readonly valuesLength: number;
  readonly valueJumpTableOffset: number;
}

export interface BinaryEntry extends DocsWithFieldEntry {
  readonly dataOffset: number;
  readonly dataLength: number;
  readonly numDocsWithField: number;
  readonly minLength: number;
  readonly maxLength: number;
  /** Variable lengths only: numDocsWithField + 1 start offsets. */
  readonly addresses: MonotonicEntry | null;
}

/** A DirectMonotonic table: its block models (from `.dvm`) and where its packed data is in `.dvd`. */
export interface MonotonicEntry {
  readonly meta: DirectMonotonicMeta;
  readonly offset: number;
  readonly length: number;
}

export interface TermsDictEntry {
  readonly valueCount: number;
  readonly blockAddresses: MonotonicEntry;
  readonly maxTermLength: number;
  readonly maxBlockLength: number;
  readonly termsDataOffset: number;
  readonly termsDataLength: number;
  readonly indexShift: number;
  readonly indexAddresses: MonotonicEntry;
  readonly termsIndexOffset: number;
  readonly termsIndexLength: number;
}

export interface SortedNumericEntry extends NumericEntry {
  readonly numDocsWithField: number;
  /** Some doc has several values: numDocsWithField + 1 start positions. */
  readonly addresses: MonotonicEntry | null;
}

export interface SkipperEntry {
  readonly offset: number;
  readonly length: number;
  readonly minValue: bigint;
  readonly maxValue: bigint;
  readonly docCount: number;
  readonly maxDocId: number;
  /** The most values a doc has; -1 when the file predates it (version < 2) and it cannot be inferred. */
  readonly maxValueCount: number;
}

export type FieldEntry =
  | { readonly type: 'NUMERIC'; readonly numeric: NumericEntry }
  | { readonly type: 'BINARY'; readonly binary: BinaryEntry }
  | { readonly type: 'SORTED'; readonly ords: NumericEntry; readonly terms: TermsDictEntry }
  | { readonly type: 'SORTED_SET'; readonly singleValued: true; readonly ords: NumericEntry; readonly terms: TermsDictEntry }
  | { readonly type: 'SORTED_SET'; readonly singleValued: false; readonly ords: SortedNumericEntry; readonly terms: TermsDictEntry }
  | { readonly type: 'SORTED_NUMERIC'; readonly values: SortedNumericEntry };

export interface DocValuesEntries {
  /** By field number, in `.dvm` order. */
  readonly fields: ReadonlyMap<number, FieldEntry>;
  readonly skippers: ReadonlyMap<number, SkipperEntry>;
}

const TYPE_NAMES = ['NUMERIC', 'BINARY', 'SORTED', 'SORTED_SET', 'SORTED_NUMERIC'] as const;

/**
 * Reads every entry of a `.dvm` positioned after its header, up to the -1 terminator.
 * `dataLength` / `skipLength` bound the offsets (skipLength: the `.dvs`, or the `.dvd` for version 0).
 */
export function readDocValuesEntries(meta: ByteArrayDataInput, infos: FieldInfos, version: number, maxDoc: number, dataLength: number, skipLength: number): DocValuesEntries {
  const r = meta.resource;
  const corrupt = (msg: string) => new CorruptIndexException(msg, r);
  const fields = new Map<number, FieldEntry>();
  const skippers = new Map<number, SkipperEntry>();
  const inData = (what: string, offset: number, length: number) => {
    if (!(offset >= 0 && length >= 0 && offset + length <= dataLength)) {
      throw corrupt(`${what} [${offset}, +${length}) lies outside the data file (${dataLength} bytes)`);
    }
  };

  const readDocsWithField = (what: string): DocsWithFieldEntry => {
    const docsWithFieldOffset = meta.readLong();
    const docsWithFieldLength = meta.readLong();
    const jumpTableEntryCount = meta.readShort();
    const denseRankPower = meta.readSignedByte();
    if (docsWithFieldOffset >= 0) {
      inData(`${what}: docs with field`, docsWithFieldOffset, docsWithFieldLength);
      if (jumpTableEntryCount < 0) throw corrupt(`${what}: negative jump table entry count ${jumpTableEntryCount}`);
      if (denseRankPower !== -1 && (denseRankPower < 7 || denseRankPower > 15)) throw corrupt(`${what}: invalid denseRankPower ${denseRankPower}`);
    } else if (docsWithFieldOffset !== DOCS_WITH_FIELD_NONE && docsWithFieldOffset !== DOCS_WITH_FIELD_ALL) {
      throw corrupt(`${what}: invalid docsWithFieldOffset ${docsWithFieldOffset}`);
    }
    return { docsWithFieldOffset, docsWithFieldLength, jumpTableEntryCount, denseRankPower };
  };

  const readNumeric = (what: string): NumericEntry => {
    const docs = readDocsWithField(what);
    const numValues = meta.readLong();
    if (numValues < 0) throw corrupt(`${what}: negative numValues ${numValues}`);
    const tableSize = meta.readInt();
    if (tableSize > 256) throw corrupt(`${what}: invalid table size: ${tableSize}`);
    let table: BigInt64Array | null = null;
    if (tableSize >= 0) {
      table = new BigInt64Array(tableSize);
      for (let i = 0; i < tableSize; i++) table[i] = meta.readLongAsBigInt();
    }
    const blockShift = tableSize < -1 ? -2 - tableSize : -1;
    if (blockShift > 30) throw corrupt(`${what}: invalid block shift ${blockShift}`);
    const bitsPerValue = meta.readByte();
    const minValue = meta.readLongAsBigInt();
    const gcd = meta.readLongAsBigInt();
    const valuesOffset = meta.readLong();
    const valuesLength = meta.readLong();
    const valueJumpTableOffset = meta.readLong();
    if (blockShift >= 0) {
      if (bitsPerValue !== 0xff) throw corrupt(`${what}: blocks of values with bitsPerValue ${bitsPerValue} (expected 255)`);
      inData(`${what}: values`, valuesOffset, valuesLength);
      inData(`${what}: value blocks table`, valueJumpTableOffset, 8 * (Math.ceil(numValues / 2 ** blockShift) + 1));
    } else if (bitsPerValue !== 0) {
      if (!isSupportedBitsPerValue(bitsPerValue)) throw corrupt(`${what}: invalid bitsPerValue ${bitsPerValue}`);
      inData(`${what}: values`, valuesOffset, valuesLength);
      if (valuesLength * 8 < numValues * bitsPerValue) throw corrupt(`${what}: ${numValues} values of ${bitsPerValue} bits need more than ${valuesLength} bytes`);
      if (table !== null && table.length === 0) throw corrupt(`${what}: packed values into an empty table`);
      if (table === null && gcd <= 0n) throw corrupt(`${what}: invalid gcd ${gcd}`);
    }
    if (docs.docsWithFieldOffset === DOCS_WITH_FIELD_NONE && numValues !== 0) throw corrupt(`${what}: ${numValues} values but no doc has one`);
    return { ...docs, numValues, table, blockShift, bitsPerValue, minValue, gcd, valuesOffset, valuesLength, valueJumpTableOffset };
  };

  const readMonotonic = (numValues: number, blockShift: number): DirectMonotonicMeta => DirectMonotonicMeta.load(meta, numValues, blockShift);

  const readSortedNumeric = (what: string): SortedNumericEntry => {
    const numeric = readNumeric(what);
    const numDocsWithField = meta.readInt();
    if (numDocsWithField < 0 || numDocsWithField > maxDoc) throw corrupt(`${what}: numDocsWithField ${numDocsWithField} for ${maxDoc} docs`);
    if (numeric.numValues < numDocsWithField) throw corrupt(`${what}: ${numeric.numValues} values for ${numDocsWithField} docs`);
    checkDocCount(what, numeric, numDocsWithField);
    let addresses: MonotonicEntry | null = null;
    if (numDocsWithField !== numeric.numValues) {
      const offset = meta.readLong();
      const blockShift = meta.readVInt();
      const m = readMonotonic(numDocsWithField + 1, blockShift);
      const length = meta.readLong();
      inData(`${what}: addresses`, offset, length);
      addresses = { meta: m, offset, length };
    }
    return { ...numeric, numDocsWithField, addresses };
  };

  const checkDocCount = (what: string, e: DocsWithFieldEntry, docCount: number) => {
    if (e.docsWithFieldOffset === DOCS_WITH_FIELD_ALL && docCount !== maxDoc) throw corrupt(`${what}: every doc has a value but ${docCount} of ${maxDoc} are counted`);
    if (e.docsWithFieldOffset === DOCS_WITH_FIELD_NONE && docCount !== 0) throw corrupt(`${what}: no doc has a value but ${docCount} are counted`);
  };

  const readTermsDict = (what: string): TermsDictEntry => {
    const valueCount = meta.readVLong();
    const blockShift = meta.readInt();
    const blocks = Math.ceil(valueCount / 2 ** TERMS_DICT_BLOCK_LZ4_SHIFT);
    const blockMeta = readMonotonic(blocks, blockShift);
    const maxTermLength = meta.readInt();
    const maxBlockLength = meta.readInt();
    const termsDataOffset = meta.readLong();
    const termsDataLength = meta.readLong();
    const blockAddressesOffset = meta.readLong();
    const blockAddressesLength = meta.readLong();
    const indexShift = meta.readInt();
    if (indexShift < 0 || indexShift > 30) throw corrupt(`${what}: invalid terms index shift ${indexShift}`);
    const indexMeta = readMonotonic(1 + Math.ceil(valueCount / 2 ** indexShift), blockShift);
    const termsIndexOffset = meta.readLong();
    const termsIndexLength = meta.readLong();
    const indexAddressesOffset = meta.readLong();
    const indexAddressesLength = meta.readLong();
    if (maxTermLength < 0 || maxBlockLength < 0) throw corrupt(`${what}: negative max term length ${maxTermLength} or block length ${maxBlockLength}`);
    inData(`${what}: terms`, termsDataOffset, termsDataLength);
    inData(`${what}: terms block addresses`, blockAddressesOffset, blockAddressesLength);
    inData(`${what}: terms index`, termsIndexOffset, termsIndexLength);
    inData(`${what}: terms index addresses`, indexAddressesOffset, indexAddressesLength);
    return {
      valueCount,
      blockAddresses: { meta: blockMeta, offset: blockAddressesOffset, length: blockAddressesLength },
      maxTermLength,
      maxBlockLength,
      termsDataOffset,
      termsDataLength,
      indexShift,
      indexAddresses: { meta: indexMeta, offset: indexAddressesOffset, length: indexAddressesLength },
      termsIndexOffset,
      termsIndexLength,
    };
  };

  const checkOrds = (what: string, ords: NumericEntry, valueCount: number) => {
    if (ords.table !== null || (ords.bitsPerValue !== 0 && ords.blockShift < 0 && (ords.minValue !== 0n || ords.gcd !== 1n))) {
      throw corrupt(`${what}: ordinals must not use a table, an offset or a GCD`);
    }
    if (ords.numValues > 0 && valueCount === 0) throw corrupt(`${what}: ${ords.numValues} ords into an empty terms dictionary`);
  };

  for (let number = meta.readInt(); number !== -1; number = meta.readInt()) {
    const info = infos.fieldInfo(number);
    if (!info) throw corrupt(`Invalid field number: ${number}`);
    if (fields.has(number)) throw corrupt(`field ${info.name} (${number}) has two entries`);
    const typeByte = meta.readByte();
    const type = TYPE_NAMES[typeByte];
    if (type === undefined) throw corrupt(`invalid type: ${typeByte} (field ${info.name})`);
    if (info.docValuesType !== type) throw corrupt(`field ${info.name} is ${info.docValuesType} in .fnm but ${type} here`);
    const what = `field ${info.name} (${type})`;
    if (info.docValuesSkipIndexType !== 'NONE') {
      const offset = meta.readLong();
      const length = meta.readLong();
      const maxValue = meta.readLongAsBigInt();
      const minValue = meta.readLongAsBigInt();
      const docCount = meta.readInt();
      const maxDocId = meta.readInt();
      const maxValueCount = version >= DV_VERSION_SKIPPER_MAX_VALUE_COUNT ? meta.readInt() : docCount === 0 ? 0 : -1;
      if (!(offset >= 0 && length >= 0 && offset + length <= skipLength)) throw corrupt(`${what}: skip index [${offset}, +${length}) lies outside its file (${skipLength} bytes)`);
      if (docCount < 0 || docCount > maxDoc || maxDocId >= maxDoc || docCount > maxDocId + 1)
        throw corrupt(`${what}: skip index counts ${docCount} docs up to doc ${maxDocId} of ${maxDoc}`);
      skippers.set(number, { offset, length, minValue, maxValue, docCount, maxDocId, maxValueCount });
    }
    let entry: FieldEntry;
    switch (typeByte) {
      case DvType.NUMERIC: {
        const numeric = readNumeric(what);
        if (numeric.docsWithFieldOffset === DOCS_WITH_FIELD_ALL && numeric.numValues !== maxDoc) throw corrupt(`${what}: ${numeric.numValues} values for ${maxDoc} docs`);
        entry = { type: 'NUMERIC', numeric };
        break;
      }
      case DvType.BINARY: {
        const dataOffset = meta.readLong();
        const dataLength = meta.readLong();
        inData(`${what}: values`, dataOffset, dataLength);
        const docs = readDocsWithField(what);
        const numDocsWithField = meta.readInt();
        const minLength = meta.readInt();
        const maxLength = meta.readInt();
        if (numDocsWithField < 0 || numDocsWithField > maxDoc) throw corrupt(`${what}: numDocsWithField ${numDocsWithField} for ${maxDoc} docs`);
        checkDocCount(what, docs, numDocsWithField);
        let addresses: MonotonicEntry | null = null;
        if (minLength < maxLength) {
          const offset = meta.readLong();
          const blockShift = meta.readVInt();
          const m = readMonotonic(numDocsWithField + 1, blockShift);
          const length = meta.readLong();
          inData(`${what}: addresses`, offset, length);
          addresses = { meta: m, offset, length };
        } else if (numDocsWithField > 0 && minLength * numDocsWithField !== dataLength) {
          throw corrupt(`${what}: ${numDocsWithField} values of ${minLength} bytes in ${dataLength} bytes`);
        }
        entry = { type: 'BINARY', binary: { ...docs, dataOffset, dataLength, numDocsWithField, minLength, maxLength, addresses } };
        break;
      }
      case DvType.SORTED: {
        const ords = readNumeric(what);
        const terms = readTermsDict(what);
        checkOrds(what, ords, terms.valueCount);
        entry = { type: 'SORTED', ords, terms };
        break;
      }
      case DvType.SORTED_SET: {
        const multiValued = meta.readByte();
        if (multiValued === 0) {
          const ords = readNumeric(what);
          const terms = readTermsDict(what);
          checkOrds(what, ords, terms.valueCount);
          entry = { type: 'SORTED_SET', singleValued: true, ords, terms };
        } else if (multiValued === 1) {
          const ords = readSortedNumeric(what);
          const terms = readTermsDict(what);
          checkOrds(what, ords, terms.valueCount);
          entry = { type: 'SORTED_SET', singleValued: false, ords, terms };
        } else {
          throw corrupt(`${what}: Invalid multiValued flag: ${multiValued}`);
        }
        break;
      }
      default:
        entry = { type: 'SORTED_NUMERIC', values: readSortedNumeric(what) };
    }
    fields.set(number, entry);
  }
  // Before version 2 the skip index does not record maxValueCount; a field that cannot hold two
  // values in a doc has 1, as Lucene infers it.
  for (const [number, skipper] of skippers) {
    if (skipper.maxValueCount !== -1) continue;
    const e = fields.get(number)!;
    const single =
      e.type === 'NUMERIC' ||
      e.type === 'SORTED' ||
      (e.type === 'SORTED_NUMERIC' && e.values.addresses === null) ||
      (e.type === 'SORTED_SET' && (e.singleValued || e.ords.addresses === null));
    if (single) skippers.set(number, { ...skipper, maxValueCount: 1 });
  }
  return { fields, skippers };
}
