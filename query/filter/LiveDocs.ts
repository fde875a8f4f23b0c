import { andWords, FixedBitSet } from './FixedBitSet.js';
import type { FilterLeaf } from './FilterLeaf.js';

/** A zeroed bitset of a leaf's docs: what a filter fills. */
export function emptyBitSet(leaf: FilterLeaf): FixedBitSet {
  return new FixedBitSet(leaf.maxDoc);
}

/** Drops deleted docs (and any bit past maxDoc): the last step of every leaf filter. */
export function keepLive(set: FixedBitSet, leaf: FilterLeaf): FixedBitSet {
  if (leaf.liveDocs !== null) andWords(set.bits, leaf.liveDocs);
  set.clearGhostBits();
  return set;
}
