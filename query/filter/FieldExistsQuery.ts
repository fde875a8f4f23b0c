import { FilterQuery } from './FilterQuery.js';
import type { FilterLeaf } from './FilterLeaf.js';
import { FixedBitSet } from './FixedBitSet.js';
import { emptyBitSet, keepLive } from './LiveDocs.js';
import { andPresent } from './NumericFill.js';
import { fillHasOrd, fillHasValues } from './OrdFill.js';
import { quote } from './Values.js';

/**
 * Lucene's FieldExistsQuery (Elasticsearch's `exists`): the docs with at least one value of the
 * field in its doc values. Reads only the column's shape: the `present` bitset of a
 * single-valued numeric column (a word copy), the signs of a single-valued keyword column's ords,
 * or a multi-valued column's offsets; ~0.1-1 ms per million docs.
 */
export class FieldExistsQuery extends FilterQuery {
  constructor(readonly field: string) {
    super();
  }

  get cacheKey(): string {
    return `exists(${quote(this.field)})`;
  }

  bitset(leaf: FilterLeaf): FixedBitSet {
    const column = leaf.column(this.field);
    if (column === null) return emptyBitSet(leaf);
    let set: FixedBitSet;
    if (column.offsets !== null) {
      set = emptyBitSet(leaf);
      fillHasValues(column.offsets, set.bits, leaf.maxDoc);
    } else if (column.kind === 'keyword') {
      set = emptyBitSet(leaf);
      fillHasOrd(column.ords, set.bits, leaf.maxDoc);
    } else {
      set = FixedBitSet.fromLive(leaf.liveDocs, leaf.maxDoc);
      if (column.present !== null) andPresent(set.bits, column.present);
    }
    return keepLive(set, leaf);
  }

  toString(): string {
    return `FieldExistsQuery [field=${this.field}]`;
  }
}
