import type { KeywordColumn } from './FilterLeaf.js';

/**
 * A keyword column inverted: for each ord, the docs that hold it, ascending (Lucene's postings,
 * built from doc values). `docs[starts[o] .. starts[o + 1])` are ord o's docs.
 *
 * A term or terms filter whose docs are few sets their bits from here instead of passing over
 * every doc's ord: a term on 1 of 1,024 clusters (1,000 of 1M docs) goes from a 1-1.5 ms pass to
 * a few microseconds, a terms set over 10% of the docs to ~0.2 ms. Built on first use, per
 * column, by a counting sort (two passes over the ords, ~3-5 ms per 1M values, once per open
 * segment); it holds 4 bytes per value and per term, and goes with the column.
 */
export interface OrdPostings {
  readonly starts: Int32Array;
  readonly docs: Int32Array;
}

/**
 * Single-valued columns with fewer terms than this are not inverted: each term holds a large
 * share of the docs, and their pass is cheap (~1-1.5 ns a doc). Multi-valued columns always are:
 * their pass counts values per doc (~4.5 ns a doc: a term on 1 of 5 tags took 4.5-5 ms per 1M
 * docs, from postings 0.3 ms).
 */
export const MIN_TERMS_FOR_POSTINGS = 16;

/**
 * Docs matching at most 1 in this many of the segment's docs are set from postings; more are
 * cheaper as the pass (a set bit from postings costs ~2-3 ns, a doc of the pass ~1-1.5 ns).
 */
export const POSTINGS_MAX_SHARE = 4;

const built = new WeakMap<KeywordColumn, OrdPostings>();

/** The column's postings (built on first call), or null when a single-valued column has too few terms to be worth inverting. */
export function ordPostings(column: KeywordColumn, maxDoc: number): OrdPostings | null {
  if (column.offsets === null && column.termCount < MIN_TERMS_FOR_POSTINGS) return null;
  let p = built.get(column);
  if (p === undefined) {
    p = invert(column, maxDoc);
    built.set(column, p);
  }
  return p;
}

function invert(column: KeywordColumn, maxDoc: number): OrdPostings {
  const { ords, offsets } = column;
  const starts = new Int32Array(column.termCount + 1);
  if (offsets === null) {
    for (let d = 0; d < maxDoc; d++) starts[ords[d]! + 1]!++; // ord -1 (no value) lands in starts[0], reset below
    starts[0] = 0;
  } else {
    for (let j = offsets[0]!, end = offsets[maxDoc]!; j < end; j++) starts[ords[j]! + 1]!++;
  }
  for (let o = 0; o < column.termCount; o++) starts[o + 1]! += starts[o]!;
  const docs = new Int32Array(starts[column.termCount]!);
  const next = starts.slice(0, column.termCount);
  if (offsets === null) {
    for (let d = 0; d < maxDoc; d++) {
      const o = ords[d]!;
      if (o >= 0) docs[next[o]!++] = d;
    }
  } else {
    for (let d = 0; d < maxDoc; d++) for (let j = offsets[d]!, end = offsets[d + 1]!; j < end; j++) docs[next[ords[j]!]!++] = d;
  }
  return { starts, docs };
}

/** How many (doc, ord) pairs the ords marked in `table` (indexed by ord + 1) have. */
export function postingsCount(p: OrdPostings, table: Uint8Array, termCount: number): number {
  let n = 0;
  for (let o = 0; o < termCount; o++) if (table[o + 1] === 1) n += p.starts[o + 1]! - p.starts[o]!;
  return n;
}

/** Sets in `out` the bit of every doc of ords [lo, hi]. */
export function fillFromPostings(p: OrdPostings, lo: number, hi: number, out: Uint32Array): void {
  const { docs } = p;
  for (let k = p.starts[lo]!, end = p.starts[hi + 1]!; k < end; k++) {
    const d = docs[k]!;
    out[d >>> 5]! |= 1 << (d & 31);
  }
}

/** Sets in `out` the bit of every doc of each ord marked in `table` (indexed by ord + 1). */
export function fillFromPostingsTable(p: OrdPostings, table: Uint8Array, termCount: number, out: Uint32Array): void {
  for (let o = 0; o < termCount; o++) if (table[o + 1] === 1) fillFromPostings(p, o, o, out);
}
