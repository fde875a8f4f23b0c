import { describe, expect, it } from 'vitest';
import { CallerTurns, EVENT_LOOP, stepAsideForSearches } from '../query/CallerThread.js';

/**
 * The calling thread shared by searches and writes: a search on it takes turns of the event loop,
 * and a `_bulk` between its items steps aside while a search waits for its turn.
 */
describe('calling thread', () => {
  /** A search holding the thread for `turns` turns (each a piece of work between two turns). */
  async function search(turns: number, log: string[]): Promise<void> {
    for (let i = 0; i < turns; i++) {
      // A search's first call always turns: each piece here stands for one that took the whole budget.
      await new CallerTurns(EVENT_LOOP).next();
      log.push(`search ${i}`);
    }
  }

  it('a write stepping aside resumes only once the searches waiting for their turns have had them', async () => {
    const log: string[] = [];
    const searching = search(5, log);
    const writing = (async () => {
      await stepAsideForSearches();
      log.push('write');
    })();
    await Promise.all([searching, writing]);
    expect(log).toEqual(['search 0', 'search 1', 'search 2', 'search 3', 'search 4', 'write']);
  });

  it('without searches waiting, a write steps aside for one turn only', async () => {
    const log: string[] = [];
    let turns = 0;
    const counting = (async () => {
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        turns++;
      }
    })();
    await stepAsideForSearches();
    log.push(`write after ${turns} turn(s)`);
    await counting;
    expect(log).toEqual(['write after 1 turn(s)']);
  });
});
