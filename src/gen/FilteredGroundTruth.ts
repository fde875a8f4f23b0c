import { readFile } from 'node:fs/promises';
import type { TaskExecutor } from '../../query/executor/TaskExecutor.js';
import type { Progress } from '../progress/Progress.js';
import type { DatasetSpec } from './DatasetSpec.js';
import { CLUSTERS } from './EmbeddingModel.js';
import { GEN_FILTERED_GROUND_TRUTH } from './filteredGroundTruthTask.js';
import { type FilterColumns, indexFilters } from './FilteredScorer.js';
import { type FilterEntry, PER_QUERY } from './FilterSet.js';
import { TopK } from './GroundTruth.js';

/**
 * filtered_groundtruth.ivecs: one row per filters.json entry, in its order (query-major: row
 * q * PER_QUERY + f is query q with filter f), each row in the TEXMEX layout with its own length:
 * int32 LE n, then n int32 LE base row ids (0-based rows of base.fvecs), best first, where
 * n = min(k, cardinality) (the entry's `truthLength`). So a row is shorter than k only when fewer
 * docs pass its filter, and n = 0 (a 4-byte row) when none does. Ranking as groundtruth.ivecs:
 * exact float64 similarity of the float32 vectors, ties to the lower row.
 * Readers that need equal rows: readFilteredGroundTruth below.
 */
export interface FilteredGroundTruth {
  /** One row per entry: min(k, cardinality) base row ids, best first. */
  readonly rows: Int32Array[];
  readonly kernel: 'wasm' | 'js' | 'mixed';
  /** (query, doc) pairs scored in float64. */
  readonly rescored: number;
  /** Passes over the base: one per chunk of queries. */
  readonly passes: number;
}

/**
 * Memory budget of a chunk of queries (compiling its filters, CLUSTERS doubles each, before they
 * are indexed; the index, two Uint32 per query and cluster; two top-k heaps per filter in each
 * task): bounds the queries per chunk, so a task's memory does not grow with Q, at the price of
 * one more pass over the base per chunk (at k = 100: ~190 queries a chunk).
 */
const CHUNK_STATE_BYTES = 32 << 20;

export interface FilteredGroundTruthInput {
  readonly executor: TaskExecutor & { readonly threads: number };
  readonly basePath: string;
  readonly spec: Pick<DatasetSpec, 'n' | 'dim' | 'k' | 'similarity'>;
  /** All queries x dim, backed by a SharedArrayBuffer. */
  readonly queries: Float32Array;
  /** filters.json's entries (queries x PER_QUERY). */
  readonly entries: readonly FilterEntry[];
  readonly columns: FilterColumns;
  /** Counts base rows read: n per chunk of queries (chunkPlan). */
  readonly progress?: Progress;
  readonly kernel?: 'auto' | 'wasm' | 'js';
}

/** How the (query, filter) ground truth is split: query chunks x base ranges. */
export function chunkPlan(n: number, queries: number, k: number, dim: number, threads: number): { queriesPerChunk: number; chunks: number; rowsPerTask: number } {
  const perQuery = PER_QUERY * (CLUSTERS * 8 + 1 + Math.min(k, n) * 24) + CLUSTERS * 8 + dim * 4;
  const queriesPerChunk = Math.max(1, Math.min(queries, Math.floor(CHUNK_STATE_BYTES / perQuery)));
  const chunks = Math.ceil(queries / queriesPerChunk);
  const rangesPerChunk = Math.max(1, Math.ceil((threads * 4) / chunks));
  const rowsPerTask = Math.max(1024, Math.ceil(n / rangesPerChunk));
  return { queriesPerChunk, chunks, rowsPerTask };
}

/**
 * The exact filtered top-k of every filters.json entry on the executor: the queries are split
 * into chunks and the base into ranges; a `gen.filteredGroundTruth` task reads one range once
 * for one chunk and evaluates all of the chunk's filters on it (so one pass over the base per
 * chunk, not one per filter), and the per-range top-k lists are merged here. Each entry's count
 * of passing docs, summed over ranges, must equal its cardinality in filters.json: the ground
 * truth and the file agree on what the DSL selects, or generation fails.
 */
export async function computeFilteredGroundTruth(input: FilteredGroundTruthInput): Promise<FilteredGroundTruth> {
  const { executor, basePath, spec, queries, entries, columns, progress } = input;
  const { n, dim, similarity } = spec;
  const k = Math.min(spec.k, n);
  const Q = Math.floor(queries.length / dim);
  if (entries.length !== Q * PER_QUERY) throw new RangeError(`${entries.length} filter entries for ${Q} queries x ${PER_QUERY}`);
  const { queriesPerChunk, chunks, rowsPerTask } = chunkPlan(n, Q, k, dim, executor.threads);
  const counter = new BigInt64Array(new SharedArrayBuffer(8));
  progress?.attach(counter);
  const ids = new Int32Array(entries.length * k);
  const sizes = new Int32Array(entries.length);
  const kernels = new Set<'wasm' | 'js'>();
  let rescored = 0;
  const tasks: Promise<void>[] = [];
  try {
    for (let chunk = 0; chunk < chunks; chunk++) {
      const q0 = chunk * queriesPerChunk;
      const qn = Math.min(queriesPerChunk, Q - q0);
      const slot0 = q0 * PER_QUERY;
      const slots = qn * PER_QUERY;
      const filters = indexFilters(
        entries.slice(slot0, slot0 + slots).map((e) => e.filter),
        PER_QUERY,
        (i) => `filters.json entries[${slot0 + i}].filter`,
      );
      const top = new TopK(slots, k);
      const counts = new Float64Array(slots);
      let left = Math.ceil(n / rowsPerTask);
      for (let first = 0; first < n; first += rowsPerTask) {
        const args = {
          path: basePath,
          dim,
          firstRow: first,
          rows: Math.min(rowsPerTask, n - first),
          queries: queries.subarray(q0 * dim, (q0 + qn) * dim),
          filters,
          k,
          similarity,
          columns,
          counter,
          kernel: input.kernel ?? 'auto',
        };
        tasks.push(
          executor.run(GEN_FILTERED_GROUND_TRUTH, args).then((partial) => {
            top.merge({ queries: partial.slots, k: partial.k, ids: partial.ids, scores: partial.scores });
            for (let s = 0; s < slots; s++) counts[s] += partial.counts[s];
            kernels.add(partial.kernel);
            rescored += partial.rescored;
            if (--left > 0) return;
            const rows = top.resultRows();
            for (let s = 0; s < slots; s++) {
              const e = entries[slot0 + s];
              if (counts[s] !== e.cardinality) {
                throw new Error(`internal error: query ${e.query}, filter ${e.name}: ${counts[s]} docs pass its filter, filters.json says ${e.cardinality}`);
              }
              sizes[slot0 + s] = rows.sizes[s];
            }
            ids.set(rows.ids, slot0 * k);
          }),
        );
      }
    }
    await Promise.all(tasks);
    progress?.finish();
  } catch (err) {
    progress?.stop();
    await Promise.allSettled(tasks);
    throw err;
  }
  const rows = Array.from({ length: entries.length }, (_, i) => ids.subarray(i * k, i * k + sizes[i]));
  return { rows, kernel: kernels.size === 1 ? [...kernels][0] : 'mixed', rescored, passes: chunks };
}

/** The ivecs bytes of rows of their own length (the layout above). */
export function raggedIvecs(rows: readonly Int32Array[]): Uint8Array {
  let ints = 0;
  for (const r of rows) ints += 1 + r.length;
  const out = new Int32Array(ints);
  let at = 0;
  for (const r of rows) {
    out[at++] = r.length;
    out.set(r, at);
    at += r.length;
  }
  return new Uint8Array(out.buffer);
}

/** Reads filtered_groundtruth.ivecs (rows of their own length, possibly empty). */
export async function readFilteredGroundTruth(path: string): Promise<Int32Array[]> {
  const buf = await readFile(path);
  if (buf.length % 4 !== 0) throw new Error(`${path}: ${buf.length} bytes is not a whole number of int32 values`);
  const ints = new Int32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
  const rows: Int32Array[] = [];
  for (let at = 0; at < ints.length; ) {
    const len = ints[at];
    if (len < 0 || at + 1 + len > ints.length) throw new Error(`${path}: row ${rows.length}: length ${len} runs past the end of the file`);
    rows.push(ints.subarray(at + 1, at + 1 + len));
    at += 1 + len;
  }
  return rows;
}
