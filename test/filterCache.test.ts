import { describe, expect, it } from 'vitest';
import {
  BooleanQuery,
  cacheLeafClauses,
  FieldExistsQuery,
  FilterCache,
  type FixedBitSet,
  SortedNumericDocValuesRangeQuery,
  TermInSetQuery,
  TermQuery,
  type FilterLeaf,
  type FilterQuery,
} from '../query/filter/index.js';
import { pick, randomSegments, rng, toLeaf, TERMS, type FieldSpec } from './support/filterLeaves.js';

const FIELDS: readonly FieldSpec[] = [
  { name: 'tag', type: 'keyword', multi: false },
  { name: 'tags', type: 'keyword', multi: true },
  { name: 'x', type: 'double', multi: false },
];

function leaves(seed: number, count = 3, maxDocs = 300): FilterLeaf[] {
  const r = rng(seed);
  return randomSegments(r, FIELDS, count, maxDocs).map((s) => toLeaf(s, FIELDS, r));
}

/** A leaf with the same docs under another key (another open segment). */
function rekeyed(leaf: FilterLeaf, key: string): FilterLeaf {
  return { key, maxDoc: leaf.maxDoc, liveDocs: leaf.liveDocs, column: (f) => leaf.column(f), docForId: (id) => leaf.docForId(id) };
}

describe('FilterCache', () => {
  const [leaf] = leaves(1, 1, 2000);
  const term = new TermQuery('tag', 'a');

  it('the same filter twice is a hit returning the same bitset', () => {
    const cache = new FilterCache();
    const first = cache.bitset(term, leaf);
    const second = cache.bitset(new TermQuery('tag', 'a'), leaf);
    expect(second).toBe(first);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
    expect(first.equals(term.bitset(leaf))).toBe(true);
  });

  it('an equal filter spelled differently hits too (terms order and repeats)', () => {
    const cache = new FilterCache();
    const a = cache.bitset(new TermInSetQuery('tag', ['b', 'a', 'ab']), leaf);
    expect(cache.bitset(new TermInSetQuery('tag', ['ab', 'a', 'b', 'a']), leaf)).toBe(a);
    const big = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
    const b = cache.bitset(new TermInSetQuery('tags', big), leaf);
    expect(cache.bitset(new TermInSetQuery('tags', [...big].reverse().concat(big.slice(0, 10))), leaf)).toBe(b);
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 2 });
  });

  it('different leaves do not share entries', () => {
    const cache = new FilterCache();
    const other = rekeyed(leaf, 'another-segment');
    const a = cache.bitset(term, leaf);
    const b = cache.bitset(term, other);
    expect(b).not.toBe(a);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 2, entries: 2 });
    expect(cache.bitset(term, other)).toBe(b);
    cache.evictLeaf('another-segment');
    expect(cache.stats().entries).toBe(1);
    expect(cache.bitset(term, leaf)).toBe(a);
  });

  it('the budget evicts the least recently used', () => {
    const a = new TermQuery('tag', 'a'),
      b = new TermQuery('tag', 'b'),
      c = new TermQuery('tag', 'B');
    const probe = new FilterCache();
    probe.bitset(a, leaf);
    const one = probe.stats().bytes;
    const cache = new FilterCache({ maxBytes: 2 * one + one / 2 });
    const bitsA = cache.bitset(a, leaf);
    const bitsB = cache.bitset(b, leaf);
    expect(cache.bitset(a, leaf)).toBe(bitsA); // a is now the most recent
    cache.bitset(c, leaf); // evicts b
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 1 });
    expect(cache.bitset(a, leaf)).toBe(bitsA);
    expect(cache.bitset(b, leaf)).not.toBe(bitsB);
    expect(cache.stats().bytes).toBeLessThanOrEqual(cache.maxBytes);
  });

  it('stores nothing larger than its budget', () => {
    const cache = new FilterCache({ maxBytes: 16 });
    cache.bitset(term, leaf);
    cache.bitset(term, leaf);
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, misses: 2 });
  });

  it('on its first use caches the clauses of a bool, not the bool; composing never changes a cached clause', () => {
    const cache = new FilterCache();
    const range = new SortedNumericDocValuesRangeQuery('x', 0, 3);
    const cachedTerm = cache.bitset(term, leaf).clone();
    const bool = new BooleanQuery({ filter: [term, range], mustNot: [new FieldExistsQuery('tags')] });
    const result = cache.bitset(bool, leaf);
    expect(result.equals(bool.bitset(leaf))).toBe(true);
    expect(cache.bitset(term, leaf).equals(cachedTerm)).toBe(true);
    expect(cache.stats()).toMatchObject({ entries: 3, misses: 4, hits: 2 }); // the bool was looked up and missed
    // Another bool sharing the range clause hits it.
    cache.bitset(new BooleanQuery({ should: [range, new TermQuery('tag', 'b')] }), leaf);
    expect(cache.stats()).toMatchObject({ hits: 3, misses: 6 });
  });

  it('stores a bool on its second use on a segment, then hits it without composing', () => {
    const cache = new FilterCache();
    const bool = () => new BooleanQuery({ filter: [new SortedNumericDocValuesRangeQuery('x', 0, 3), term] });
    const first = cache.bitset(bool(), leaf);
    expect(cache.stats().entries).toBe(2); // the two clauses
    const second = cache.bitset(bool(), leaf);
    expect(cache.stats().entries).toBe(3); // and now the bool
    expect(second.equals(first)).toBe(true);
    const hitsBefore = cache.stats().hits;
    const third = cache.bitset(bool(), leaf);
    expect(third).toBe(second); // the stored bitset itself
    expect(cache.stats().hits).toBe(hitsBefore + 1); // one hit: the clauses were not asked for
    // Its uses count per segment: on another leaf the bool is a first use again.
    cache.bitset(bool(), rekeyed(leaf, `${leaf.key}-other`));
    expect(cache.stats().entries).toBe(5);
  });

  it('a policy sees the uses: never storing bools keeps only the clauses', () => {
    const cache = new FilterCache({ policy: cacheLeafClauses });
    const bool = new BooleanQuery({ filter: [new SortedNumericDocValuesRangeQuery('x', 0, 3), term] });
    for (let i = 0; i < 3; i++) cache.bitset(bool, leaf);
    expect(cache.stats().entries).toBe(2);
    const seen: number[] = [];
    const counting = new FilterCache({ policy: (q, uses) => (q instanceof BooleanQuery && seen.push(uses), false) });
    for (let i = 0; i < 3; i++) counting.bitset(bool, leaf);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('a bool that rewrites to one clause is that clause in the cache', () => {
    const cache = new FilterCache();
    const bits = cache.bitset(new BooleanQuery({ filter: [term] }), leaf);
    expect(cache.bitset(term, leaf)).toBe(bits);
  });

  it('random filter trees: cached results equal uncached ones, under evictions', () => {
    const ls = leaves(77, 4, 400);
    const r = rng(5);
    const cache = new FilterCache({ maxBytes: 6 * 1024 });
    const leaf = (): FilterQuery => {
      const u = r();
      if (u < 0.4) return new TermQuery(pick(r, ['tag', 'tags']), pick(r, TERMS));
      if (u < 0.6) return new TermInSetQuery('tags', [pick(r, TERMS), pick(r, TERMS)]);
      if (u < 0.9) return new SortedNumericDocValuesRangeQuery('x', pick(r, [null, -1, 0, 1.5]), pick(r, [null, 0, 2.5, 1e300]), r() < 0.5, r() < 0.5);
      return new FieldExistsQuery(pick(r, ['tag', 'x']));
    };
    const tree = (depth: number): FilterQuery => {
      if (depth === 0 || r() < 0.3) return leaf();
      const list = () => Array.from({ length: pick(r, [0, 1, 2]) }, () => tree(depth - 1));
      return new BooleanQuery({ filter: list(), should: list(), mustNot: list(), minimumShouldMatch: pick(r, [0, 0, 1, 2]) });
    };
    for (let i = 0; i < 1500; i++) {
      const q = tree(3);
      const l = pick(r, ls);
      const snapshot = (b: FixedBitSet) => [...b];
      expect(snapshot(cache.bitset(q, l)), String(q)).toEqual(snapshot(q.bitset(l)));
    }
    const s = cache.stats();
    expect(s.hits).toBeGreaterThan(0);
    expect(s.evictions).toBeGreaterThan(0);
    expect(s.bytes).toBeLessThanOrEqual(s.maxBytes);
  });
});
