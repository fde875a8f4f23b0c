import { type FixedBitSet, NO_MORE_DOCS } from './FixedBitSet.js';

/**
 * Lucene's BitSetIterator: the docs of a bitset in increasing order, as a DocIdSetIterator
 * (`nextDoc`, `advance`, `docID`, and `cost`: the set's cardinality, counted once). What a
 * filtered kNN search walks for an exact search over the docs that pass.
 */
export class BitSetIterator {
  private doc = -1;
  private costValue = -1;

  constructor(readonly bitSet: FixedBitSet) {}

  docID(): number {
    return this.doc;
  }

  nextDoc(): number {
    return (this.doc = this.doc === NO_MORE_DOCS ? NO_MORE_DOCS : this.bitSet.nextSetBit(this.doc + 1));
  }

  /** The first doc >= target. */
  advance(target: number): number {
    return (this.doc = this.bitSet.nextSetBit(target));
  }

  cost(): number {
    if (this.costValue < 0) this.costValue = this.bitSet.cardinality();
    return this.costValue;
  }
}
