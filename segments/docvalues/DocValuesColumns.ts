import { IndexedDISI } from '../lucene/IndexedDISI.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { BinaryEntry, DocsWithFieldEntry, NumericEntry, SortedNumericEntry } from './DocValuesEntries.js';
import { DOCS_WITH_FIELD_ALL, DOCS_WITH_FIELD_NONE } from './Lucene90DocValuesFormat.js';
import { MonotonicValues } from './MonotonicValues.js';
import { type NumericEncoding, decodeFloatingColumn } from './NumericEncodings.js';
import { NumericValues } from './NumericValues.js';

/**
 * Whole-field columns of one segment, decoded once into typed arrays indexed by doc, for filters
 * that turn a field into a bitset over every doc (term / terms / range / exists): after decoding,
 * a filter is a loop over a typed array, about 1 ms per million docs, with no call per doc.
 *
 * Bitsets (docsWithField) are 32-bit words: doc d is bit (d & 31) of word d >>> 5; null means
 * every doc of the segment has a value. Values are decoded from `.dvd` in chunks (a mapping is
 * read in place; positioned reads pass through a bounded buffer), never by copying the file.
 *
 * Memory, for a segment of maxDoc docs (transient peaks add the index-ordered arrays and, for a
 * sparse field, 4 bytes per doc with a value while the doc set is decoded):
 *
 * | column            | bytes                                                              |
 * |-------------------|--------------------------------------------------------------------|
 * | numeric           | 8 x maxDoc, + maxDoc / 8 when sparse                                |
 * | sorted            | 4 x maxDoc (ords; -1 = no value)                                   |
 * | sorted set        | 4 x (maxDoc + 1) offsets + 4 x ords stored                         |
 * | sorted numeric    | 4 x (maxDoc + 1) offsets + 8 x values stored                       |
 * | binary            | 4 x (maxDoc + 1) offsets + the values' bytes, + maxDoc / 8 when sparse |
 * | docs with field   | maxDoc / 8 (nothing when every doc has a value)                    |
 */

/**
 * Longs as numbers when every value of the field is a safe integer (|v| <= 2^53 - 1), else as
 * bigints; doubles and floats (encoding other than 'long') as the floating-point values. Docs
 * without a value hold 0 (check docsWithField).
 */
export type NumericColumn =
  | { readonly kind: 'number'; readonly maxDoc: number; readonly values: Float64Array; readonly docsWithField: Uint32Array | null; readonly docCount: number }
  | { readonly kind: 'bigint'; readonly maxDoc: number; readonly values: BigInt64Array; readonly docsWithField: Uint32Array | null; readonly docCount: number };

/** SORTED (or single-valued SORTED_SET): the ord of each doc's term, -1 for no value. */
export interface SortedColumn {
  readonly maxDoc: number;
  readonly ords: Int32Array;
  readonly valueCount: number;
}

/** SORTED_SET: doc d's ords (ascending, distinct) are ords[offsets[d] .. offsets[d + 1]). */
export interface SortedSetColumn {
  readonly maxDoc: number;
  readonly offsets: Int32Array;
  readonly ords: Int32Array;
  readonly valueCount: number;
}

/** SORTED_NUMERIC: doc d's values (ascending) are values[offsets[d] .. offsets[d + 1]). */
export type SortedNumericColumn =
  | { readonly kind: 'number'; readonly maxDoc: number; readonly offsets: Int32Array; readonly values: Float64Array }
  | { readonly kind: 'bigint'; readonly maxDoc: number; readonly offsets: Int32Array; readonly values: BigInt64Array };

/** BINARY: doc d's bytes are bytes[offsets[d] .. offsets[d + 1]) (empty without a value: see docsWithField). */
export interface BinaryColumn {
  readonly maxDoc: number;
  readonly offsets: Int32Array;
  readonly bytes: Uint8Array;
  readonly docsWithField: Uint32Array | null;
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** The docs of a DocsWithField entry, ascending (rank order), or null for "every doc". */
export function decodeDocs(entry: DocsWithFieldEntry, count: number, data: RandomAccessBytes, maxDoc: number): Int32Array | null {
  if (entry.docsWithFieldOffset === DOCS_WITH_FIELD_ALL) return null;
  if (entry.docsWithFieldOffset === DOCS_WITH_FIELD_NONE) return new Int32Array(0);
  const bytes = data.pin(entry.docsWithFieldOffset, entry.docsWithFieldLength);
  return IndexedDISI.decode(bytes, `${data.name} (IndexedDISI at ${entry.docsWithFieldOffset})`, entry.jumpTableEntryCount, entry.denseRankPower, count, maxDoc).docs;
}

export function docsBitSet(docs: Int32Array | null, maxDoc: number): Uint32Array | null {
  if (docs === null) return null;
  const bits = new Uint32Array((maxDoc + 31) >>> 5);
  for (let i = 0; i < docs.length; i++) bits[docs[i] >>> 5] |= 1 << (docs[i] & 31);
  return bits;
}

export function numericColumn(entry: NumericEntry, data: RandomAccessBytes, maxDoc: number, encoding: NumericEncoding): NumericColumn {
  const values = new NumericValues(entry, data);
  const docs = decodeDocs(entry, entry.numValues, data, maxDoc);
  const docsWithField = docsBitSet(docs, maxDoc);
  const docCount = docs === null ? maxDoc : docs.length;
  if (encoding === 'long' && values.safe) {
    return { kind: 'number', maxDoc, values: scatter(values.decodeNumbers(), docs, maxDoc), docsWithField, docCount };
  }
  const exact = scatterWords(values.decodeBigInts(), docs, maxDoc);
  if (encoding !== 'long') return { kind: 'number', maxDoc, values: decodeFloatingColumn(exact, encoding), docsWithField, docCount };
  const asNumbers = safeNumbers(exact);
  return asNumbers !== null ? { kind: 'number', maxDoc, values: asNumbers, docsWithField, docCount } : { kind: 'bigint', maxDoc, values: exact, docsWithField, docCount };
}

export function sortedColumn(entry: NumericEntry, valueCount: number, data: RandomAccessBytes, maxDoc: number): SortedColumn {
  const values = new NumericValues(entry, data);
  const docs = decodeDocs(entry, entry.numValues, data, maxDoc);
  if (docs === null) return { maxDoc, ords: values.decodeNumbers(new Int32Array(maxDoc)), valueCount };
  const byIndex = values.decodeNumbers(new Int32Array(entry.numValues));
  const ords = new Int32Array(maxDoc).fill(-1);
  for (let i = 0; i < docs.length; i++) ords[docs[i]] = byIndex[i];
  return { maxDoc, ords, valueCount };
}

/** A single-valued SORTED_SET seen as a set column: offsets step by one at each doc with a value. */
export function sortedSetColumnFromSorted(sorted: SortedColumn): SortedSetColumn {
  const offsets = new Int32Array(sorted.maxDoc + 1);
  let n = 0;
  for (let d = 0; d < sorted.maxDoc; d++) {
    offsets[d] = n;
    if (sorted.ords[d] >= 0) n++;
  }
  offsets[sorted.maxDoc] = n;
  const ords = new Int32Array(n);
  for (let d = 0, k = 0; d < sorted.maxDoc; d++) if (sorted.ords[d] >= 0) ords[k++] = sorted.ords[d];
  return { maxDoc: sorted.maxDoc, offsets, ords, valueCount: sorted.valueCount };
}

export function sortedSetColumn(entry: SortedNumericEntry, valueCount: number, data: RandomAccessBytes, maxDoc: number): SortedSetColumn {
  const ords = new NumericValues(entry, data).decodeNumbers(new Int32Array(entry.numValues));
  return { maxDoc, offsets: docOffsets(entry, data, maxDoc), ords, valueCount };
}

export function sortedNumericColumn(entry: SortedNumericEntry, data: RandomAccessBytes, maxDoc: number): SortedNumericColumn {
  const values = new NumericValues(entry, data);
  const offsets = docOffsets(entry, data, maxDoc);
  if (values.safe) return { kind: 'number', maxDoc, offsets, values: values.decodeNumbers() };
  const exact = values.decodeBigInts();
  const asNumbers = safeNumbers(exact);
  return asNumbers !== null ? { kind: 'number', maxDoc, offsets, values: asNumbers } : { kind: 'bigint', maxDoc, offsets, values: exact };
}

export function binaryColumn(entry: BinaryEntry, data: RandomAccessBytes, maxDoc: number): BinaryColumn {
  const docs = decodeDocs(entry, entry.numDocsWithField, data, maxDoc);
  const starts = new Int32Array(entry.numDocsWithField + 1);
  if (entry.addresses !== null) new MonotonicValues(entry.addresses, data).decodeAll(starts);
  else for (let i = 0; i <= entry.numDocsWithField; i++) starts[i] = i * entry.maxLength;
  const bytes = data.pin(entry.dataOffset, entry.dataLength).slice();
  return { maxDoc, offsets: perDocOffsets(starts, docs, maxDoc), bytes, docsWithField: docsBitSet(docs, maxDoc) };
}

/** Per-doc offsets of a SORTED_NUMERIC / multi-valued SORTED_SET entry. */
function docOffsets(entry: SortedNumericEntry, data: RandomAccessBytes, maxDoc: number): Int32Array {
  const docs = decodeDocs(entry, entry.numDocsWithField, data, maxDoc);
  const starts = new Int32Array(entry.numDocsWithField + 1);
  if (entry.addresses !== null) new MonotonicValues(entry.addresses, data).decodeAll(starts);
  else for (let i = 0; i <= entry.numDocsWithField; i++) starts[i] = i;
  return perDocOffsets(starts, docs, maxDoc);
}

/**
 * From the start of each doc-with-value's run (rank order, plus the end) to a start per doc: a doc
 * without a value gets the start of the next doc that has one, so its run is empty.
 */
function perDocOffsets(starts: Int32Array, docs: Int32Array | null, maxDoc: number): Int32Array {
  if (docs === null) return starts.length === maxDoc + 1 ? starts : starts.slice(0, maxDoc + 1);
  const offsets = new Int32Array(maxDoc + 1);
  let k = 0;
  for (let d = 0; d <= maxDoc; d++) {
    while (k < docs.length && docs[k] < d) k++;
    offsets[d] = starts[k];
  }
  return offsets;
}

function scatter(byIndex: Float64Array, docs: Int32Array | null, maxDoc: number): Float64Array {
  if (docs === null) return byIndex;
  const out = new Float64Array(maxDoc);
  for (let i = 0; i < docs.length; i++) out[docs[i]] = byIndex[i];
  return out;
}

function scatterWords(byIndex: BigInt64Array, docs: Int32Array | null, maxDoc: number): BigInt64Array {
  if (docs === null) return byIndex;
  const out = new BigInt64Array(maxDoc);
  const src = new Int32Array(byIndex.buffer, byIndex.byteOffset, byIndex.length * 2);
  const dst = new Int32Array(out.buffer);
  for (let i = 0; i < docs.length; i++) {
    dst[2 * docs[i]] = src[2 * i];
    dst[2 * docs[i] + 1] = src[2 * i + 1];
  }
  return out;
}

/** The values as numbers if every one is a safe integer (read from the 32-bit halves: no bigint per value). */
function safeNumbers(values: BigInt64Array): Float64Array | null {
  const w = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = w[2 * i + 1] * 4294967296 + (w[2 * i] >>> 0);
    if (v > SAFE || v < -SAFE) return null;
    out[i] = v;
  }
  return out;
}
