/**
 * The calling thread as a search shares it. The thread that calls `search` is also an event loop
 * (an HTTP server's: it accepts connections, reads bodies, admits requests, answers `/health`), so
 * search work placed on it (the first phase's segments, a warm or short rescoring ring; see
 * KnnThread and RescoreThread) runs in turns: before its first piece of work and then whenever
 * it has held the thread for TURN_BUDGET_MS, it lets the event loop run what is pending. The
 * adaptive placements measure (trials) and run cold rings there only while the thread is `free`,
 * and put no work there at all while it has no time to `spare` (a server that is shedding).
 *
 * Why: with the first phase and rescoring on the calling thread and no turns, a search ran to
 * its end inside the callback that read its request, and the next requests stayed in the kernel,
 * unread and uncounted: 128 clients against `--max-inflight 2 --max-queue 2` (20k x 128, k=100,
 * oversample 10) got not one 429 in 8 s, accepted searches waited p50 628 ms, `GET /health`
 * took 1.5-2.1 s.
 */
export interface CallerThread {
  /** Whether nothing else waits for this thread now (a server: no other request holds a place). */
  free(): boolean;
  /**
   * Whether the thread has time to spare for search work even while others wait (a server: it
   * has not shed a request lately). When it has none, every search goes to the executor.
   */
  spare(): boolean;
  /** Resolves after the event loop has run the I/O callbacks pending now. */
  turn(): Promise<void>;
}

/**
 * `setImmediate` runs in the loop's check phase, right after the poll phase has run every I/O
 * callback that was ready: one turn lets every readable socket be read, not only one.
 */
function nextTurn(): Promise<void> {
  waitingTurns++;
  return new Promise((resolve) =>
    setImmediate(() => {
      waitingTurns--;
      resolve();
    }),
  );
}

/** Searches that asked for a turn of the calling thread and have not had it yet. */
let waitingTurns = 0;

/**
 * How long other work on the calling thread (a `_bulk` between its items) steps aside at most
 * while searches wait for their turns, in milliseconds: writes still move while searches come
 * back to back.
 */
export const MAX_STEP_ASIDE_MS = 20;

/**
 * For work that shares the calling thread with searches but is not one (a `_bulk` between its
 * items): one turn of the event loop, then more turns while a search waits for one, for up to
 * MAX_STEP_ASIDE_MS. Without it a search on the calling thread, which turns every
 * TURN_BUDGET_MS, waited behind a slice of every `_bulk` running at each of its turns: while
 * 40k x 768 docs went in through `_bulk`, a search took p50 48 ms against 11 ms idle.
 */
export async function stepAsideForSearches(): Promise<void> {
  const start = performance.now();
  do await new Promise((resolve) => setImmediate(resolve));
  while (waitingTurns > 0 && performance.now() - start < MAX_STEP_ASIDE_MS);
}

/** A calling thread with nothing else to do but its own event loop's I/O: always free, turns by setImmediate. */
export const EVENT_LOOP: CallerThread = { free: () => true, spare: () => true, turn: nextTurn };

/**
 * The longest stretch of search work on the calling thread between two turns, in milliseconds,
 * checked between segments (a segment's search is one call and cannot be split). A turn on an
 * idle loop costs a few microseconds (one epoll_wait with a zero timeout and a promise), so a
 * turn per millisecond of work adds well under 1% to a search; what it buys is that a request
 * arriving meanwhile waits at most about this long plus one segment to be read.
 */
export const TURN_BUDGET_MS = 1;

/** One search's turns on the calling thread: the first `next()` always turns, later ones once TURN_BUDGET_MS of work has passed. */
export class CallerTurns {
  private lastTurnAt = Number.NEGATIVE_INFINITY;

  constructor(readonly thread: CallerThread) {}

  /** Turns the event loop when this search has held the thread for the budget (or never turned yet). */
  next(): Promise<void> | null {
    const now = performance.now();
    if (now - this.lastTurnAt < TURN_BUDGET_MS) return null;
    return this.thread.turn().then(() => {
      this.lastTurnAt = performance.now();
    });
  }
}
