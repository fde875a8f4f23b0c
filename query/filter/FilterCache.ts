import { BooleanQuery } from './BooleanQuery.js';
import type { ClauseBitSets, FilterQuery } from './FilterQuery.js';
import type { FilterLeaf } from './FilterLeaf.js';
import type { FixedBitSet } from './FixedBitSet.js';
import { IdsQuery } from './IdsQuery.js';
import { MatchAllDocsQuery } from './MatchAllDocsQuery.js';
import { MatchNoDocsQuery } from './MatchNoDocsQuery.js';

/** 64 MiB: ~500 bitsets of a 1M-doc segment (125 KB each). */
export const DEFAULT_FILTER_CACHE_BYTES = 64 * 1024 * 1024;

export interface FilterCacheOptions {
  /** Bytes of bitsets held at most (default 64 MiB); least recently used entries go first. */
  readonly maxBytes?: number;
  /**
   * Whether a (rewritten) filter's bitset is stored, given how often it was asked for on this
   * segment among the recent requests (`uses`, this one included); default `usageTrackingPolicy`.
   */
  readonly policy?: (query: FilterQuery, uses: number) => boolean;
}

export interface FilterCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly entries: number;
  readonly bytes: number;
  readonly maxBytes: number;
}

/**
 * The leaf clauses (term, terms, ranges, exists) are stored on first use; `ids`, match-all and
 * match-none never (cheaper to build than to look up).
 *
 * A leaf clause costs a pass over a column (~1-2 ms per million docs, a 100k-term set also its
 * lookups), and is what filters share: the same ACL `terms` or tenant `term` combined with a
 * different range each time still hits.
 */
export function cacheLeafClauses(query: FilterQuery): boolean {
  return !(query instanceof BooleanQuery || cheaperToBuild(query));
}

/** Filters no policy stores: building them costs less than a lookup. */
function cheaperToBuild(query: FilterQuery): boolean {
  return query instanceof IdsQuery || query instanceof MatchAllDocsQuery || query instanceof MatchNoDocsQuery;
}

/** Uses of a bool, on one segment among the recent requests, before its own bitset is stored. */
export const BOOLEAN_MIN_USES = 2;

/**
 * The default policy: leaf clauses on first use (`cacheLeafClauses`), a bool once it is reused
 * (its second use on a segment among the last HISTORY_SIZE requests), as Lucene's usage-tracking
 * policy admits compounds by frequency. A bool over cached clauses still costs its composition
 * (0.03-0.05 ms per clause per 1M docs), and a sparse conjunction's range refinement or a
 * bit-sliced `minimum_should_match` more (measured 0.2-2 ms per 1M docs by bench:filter): a
 * reused bool hits instead. A bool used once is not stored, so one-off filters do not crowd out
 * the shared clauses.
 */
export function usageTrackingPolicy(query: FilterQuery, uses: number): boolean {
  return query instanceof BooleanQuery ? uses >= BOOLEAN_MIN_USES : cacheLeafClauses(query);
}

/** Requests (segment, filter) remembered for usage counts, as Lucene's policy keeps its last 256 filters. */
const HISTORY_SIZE = 1024;

interface Entry {
  readonly leafKey: string;
  readonly bitset: FixedBitSet;
  readonly bytes: number;
}

/**
 * Bitsets of filters per segment (Lucene's LRUQueryCache), keyed by the segment's `key` and the
 * filter's canonical `cacheKey`, within a byte budget, least recently used out first. A hit
 * returns the stored bitset itself (no copy, no build): callers must not change it. A compound
 * filter evaluated through the cache (`bitset(bool, leaf)`) gets each clause through it too, so
 * its clauses are shared with every other filter that uses them.
 *
 * Cached bitsets have the segment's live docs applied (so a hit costs nothing), which makes the
 * leaf's `key` an identity of its live docs too: a segment that gains deletions must come with a
 * new key (its name plus its deletes generation, say), or `evictLeaf` its old one, else hits
 * would return deleted docs. (Lucene keys its cache by the segment core and applies live docs
 * at search time instead.)
 *
 * One cache per thread that evaluates filters (bitsets are plain heap objects). A segment's
 * entries stay until evicted or `evictLeaf` (call it when the segment closes, so its bitsets do
 * not hold memory until pushed out).
 */
export class FilterCache implements ClauseBitSets {
  readonly maxBytes: number;
  private readonly policy: (query: FilterQuery, uses: number) => boolean;
  private readonly entries = new Map<string, Entry>();
  /** Uses per entry key among the last HISTORY_SIZE requests that missed (insertion order = age). */
  private readonly uses = new Map<string, number>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(options: FilterCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_FILTER_CACHE_BYTES;
    if (!(this.maxBytes >= 0)) throw new RangeError(`maxBytes must be >= 0, got ${this.maxBytes}`);
    this.policy = options.policy ?? usageTrackingPolicy;
  }

  /** The bitset of `query` on `leaf`: stored, or built (its clauses through this cache) and stored when the policy says so. */
  bitset(query: FilterQuery, leaf: FilterLeaf): FixedBitSet {
    const q = query.rewrite();
    if (cheaperToBuild(q)) return q.bitset(leaf, this);
    const key = entryKey(leaf.key, q.cacheKey);
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.hits++;
      // Map iteration order is insertion order: re-inserting makes this the most recently used.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.bitset;
    }
    this.misses++;
    const bitset = q.bitset(leaf, this);
    if (this.policy(q, this.recordUse(key))) {
      this.uses.delete(key);
      this.put(key, leaf.key, bitset);
    }
    return bitset;
  }

  /** Counts a use of `key` in the bounded history; returns its uses there, this one included. */
  private recordUse(key: string): number {
    const n = (this.uses.get(key) ?? 0) + 1;
    this.uses.delete(key);
    this.uses.set(key, n);
    if (this.uses.size > HISTORY_SIZE) this.uses.delete(this.uses.keys().next().value as string);
    return n;
  }

  /** Drops every entry of a segment (it closed). */
  evictLeaf(leafKey: string): void {
    for (const [key, e] of this.entries) if (e.leafKey === leafKey) this.remove(key, e);
  }

  clear(): void {
    this.entries.clear();
    this.uses.clear();
    this.bytes = 0;
  }

  stats(): FilterCacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, entries: this.entries.size, bytes: this.bytes, maxBytes: this.maxBytes };
  }

  private put(key: string, leafKey: string, bitset: FixedBitSet): void {
    const bytes = bitset.ramBytesUsed() + 2 * key.length;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old !== undefined) this.remove(key, old);
    this.entries.set(key, { leafKey, bitset, bytes });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(k, e);
      this.evictions++;
    }
  }

  private remove(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }
}

function entryKey(leafKey: string, cacheKey: string): string {
  return `${leafKey.length}:${leafKey}|${cacheKey}`;
}
