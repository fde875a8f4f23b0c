import { basename } from 'node:path';
import { Executor } from '../executor/Executor.js';
import { residentFraction } from '../../segments/store/native/PageCache.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { leafOf, type IndexReader } from '../../segments/index/IndexReader.js';
import { IndexSearcher } from '../../query/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../../query/KnnFloatVectorQuery.js';
import { LOAD_SEGMENTS } from '../../query/knn/knnSlice.js';
import { RescoreTopNQuery } from '../../query/RescoreTopNQuery.js';
import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';
import {
  DEFAULT_OVERSAMPLE,
  MAX_K,
  MAX_NUM_CANDIDATES,
  MAX_OVERSAMPLE,
  MAX_RESCORE_CANDIDATES,
  MIN_OVERSAMPLE,
  type IndexDescription,
  type ReadPath,
  type SearchHit,
  type SearchOptions,
  type SearchResult,
  type VectorIndex,
} from './types.js';

/** The HNSW beam per segment when the caller gives none (raised to k x oversample when smaller). */
export const DEFAULT_NUM_CANDIDATES = 100;
/**
 * Without num_candidates, the beam is also at least this many times the k x oversample
 * candidates kept: a beam of exactly k' returns the graph's noisy top k' of 1-bit scores.
 * bench:recall (Fashion-MNIST cosine, 1-bit rotated, one 60k segment): HNSW against the exhaustive
 * scan at equal candidates, oversample 5: 0.974 vs 0.987 with ef = max(100, k'); 0.979 with
 * 4 k'; oversample 10: 0.983 / 0.991 vs 0.997, for 2.0 -> 2.7 ms.
 */
export const DEFAULT_EF_PER_CANDIDATE = 4;

export interface OpenIndexOptions {
  /** Name reported by describe() and used by the HTTP API; default the directory's base name. */
  readonly name?: string;
  /** Default read path of this index's searches. */
  readonly readPath?: ReadPath;
  readonly prefetchPolicy?: PrefetchPolicyName;
  /** Executor threads (only when this open creates the process's executor). */
  readonly threads?: number;
  readonly ioConcurrency?: number;
}

let openCount = 0;

/** Opens prescore's own index directory (see `prescore build`). */
export async function openIndex(dir: string, options: OpenIndexOptions = {}): Promise<VectorIndex> {
  return openReader(DirectoryReader.open(dir), options);
}

/** Wraps any IndexReader (prescore's or a Lucene directory's) as a VectorIndex. */
export async function openReader(reader: IndexReader, options: OpenIndexOptions = {}): Promise<VectorIndex> {
  const executor = Executor.get({ threads: options.threads });
  const searcher = new IndexSearcher(reader, {
    executor,
    readPath: options.readPath,
    prefetchPolicy: options.prefetchPolicy,
    ioConcurrency: options.ioConcurrency,
  });
  // Each worker reads the codes and decodes the graphs once, now, instead of in the first query.
  // Concurrent tasks land on distinct idle workers, so `threads` of them reach every worker.
  const segments = reader.leaves.map((l) => l.reader.handle);
  try {
    await Promise.all(Array.from({ length: executor.threads }, () => executor.run(LOAD_SEGMENTS, { segments })));
  } catch (e) {
    executor.releaseIndex(reader.id);
    if (openCount === 0) await Executor.shutdown();
    throw e;
  }
  openCount++;
  return new SearchableIndex(options.name ?? basename(reader.dir), reader, searcher);
}

class SearchableIndex implements VectorIndex {
  private closed = false;

  constructor(
    readonly name: string,
    readonly reader: IndexReader,
    readonly searcher: IndexSearcher,
  ) {}

  get dims(): number {
    return this.reader.field.dims;
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    if (this.closed) throw new Error(`index ${this.name} is closed`);
    const { k } = options;
    if (!(Number.isInteger(k) && k >= 1 && k <= MAX_K)) throw new RangeError(`k must be an integer in [1, ${MAX_K}], got ${k}`);
    const oversample = options.oversample ?? DEFAULT_OVERSAMPLE;
    if (!(oversample >= MIN_OVERSAMPLE && oversample <= MAX_OVERSAMPLE)) {
      throw new RangeError(`oversample must be in [${MIN_OVERSAMPLE}, ${MAX_OVERSAMPLE}], got ${oversample}`);
    }
    if (options.numCandidates !== undefined && !(Number.isInteger(options.numCandidates) && options.numCandidates >= k && options.numCandidates <= MAX_NUM_CANDIDATES)) {
      throw new RangeError(`numCandidates must be an integer in [k, ${MAX_NUM_CANDIDATES}], got ${options.numCandidates}`);
    }
    if (vector.length !== this.dims) throw new RangeError(`vector has ${vector.length} dims, index ${this.name} has ${this.dims}`);
    const field = this.reader.field.name;
    const candidates = Math.ceil(k * oversample);
    if (candidates > MAX_RESCORE_CANDIDATES) {
      throw new RangeError(`k x oversample must be at most ${MAX_RESCORE_CANDIDATES}, got ${k} x ${oversample} = ${candidates}`);
    }
    const knn = new KnnFloatVectorQuery(field, vector, candidates, {
      numCandidates: options.numCandidates !== undefined
        ? Math.max(candidates, options.numCandidates)
        : Math.min(MAX_NUM_CANDIDATES, Math.max(candidates * DEFAULT_EF_PER_CANDIDATE, DEFAULT_NUM_CANDIDATES)),
    });
    const query = RescoreTopNQuery.createFullPrecisionRescorerQuery(knn, vector, field, k);
    const outcome = await this.searcher.search(query, k, { readPath: options.readPath, prefetchPolicy: options.prefetchPolicy, signal: options.signal });
    const leaves = this.reader.leaves;
    const hits: SearchHit[] = outcome.topDocs.scoreDocs.map((sd) => {
      const leaf = leafOf(leaves, sd.doc);
      return { id: leaf.reader.id(sd.doc - leaf.docBase), doc: sd.doc, score: sd.score };
    });
    return { hits, totalHits: outcome.topDocs.totalHits.value, stats: outcome.stats };
  }

  async describe(): Promise<IndexDescription> {
    return describeReader(this.reader, this.name, this.searcher.readPath);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reader.close();
    // Workers free this index's codes, graphs and mappings; the last open index takes the pool with it.
    if (Executor.exists()) Executor.get().releaseIndex(this.reader.id);
    if (--openCount === 0) await Executor.shutdown();
  }
}

/**
 * What `GET /v1/indexes` and `prescore info` report: field, dims, similarity, segments, bytes, and
 * the fraction of fp32 vector pages in the page cache (mincore). Needs no executor.
 */
export function describeReader(reader: IndexReader, name: string, defaultReadPath: ReadPath): IndexDescription {
  const segments = reader.leaves.map((l) => ({
    name: l.reader.name,
    docBase: l.docBase,
    docs: l.reader.maxDoc,
    hasGraph: l.reader.handle.graph !== null,
    bytes: l.reader.bytes,
  }));
  const bytes = { vectors: 0, codes: 0, graph: 0, total: 0 };
  let resident = 0;
  for (const s of reader.leaves) {
    bytes.vectors += s.reader.bytes.vectors;
    bytes.codes += s.reader.bytes.codes;
    bytes.graph += s.reader.bytes.graph;
    const v = s.reader.handle.vectors;
    if (v.size > 0) resident += residentFraction(v.path) * s.reader.bytes.vectors;
  }
  bytes.total = bytes.vectors + bytes.codes + bytes.graph;
  return {
    name,
    dir: reader.dir,
    field: reader.field.name,
    similarity: reader.field.similarity.userName,
    dims: reader.field.dims,
    docs: reader.maxDoc,
    segments,
    bytes,
    residentFraction: bytes.vectors > 0 ? resident / bytes.vectors : 0,
    defaultReadPath,
  };
}
