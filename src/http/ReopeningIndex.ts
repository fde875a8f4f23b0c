import type { GetOptions, IndexDescription, IndexedDoc, KnnFilter, SearchOptions, SearchResult, VectorIndex } from '../api/types.js';
import type { FilterQuery } from '../../query/filter/FilterQuery.js';
import type { PendingDocs } from '../../segments/index/PendingDocs.js';
import { PendingDocsIndex } from '../api/PendingDocsIndex.js';

/** What a refresh did. */
export interface RefreshOutcome {
  /** True when a new reader replaced the old one; false when the served commit was current. */
  readonly refreshed: boolean;
  /** Docs served after the refresh. */
  readonly docs: number;
}

/** The new commit cannot replace the served one under a running server (dims, field or similarity changed). */
export class IncompatibleRefreshError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'IncompatibleRefreshError';
  }
}

/** One open reader and the searches still running on it. */
interface Generation {
  readonly index: VectorIndex;
  /** What searches see: `index`, or `index` plus the writes since its commit (a PendingDocsIndex over it). */
  view: VectorIndex;
  /** `index.describe()` at open: the field, similarity and doc count a view over it reads. */
  readonly description: Promise<IndexDescription>;
  readonly shape: Shape;
  running: number;
  retired: boolean;
  closed: Promise<void> | null;
}

interface Shape {
  readonly field: string;
  readonly similarity: string;
  readonly dims: number;
}

/**
 * A served index that can be reopened at a new commit without failing a query (Lucene's
 * SearcherManager): `refresh()` opens the new commit beside the old one and swaps them; searches
 * that started on the old reader finish on it, and it is closed after the last of them. The old
 * reader keeps its files open until then, so a rebuild in place that deleted them is harmless.
 *
 * A refresh is refused when the new commit changes the field's dims, name or similarity: queries
 * validated against one shape must not run on another (restart the server to serve it).
 */
export class ReopeningIndex implements VectorIndex {
  private current: Generation;
  private refreshing: Promise<RefreshOutcome> | null = null;
  /** Where the writer's writes since its last commit come from, once a refresh has brought them. */
  private writes: (() => PendingDocs) | undefined = undefined;
  /** Whether the running refresh takes the writer's writes. */
  private refreshingWithWrites = false;
  private closedFlag = false;

  private constructor(
    first: VectorIndex,
    shape: Shape,
    private readonly reopen: () => Promise<VectorIndex>,
  ) {
    this.current = { index: first, view: first, description: first.describe(), shape, running: 0, retired: false, closed: null };
  }

  /** Wraps `first`; `reopen` opens the directory again at its newest commit. */
  static async wrap(first: VectorIndex, reopen: () => Promise<VectorIndex>): Promise<ReopeningIndex> {
    return new ReopeningIndex(first, shapeOf(await first.describe()), reopen);
  }

  get name(): string {
    return this.current.view.name;
  }

  get dims(): number {
    return this.current.view.dims;
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    const generation = this.current;
    generation.running++;
    try {
      return await generation.view.search(vector, options);
    } finally {
      generation.running--;
      if (generation.retired && generation.running === 0) void this.closeGeneration(generation);
    }
  }

  /** Runs `fn` on the current generation, which is not closed until it returns (as a search). */
  private async use<T>(fn: (index: VectorIndex) => Promise<T> | T): Promise<T> {
    const generation = this.current;
    generation.running++;
    try {
      return await fn(generation.view);
    } finally {
      generation.running--;
      if (generation.retired && generation.running === 0) void this.closeGeneration(generation);
    }
  }

  mapping(): Record<string, unknown> | null {
    return this.current.view.mapping?.() ?? null;
  }

  get(id: string, options?: GetOptions): Promise<IndexedDoc | null> {
    return this.use((i) => (i.get ? i.get(id, options) : null));
  }

  count(filter?: KnnFilter | FilterQuery | null): Promise<number> {
    return this.use(async (i) => {
      if (!i.count) throw new Error(`index ${this.name} cannot count documents`);
      return i.count(filter);
    });
  }

  match(filter: FilterQuery, options: GetOptions & { readonly from: number; readonly size: number }): Promise<{ readonly total: number; readonly hits: readonly IndexedDoc[] }> {
    return this.use(async (i) => {
      if (!i.match) throw new Error(`index ${this.name} cannot match documents`);
      return i.match(filter, options);
    });
  }

  describe(): Promise<IndexDescription> {
    return this.current.view.describe();
  }

  isCurrent(): boolean {
    return this.current.index.isCurrent?.() ?? true;
  }

  commitGeneration(): number | null {
    return this.current.index.commitGeneration?.() ?? null;
  }

  /**
   * Opens the newest commit if the served one is stale and swaps readers; with `pending` (the
   * index's writer's writes since its last commit: IndexWriter.pendingDocs), searches then see
   * those writes too, without a commit (Lucene's near-real-time reader). Concurrent calls share
   * one reopen. On failure the old reader keeps serving and the error is thrown.
   */
  refresh(pending?: () => PendingDocs): Promise<RefreshOutcome> {
    if (this.closedFlag) return Promise.reject(new Error(`index ${this.name} is closed`));
    // Once a refresh has brought a writer's writes, every later one does (a SIGHUP's too): a
    // refresh without them would serve the bare new commit and drop writes already searchable.
    pending ??= this.writes;
    this.writes = pending;
    // A refresh running without the writer's writes (SIGHUP) does not do for one that brings them.
    if (this.refreshing !== null && pending !== undefined && !this.refreshingWithWrites) return this.refreshing.catch(() => {}).then(() => this.refresh(pending));
    if (this.refreshing === null) {
      this.refreshingWithWrites = pending !== undefined;
      this.refreshing = this.doRefresh(pending).finally(() => (this.refreshing = null));
    }
    return this.refreshing;
  }

  private async doRefresh(pending: (() => PendingDocs) | undefined): Promise<RefreshOutcome> {
    for (let attempt = 1; ; attempt++) {
      const old = this.current;
      const opened = old.index.isCurrent?.() === true ? null : await this.openNext(old);
      const next = opened?.index ?? null;
      const base = next ?? old.index;
      const description = opened?.description ?? old.description;
      const writes = pending?.();
      // The writer may commit while the newest commit is opened: the writes taken must follow the
      // commit served, so open again until they do (a commit takes far longer than an open).
      if (writes !== undefined && base.commitGeneration?.() !== writes.generation) {
        await next?.close();
        if (attempt < MAX_REOPENS_PER_REFRESH) continue;
        throw new Error(`index ${this.name}: the writer's commit ${writes.generation} is not the directory's newest (served: ${base.commitGeneration?.()})`);
      }
      // The view is built before the swap: a write searchable before the refresh stays searchable
      // through it (the new commit may not hold it yet; then the view does).
      const view = writes === undefined ? (next ?? old.view) : writes.docs.length === 0 && writes.hiddenIds.length === 0 ? base : new PendingDocsIndex(base, writes, description);
      const refreshed = next !== null || view !== old.view;
      if (old.view !== view) retireView(old.view);
      if (next === null) old.view = view;
      else {
        this.current = { index: next, view, description, shape: old.shape, running: 0, retired: false, closed: null };
        old.retired = true;
        if (old.running === 0) void this.closeGeneration(old);
      }
      return { refreshed, docs: (await description).docs + (view instanceof PendingDocsIndex ? view.pending.docs.length : 0) };
    }
  }

  /** The newest commit, opened beside `old` and checked to serve the same field. */
  private async openNext(old: Generation): Promise<{ readonly index: VectorIndex; readonly description: Promise<IndexDescription> }> {
    const next = await this.reopen();
    try {
      const description = await next.describe();
      const shape = shapeOf(description);
      const changed = (['field', 'similarity', 'dims'] as const).filter((k) => shape[k] !== old.shape[k]);
      if (changed.length > 0) {
        const what = changed.map((k) => `${k} ${old.shape[k]} -> ${shape[k]}`).join(', ');
        throw new IncompatibleRefreshError(`the new commit changes the served field (${what}); restart the server to serve it`);
      }
      if (this.closedFlag) throw new Error(`index ${this.name} was closed during the refresh`);
      return { index: next, description: Promise.resolve(description) };
    } catch (e) {
      await next.close();
      throw e;
    }
  }

  private closeGeneration(generation: Generation): Promise<void> {
    retireView(generation.view);
    generation.closed ??= generation.index.close();
    return generation.closed;
  }

  /** Closes the served reader (and a retired one still finishing its searches, when they end). */
  async close(): Promise<void> {
    if (this.closedFlag) return;
    this.closedFlag = true;
    await this.refreshing?.catch(() => {});
    await this.closeGeneration(this.current);
  }
}

/** A view replaced by a newer one frees what it holds once its searches end. */
function retireView(view: VectorIndex): void {
  if (view instanceof PendingDocsIndex) view.retire();
}

/** A refresh opens the newest commit at most this many times to catch up with a writer's commits. */
const MAX_REOPENS_PER_REFRESH = 5;

function shapeOf(d: IndexDescription): Shape {
  return { field: d.field, similarity: d.similarity, dims: d.dims };
}
