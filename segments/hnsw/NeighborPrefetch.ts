/**
 * What the graph search tells the I/O layer before it reads (HnswGraphSearcher's prefetch hook).
 * The searcher decides only what will be read and in which order; whether and how far ahead to
 * read (policy, distance, the process's I/O budget) is the implementer's.
 *
 * Per expanded node the order of calls is: hop(ords, n) with the unvisited neighbours about to be
 * scored, then (level 0, with a lookahead) spare() and lookahead() for the next candidates'
 * neighbours; then, whenever scoring reaches the entry `ready` that hop() or the last next()
 * returned, next(i) right before ords[i] is scored. A hook that has nothing to pace returns n from
 * hop() and the hop is scored in one bulkScore call: a resident graph pays one call per hop.
 * candidate(ord) follows whenever a scored node joins the candidate queue (its neighbour list may
 * be read by a later hop); finish() ends the search.
 */
export interface NeighborPrefetch {
  /**
   * The vectors of ords[0..n) will be scored next, in this order (one hop's unvisited neighbours).
   * Returns how many of them may be scored before the next call to next().
   */
  hop(ords: Int32Array, n: number): number;
  /** ords[i] of the current hop is scored next: keep the reads ahead of scoring. Returns the new `ready` (> i). */
  next(i: number): number;
  /** Reads the budget allows beyond the current hop's; 0 skips the lookahead (nothing is decoded for it). */
  spare(): number;
  /** Vectors that may be scored soon (the next candidates' unvisited neighbours): issue up to spare() reads. */
  lookahead(ords: Int32Array, n: number): void;
  /** `ord` just joined the candidate queue (its neighbour list may be read by a later hop). */
  candidate(ord: number): void;
  /** The search ended: ords read ahead but never scored are counted as wasted. */
  finish(): void;
}

/** No prefetch: every hop is scored at once (one bulkScore), reads fault or block when scored. */
export const NO_PREFETCH: NeighborPrefetch = {
  hop: (_ords, n) => n,
  next: (i) => i + 1,
  spare: () => 0,
  lookahead: () => {},
  candidate: () => {},
  finish: () => {},
};
