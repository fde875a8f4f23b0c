/**
 * What the graph search tells the I/O layer before it reads (the prefetch hook of
 * OffHeapGraphSearcher). The searcher decides only what will be read and in which order; whether
 * and how far ahead to read (policy, distance, the process's I/O budget) is the implementer's.
 *
 * Per expanded candidate the order of calls is: hop(ords, n) with the unvisited neighbours about
 * to be scored, then optionally spare() and lookahead() for the next candidates' neighbours, then
 * next(i) right before ords[i] is scored, for i = 0..n-1; candidate(...) whenever a scored node
 * joins the candidate queue and wantsAdjacency(ord) says so (its neighbour list may be read by a
 * later hop).
 */
export interface NeighborPrefetch {
  /** The vectors of ords[0..n) will be scored next, in this order (one hop's unvisited neighbours). */
  hop(ords: Int32Array, n: number): void;
  /** ords[i] of the current hop is scored next: keep the reads the distance ahead of scoring. */
  next(i: number): void;
  /** Reads the budget allows beyond the current hop's; 0 skips the lookahead (nothing is decoded for it). */
  spare(): number;
  /** Vectors that may be scored soon (the next candidates' unvisited neighbours): issue up to spare() reads. */
  lookahead(ords: Int32Array, n: number): void;
  /** Whether to prefetch the neighbour list of `ord`, which just joined the candidate queue (then candidate() follows). */
  wantsAdjacency(ord: number): boolean;
  /** The new candidate's neighbour list lies at [offset, offset + length) of `.vex`. */
  candidate(offset: number, length: number): void;
  /** The search ended: ords read ahead but never scored are counted as wasted. */
  finish(): void;
}
