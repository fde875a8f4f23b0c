import { NO_MORE_DOCS } from '../lucene/IndexedDISIIterator.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { MonotonicValues } from './MonotonicValues.js';
import type { NumericValues } from './NumericValues.js';
import type { TermsDict } from './TermsDict.js';

export { NO_MORE_DOCS };

/**
 * The docs that have a value, with each one's index (its rank among them, where its values are):
 * every doc, none, or an IndexedDISI read in place (segments/lucene/IndexedDISIIterator.ts).
 * Targets must not decrease; advanceExact leaves docID() on the target either way.
 */
export interface DocIndexIterator {
  docID(): number;
  nextDoc(): number;
  advance(target: number): number;
  advanceExact(target: number): boolean;
  /** The current doc's index (valid while the doc has a value). */
  index(): number;
  readonly cost: number;
}

/** Every doc of the segment has a value: the index is the doc. */
export class AllDocs implements DocIndexIterator {
  private doc = -1;
  constructor(private readonly maxDoc: number) {}
  get cost(): number {
    return this.maxDoc;
  }
  docID(): number {
    return this.doc;
  }
  nextDoc(): number {
    return this.advance(this.doc + 1);
  }
  advance(target: number): number {
    return (this.doc = target >= this.maxDoc ? NO_MORE_DOCS : target);
  }
  advanceExact(target: number): boolean {
    this.doc = target;
    return target < this.maxDoc;
  }
  index(): number {
    return this.doc;
  }
}

/** No doc has a value. */
export class NoDocs implements DocIndexIterator {
  private doc = -1;
  readonly cost = 0;
  docID(): number {
    return this.doc;
  }
  nextDoc(): number {
    return (this.doc = NO_MORE_DOCS);
  }
  advance(): number {
    return (this.doc = NO_MORE_DOCS);
  }
  advanceExact(target: number): boolean {
    this.doc = target;
    return false;
  }
  index(): number {
    return -1;
  }
}

/**
 * Lucene's doc-values iterators, for per-hit reads (a few docs per segment, ascending): position
 * with nextDoc / advance / advanceExact, then read the current doc's values. One instance per
 * reading thread and pass; they hold a few numbers and reuse their buffers. Filters that need a
 * whole field use the columns (DocValuesColumns.ts) instead.
 */
abstract class DocValuesIterator {
  constructor(protected readonly docs: DocIndexIterator) {}
  docID(): number {
    return this.docs.docID();
  }
  nextDoc(): number {
    return this.docs.nextDoc();
  }
  advance(target: number): number {
    return this.docs.advance(target);
  }
  /** Positions on `target` (>= the current doc) and says whether it has a value. */
  advanceExact(target: number): boolean {
    return this.docs.advanceExact(target);
  }
  /** Docs with a value (an upper bound for iteration). */
  cost(): number {
    return this.docs.cost;
  }
}

/**
 * NUMERIC: one int64 per doc. `longValue()` is exact. Doubles and floats are stored as longs by
 * whoever indexed them (Lucene's DoubleDocValuesField: the raw IEEE bits; FloatDocValuesField: the
 * float's raw int bits; Elasticsearch: sortable encodings): NumericEncodings.ts turns them back.
 */
export class NumericDocValues extends DocValuesIterator {
  constructor(
    docs: DocIndexIterator,
    private readonly values: NumericValues,
  ) {
    super(docs);
  }
  longValue(): bigint {
    return this.values.get(this.docs.index());
  }
  /** The value as a number; a RangeError (never a rounded value) beyond ±(2^53 - 1). */
  numberValue(): number {
    return this.values.safe ? this.values.getNumber(this.docs.index()) : toSafeNumber(this.longValue());
  }
}

/** SORTED_NUMERIC: a doc's values, ascending (duplicates kept). Read docValueCount() values with nextValue(). */
export class SortedNumericDocValues extends DocValuesIterator {
  private next = 0;
  private end = 0;
  private count = 0;
  private positioned = -1;

  constructor(
    docs: DocIndexIterator,
    private readonly values: NumericValues,
    /** null: one value per doc, at the doc's index. */
    private readonly addresses: MonotonicValues | null,
  ) {
    super(docs);
  }
  docValueCount(): number {
    this.position();
    return this.count;
  }
  nextValue(): bigint {
    return this.values.get(this.nextIndex());
  }
  /** nextValue() as a number; a RangeError (never a rounded value) beyond ±(2^53 - 1). */
  nextNumberValue(): number {
    const i = this.nextIndex();
    return this.values.safe ? this.values.getNumber(i) : toSafeNumber(this.values.get(i));
  }
  private nextIndex(): number {
    this.position();
    if (this.next >= this.end) throw new RangeError(`doc ${this.docID()} has no more values`);
    return this.next++;
  }
  private position(): void {
    const doc = this.docs.docID();
    if (this.positioned === doc) return;
    this.positioned = doc;
    const index = this.docs.index();
    if (this.addresses === null) {
      this.next = index;
      this.end = index + 1;
    } else {
      this.next = this.addresses.get(index);
      this.end = this.addresses.get(index + 1);
    }
    this.count = this.end - this.next;
  }
}

/** BINARY: one byte string per doc. */
export class BinaryDocValues extends DocValuesIterator {
  private readonly buffer: Uint8Array;

  constructor(
    docs: DocIndexIterator,
    private readonly data: RandomAccessBytes,
    private readonly dataOffset: number,
    /** Fixed width, or -1 with addresses. */
    private readonly length: number,
    private readonly addresses: MonotonicValues | null,
    maxLength: number,
  ) {
    super(docs);
    this.buffer = new Uint8Array(maxLength);
  }
  /** The current doc's bytes: a view of this iterator's buffer, valid until the next call. */
  binaryValue(): Uint8Array {
    const index = this.docs.index();
    let start: number;
    let length: number;
    if (this.addresses === null) {
      start = index * this.length;
      length = this.length;
    } else {
      start = this.addresses.get(index);
      length = this.addresses.get(index + 1) - start;
      if (length < 0 || length > this.buffer.length) throw new RangeError(`${this.data.name}: value ${index} has length ${length} (max ${this.buffer.length})`);
    }
    const p = this.data.load(this.dataOffset + start, length);
    this.buffer.set(this.data.bytes.subarray(p, p + length));
    return this.buffer.subarray(0, length);
  }
}

/** SORTED: one term per doc, as its ord in the field's terms dictionary. */
export class SortedDocValues extends DocValuesIterator {
  constructor(
    docs: DocIndexIterator,
    private readonly ords: NumericValues,
    readonly termsDict: TermsDict,
  ) {
    super(docs);
  }
  ordValue(): number {
    return this.ords.getNumber(this.docs.index());
  }
  get valueCount(): number {
    return this.termsDict.valueCount;
  }
  /** The term of an ord (a view valid until the next lookup). */
  lookupOrd(ord: number): Uint8Array {
    return this.termsDict.lookupOrd(ord);
  }
  /** The ord of a term, or -1 - its insertion point. */
  lookupTerm(key: Uint8Array | string): number {
    return this.termsDict.lookupTerm(key);
  }
}

/** SORTED_SET: a doc's distinct terms as ascending ords. Read docValueCount() ords with nextOrd(). */
export class SortedSetDocValues extends DocValuesIterator {
  private readonly values: SortedNumericDocValues;

  constructor(
    docs: DocIndexIterator,
    ords: NumericValues,
    addresses: MonotonicValues | null,
    readonly termsDict: TermsDict,
  ) {
    super(docs);
    this.values = new SortedNumericDocValues(docs, ords, addresses);
  }
  docValueCount(): number {
    return this.values.docValueCount();
  }
  nextOrd(): number {
    return this.values.nextNumberValue();
  }
  get valueCount(): number {
    return this.termsDict.valueCount;
  }
  lookupOrd(ord: number): Uint8Array {
    return this.termsDict.lookupOrd(ord);
  }
  lookupTerm(key: Uint8Array | string): number {
    return this.termsDict.lookupTerm(key);
  }
}

export function toSafeNumber(v: bigint): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`${v} is beyond ±(2^53 - 1): read it with longValue() as a bigint`);
  }
  return Number(v);
}
