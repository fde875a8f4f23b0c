import { FilterQuery } from './FilterQuery.js';
import type { FilterLeaf } from './FilterLeaf.js';
import { FixedBitSet } from './FixedBitSet.js';

/** Lucene's MatchAllDocsQuery: every live doc (a copy of the live-docs words). */
export class MatchAllDocsQuery extends FilterQuery {
  get cacheKey(): string {
    return '*:*';
  }

  bitset(leaf: FilterLeaf): FixedBitSet {
    return FixedBitSet.fromLive(leaf.liveDocs, leaf.maxDoc);
  }

  toString(): string {
    return '*:*';
  }
}
