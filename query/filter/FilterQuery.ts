import type { FilterLeaf } from './FilterLeaf.js';
import type { FixedBitSet } from './FixedBitSet.js';

/**
 * Where a compound filter (BooleanQuery) gets its clauses' bitsets: straight from the clause
 * (`UNCACHED`) or through a FilterCache. Either way the bitset handed back may be shared: the
 * compound filter reads it and never changes it.
 */
export interface ClauseBitSets {
  bitset(clause: FilterQuery, leaf: FilterLeaf): FixedBitSet;
}

/** Every clause evaluated afresh. */
export const UNCACHED: ClauseBitSets = {
  bitset: (clause, leaf) => clause.bitset(leaf),
};

/**
 * A filter in Lucene's terms: a query that does not score, evaluated once per segment into the
 * bitset of the live docs it matches. Filters read the segment's doc-values columns
 * (FilterLeaf) a 32-doc word at a time; see README.md beside this file for each filter's
 * semantics and cost.
 *
 * `cacheKey` is canonical: two filters that match the same docs by construction (the same
 * clauses in another order, the same terms in another order) have the same key, and two that
 * may match different docs never do. The FilterCache keys bitsets by it (with the segment's key).
 */
export abstract class FilterQuery {
  abstract get cacheKey(): string;

  /**
   * The live docs of `leaf` this filter matches. The result may be shared (a cached bitset, or a
   * clause's own bitset handed through): treat it as read-only.
   */
  abstract bitset(leaf: FilterLeaf, clauses?: ClauseBitSets): FixedBitSet;

  /**
   * Filters that can test docs one at a time say so (`refines`) and implement refine(): clear
   * from `set` (live docs, owned by the caller) the docs this filter does not match, reading only
   * the set bits. A conjunction whose other clauses left few docs refines them by this clause
   * instead of building its bitset (BooleanQuery): Lucene's leap-frog, on bitsets.
   */
  get refines(): boolean {
    return false;
  }

  /** Clears from `set` the docs this filter does not match; only filters whose `refines` is true implement it. */
  refine(_leaf: FilterLeaf, _set: FixedBitSet): void {
    throw new Error(`${this.constructor.name} cannot refine a bitset`);
  }

  /** Lucene's rendering (`field:value`, `field:[a TO b}`, `+a -b`). */
  abstract toString(): string;

  /** An equivalent query that is simpler to evaluate, or this (Lucene's rewrite; the FilterCache keys the rewritten query). */
  rewrite(): FilterQuery {
    return this;
  }

  /** The filters this one combines (empty for a leaf filter). */
  clauses(): readonly FilterQuery[] {
    return [];
  }

  /** Whether `other` matches the same docs by construction (the same canonical cacheKey). */
  equals(other: FilterQuery): boolean {
    return this === other || this.cacheKey === other.cacheKey;
  }
}
