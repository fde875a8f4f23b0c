import { afterEach, describe, expect, it, vi } from 'vitest';
import type { IndexWriter } from '../segments/index/IndexWriter.js';
import { noPendingDocs } from '../segments/index/PendingDocs.js';
import { IndexWrites, PENDING_HIDDEN_IDS, PENDING_SCAN_DIMS, SEARCH_IDLE_AFTER_MS } from '../src/http/IndexWrites.js';

/**
 * When a served index's writes become searchable: a scheduled refresh (the served reader plus the
 * writer's writes since its commit) within the refresh interval of the first write it makes
 * searchable, while there are writes and searches; none while the index is search-idle
 * (Elasticsearch's index.search.idle.after), the first search after that refreshing first;
 * concurrent refresh requests sharing one run; a commit only once the writes since the last one
 * cost searches too much. Time is a fake clock and fake timers: nothing waits for real.
 */
afterEach(() => {
  vi.useRealTimers();
});

function fixture() {
  // Date.now is the fake timers' clock in the tests that use them.
  const start = Date.now();
  const clock = () => Date.now() - start;
  const served = {
    refreshes: 0,
    refresh: async () => (served.refreshes++, { refreshed: true, docs: 1 }),
  };
  const writer = {
    commits: 0,
    pendingWrites: { ids: 1, hidden: 0 },
    field: { dims: 8 },
    pendingDocs: () => noPendingDocs(1),
    // A commit takes the writes since the last one into a segment.
    commit: async () => (writer.commits++, (writer.pendingWrites = { ids: 0, hidden: 0 }), 1),
    close: async () => {},
  };
  const writes = new IndexWrites(
    'idx',
    served,
    async () => writer as unknown as IndexWriter,
    1_000,
    () => {},
    clock,
  );
  return { served, writer, writes, clock, advance: (ms: number) => vi.advanceTimersByTimeAsync(ms) };
}

/** Makes the fixture writer's commits wait until the returned function finishes the latest one. */
function holdCommits(writer: ReturnType<typeof fixture>['writer']): () => void {
  let finish = () => {};
  writer.commit = () => new Promise<number>((resolve) => (writer.commits++, (finish = () => ((writer.pendingWrites = { ids: 0, hidden: 0 }), resolve(2)))));
  return () => finish();
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
    expect([served.refreshes, writer.commits]).toEqual([1, 0]); // searchable without a commit

    await advance(SEARCH_IDLE_AFTER_MS);
    writes.changed();
    await advance(5_000);
    expect(served.refreshes).toBe(1); // search-idle: the writes wait
    await writes.beforeSearch();
    expect(served.refreshes).toBe(2); // the search saw them
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

  it('makes a write searchable within the interval of it, less what refreshes take, not at the next tick of a fixed timer', async () => {
    vi.useFakeTimers();
    const { served, writes, advance, clock } = fixture();
    const done: number[] = [];
    const reopen = served.refresh;
    served.refresh = async () => {
      await new Promise((resolve) => setTimeout(resolve, 100)); // each refresh takes 100 ms
      const outcome = await reopen();
      done.push(clock());
      return outcome;
    };
    await writes.writer();
    await advance(300);
    writes.changed(); // at 300
    await advance(1_200);
    // The first refresh starts 10 ms before the deadline (what refreshes take is not known yet).
    expect(done).toEqual([1_390]);
    await advance(250);
    writes.changed(); // at 1,750: due by 2,750, so started 100 ms (what refreshes take) + 10 ms before it
    await advance(1_000);
    expect(done).toEqual([1_390, 2_740]);
    await writes.close();
  });

  it('commits in the background once the writes since the last commit cost searches too much, then serves the new commit', async () => {
    const { served, writer, writes } = fixture();
    const finishCommit = holdCommits(writer);
    await writes.writer();
    writes.changed();
    await writes.refresh();
    expect([served.refreshes, writer.commits]).toEqual([1, 0]);
    writer.pendingWrites = { ids: Math.ceil(PENDING_SCAN_DIMS / writer.field.dims), hidden: 0 };
    writes.changed();
    await writes.refresh();
    // The refresh did not wait for the commit it started: the writes are searchable meanwhile.
    expect([served.refreshes, writer.commits]).toEqual([2, 1]);
    await writes.refresh();
    expect(writer.commits).toBe(1); // one commit at a time
    finishCommit();
    await vi.waitFor(() => expect(served.refreshes).toBe(4)); // the refresh that serves the new commit
    writer.pendingWrites = { ids: 1, hidden: PENDING_HIDDEN_IDS };
    await writes.refresh();
    expect(writer.commits).toBe(2);
    finishCommit();
    await vi.waitFor(() => expect(served.refreshes).toBe(6));
    await writes.close();
  });

  it('starts the commit from the write that crosses the limit, searched or not, and a refresh of far more than the limit waits for it', async () => {
    const { served, writer, writes } = fixture();
    const finishCommit = holdCommits(writer);
    await writes.writer();
    writer.pendingWrites = { ids: Math.ceil((4 * PENDING_SCAN_DIMS) / writer.field.dims), hidden: 0 };
    writes.changed(); // no refresh, no search: the write alone starts the commit
    expect([writer.commits, served.refreshes]).toEqual([1, 0]);
    let refreshed = false;
    const refresh = writes.refresh().then(() => (refreshed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(refreshed).toBe(false); // it would serve four times the writes searches should scan
    finishCommit();
    await refresh;
    expect(writer.commits).toBe(1);
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
