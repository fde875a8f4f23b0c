import { afterEach, describe, expect, it, vi } from 'vitest';
import type { IndexWriter } from '../segments/index/IndexWriter.js';
import { IndexWrites, SEARCH_IDLE_AFTER_MS } from '../src/http/IndexWrites.js';

/**
 * When a served index's writes become searchable: a scheduled refresh (commit, then reopen) while
 * there are writes and searches, none while the index is search-idle (Elasticsearch's
 * index.search.idle.after), the first search after that refreshing first; concurrent refresh
 * requests sharing one run. Time is a fake clock and fake timers: nothing waits for real.
 */
afterEach(() => {
  vi.useRealTimers();
});

function fixture() {
  let now = 0;
  const served = { refreshes: 0, refresh: async () => (served.refreshes++, { refreshed: true, docs: 1 }) };
  const writer = { commits: 0, commit: async () => (writer.commits++, 1), close: async () => {} };
  const writes = new IndexWrites(
    'idx',
    served,
    async () => writer as unknown as IndexWriter,
    1_000,
    () => {},
    () => now,
  );
  return { served, writer, writes, advance: async (ms: number) => ((now += ms), await vi.advanceTimersByTimeAsync(ms)) };
}

describe('IndexWrites', () => {
  it('refreshes each interval while written and searched, skips while search-idle, and the next search refreshes first', async () => {
    vi.useFakeTimers();
    const { served, writer, writes, advance } = fixture();
    await writes.writer();
    await advance(1_000);
    expect(served.refreshes).toBe(0); // nothing written
    writes.changed();
    await advance(1_000);
    expect([served.refreshes, writer.commits]).toEqual([1, 1]);

    await advance(SEARCH_IDLE_AFTER_MS);
    writes.changed();
    await advance(5_000);
    expect(served.refreshes).toBe(1); // search-idle: the writes wait
    await writes.beforeSearch();
    expect([served.refreshes, writer.commits]).toEqual([2, 2]); // the search saw them
    writes.changed();
    await advance(1_000);
    expect(served.refreshes).toBe(3); // searched again: scheduled refreshes resume
    await writes.close();
  });

  it('a write made while a scheduled refresh runs is made searchable by the refresh right after it, not an interval later', async () => {
    vi.useFakeTimers();
    const { served, writes, advance } = fixture();
    // Each reopen takes 1.5 s of the fake clock: longer than the interval.
    const reopen = served.refresh;
    served.refresh = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      return reopen();
    };
    await writes.writer();
    writes.changed();
    await advance(1_000); // the scheduled refresh starts
    writes.changed(); // a write while it runs
    await advance(1_000); // the tick finds it running and asks for the next one
    await advance(500);
    expect(served.refreshes).toBe(1);
    await advance(1_500); // the next one ran right after the first, not from the tick after
    expect(served.refreshes).toBe(2);
    await writes.close();
  });

  it('shares one refresh among concurrent requests made before it starts', async () => {
    const { served, writes } = fixture();
    await writes.writer();
    writes.changed();
    await Promise.all([writes.refresh(), writes.refresh(), writes.refresh()]);
    expect(served.refreshes).toBe(2); // the first, and one after it for the two that came while it ran
    await writes.refresh();
    expect(served.refreshes).toBe(3);
    await writes.close();
  });
});
