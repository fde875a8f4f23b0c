import type { IndexWriter } from '../../segments/index/IndexWriter.js';
import type { PendingDocs } from '../../segments/index/PendingDocs.js';
import { LockObtainFailedException } from '../../segments/store/DirectoryLock.js';
import { HttpError } from './errors.js';
import type { RefreshOutcome } from './ReopeningIndex.js';

/** Elasticsearch's default `index.refresh_interval`: writes are searchable within a second. */
export const DEFAULT_REFRESH_INTERVAL_MS = 1_000;
/**
 * Elasticsearch's `index.search.idle.after`: with no search for this long the scheduled refreshes
 * stop, and the next search refreshes first and waits for it.
 */
export const SEARCH_IDLE_AFTER_MS = 30_000;
/**
 * A commit starts (in the background: the writes stay searchable from RAM meanwhile) once the
 * documents written since the last commit would cost each search more than scoring this many
 * fp32 dims exhaustively: ~5,200 docs of 768 dims, ~1.5 ms per search at ~0.28 us per 768-dim
 * cosine in place (PendingVectors).
 */
export const PENDING_SCAN_DIMS = 4_000_000;
/** ...or once this many committed docs are hidden by writes since (each search then filters them out by id). */
export const PENDING_HIDDEN_IDS = 10_000;
/** A refresh waits for the commit instead of serving writes that would cost searches this many times PENDING_SCAN_DIMS. */
const PENDING_SCAN_LIMIT_FACTOR = 4;
/** A scheduled refresh is started this long before its deadline, beyond what refreshes take. */
const REFRESH_MARGIN_MS = 10;

/** What a refresh needs of the served index: reopen it at the directory's newest commit. */
export interface Reopenable {
  /** Opens the newest commit beside the served one and swaps them; with `pending`, searches see those writes too. */
  refresh(pending?: () => PendingDocs): Promise<RefreshOutcome>;
}

/**
 * The served index's write side: its IndexWriter, opened at the first write (so a server of an
 * index that was only built never takes the directory's write lock, and a rebuild in place still
 * works) or adopted at start (an index a writer has written replays its translog then), and
 * refreshes that make writes searchable: the served reader at the newest commit plus the
 * writer's writes since (IndexWriter.pendingDocs, searched from RAM: no segment is cut, so a
 * refresh takes milliseconds), with a commit started in the background once those writes grow
 * past PENDING_SCAN_DIMS or PENDING_HIDDEN_IDS (the next refresh after it serves the new commit).
 *
 * A write is searchable within `refreshIntervalMs` of it: the refresh for the first write not yet
 * searchable is scheduled for that write's time plus the interval, less what refreshes take, when
 * the index was searched in the last 30 s; and on demand (`?refresh=true`, `POST /:index/_refresh`,
 * or the first search after 30 s without one). Concurrent demands share one refresh that starts
 * after the last of their writes.
 */
export class IndexWrites {
  private opening: Promise<IndexWriter> | null = null;
  private requested = 0;
  private done = 0;
  private running: Promise<RefreshOutcome> | null = null;
  private dirty = false;
  /** When the first write not yet searchable was made (null: every write is). */
  private dirtySince: number | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private intervalMs: number | null = null;
  /** What refreshes take, a decaying maximum: scheduled refreshes start this much before their deadline. */
  private refreshCostMs = 0;
  private committing: Promise<void> | null = null;
  /** The last background commit failed (a full disk): refreshes try again, not every write. */
  private commitFailed = false;
  /** The writer once opened (writes come through it, so every `changed()` after a write sees it). */
  private openedWriterNow: IndexWriter | null = null;
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

  /** Writes are made searchable within `refreshIntervalMs` from now on (null: only by refreshes asked for). */
  setRefreshInterval(refreshIntervalMs: number | null): void {
    this.intervalMs = refreshIntervalMs;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.schedule();
  }

  /** Arms the timer for the deadline of the first write not yet searchable. */
  private schedule(): void {
    if (this.timer !== null || this.closed || this.intervalMs === null || this.dirtySince === null) return;
    const due = this.dirtySince + this.intervalMs - this.refreshCostMs - REFRESH_MARGIN_MS;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        // A search-idle index waits for its next search, which refreshes first. A refresh running
        // now took its writes before these: the next one runs right after it.
        if (this.dirty && !this.searchIdle) this.refresh().catch((e: unknown) => this.log(`prescore serve: scheduled refresh failed: ${(e as Error).message}`));
      },
      Math.max(0, due - this.now()),
    ).unref();
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
    this.opening ??= this.openWriter().then(
      (w) => (this.openedWriterNow = w),
      (e: unknown) => {
        this.opening = null;
        if (e instanceof LockObtainFailedException)
          throw new HttpError(409, 'illegal_state_exception', `index [${this.name}] cannot take writes now: ${e.message}`, {}, { 'Retry-After': '5' });
        throw e;
      },
    );
    return this.opening;
  }

  /** Takes `writer`, already open (it replayed the translog at startup), as this index's writer. */
  adopt(writer: IndexWriter): void {
    if (this.opening !== null) throw new Error(`index [${this.name}] already has its writer`);
    this.opening = Promise.resolve(writer);
    this.openedWriterNow = writer;
  }

  /** The writer if a write has opened it, else null (never opens it). */
  async openedWriter(): Promise<IndexWriter | null> {
    return this.opening === null ? null : this.opening.catch(() => null);
  }

  /** Something was written: the next scheduled refresh makes it searchable. */
  changed(): void {
    this.dirty = true;
    this.dirtySince ??= this.now();
    this.schedule();
    // Also while nobody searches (no refresh runs): the writes since the last commit stay bounded.
    if (this.openedWriterNow !== null && !this.commitFailed) this.maybeCommit(this.openedWriterNow);
  }

  /** Makes every write made so far searchable (the newest commit plus the writes since), sharing a refresh with concurrent callers. */
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
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running?.catch(() => {});
    await this.committing;
    return (await this.opening?.catch(() => null)) ?? null;
  }

  private async runRefresh(): Promise<RefreshOutcome> {
    const upTo = this.requested;
    const since = this.dirtySince;
    this.dirty = false;
    this.dirtySince = null;
    const started = this.now();
    let outcome: RefreshOutcome;
    try {
      if (this.opening !== null) {
        const writer = await this.opening;
        this.maybeCommit(writer);
        // Far more written since the last commit than searches should scan (a commit failed, or
        // just started under a burst): this refresh serves the commit instead.
        if (writer.pendingWrites.ids * writer.field.dims >= PENDING_SCAN_LIMIT_FACTOR * PENDING_SCAN_DIMS) await this.committing;
        outcome = await this.served.refresh(() => writer.pendingDocs());
      } else outcome = await this.served.refresh();
    } catch (e) {
      // The writes are still to be made searchable.
      this.dirty = true;
      const now = this.now();
      this.dirtySince = Math.min(since ?? now, this.dirtySince ?? now);
      throw e;
    } finally {
      this.refreshCostMs = Math.max(this.now() - started, this.refreshCostMs * 0.9);
      this.schedule();
    }
    this.done = upTo;
    return outcome;
  }

  /**
   * Commits in the background once the writes since the last commit cost searches too much
   * (PENDING_SCAN_DIMS, PENDING_HIDDEN_IDS); the refresh after it serves the new commit, and
   * until then the writes are searched from RAM. A failed commit is logged and tried again at a
   * later refresh (the writes stay in the translog and searchable).
   */
  private maybeCommit(writer: IndexWriter): void {
    if (this.committing !== null) return;
    const { ids, hidden } = writer.pendingWrites;
    if (ids * writer.field.dims < PENDING_SCAN_DIMS && hidden < PENDING_HIDDEN_IDS) return;
    // The refresh after the commit is not part of `committing`: a refresh that waits for the
    // commit must not wait for the refresh queued behind itself.
    this.committing = writer.commit().then(
      () => {
        this.committing = null;
        this.commitFailed = false;
        if (!this.closed) this.refresh().catch((e: unknown) => this.log(`prescore serve: [${this.name}]: refresh after a commit failed: ${(e as Error).message}`));
      },
      (e: unknown) => {
        this.committing = null;
        this.commitFailed = true;
        this.log(`prescore serve: [${this.name}]: commit failed: ${(e as Error).message}`);
      },
    );
  }
}
