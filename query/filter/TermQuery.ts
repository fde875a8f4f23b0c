import { FilterQuery } from './FilterQuery.js';
import type { FilterLeaf } from './FilterLeaf.js';
import type { FixedBitSet } from './FixedBitSet.js';
import { emptyBitSet, keepLive } from './LiveDocs.js';
import { NumericBounds } from './NumericBounds.js';
import { fillNumericRange } from './NumericFill.js';
import { fillOrdRange } from './OrdFill.js';
import { fillFromPostings, ordPostings, POSTINGS_MAX_SHARE } from './OrdPostings.js';
import { asNumeric, asTerm, quote, render, valueKey, type FilterValue } from './Values.js';

/**
 * Lucene's TermQuery as a doc-values filter: the docs with `value` among the field's values.
 *
 * On a keyword column the term is looked up once per segment (`ord`); a term held by few docs
 * sets their bits from the column's postings (OrdPostings: microseconds), others take one pass
 * over `ords` comparing ints, ~1-2 ms per million docs; a term absent from the segment costs
 * the lookup only. On a numeric column it is the point range [value, value] (exact for longs
 * beyond 2^53; -0.0 and +0.0 distinct, as Elasticsearch's double term query). A string on a
 * numeric column is a caller's error (the DSL converts values by the field's mapping first).
 */
export class TermQuery extends FilterQuery {
  private bounds: NumericBounds | null = null;

  constructor(
    readonly field: string,
    readonly value: FilterValue,
  ) {
    super();
    if (typeof value === 'number' && Number.isNaN(value)) throw new RangeError(`TermQuery on [${field}]: NaN is not a value`);
  }

  get cacheKey(): string {
    return `term(${quote(this.field)},${valueKey(this.value)})`;
  }

  bitset(leaf: FilterLeaf): FixedBitSet {
    const set = emptyBitSet(leaf);
    const column = leaf.column(this.field);
    if (column === null) return set;
    if (column.kind === 'keyword') {
      const ord = column.ord(asTerm(this.value));
      if (ord < 0) return set;
      const postings = ordPostings(column, leaf.maxDoc);
      if (postings !== null && (postings.starts[ord + 1]! - postings.starts[ord]!) * POSTINGS_MAX_SHARE < leaf.maxDoc) fillFromPostings(postings, ord, ord, set.bits);
      else fillOrdRange(column, ord, ord, set.bits, leaf.maxDoc);
    } else {
      const v = asNumeric(this.value);
      if (v === null) throw new TypeError(`TermQuery on numeric field [${this.field}] needs a number, got the string ${JSON.stringify(this.value)}`);
      this.bounds ??= NumericBounds.point(v);
      fillNumericRange(column, this.bounds, set.bits, leaf.maxDoc);
    }
    return keepLive(set, leaf);
  }

  toString(): string {
    return `${this.field}:${render(this.value)}`;
  }
}
