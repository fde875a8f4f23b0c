import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { FastCompressionHashTable, compressWithDictionary } from '../compress/LZ4.js';
import { segmentFileName } from '../lucene/IndexFileNames.js';
import { DISI_DEFAULT_DENSE_RANK_POWER } from '../lucene/IndexedDISI.js';
import { writeIndexedDISI } from '../lucene/IndexedDISIWriter.js';
import { DirectMonotonicWriter } from '../packed/DirectMonotonicWriter.js';
import { DirectWriter } from '../packed/DirectWriter.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { IndexOutput } from '../store/IndexOutput.js';
import {
  DIRECT_MONOTONIC_BLOCK_SHIFT,
  DV_DATA_CODEC,
  DV_DATA_EXTENSION,
  DV_META_CODEC,
  DV_META_EXTENSION,
  DV_SKIP_CODEC,
  DV_SKIP_EXTENSION,
  DV_VERSION_SKIPPER_SEPARATE_FILE,
  DV_VERSION_START,
  DvType,
  NUMERIC_BLOCK_SHIFT,
  NUMERIC_BLOCK_SIZE,
  SKIP_INDEX_INTERVAL_SIZE,
  TERMS_DICT_BLOCK_SIZE,
  TERMS_DICT_REVERSE_INDEX_SHIFT,
  TERMS_DICT_REVERSE_INDEX_SIZE,
} from './Lucene90DocValuesFormat.js';
import { writeSkipIndex } from './SkipIndexWriter.js';
import { type FieldValues, type Long, asBigInts, bigStats, numberStats, packed, safeSpan } from './ValueStats.js';

/** What the writer needs of a field: its `.fnm` number, and whether `.fnm` gives it a skip index (RANGE). */
export interface DocValuesFieldSpec {
  readonly number: number;
  readonly name?: string;
  readonly skipIndex?: boolean;
}

export type { Long };
/** Per doc (index = doc id, length maxDoc): a value, or null / undefined for none. */
export type NumericColumnInput = ArrayLike<Long | null | undefined>;
/** Per doc: its values (any order; written ascending, duplicates kept); null, undefined or [] for none. */
export type SortedNumericColumnInput = ArrayLike<readonly Long[] | null | undefined>;
/** Per doc: its bytes (strings as UTF-8), or null / undefined for none. */
export type BinaryColumnInput = ArrayLike<Uint8Array | string | null | undefined>;
/** Per doc: its terms (any order, duplicates dropped); null, undefined or [] for none. */
export type SortedSetColumnInput = ArrayLike<readonly (Uint8Array | string)[] | null | undefined>;

export interface DocValuesConsumerOptions {
  /** Docs per skip-index interval (Lucene's default 4096; smaller only to exercise levels in tests). */
  readonly skipIndexIntervalSize?: number;
  /**
   * The format version to write: 0 (default; readable by every Lucene 9.x and 10.x), 1 (the skip
   * index in its own `.dvs`) or 2 (plus maxValueCount per skip index). Only Lucene releases that
   * know a version read it.
   */
  readonly version?: 0 | 1 | 2;
}

/**
 * Writes Lucene90DocValuesFormat files (layout in Lucene90DocValuesFormat.ts), version 0 by
 * default (what every Lucene 9.x and 10.x reads; 1 and 2 on request), from columns held in memory: Lucene's DocValuesConsumer, making the
 * same choices Lucene makes so the bytes are the ones Lucene would write for the same values and
 * field order: docs with a value as none / all / IndexedDISI, values as constant, table (at most
 * 256 distinct values when it saves bits), GCD + delta, or blocks of 16384 values when that saves
 * 10% or more; terms in 64-term blocks LZ4-compressed behind their first term, with a reverse index
 * every 1024 terms; a skip index (inside `.dvd` for version 0, in `.dvs` after) for fields that ask
 * for one.
 *
 * Fields are added one at a time, in any order (Lucene writes them in field-number order); `close()`
 * ends `.dvm` with -1, writes both footers (CRC-32) and fsyncs. `abort()` deletes the partial files.
 */
export class Lucene90DocValuesConsumer {
  readonly dataPath: string;
  readonly metaPath: string;
  /** The `.dvs` path (version >= 1), else null. */
  readonly skipPath: string | null;
  readonly version: number;
  private readonly data: IndexOutput;
  private readonly meta: IndexOutput;
  /** Where skip indexes go: `.dvd` for version 0, `.dvs` from version 1. */
  private readonly skip: IndexOutput;
  private readonly skipIndexIntervalSize: number;
  private readonly written = new Set<number>();
  private done = false;

  constructor(
    dir: string,
    segment: { readonly name: string; readonly id: Uint8Array; readonly maxDoc: number },
    /** The per-field format suffix, `Lucene90_0` for a field whose attributes say format Lucene90, suffix 0. */
    readonly segmentSuffix = 'Lucene90_0',
    options: DocValuesConsumerOptions = {},
  ) {
    this.maxDoc = segment.maxDoc;
    this.skipIndexIntervalSize = options.skipIndexIntervalSize ?? SKIP_INDEX_INTERVAL_SIZE;
    if (!Number.isInteger(this.skipIndexIntervalSize) || this.skipIndexIntervalSize < 2)
      throw new RangeError(`skipIndexIntervalSize must be > 1, got ${this.skipIndexIntervalSize}`);
    this.version = options.version ?? DV_VERSION_START;
    if (![0, 1, 2].includes(this.version)) throw new RangeError(`doc values version must be 0, 1 or 2, got ${this.version}`);
    this.dataPath = join(dir, segmentFileName(segment.name, segmentSuffix, DV_DATA_EXTENSION));
    this.metaPath = join(dir, segmentFileName(segment.name, segmentSuffix, DV_META_EXTENSION));
    this.skipPath = this.version >= DV_VERSION_SKIPPER_SEPARATE_FILE ? join(dir, segmentFileName(segment.name, segmentSuffix, DV_SKIP_EXTENSION)) : null;
    const opened: IndexOutput[] = [];
    try {
      for (const path of [this.dataPath, this.metaPath, this.skipPath]) if (path !== null) opened.push(new IndexOutput(path));
    } catch (e) {
      for (const o of opened) {
        o.abort();
        rmSync(o.path, { force: true });
      }
      throw e;
    }
    [this.data, this.meta] = opened;
    this.skip = opened[2] ?? this.data;
    writeIndexHeader(this.data, DV_DATA_CODEC, this.version, segment.id, segmentSuffix);
    writeIndexHeader(this.meta, DV_META_CODEC, this.version, segment.id, segmentSuffix);
    if (this.skip !== this.data) writeIndexHeader(this.skip, DV_SKIP_CODEC, this.version, segment.id, segmentSuffix);
  }

  readonly maxDoc: number;

  addNumericField(field: DocValuesFieldSpec, column: NumericColumnInput): void {
    this.begin(field, DvType.NUMERIC, column.length);
    const values = singleValues(column, field);
    if (field.skipIndex) this.skipIndex(values);
    this.writeValues(values, false);
  }

  addSortedNumericField(field: DocValuesFieldSpec, column: SortedNumericColumnInput): void {
    this.begin(field, DvType.SORTED_NUMERIC, column.length);
    this.writeSortedNumeric(field, multiValues(column, field), false);
  }

  addBinaryField(field: DocValuesFieldSpec, column: BinaryColumnInput): void {
    this.begin(field, DvType.BINARY, column.length);
    if (field.skipIndex) throw new RangeError(`field ${label(field)}: BINARY fields cannot have a skip index`);
    const docs: number[] = [];
    const lengths: number[] = [];
    const start = this.data.filePointer;
    this.meta.writeLong(start);
    let minLength = 0x7fffffff;
    let maxLength = 0;
    for (let doc = 0; doc < column.length; doc++) {
      const v = column[doc];
      if (v === null || v === undefined) continue;
      const bytes = typeof v === 'string' ? utf8(v) : v;
      this.data.writeBytes(bytes);
      docs.push(doc);
      lengths.push(bytes.length);
      minLength = Math.min(minLength, bytes.length);
      maxLength = Math.max(maxLength, bytes.length);
    }
    this.meta.writeLong(this.data.filePointer - start);
    this.writeDocsWithField(Int32Array.from(docs));
    this.meta.writeInt(docs.length);
    this.meta.writeInt(minLength);
    this.meta.writeInt(maxLength);
    if (maxLength > minLength) {
      this.writeAddresses(lengths);
    }
  }

  addSortedField(field: DocValuesFieldSpec, column: BinaryColumnInput): void {
    this.begin(field, DvType.SORTED, column.length);
    const terms = sortedTerms(column);
    const ords = Array.from({ length: column.length }, (_, d) => {
      const v = column[d];
      return v === null || v === undefined ? null : terms.ordOf(v);
    });
    this.writeSorted(field, singleValues(ords, field), terms.terms, false);
  }

  addSortedSetField(field: DocValuesFieldSpec, column: SortedSetColumnInput): void {
    this.begin(field, DvType.SORTED_SET, column.length);
    const all: (Uint8Array | string)[] = [];
    for (let d = 0; d < column.length; d++) for (const t of column[d] ?? []) all.push(t);
    const terms = sortedTerms(all);
    // A doc's ords: distinct, ascending, as Lucene's SortedSetDocValuesWriter keeps them.
    const perDoc = Array.from({ length: column.length }, (_, d) => {
      const ts = column[d];
      if (!ts || ts.length === 0) return null;
      return [...new Set(ts.map((t) => terms.ordOf(t)))].sort((a, b) => a - b);
    });
    if (perDoc.every((o) => o === null || o.length === 1)) {
      this.writeSorted(
        field,
        singleValues(
          perDoc.map((o) => (o === null ? null : o[0])),
          field,
        ),
        terms.terms,
        true,
      );
      return;
    }
    this.writeSortedNumeric(field, multiValues(perDoc, field), true);
    this.addTermsDict(terms.terms);
  }

  /** Ends `.dvm` (-1), writes both footers and fsyncs. */
  close(): void {
    if (this.done) return;
    this.done = true;
    this.meta.writeInt(-1);
    writeFooter(this.meta);
    writeFooter(this.data);
    if (this.skip !== this.data) writeFooter(this.skip);
    this.data.close();
    this.meta.close();
    if (this.skip !== this.data) this.skip.close();
  }

  /** Closes without finishing and deletes the files. */
  abort(): void {
    this.done = true;
    for (const o of new Set([this.data, this.meta, this.skip])) {
      o.abort();
      rmSync(o.path, { force: true });
    }
  }

  private skipIndex(v: FieldValues): void {
    writeSkipIndex(this.skip, this.meta, v, this.skipIndexIntervalSize, this.version);
  }

  private begin(field: DocValuesFieldSpec, type: number, length: number): void {
    if (this.done) throw new Error('doc values writer already closed');
    if (length !== this.maxDoc) throw new RangeError(`field ${label(field)}: ${length} docs in the column, the segment has ${this.maxDoc}`);
    if (this.written.has(field.number)) throw new RangeError(`field ${label(field)} written twice`);
    this.written.add(field.number);
    this.meta.writeInt(field.number);
    this.meta.writeByte(type);
  }

  private writeSorted(field: DocValuesFieldSpec, ords: FieldValues, terms: Uint8Array[], singleValuedSet: boolean): void {
    if (field.skipIndex) this.skipIndex(ords);
    if (singleValuedSet) this.meta.writeByte(0); // multiValued = false
    this.writeValues(ords, true);
    this.addTermsDict(terms);
  }

  private writeSortedNumeric(field: DocValuesFieldSpec, v: FieldValues, ords: boolean): void {
    if (field.skipIndex) this.skipIndex(v);
    if (ords) this.meta.writeByte(1); // multiValued = true
    this.writeValues(v, ords);
    this.meta.writeInt(v.docs.length);
    if (v.values.length > v.docs.length) this.writeAddresses(v.counts!);
  }

  /** numDocs + 1 start offsets (from the per-doc lengths or counts) as DirectMonotonic: meta entries, packed data in `.dvd`. */
  private writeAddresses(sizes: ArrayLike<number>): void {
    const start = this.data.filePointer;
    this.meta.writeLong(start);
    this.meta.writeVInt(DIRECT_MONOTONIC_BLOCK_SHIFT);
    const w = DirectMonotonicWriter.getInstance(this.meta, this.data, sizes.length + 1, DIRECT_MONOTONIC_BLOCK_SHIFT);
    let addr = 0;
    w.add(addr);
    for (let i = 0; i < sizes.length; i++) w.add((addr += sizes[i]));
    w.finish();
    this.meta.writeLong(this.data.filePointer - start);
  }

  private writeDocsWithField(docs: Int32Array): void {
    if (docs.length === 0) {
      this.meta.writeLong(-2);
      this.meta.writeLong(0);
      this.meta.writeShort(-1);
      this.meta.writeByte(0xff);
    } else if (docs.length === this.maxDoc) {
      this.meta.writeLong(-1);
      this.meta.writeLong(0);
      this.meta.writeShort(-1);
      this.meta.writeByte(0xff);
    } else {
      const offset = this.data.filePointer;
      this.meta.writeLong(offset);
      const disi = writeIndexedDISI(docs, docs.length, this.data, DISI_DEFAULT_DENSE_RANK_POWER);
      this.meta.writeLong(disi.length);
      this.meta.writeShort(disi.jumpTableEntryCount);
      this.meta.writeByte(DISI_DEFAULT_DENSE_RANK_POWER);
    }
  }

  /**
   * A NumericEntry and its values, choosing the encoding as Lucene does: bits for the distinct
   * values (table) against bits for (max - min) / gcd; blocks when per-block widths save >= 10%;
   * GCD and min arithmetic in int64 with Java's wrap-around. Values whose span fits in 2^53 are
   * handled as numbers (exact there, and fast); others as bigints masked to 64 bits.
   */
  private writeValues(v: FieldValues, ords: boolean): void {
    const n = v.values.length;
    const narrow = v.values instanceof Float64Array && safeSpan(v.values);
    const stats = narrow ? numberStats(v.values as Float64Array, ords) : bigStats(asBigInts(v.values), ords);
    let { min, gcd } = stats;
    const { max, unique } = stats;
    if (ords && n > 0 && (min !== 0n || (max !== 0n && gcd !== 1n))) throw new Error(`ords must start at 0 without a GCD (min ${min}, gcd ${gcd})`);

    this.writeDocsWithField(v.docs);
    this.meta.writeLong(n);
    let bpv: number;
    let doBlocks = false;
    let table: bigint[] | null = null;
    if (min >= max) {
      bpv = 0;
      this.meta.writeInt(-1);
    } else {
      const range = BigInt.asIntN(64, max - min) / gcd;
      if (unique !== null && unique.length > 1 && DirectWriter.unsignedBitsRequired(unique.length - 1) < DirectWriter.unsignedBitsRequired(range)) {
        bpv = DirectWriter.unsignedBitsRequired(unique.length - 1);
        table = [...unique].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        this.meta.writeInt(table.length);
        for (const t of table) this.meta.writeLong(t);
        min = 0n;
        gcd = 1n;
      } else {
        doBlocks = stats.globalSpace > 0 && stats.blockSpace / stats.globalSpace <= 0.9;
        if (doBlocks) {
          bpv = 0xff;
          this.meta.writeInt(-2 - NUMERIC_BLOCK_SHIFT);
        } else {
          bpv = DirectWriter.unsignedBitsRequired(range);
          if (gcd === 1n && min > 0n && DirectWriter.unsignedBitsRequired(max) === DirectWriter.unsignedBitsRequired(BigInt.asIntN(64, max - min))) min = 0n;
          this.meta.writeInt(-1);
        }
      }
    }
    this.meta.writeByte(bpv);
    this.meta.writeLong(min);
    this.meta.writeLong(gcd);
    const start = this.data.filePointer;
    this.meta.writeLong(start);
    let jumpTableOffset = -1;
    if (doBlocks) {
      jumpTableOffset = this.writeValueBlocks(v.values, narrow, gcd);
    } else if (bpv !== 0) {
      const w = DirectWriter.getInstance(this.data, n, bpv);
      if (narrow) {
        const values = v.values as Float64Array;
        const encode = table === null ? null : new Map(table.map((t, i) => [Number(t), i]));
        const minN = Number(min);
        const gcdN = Number(gcd);
        for (let i = 0; i < n; i++) w.add(encode !== null ? encode.get(values[i])! : (values[i] - minN) / gcdN);
      } else {
        const values = asBigInts(v.values);
        const encode = table === null ? null : new Map(table.map((t, i) => [t, i]));
        for (let i = 0; i < n; i++) w.add(encode !== null ? encode.get(values[i])! : packed(values[i], min, gcd));
      }
      w.finish();
    }
    this.meta.writeLong(this.data.filePointer - start);
    this.meta.writeLong(jumpTableOffset);
  }

  /** Blocks of 2^14 values, each with its own min and width, then their offsets; returns the offsets' offset. */
  private writeValueBlocks(all: Float64Array | BigInt64Array, narrow: boolean, gcd: bigint): number {
    const offsets: number[] = [];
    for (let from = 0; from < all.length; from += NUMERIC_BLOCK_SIZE) {
      offsets.push(this.data.filePointer);
      const end = Math.min(all.length, from + NUMERIC_BLOCK_SIZE);
      const values = narrow ? all.subarray(from, end) : asBigInts(all.subarray(from, end));
      let min = values[0];
      let max = values[0];
      for (let i = 1; i < values.length; i++) {
        if (values[i] < min) min = values[i];
        if (values[i] > max) max = values[i];
      }
      if (min === max) {
        this.data.writeByte(0);
        this.data.writeLong(min);
        continue;
      }
      const bpv = DirectWriter.unsignedBitsRequired(BigInt.asIntN(64, BigInt(max) - BigInt(min)) / gcd);
      const buffer = new ByteArrayDataOutput(Math.ceil((values.length * bpv) / 8) + 8);
      const w = DirectWriter.getInstance(buffer, values.length, bpv);
      if (narrow) {
        const gcdN = Number(gcd);
        for (let i = 0; i < values.length; i++) w.add(((values[i] as number) - (min as number)) / gcdN);
      } else {
        for (let i = 0; i < values.length; i++) w.add(packed(values[i] as bigint, min as bigint, gcd));
      }
      w.finish();
      this.data.writeByte(bpv);
      this.data.writeLong(min);
      this.data.writeInt(buffer.length);
      this.data.writeBytes(buffer.toBytes());
    }
    const origin = this.data.filePointer;
    for (const o of offsets) this.data.writeLong(o);
    this.data.writeLong(origin);
    return origin;
  }

  /**
   * The terms dictionary: 64-term blocks (first term plain, the rest prefix-coded and LZ4-compressed
   * with the first term as dictionary), their DirectMonotonic addresses, then the reverse index.
   */
  private addTermsDict(terms: Uint8Array[]): void {
    const size = terms.length;
    this.meta.writeVLong(size);
    this.meta.writeInt(DIRECT_MONOTONIC_BLOCK_SHIFT);
    const addressBuffer = new ByteArrayDataOutput();
    const numBlocks = Math.ceil(size / TERMS_DICT_BLOCK_SIZE);
    const addresses = DirectMonotonicWriter.getInstance(this.meta, addressBuffer, numBlocks, DIRECT_MONOTONIC_BLOCK_SHIFT);
    const start = this.data.filePointer;
    const ht = new FastCompressionHashTable();
    const block = new ByteArrayDataOutput(1 << 14);
    let dictLength = 0;
    let maxLength = 0;
    let maxBlockLength = 0;
    const flush = () => {
      const length = block.length - dictLength;
      this.data.writeVInt(length);
      compressWithDictionary(block.toBytes(), 0, dictLength, length, this.data, ht);
      maxBlockLength = Math.max(maxBlockLength, length);
    };
    for (let ord = 0; ord < size; ord++) {
      const term = terms[ord];
      if (ord % TERMS_DICT_BLOCK_SIZE === 0) {
        if (ord !== 0) {
          flush();
          block.reset();
        }
        addresses.add(this.data.filePointer - start);
        this.data.writeVInt(term.length);
        this.data.writeBytes(term);
        block.writeBytes(term);
        dictLength = term.length;
      } else {
        const previous = terms[ord - 1];
        const prefix = mismatch(previous, term);
        const suffix = term.length - prefix;
        block.writeByte(Math.min(prefix, 15) | (Math.min(15, suffix - 1) << 4));
        if (prefix >= 15) block.writeVInt(prefix - 15);
        if (suffix >= 16) block.writeVInt(suffix - 16);
        block.writeBytes(term, prefix, suffix);
      }
      maxLength = Math.max(maxLength, term.length);
    }
    if (block.length > dictLength) flush();
    addresses.finish();
    this.meta.writeInt(maxLength);
    this.meta.writeInt(maxBlockLength);
    this.meta.writeLong(start);
    this.meta.writeLong(this.data.filePointer - start);
    const addressesStart = this.data.filePointer;
    this.data.writeBytes(addressBuffer.toBytes());
    this.meta.writeLong(addressesStart);
    this.meta.writeLong(this.data.filePointer - addressesStart);
    this.writeTermsIndex(terms);
  }

  /** Every 1024th term's shortest prefix that sorts after the term before it, and their addresses. */
  private writeTermsIndex(terms: Uint8Array[]): void {
    const size = terms.length;
    this.meta.writeInt(TERMS_DICT_REVERSE_INDEX_SHIFT);
    const start = this.data.filePointer;
    const addressBuffer = new ByteArrayDataOutput();
    const w = DirectMonotonicWriter.getInstance(this.meta, addressBuffer, 1 + Math.ceil(size / TERMS_DICT_REVERSE_INDEX_SIZE), DIRECT_MONOTONIC_BLOCK_SHIFT);
    let offset = 0;
    for (let ord = 0; ord < size; ord += TERMS_DICT_REVERSE_INDEX_SIZE) {
      w.add(offset);
      const length = ord === 0 ? 0 : sortKeyLength(terms[ord - 1], terms[ord]);
      offset += length;
      this.data.writeBytes(terms[ord], 0, length);
    }
    w.add(offset);
    w.finish();
    this.meta.writeLong(start);
    this.meta.writeLong(this.data.filePointer - start);
    const addressesStart = this.data.filePointer;
    this.data.writeBytes(addressBuffer.toBytes());
    this.meta.writeLong(addressesStart);
    this.meta.writeLong(this.data.filePointer - addressesStart);
  }
}

function checkLong(v: Long, field: DocValuesFieldSpec, doc: number): Long {
  if (typeof v === 'bigint') {
    if (v !== BigInt.asIntN(64, v)) throw new RangeError(`field ${label(field)}, doc ${doc}: ${v} is outside the int64 range`);
  } else if (!Number.isSafeInteger(v)) {
    throw new RangeError(`field ${label(field)}, doc ${doc}: ${v} is not a safe integer (pass a bigint for larger longs)`);
  }
  return v;
}

function singleValues(column: ArrayLike<Long | null | undefined>, field: DocValuesFieldSpec): FieldValues {
  const docs: number[] = [];
  const values: Long[] = [];
  for (let doc = 0; doc < column.length; doc++) {
    const v = column[doc];
    if (v === null || v === undefined) continue;
    docs.push(doc);
    values.push(checkLong(v, field, doc));
  }
  return { docs: Int32Array.from(docs), counts: null, values: longArray(values) };
}

function multiValues(column: ArrayLike<readonly Long[] | null | undefined>, field: DocValuesFieldSpec): FieldValues {
  const docs: number[] = [];
  const counts: number[] = [];
  const values: Long[] = [];
  for (let doc = 0; doc < column.length; doc++) {
    const vs = column[doc];
    if (!vs || vs.length === 0) continue;
    docs.push(doc);
    counts.push(vs.length);
    const sorted = vs.map((v) => checkLong(v, field, doc)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const l of sorted) values.push(l);
  }
  return { docs: Int32Array.from(docs), counts: Int32Array.from(counts), values: longArray(values) };
}

/** Numbers stay numbers unless some value needs a bigint. */
function longArray(values: Long[]): Float64Array | BigInt64Array {
  return values.every((v) => typeof v === 'number') ? Float64Array.from(values as number[]) : BigInt64Array.from(values, (v) => BigInt(v));
}

/**
 * The distinct terms in unsigned byte order, and each term's ord. Strings are encoded once per
 * distinct string, not per occurrence; a string and bytes holding its UTF-8 are the same term.
 */
function sortedTerms(all: ArrayLike<Uint8Array | string | null | undefined>): { terms: Uint8Array[]; ordOf: (t: Uint8Array | string) => number } {
  const key = (t: Uint8Array | string) => (typeof t === 'string' ? `s${t}` : `b${latin1(t)}`);
  const byKey = new Map<string, Uint8Array>();
  for (let i = 0; i < all.length; i++) {
    const t = all[i];
    if (t === null || t === undefined) continue;
    const k = key(t);
    if (!byKey.has(k)) byKey.set(k, typeof t === 'string' ? utf8(t) : t);
  }
  const byBytes = new Map<string, Uint8Array>();
  for (const bytes of byKey.values()) byBytes.set(latin1(bytes), bytes);
  const terms = [...byBytes.values()].sort((a, b) => Buffer.compare(a, b));
  const ordOfBytes = new Map(terms.map((t, i) => [latin1(t), i]));
  const ordOfKey = new Map<string, number>();
  for (const [k, bytes] of byKey) ordOfKey.set(k, ordOfBytes.get(latin1(bytes))!);
  return { terms, ordOf: (t) => ordOfKey.get(key(t))! };
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** Length of the common prefix (terms are distinct and ascending: the earlier one is never longer if it is a prefix). */
function mismatch(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The shortest prefix of `current` that sorts after `prior` (Lucene's StringHelper.sortKeyLength). */
function sortKeyLength(prior: Uint8Array, current: Uint8Array): number {
  const n = Math.min(prior.length, current.length);
  for (let i = 0; i < n; i++) if (prior[i] !== current[i]) return i + 1;
  return Math.min(1 + prior.length, current.length);
}

const encoder = new TextEncoder();
function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

function label(field: DocValuesFieldSpec): string {
  return field.name === undefined ? `#${field.number}` : `${field.name} (#${field.number})`;
}
