import { BooleanQuery } from '../../query/filter/BooleanQuery.js';
import { FilterQuery } from '../../query/filter/FilterQuery.js';
import { IdsQuery } from '../../query/filter/IdsQuery.js';
import { PendingDocsFilterLeaf } from '../../query/filter/PendingDocsFilterLeaf.js';
import type { FixedBitSet } from '../../query/filter/FixedBitSet.js';
import { fetchPendingDocuments, NO_FETCH, type FetchOptions } from '../../query/fetch/FetchPhase.js';
import { PendingVectors } from '../../query/PendingVectors.js';
import { Mapping } from '../../segments/document/Mapping.js';
import type { PendingDocs } from '../../segments/index/PendingDocs.js';
import { threadKernels } from '../../segments/kernels/threadKernels.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { fetchOptions } from './fetchOptions.js';
import type { GetOptions, IndexDescription, IndexedDoc, KnnFilter, SearchHit, SearchOptions, SearchResult, VectorIndex } from './types.js';

/**
 * An index at one commit plus the writes made since (IndexWriter.pendingDocs): searched, counted
 * and fetched as a reader of a commit made now would answer, without cutting a segment. Lucene's
 * near-real-time reader flushes a segment at each refresh; here the documents written since the
 * commit are scored exhaustively at fp32 (PendingVectors) and filtered by their parsed values
 * (PendingDocsFilterLeaf), and committed documents that writes since replaced or deleted are
 * left out by a filter on their ids. Pending documents number after the committed ones (their
 * global doc is the committed index's doc count plus their place in the snapshot).
 *
 * @example
 * ```ts
 * const writer = await openIndexWriter('data/live');
 * writer.addDocument({ vector: [0.1, 0.2, 0.3], title: 'new' }, 'doc-9');
 * const current = new PendingDocsIndex(await openIndex('data/live'), writer.pendingDocs()); // doc-9 is found
 * ```
 */
export class PendingDocsIndex implements VectorIndex {
  private readonly leaf: PendingDocsFilterLeaf;
  private readonly hidden: FilterQuery | null;
  /** `hidden` alone, built once: its cache key spells out every hidden id, so it is not rebuilt per search. */
  private readonly notHidden: FilterQuery | null;
  private readonly hiddenIds: ReadonlySet<string>;
  /** The committed index's field, similarity and doc count (pending docs number after its docs). */
  private readonly description: Promise<IndexDescription>;
  private readonly mappingOf: Mapping | null;
  /** The pending docs' vectors in kernel memory, copied at the first search. */
  private vectors: Promise<PendingVectors> | null = null;
  private closing: Promise<void> | null = null;
  private searching = 0;
  private retired = false;

  constructor(
    /** The index at commit `pending.generation`. */
    readonly committed: VectorIndex,
    readonly pending: PendingDocs,
    /** `committed.describe()` if the caller has it (its field, similarity and doc count are what is read). */
    description?: Promise<IndexDescription>,
  ) {
    const generation = committed.commitGeneration?.() ?? null;
    if (generation !== pending.generation) throw new RangeError(`the pending writes follow commit ${pending.generation}, the index is at commit ${generation ?? 'unknown'}`);
    this.leaf = new PendingDocsFilterLeaf(pending.docs);
    this.hidden = pending.hiddenIds.length === 0 ? null : new IdsQuery(pending.hiddenIds);
    this.notHidden = this.hidden === null ? null : new BooleanQuery({ mustNot: [this.hidden] });
    this.hiddenIds = new Set(pending.hiddenIds);
    this.description = description ?? committed.describe();
    const json = this.mapping();
    this.mappingOf = json === null ? null : Mapping.parse(json);
  }

  get name(): string {
    return this.committed.name;
  }

  get dims(): number {
    return this.committed.dims;
  }

  /** The committed filter: the caller's, less the committed docs that writes since replaced or deleted. */
  private committedFilter(filter: FilterQuery | null): FilterQuery | null {
    if (this.hidden === null) return filter;
    if (filter === null) return this.notHidden;
    return new BooleanQuery({ filter: [filter], mustNot: [this.hidden] });
  }

  private pendingFilter(filter: KnnFilter | FilterQuery | null | undefined): FilterQuery | null {
    if (filter === null || filter === undefined) return null;
    if (!(filter instanceof FilterQuery)) throw new RangeError('a KnnFilter cannot filter documents written since the last commit; pass a FilterQuery (or commit first)');
    return filter;
  }

  private accepted(filter: FilterQuery | null): FixedBitSet | null {
    return filter === null ? null : filter.bitset(this.leaf);
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    this.searching++;
    try {
      return await this.searchBoth(vector, options);
    } finally {
      if (--this.searching === 0 && this.retired) this.releaseVectors();
    }
  }

  /**
   * No search will start on this view any more (a newer one replaced it): its kernel memory is
   * released once the searches running end.
   */
  retire(): void {
    this.retired = true;
    if (this.searching === 0) this.releaseVectors();
  }

  private releaseVectors(): void {
    const vectors = this.vectors;
    this.vectors = null;
    // A copy that failed (kernel memory exhausted) has nothing to release, and is no rejection left unhandled.
    void vectors?.then(
      (v) => v.release(),
      () => {},
    );
  }

  private async searchBoth(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    const filter = this.pendingFilter(options.filter);
    const committed = await this.committed.search(vector, { ...options, filter: this.committedFilter(filter) });
    if (this.pending.docs.length === 0) return committed;
    const target = vector instanceof Float32Array ? vector : Float32Array.from(vector);
    const described = await this.description;
    const similarity = VectorSimilarityFunction.fromName(described.similarity).ordinal;
    // A failed copy is not kept: the next search tries again rather than failing for good.
    const copying = (this.vectors ??= threadKernels().then((k) => new PendingVectors(k, this.pending.docs, this.dims)));
    const vectors = await copying.catch((e: unknown) => {
      if (this.vectors === copying) this.vectors = null;
      throw e;
    });
    const found = vectors.search(similarity, target, this.accepted(filter), options.k);
    const base = described.docs;
    const fetch = fetchOptions(options);
    const fetched =
      fetch === NO_FETCH
        ? null
        : this.fetch(
            described.field,
            found.scoreDocs.map((sd) => sd.doc),
            fetch,
          );
    const pendingHits: SearchHit[] = found.scoreDocs.map((sd, i) => {
      const f = fetched?.[i];
      const hit: SearchHit = { id: this.pending.docs[sd.doc]!.id, doc: base + sd.doc, score: sd.score };
      return f === undefined ? hit : { ...hit, ...(f.source ? { source: f.source } : {}), ...(f.fields ? { fields: f.fields } : {}) };
    });
    // Both lists are best first by the same fp32 scores; on a tie the committed (lower) doc first, as Lucene orders hits.
    const hits: SearchHit[] = [];
    for (let c = 0, p = 0; hits.length < options.k && (c < committed.hits.length || p < pendingHits.length); ) {
      if (p >= pendingHits.length || (c < committed.hits.length && committed.hits[c]!.score >= pendingHits[p]!.score)) hits.push(committed.hits[c++]!);
      else hits.push(pendingHits[p++]!);
    }
    return { hits, totalHits: committed.totalHits + found.totalHits, stats: committed.stats };
  }

  private fetch(vectorField: string, which: readonly number[], options: FetchOptions) {
    const mapping = this.mappingOf;
    const ctx = { vectorField, types: (field: string) => mapping?.field(field), fieldPaths: () => mapping?.fieldPaths ?? [] };
    return fetchPendingDocuments(ctx, this.leaf, this.pending.docs, which, options);
  }

  describe(): Promise<IndexDescription> {
    return this.committed.describe().then((d) => ({ ...d, docs: d.docs + this.pending.docs.length, pendingDocs: this.pending.docs.length }));
  }

  isCurrent(): boolean {
    return this.committed.isCurrent?.() ?? true;
  }

  commitGeneration(): number | null {
    return this.pending.generation;
  }

  /** The writer's mapping as of the writes (new fields included), else the commit's. */
  mapping(): Record<string, unknown> | null {
    return this.pending.mapping ?? this.committed.mapping?.() ?? null;
  }

  async get(id: string, options?: GetOptions): Promise<IndexedDoc | null> {
    const at = this.leaf.docForId(id);
    if (at >= 0) return this.pendingDocument(at, options);
    if (this.hiddenIds.has(id)) return null;
    return this.committed.get ? this.committed.get(id, options) : null;
  }

  async count(filter?: KnnFilter | FilterQuery | null): Promise<number> {
    if (!this.committed.count) throw new Error(`index ${this.name} cannot count documents`);
    const f = this.pendingFilter(filter);
    const committed = await this.committed.count(this.committedFilter(f));
    return committed + (f === null ? this.pending.docs.length : this.accepted(f)!.cardinality());
  }

  async match(
    filter: FilterQuery,
    options: GetOptions & { readonly from: number; readonly size: number },
  ): Promise<{ readonly total: number; readonly hits: readonly IndexedDoc[] }> {
    if (!this.committed.match) throw new Error(`index ${this.name} cannot match documents`);
    const committed = await this.committed.match(this.committedFilter(filter)!, options);
    const accepted = this.accepted(filter)!;
    const total = committed.total + accepted.cardinality();
    // Pending docs come after the committed ones, in doc order: the page's remainder is theirs.
    const skip = Math.max(0, options.from - committed.total);
    const want = options.size - committed.hits.length;
    const which: number[] = [];
    for (let d = 0, seen = 0; d < this.pending.docs.length && which.length < want; d++) if (accepted.get(d) && seen++ >= skip) which.push(d);
    const described = await this.description;
    const fetched = this.fetch(described.field, which, fetchOptions(options));
    return { total, hits: [...committed.hits, ...which.map((d, i) => ({ doc: described.docs + d, ...fetched[i]! }))] };
  }

  private async pendingDocument(at: number, options: GetOptions = { source: true }): Promise<IndexedDoc> {
    const described = await this.description;
    const [f] = this.fetch(described.field, [at], fetchOptions(options));
    return { doc: described.docs + at, ...f! };
  }

  /** Releases the pending vectors and closes the committed index (once: later calls get the same promise). */
  close(): Promise<void> {
    this.retire();
    this.closing ??= this.committed.close();
    return this.closing;
  }
}
