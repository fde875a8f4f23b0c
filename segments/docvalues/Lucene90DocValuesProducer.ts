import { checkDataFileStructure, checkIndexHeader, checksumEntireFile } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { FieldInfo, FieldInfos } from '../lucene/FieldInfos.js';
import { segmentFileName } from '../lucene/IndexFileNames.js';
import { IndexedDISIIterator } from '../lucene/IndexedDISIIterator.js';
import { expectEnd } from '../lucene/LuceneFormat.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { MappedBytes, PreadBytes, type RandomAccessBytes } from '../store/RandomAccessBytes.js';
import {
  type BinaryColumn,
  type NumericColumn,
  type SortedColumn,
  type SortedNumericColumn,
  type SortedSetColumn,
  binaryColumn,
  decodeDocs,
  docsBitSet,
  numericColumn,
  sortedColumn,
  sortedNumericColumn,
  sortedSetColumn,
  sortedSetColumnFromSorted,
} from './DocValuesColumns.js';
import { type DocValuesEntries, type DocsWithFieldEntry, type FieldEntry, type MonotonicEntry, readDocValuesEntries } from './DocValuesEntries.js';
import { AllDocs, BinaryDocValues, type DocIndexIterator, NoDocs, NumericDocValues, SortedDocValues, SortedNumericDocValues, SortedSetDocValues } from './DocValuesIterators.js';
import { CloseGuardedBytes } from './CloseGuardedBytes.js';
import { DocValuesSkipper } from './DocValuesSkipper.js';
import {
  DOCS_WITH_FIELD_ALL,
  DOCS_WITH_FIELD_NONE,
  DV_DATA_CODEC,
  DV_DATA_EXTENSION,
  DV_META_CODEC,
  DV_META_EXTENSION,
  DV_SKIP_CODEC,
  DV_SKIP_EXTENSION,
  DV_VERSION_CURRENT,
  DV_VERSION_SKIPPER_SEPARATE_FILE,
  DV_VERSION_START,
} from './Lucene90DocValuesFormat.js';
import { MonotonicValues } from './MonotonicValues.js';
import type { NumericEncoding } from './NumericEncodings.js';
import { NumericValues } from './NumericValues.js';
import { TermsDict } from './TermsDict.js';

/** Where a producer finds its files: a segment's directory (compound or not) or the index directory (updates). */
export interface DocValuesFiles {
  openSlice(name: string): FileSlice;
  openChecksummed(name: string): ByteArrayDataInput;
}

export interface DocValuesSegmentInfo {
  readonly name: string;
  readonly id: Uint8Array;
  readonly maxDoc: number;
}

export interface DocValuesProducerOptions {
  /** 'mmap' (default): values are read in place through a mapping; 'pread': positioned reads into small buffers. */
  readonly readPath?: 'mmap' | 'pread';
}

/**
 * Reads Lucene90DocValuesFormat files (layout in Lucene90DocValuesFormat.ts) of one segment and
 * one per-field-format suffix: Lucene's DocValuesProducer. At open, `.dvm` is read whole and
 * CRC-checked, its entries parsed and checked against `.fnm` and the data files' lengths; `.dvd`
 * (and `.dvs`) are checked structurally (header, footer) and opened for in-place reads. Nothing of
 * `.dvd` is copied onto the heap: iterators read the bytes they need, columns decode a field in
 * chunks. `checkIntegrity()` verifies every byte of the data files.
 *
 * Two ways to read a field:
 * - iterators (`getNumeric`, `getBinary`, `getSorted`, `getSortedSet`, `getSortedNumeric`), Lucene's
 *   per-document API for a few docs per segment (a hit's `docvalue_fields`);
 * - columns (`numericColumn`, `sortedColumn`, `sortedSetColumn`, `sortedNumericColumn`,
 *   `binaryColumn`, `docsWithField`), a whole field as typed arrays indexed by doc, decoded once
 *   per segment, for filters (DocValuesColumns.ts lists their memory).
 *
 * Fields are named by name or FieldInfo. Asking a NUMERIC field for SORTED_NUMERIC values (or a
 * SORTED one for SORTED_SET) gives the single-valued view, as Lucene's DocValues helpers do; any
 * other mismatch is an error naming the field and its type. Not thread-safe (iterators and term
 * lookups keep cursors): one producer per thread.
 */
export class Lucene90DocValuesProducer {
  private closed = false;

  private constructor(
    readonly segment: DocValuesSegmentInfo,
    readonly fieldInfos: FieldInfos,
    readonly version: number,
    readonly entries: DocValuesEntries,
    private readonly dataSlice: FileSlice,
    private readonly skipSlice: FileSlice | null,
    private readonly data: RandomAccessBytes,
    private readonly skipData: RandomAccessBytes | null,
  ) {}

  static open(
    files: DocValuesFiles,
    segment: DocValuesSegmentInfo,
    fieldInfos: FieldInfos,
    segmentSuffix: string,
    options: DocValuesProducerOptions = {},
  ): Lucene90DocValuesProducer {
    const metaName = segmentFileName(segment.name, segmentSuffix, DV_META_EXTENSION);
    const meta = files.openChecksummed(metaName);
    const { version } = checkIndexHeader(meta, DV_META_CODEC, DV_VERSION_START, DV_VERSION_CURRENT, segment.id, segmentSuffix);
    const dataSlice = files.openSlice(segmentFileName(segment.name, segmentSuffix, DV_DATA_EXTENSION));
    const dataHeader = checkDataFileStructure(dataSlice, DV_DATA_CODEC, DV_VERSION_START, DV_VERSION_CURRENT, segment.id, segmentSuffix);
    if (dataHeader.version !== version) throw new CorruptIndexException(`Format versions mismatch: meta=${version}, data=${dataHeader.version}`, dataSlice.name);
    let skipSlice: FileSlice | null = null;
    if (version >= DV_VERSION_SKIPPER_SEPARATE_FILE) {
      skipSlice = files.openSlice(segmentFileName(segment.name, segmentSuffix, DV_SKIP_EXTENSION));
      const skipHeader = checkDataFileStructure(skipSlice, DV_SKIP_CODEC, DV_VERSION_SKIPPER_SEPARATE_FILE, DV_VERSION_CURRENT, segment.id, segmentSuffix);
      if (skipHeader.version !== version) throw new CorruptIndexException(`Format versions mismatch: meta=${version}, skipIndex=${skipHeader.version}`, skipSlice.name);
    }
    const entries = readDocValuesEntries(meta, fieldInfos, version, segment.maxDoc, dataSlice.length, (skipSlice ?? dataSlice).length);
    expectEnd(meta);
    // Normal read-ahead for a mapping: columns stream whole fields, iterators move forward.
    const owner = `doc values of segment ${segment.name} (${segmentSuffix})`;
    const open = (slice: FileSlice): RandomAccessBytes => new CloseGuardedBytes(options.readPath === 'pread' ? new PreadBytes(slice) : new MappedBytes(slice, 'normal'), owner);
    const data = open(dataSlice);
    let skipData: RandomAccessBytes | null = null;
    try {
      skipData = skipSlice === null ? null : open(skipSlice);
    } catch (e) {
      data.close();
      throw e;
    }
    return new Lucene90DocValuesProducer(segment, fieldInfos, version, entries, dataSlice, skipSlice, data, skipData);
  }

  /** The fields this producer has values for, in `.dvm` order. */
  get fields(): FieldInfo[] {
    return [...this.entries.fields.keys()].map((n) => this.fieldInfos.fieldInfo(n)!);
  }

  hasField(field: string | FieldInfo): boolean {
    const info = typeof field === 'string' ? this.fieldInfos.fieldInfo(field) : field;
    return info !== undefined && this.entries.fields.has(info.number);
  }

  // ---- iterators ----

  getNumeric(field: string | FieldInfo): NumericDocValues {
    const e = this.entry(field, 'NUMERIC');
    return new NumericDocValues(this.docs(e.numeric, e.numeric.numValues), new NumericValues(e.numeric, this.data));
  }

  getBinary(field: string | FieldInfo): BinaryDocValues {
    const { binary: b } = this.entry(field, 'BINARY');
    const addresses = b.addresses === null ? null : new MonotonicValues(b.addresses, this.data);
    return new BinaryDocValues(this.docs(b, b.numDocsWithField), this.data, b.dataOffset, b.addresses === null ? b.maxLength : -1, addresses, Math.max(0, b.maxLength));
  }

  getSorted(field: string | FieldInfo): SortedDocValues {
    const e = this.entry(field, 'SORTED');
    return new SortedDocValues(this.docs(e.ords, e.ords.numValues), new NumericValues(e.ords, this.data), new TermsDict(e.terms, this.data));
  }

  /** SORTED_SET values (a SORTED field as its single-valued view). */
  getSortedSet(field: string | FieldInfo): SortedSetDocValues {
    const e = this.entry(field, 'SORTED_SET', 'SORTED');
    const terms = new TermsDict(e.terms, this.data);
    if (e.type === 'SORTED' || e.singleValued) return new SortedSetDocValues(this.docs(e.ords, e.ords.numValues), new NumericValues(e.ords, this.data), null, terms);
    const ords = e.ords;
    return new SortedSetDocValues(this.docs(ords, ords.numDocsWithField), new NumericValues(ords, this.data), this.addresses(ords.addresses), terms);
  }

  /** SORTED_NUMERIC values (a NUMERIC field as its single-valued view). */
  getSortedNumeric(field: string | FieldInfo): SortedNumericDocValues {
    const e = this.entry(field, 'SORTED_NUMERIC', 'NUMERIC');
    if (e.type === 'NUMERIC') return new SortedNumericDocValues(this.docs(e.numeric, e.numeric.numValues), new NumericValues(e.numeric, this.data), null);
    const v = e.values;
    return new SortedNumericDocValues(this.docs(v, v.numDocsWithField), new NumericValues(v, this.data), this.addresses(v.addresses));
  }

  /** A fresh cursor over a SORTED / SORTED_SET field's terms (ord -> term, term -> ord). */
  termsDict(field: string | FieldInfo): TermsDict {
    const e = this.entry(field, 'SORTED', 'SORTED_SET');
    return new TermsDict(e.terms, this.data);
  }

  /** The field's skip index, or null when `.fnm` gives it none. */
  getSkipper(field: string | FieldInfo): DocValuesSkipper | null {
    const info = this.info(field);
    const entry = this.entries.skippers.get(info.number);
    if (entry === undefined) return null;
    return new DocValuesSkipper(entry, this.skipData ?? this.data);
  }

  // ---- columns ----

  /** A NUMERIC field as one value per doc; `encoding` says what its longs stand for (NumericEncodings.ts). */
  numericColumn(field: string | FieldInfo, encoding: NumericEncoding = 'long'): NumericColumn {
    const e = this.entry(field, 'NUMERIC');
    return numericColumn(e.numeric, this.data, this.segment.maxDoc, encoding);
  }

  /** A SORTED (or single-valued SORTED_SET) field as one ord per doc, -1 for none. */
  sortedColumn(field: string | FieldInfo): SortedColumn {
    const e = this.entry(field, 'SORTED', 'SORTED_SET');
    if (e.type === 'SORTED_SET' && !e.singleValued) throw this.mismatch(field, e.type, 'SORTED (this SORTED_SET field has docs with several values: use sortedSetColumn)');
    return sortedColumn(e.ords, e.terms.valueCount, this.data, this.segment.maxDoc);
  }

  sortedSetColumn(field: string | FieldInfo): SortedSetColumn {
    const e = this.entry(field, 'SORTED_SET', 'SORTED');
    if (e.type === 'SORTED' || e.singleValued) return sortedSetColumnFromSorted(sortedColumn(e.ords, e.terms.valueCount, this.data, this.segment.maxDoc));
    return sortedSetColumn(e.ords, e.terms.valueCount, this.data, this.segment.maxDoc);
  }

  sortedNumericColumn(field: string | FieldInfo): SortedNumericColumn {
    const e = this.entry(field, 'SORTED_NUMERIC', 'NUMERIC');
    if (e.type === 'NUMERIC') {
      const n = e.numeric;
      return sortedNumericColumn({ ...n, numDocsWithField: n.numValues, addresses: null }, this.data, this.segment.maxDoc);
    }
    return sortedNumericColumn(e.values, this.data, this.segment.maxDoc);
  }

  binaryColumn(field: string | FieldInfo): BinaryColumn {
    return binaryColumn(this.entry(field, 'BINARY').binary, this.data, this.segment.maxDoc);
  }

  /** The docs that have a value for the field, as a bitset of 32-bit words; null: every doc. */
  docsWithField(field: string | FieldInfo): Uint32Array | null {
    const e = this.fieldEntry(field);
    const [docs, count] = docsEntry(e);
    if (docs.docsWithFieldOffset === DOCS_WITH_FIELD_ALL) return null;
    return docsBitSet(decodeDocs(docs, count, this.data, this.segment.maxDoc), this.segment.maxDoc);
  }

  // ---- integrity, lifecycle ----

  /** Verifies the CRC-32 of every byte of `.dvd` (and `.dvs`): Lucene's checkIntegrity. */
  checkIntegrity(): void {
    checksumEntireFile(this.dataSlice);
    if (this.skipSlice !== null) checksumEntireFile(this.skipSlice);
  }

  /** Unmaps the data files. Iterators, dictionaries and skippers of this producer then throw (columns are plain arrays and stay valid). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.data.close();
    this.skipData?.close();
  }

  private docs(e: DocsWithFieldEntry, count: number): DocIndexIterator {
    if (this.closed) throw new Error(`doc values of segment ${this.segment.name} are closed`);
    if (e.docsWithFieldOffset === DOCS_WITH_FIELD_NONE) return new NoDocs();
    if (e.docsWithFieldOffset === DOCS_WITH_FIELD_ALL) return new AllDocs(this.segment.maxDoc);
    return new IndexedDISIIterator(this.data, e.docsWithFieldOffset, e.docsWithFieldLength, e.jumpTableEntryCount, e.denseRankPower, count);
  }

  private addresses(a: MonotonicEntry | null): MonotonicValues | null {
    return a === null ? null : new MonotonicValues(a, this.data);
  }

  private info(field: string | FieldInfo): FieldInfo {
    const info = typeof field === 'string' ? this.fieldInfos.fieldInfo(field) : field;
    if (info === undefined) throw new Error(`segment ${this.segment.name} has no field "${field}"`);
    return info;
  }

  private fieldEntry(field: string | FieldInfo): FieldEntry {
    const info = this.info(field);
    const e = this.entries.fields.get(info.number);
    if (e === undefined) throw new Error(`field "${info.name}" has no doc values in ${this.dataSlice.name} (its doc-values type is ${info.docValuesType})`);
    return e;
  }

  private entry<T extends FieldEntry['type'], U extends FieldEntry['type'] = T>(field: string | FieldInfo, type: T, alsoAccepted?: U): Extract<FieldEntry, { type: T | U }> {
    const e = this.fieldEntry(field);
    if (e.type !== type && e.type !== alsoAccepted) throw this.mismatch(field, e.type, type);
    return e as Extract<FieldEntry, { type: T | U }>;
  }

  private mismatch(field: string | FieldInfo, actual: string, wanted: string): Error {
    const name = typeof field === 'string' ? field : field.name;
    return new Error(`field "${name}" has ${actual} doc values, not ${wanted} (segment ${this.segment.name})`);
  }
}

/** The doc set of any entry and how many docs it holds. */
function docsEntry(e: FieldEntry): [DocsWithFieldEntry, number] {
  switch (e.type) {
    case 'NUMERIC':
      return [e.numeric, e.numeric.numValues];
    case 'BINARY':
      return [e.binary, e.binary.numDocsWithField];
    case 'SORTED':
      return [e.ords, e.ords.numValues];
    case 'SORTED_SET':
      return e.singleValued ? [e.ords, e.ords.numValues] : [e.ords, e.ords.numDocsWithField];
    case 'SORTED_NUMERIC':
      return [e.values, e.values.numDocsWithField];
  }
}
