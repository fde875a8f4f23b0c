/**
 * An in-memory VectorIndex for HTTP tests: exact brute-force cosine over seeded random vectors
 * (so hits can be asserted), an artificial per-search delay, and an abort signal that is
 * honoured (or, on request, ignored) the way the real engine's contract says.
 */
import type { IndexDescription, QueryStats, ReadPath, SearchHit, SearchOptions, SearchResult, VectorIndex } from '../../src/api/types.js';
import { mulberry32 } from '../../src/gen/Rng.js';

export interface FakeIndexOptions {
  readonly name?: string;
  readonly field?: string;
  readonly dims?: number;
  readonly docs?: number;
  readonly seed?: number;
  /** Artificial time each search takes (ms). Mutable later via `delayMs`. */
  readonly delayMs?: number;
  /** Keep running after the signal aborts (an engine that is slow to cancel). */
  readonly ignoreAbort?: boolean;
  /**
   * Searches run until `release()` (or their abort) instead of for `delayMs`: a test then decides
   * when they finish, with no race against a timer on a loaded machine.
   */
  readonly held?: boolean;
}

export class FakeIndex implements VectorIndex {
  readonly name: string;
  readonly field: string;
  readonly dims: number;
  readonly docs: number;
  delayMs: number;
  ignoreAbort: boolean;
  /** When set, searches reject with it (after the delay). */
  failWith: Error | undefined;
  readonly defaultReadPath: ReadPath = 'mmap+prefetch';

  /** Unit vectors, row-major. */
  private readonly vectors: Float32Array;
  readonly ids: string[];

  started = 0;
  completed = 0;
  aborted = 0;
  running = 0;
  maxRunning = 0;
  closed = false;
  readonly calls: SearchOptions[] = [];
  /** Resolves each time a search observes its abort. */
  private abortWaiters: (() => void)[] = [];
  held: boolean;
  /** Completes each held search. */
  private readonly heldSearches = new Set<() => void>();

  constructor(options: FakeIndexOptions = {}) {
    this.name = options.name ?? 'fake';
    this.field = options.field ?? 'embedding';
    this.dims = options.dims ?? 384;
    this.docs = options.docs ?? 300;
    this.delayMs = options.delayMs ?? 0;
    this.ignoreAbort = options.ignoreAbort ?? false;
    this.held = options.held ?? false;
    this.failWith = undefined;
    const random = mulberry32(options.seed ?? 42);
    this.vectors = new Float32Array(this.docs * this.dims);
    for (let d = 0; d < this.docs; d++) {
      const row = this.vectors.subarray(d * this.dims, (d + 1) * this.dims);
      for (let i = 0; i < this.dims; i++) row[i] = random() * 2 - 1;
      normalize(row);
    }
    this.ids = Array.from({ length: this.docs }, (_, d) => `doc-${d}`);
  }

  /** A query vector drawn from the same distribution (not normalized). */
  randomQuery(seed: number): number[] {
    const random = mulberry32(seed);
    return Array.from({ length: this.dims }, () => random() * 2 - 1);
  }

  /** Exact top-k by Lucene's cosine score (1 + cos) / 2, ties by doc number. */
  bruteForce(query: ArrayLike<number>, k: number): SearchHit[] {
    const q = normalize(Float32Array.from(query as ArrayLike<number>));
    const scored: SearchHit[] = [];
    for (let d = 0; d < this.docs; d++) {
      let dot = 0;
      const base = d * this.dims;
      for (let i = 0; i < this.dims; i++) dot += q[i]! * this.vectors[base + i]!;
      scored.push({ id: this.ids[d]!, doc: d, score: Math.max((1 + dot) / 2, 0) });
    }
    scored.sort((a, b) => b.score - a.score || a.doc - b.doc);
    return scored.slice(0, k);
  }

  /** Lets every held search finish now, and later ones run for `delayMs` again. */
  release(): void {
    this.held = false;
    for (const finish of [...this.heldSearches]) finish();
  }

  /** Resolves once `n` searches in total have observed an abort. */
  async abortsObserved(n: number): Promise<void> {
    while (this.aborted < n) await new Promise<void>((resolve) => this.abortWaiters.push(resolve));
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    if (this.closed) throw new Error('index is closed');
    if (vector.length !== this.dims) throw new Error(`expected ${this.dims} dims, got ${vector.length}`);
    this.calls.push(options);
    this.started++;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const t0 = performance.now();
    try {
      await this.delay(options.signal);
      if (this.failWith) throw this.failWith;
      const hits = this.bruteForce(vector, options.k);
      const oversample = options.oversample ?? 3;
      const candidates = Math.min(this.docs, Math.ceil(options.k * oversample));
      const totalMs = performance.now() - t0;
      const stats: QueryStats = {
        readPath: options.readPath ?? this.defaultReadPath,
        candidates,
        visited: this.docs,
        exhaustiveSegments: 1,
        pagesPrefetched: candidates,
        pagesResident: 1,
        pagesReadAhead: 0,
        syscalls: 2,
        readsBeforePrefetch: 0,
        rescoredOn: 'executor',
        searchedOn: 'executor',
        slicesTakenBack: 0,
        deferred: true,
        maxPrefetchDistance: Math.min(candidates, 16),
        firstPhaseExact: false,
        timings: { firstPhaseMs: totalMs / 2, rescoreMs: totalMs / 2, totalMs },
      };
      this.completed++;
      return { hits, totalHits: this.docs, stats };
    } finally {
      this.running--;
    }
  }

  private delay(signal: AbortSignal | undefined): Promise<void> {
    const observeAbort = () => {
      this.aborted++;
      const waiters = this.abortWaiters;
      this.abortWaiters = [];
      for (const w of waiters) w();
    };
    if (signal?.aborted) {
      observeAbort();
      if (!this.ignoreAbort) return Promise.reject(signal.reason);
    }
    return new Promise<void>((resolve, reject) => {
      const finish = () => {
        this.heldSearches.delete(finish);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const timer = this.held ? undefined : setTimeout(finish, this.delayMs);
      if (this.held) this.heldSearches.add(finish);
      const onAbort = () => {
        observeAbort();
        if (this.ignoreAbort) return;
        clearTimeout(timer);
        this.heldSearches.delete(finish);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async describe(): Promise<IndexDescription> {
    const vectors = this.docs * this.dims * 4;
    const codes = this.docs * (Math.ceil(this.dims / 8) + 16);
    return {
      name: this.name,
      dir: `/fake/${this.name}`,
      field: this.field,
      similarity: 'COSINE',
      dims: this.dims,
      docs: this.docs,
      segments: [{ name: '_0', docBase: 0, docs: this.docs, hasGraph: false, bytes: { vectors, codes, graph: 0 } }],
      bytes: { vectors, codes, graph: 0, total: vectors + codes },
      residentFraction: 1,
      defaultReadPath: this.defaultReadPath,
      memory: { state: 'held', codes, graphs: 0, scratchPerWorker: 0, scratchClaimed: 0, workers: 1, total: codes, arenas: 1, bytesPerVector: codes / Math.max(1, this.docs) },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}
