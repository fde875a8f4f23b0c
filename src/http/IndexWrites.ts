import type { IndexWriter } from '../../segments/index/IndexWriter.js';
import { LockObtainFailedException } from '../../segments/store/DirectoryLock.js';
import { HttpError } from './errors.js';
import type { RefreshOutcome } from './ReopeningIndex.js';

/** Elasticsearch's default `index.refresh_interval`: writes are searchable within a second. */
export const DEFAULT_REFRESH_INTERVAL_MS = 1_000;
/**
 * Elasticsearch's `index.search.idle.after`: with no search for this long the scheduled refreshes
 * stop (a refresh commits, cutting a segment, and reopens the index: 58-125 ms for 40 segments,
 * measured, since a reopen loads only the new segments), and the next search refreshes first and
 * waits for it.
 */
export const SEARCH_IDLE_AFTER_MS = 30_000;

/** What a refresh needs of the served index: reopen it at the directory's newest commit. */
export interface Reopenable {
  /** Opens the newest commit beside the served one and swaps them. */
  refresh(): Promise<RefreshOutcome>;
}

/**
 * The served index's write side: its IndexWriter, opened at the first write (so a server of an
 * index that was only built never takes the directory's write lock, and a rebuild in place still
 * works) or adopted at start (an index a writer has written replays its translog then), and
 * refreshes that make writes searchable (commit, then reopen the served reader: Lucene's
 * SearcherManager after an IndexWriter commit). A refresh runs every `refreshIntervalMs` when
 * something was written and the index was searched in the last 30 s, and on demand
 * (`?refresh=true`, `POST /:index/_refresh`, or the first search after 30 s without one);
 * concurrent demands share one refresh that starts after the last of their writes.
 */
export class IndexWrites {
  private opening: Promise<IndexWriter> | null = null;
  private requested = 0;
  private done = 0;
  private running: Promise<RefreshOutcome> | null = null;
  private dirty = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private lastSearch: number;

  constructor(
    readonly name: string,
    private readonly served: Reopenable,
    private readonly openWriter: () => Promise<IndexWriter>,
    /** Null (`refresh_interval: -1`): no scheduled refresh, only those asked for. */
    refreshIntervalMs: number | null = DEFAULT_REFRESH_INTERVAL_MS,
    private readonly log: (line: string) => void = () => {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastSearch = now();
    this.setRefreshInterval(refreshIntervalMs);
  }

  /** Schedules refreshes every `refreshIntervalMs` from now on (null: only those asked for). */
  setRefreshInterval(refreshIntervalMs: number | null): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer =
      refreshIntervalMs === null || this.closed
        ? null
        : setInterval(() => {
            // Also while a refresh runs: writes made since it started get the next one right after
            // it, not one interval later (a refresh slower than the interval runs back to back).
            if (this.dirty && !this.searchIdle) this.refresh().catch((e: unknown) => this.log(`prescore serve: scheduled refresh failed: ${(e as Error).message}`));
          }, refreshIntervalMs).unref();
  }

  /** No search for SEARCH_IDLE_AFTER_MS: scheduled refreshes wait for the next search. */
  get searchIdle(): boolean {
    return this.now() - this.lastSearch >= SEARCH_IDLE_AFTER_MS;
  }

  /**
   * Call before a search: it marks the index as searched, and when it was search-idle with writes
   * not yet searchable, refreshes first so the search sees them (as Elasticsearch does).
   */
  async beforeSearch(): Promise<void> {
    const idle = this.searchIdle;
    this.lastSearch = this.now();
    // A refresh that fails (a full disk) leaves the search on the commit served now.
    if (idle && this.dirty) await this.refresh().catch((e: unknown) => this.log(`prescore serve: refresh before a search failed: ${(e as Error).message}`));
  }

  /** The writer, opened on first use; a clear 409 when another process (a build) holds the directory. */
  writer(): Promise<IndexWriter> {
    if (this.closed) return Promise.reject(new HttpError(503, 'shutting_down', 'the server is shutting down'));
    this.opening ??= this.openWriter().catch((e: unknown) => {
      this.opening = null;
      if (e instanceof LockObtainFailedException)
        throw new HttpError(409, 'illegal_state_exception', `index [${this.name}] cannot take writes now: ${e.message}`, {}, { 'Retry-After': '5' });
      throw e;
    });
    return this.opening;
  }

  /** Takes `writer`, already open (it replayed the translog at startup), as this index's writer. */
  adopt(writer: IndexWriter): void {
    if (this.opening !== null) throw new Error(`index [${this.name}] already has its writer`);
    this.opening = Promise.resolve(writer);
  }

  /** The writer if a write has opened it, else null (never opens it). */
  async openedWriter(): Promise<IndexWriter | null> {
    return this.opening === null ? null : this.opening.catch(() => null);
  }

  /** Something was written: the next scheduled refresh makes it searchable. */
  changed(): void {
    this.dirty = true;
  }

  /** Makes every write made so far searchable (commit + reopen), sharing a refresh with concurrent callers. */
  async refresh(): Promise<RefreshOutcome> {
    const target = ++this.requested;
    let outcome: RefreshOutcome | undefined;
    while (this.done < target) {
      this.running ??= this.runRefresh().finally(() => {
        this.running = null;
      });
      outcome = await this.running;
    }
    return outcome!;
  }

  /** Commits what the writer holds and releases the directory (shutdown). */
  async close(): Promise<void> {
    const writer = await this.stop();
    await writer?.close();
  }

  /** Drops what was not committed and releases the directory (the index is being deleted). */
  async discard(): Promise<void> {
    const writer = await this.stop();
    await writer?.rollback();
  }

  /** Takes no more writes and waits for a running refresh; the writer, if one was opened. */
  private async stop(): Promise<IndexWriter | null> {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.running?.catch(() => {});
    return (await this.opening?.catch(() => null)) ?? null;
  }

  private async runRefresh(): Promise<RefreshOutcome> {
    const upTo = this.requested;
    this.dirty = false;
    let outcome: RefreshOutcome;
    try {
      if (this.opening !== null) {
        const writer = await this.opening;
        await writer.commit();
      }
      outcome = await this.served.refresh();
    } catch (e) {
      this.dirty = true; // the writes are still to be made searchable
      throw e;
    }
    this.done = upTo;
    return outcome;
  }
}
