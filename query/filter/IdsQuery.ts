import { FilterQuery } from './FilterQuery.js';
import type { FilterLeaf } from './FilterLeaf.js';
import type { FixedBitSet } from './FixedBitSet.js';
import { emptyBitSet } from './LiveDocs.js';
import { termSetKey, SPELLED_OUT_TERMS } from './TermSetKey.js';

/**
 * Elasticsearch's `ids` query (a TermInSetQuery on `_id` in Lucene): the live docs whose
 * user-facing id is one of `ids`. One `docForId` lookup per id and segment, O(ids) whatever the
 * segment's size; an id deleted or absent matches nothing.
 */
export class IdsQuery extends FilterQuery {
  private key: string | null = null;

  constructor(readonly ids: readonly string[]) {
    super();
  }

  get cacheKey(): string {
    return (this.key ??= `ids(${termSetKey(this.ids)})`);
  }

  bitset(leaf: FilterLeaf): FixedBitSet {
    const set = emptyBitSet(leaf);
    const live = leaf.liveDocs;
    for (const id of this.ids) {
      const doc = leaf.docForId(id);
      if (doc < 0 || doc >= leaf.maxDoc) continue;
      if (live === null || ((live[doc >>> 5] >>> doc) & 1) !== 0) set.set(doc);
    }
    return set;
  }

  toString(): string {
    const shown = this.ids.length <= SPELLED_OUT_TERMS ? [...new Set(this.ids)].sort() : this.ids.slice(0, 16);
    return `_id:(${shown.join(' ')}${this.ids.length <= SPELLED_OUT_TERMS ? '' : ` ... (${this.ids.length} ids)`})`;
  }
}
