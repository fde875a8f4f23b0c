import type { GetOptions, IndexDescription, IndexedDoc, KnnFilter, SearchOptions, SearchResult, VectorIndex } from '../api/types.js';
import type { FilterQuery } from '../../query/filter/FilterQuery.js';

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
  private closedFlag = false;

  private constructor(
    first: VectorIndex,
    shape: Shape,
    private readonly reopen: () => Promise<VectorIndex>,
  ) {
    this.current = { index: first, shape, running: 0, retired: false, closed: null };
  }

  /** Wraps `first`; `reopen` opens the directory again at its newest commit. */
  static async wrap(first: VectorIndex, reopen: () => Promise<VectorIndex>): Promise<ReopeningIndex> {
    return new ReopeningIndex(first, shapeOf(await first.describe()), reopen);
  }

  get name(): string {
    return this.current.index.name;
  }

  get dims(): number {
    return this.current.index.dims;
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    const generation = this.current;
    generation.running++;
    try {
      return await generation.index.search(vector, options);
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
      return await fn(generation.index);
    } finally {
      generation.running--;
      if (generation.retired && generation.running === 0) void this.closeGeneration(generation);
    }
  }

  mapping(): Record<string, unknown> | null {
    return this.current.index.mapping?.() ?? null;
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
    return this.current.index.describe();
  }

  isCurrent(): boolean {
    return this.current.index.isCurrent?.() ?? true;
  }

  /**
   * Opens the newest commit if the served one is stale and swaps readers. Concurrent calls share
   * one reopen. On failure the old reader keeps serving and the error is thrown.
   */
  refresh(): Promise<RefreshOutcome> {
    if (this.closedFlag) return Promise.reject(new Error(`index ${this.name} is closed`));
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async doRefresh(): Promise<RefreshOutcome> {
    const old = this.current;
    if (old.index.isCurrent?.() === true) return { refreshed: false, docs: (await old.index.describe()).docs };
    const next = await this.reopen();
    let description: IndexDescription;
    try {
      description = await next.describe();
      const shape = shapeOf(description);
      const changed = (['field', 'similarity', 'dims'] as const).filter((k) => shape[k] !== old.shape[k]);
      if (changed.length > 0) {
        const what = changed.map((k) => `${k} ${old.shape[k]} -> ${shape[k]}`).join(', ');
        throw new IncompatibleRefreshError(`the new commit changes the served field (${what}); restart the server to serve it`);
      }
      if (this.closedFlag) throw new Error(`index ${this.name} was closed during the refresh`);
    } catch (e) {
      await next.close();
      throw e;
    }
    this.current = { index: next, shape: old.shape, running: 0, retired: false, closed: null };
    old.retired = true;
    if (old.running === 0) void this.closeGeneration(old);
    return { refreshed: true, docs: description.docs };
  }

  private closeGeneration(generation: Generation): Promise<void> {
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

function shapeOf(d: IndexDescription): Shape {
  return { field: d.field, similarity: d.similarity, dims: d.dims };
}
