import { FilterQuery } from './FilterQuery.js';
import type { FilterLeaf, KeywordColumn } from './FilterLeaf.js';
import type { FixedBitSet } from './FixedBitSet.js';
import { emptyBitSet, keepLive } from './LiveDocs.js';
import { fillNumericRange } from './NumericFill.js';
import { NumericBounds } from './NumericBounds.js';
import { NumericSet } from './NumericSet.js';
import { fillOrdRange, fillOrdTable } from './OrdFill.js';
import { fillFromPostings, fillFromPostingsTable, ordPostings, POSTINGS_MAX_SHARE, postingsCount } from './OrdPostings.js';
import { SPELLED_OUT_TERMS, termSetKey } from './TermSetKey.js';
import { asNumeric, asTerm, quote, render, type FilterValue, type NumericValue } from './Values.js';

/**
 * Lucene's TermInSetQuery (Elasticsearch's `terms`): the docs with any of `values` among the
 * field's values. No cap on the number of values (Elasticsearch stops at 65,536).
 *
 * Keyword column, per segment: each term is looked up once (`ord`; when the set has
 * more terms than the segment, the segment's terms are walked against the set instead), the
 * matching ords marked in a byte table indexed by ord, and the column's ords tested through it:
 * one load per value whatever the set's size (~2 ms per million docs, plus the lookups, which
 * dominate for large sets). When the matching docs are under a quarter of the segment's, their
 * bits are set from the column's postings instead (OrdPostings). Matching ords that are consecutive (one term, say) take the range
 * loop instead. Numeric column (NumericSet): compact integer sets through a byte table (~5-10 ms
 * per million docs), others through a hash over the doubles' bits (~25-35 ms).
 *
 * An empty set matches nothing. The cache key does not depend on the values' order or
 * repetitions (TermSetKey).
 */
export class TermInSetQuery extends FilterQuery {
  readonly values: readonly FilterValue[];
  private key: string | null = null;
  private terms: string[] | null = null;
  private termSet: Set<string> | null = null;
  private numbers: NumericSet | null = null;
  private point: NumericBounds | null = null;

  constructor(
    readonly field: string,
    values: readonly FilterValue[],
  ) {
    super();
    for (const v of values) if (typeof v === 'number' && Number.isNaN(v)) throw new RangeError(`TermInSetQuery on [${field}]: NaN is not a value`);
    this.values = values;
  }

  get cacheKey(): string {
    return (this.key ??= `terms(${quote(this.field)},${termSetKey(this.values)})`);
  }

  bitset(leaf: FilterLeaf): FixedBitSet {
    const set = emptyBitSet(leaf);
    const column = leaf.column(this.field);
    if (column === null || this.values.length === 0) return set;
    if (column.kind === 'keyword') {
      if (!this.fillKeyword(column, set.bits, leaf.maxDoc)) return set;
    } else {
      const numbers = this.numericSet();
      if (this.values.length === 1) {
        // One value: the term query's loop (a compare per value, no hashing).
        this.point ??= NumericBounds.point(asNumeric(this.values[0])!);
        fillNumericRange(column, this.point, set.bits, leaf.maxDoc);
      } else numbers.fill(column, set.bits, leaf.maxDoc);
    }
    return keepLive(set, leaf);
  }

  toString(): string {
    const shown = this.values.length <= SPELLED_OUT_TERMS ? [...new Set(this.values.map(render))].sort() : this.values.slice(0, 16).map(render);
    const more = this.values.length <= SPELLED_OUT_TERMS ? '' : ` ... (${this.values.length} values)`;
    return `${this.field}:(${shown.join(' ')}${more})`;
  }

  /** Marks the segment's matching ords and fills; false when none matches. */
  private fillKeyword(column: KeywordColumn, out: Uint32Array, maxDoc: number): boolean {
    const table = new Uint8Array(column.termCount + 1);
    let min = Infinity,
      max = -1,
      count = 0;
    const mark = (ord: number) => {
      if (ord < 0 || table[ord + 1] === 1) return;
      table[ord + 1] = 1;
      count++;
      if (ord < min) min = ord;
      if (ord > max) max = ord;
    };
    const terms = (this.terms ??= this.values.map(asTerm));
    if (terms.length > column.termCount) {
      const wanted = (this.termSet ??= new Set(terms));
      for (let ord = 0; ord < column.termCount; ord++) if (wanted.has(column.term(ord))) mark(ord);
    } else {
      for (const t of terms) mark(column.ord(t));
    }
    if (count === 0) return false;
    const contiguous = max - min + 1 === count;
    const postings = ordPostings(column, maxDoc);
    if (postings !== null && postingsCount(postings, table, column.termCount) * POSTINGS_MAX_SHARE < maxDoc) {
      if (contiguous) fillFromPostings(postings, min, max, out);
      else fillFromPostingsTable(postings, table, column.termCount, out);
    } else if (contiguous) fillOrdRange(column, min, max, out, maxDoc);
    else fillOrdTable(column, table, out, maxDoc);
    return true;
  }

  private numericSet(): NumericSet {
    if (this.numbers === null) {
      const numbers: NumericValue[] = [];
      for (const v of this.values) {
        const n = asNumeric(v);
        if (n === null) throw new TypeError(`TermInSetQuery on numeric field [${this.field}] needs numbers, got the string ${JSON.stringify(v)}`);
        numbers.push(n);
      }
      this.numbers = new NumericSet(numbers);
    }
    return this.numbers;
  }
}
