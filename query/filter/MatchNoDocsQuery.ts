import { FilterQuery } from './FilterQuery.js';
import type { FilterLeaf } from './FilterLeaf.js';
import { FixedBitSet } from './FixedBitSet.js';

/** Lucene's MatchNoDocsQuery: no doc. `reason` says why (shown by toString, not part of the key). */
export class MatchNoDocsQuery extends FilterQuery {
  constructor(readonly reason = '') {
    super();
  }

  get cacheKey(): string {
    return 'none';
  }

  bitset(leaf: FilterLeaf): FixedBitSet {
    return new FixedBitSet(leaf.maxDoc);
  }

  toString(): string {
    return `MatchNoDocsQuery(${JSON.stringify(this.reason)})`;
  }
}
