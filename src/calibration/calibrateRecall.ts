import { closeSync, openSync, readSync } from 'node:fs';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { FixedBitSet } from '../../query/filter/FixedBitSet.js';
import type { SimilarityName } from '../../segments/index/VectorSimilarityFunction.js';
import type { IndexReader, LeafReaderContext } from '../../segments/index/IndexReader.js';
import type { RecallCalibration, RecallPoint } from '../../segments/index/RecallCalibration.js';
import { MAX_RECALL_TARGET } from '../../segments/index/RecallCalibration.js';
import { docToOrd, openablePath, ordToDoc, shared } from '../../segments/index/SegmentHandle.js';
import type { Executor } from '../executor/Executor.js';
import type { GenSimilarity } from '../gen/DatasetSpec.js';
import { TopK } from '../gen/GroundTruth.js';
import { Progress, type ProgressStream } from '../progress/Progress.js';
import { SEGMENT_GROUND_TRUTH, type SegmentGroundTruthArgs } from './segmentGroundTruthTask.js';

/**
 * The oversample settings a calibration measures, cheapest first: steps of ~1.25-1.5x, so the
 * cheapest setting that reaches a target costs at most ~1.3x the rescoring of the exact setting
 * that just reaches it. Measuring stops at the first whose lower bound reaches MAX_RECALL_TARGET.
 */
export const CALIBRATION_OVERSAMPLES: readonly number[] = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, 50, 64, 80, 100];

/**
 * Queries a calibration searches by default. With 200, a lower bound at recall 0.95 sits ~0.01
 * under the mean (the per-query recall@10 spread measured on gen 200k x 768 at oversample 5: sd
 * 0.08), and the whole calibration of a 200k x 768 index costs ~10 s on two workers.
 */
export const DEFAULT_CALIBRATION_QUERIES = 200;

/**
 * One-sided 99%: the lower bounds are mean - Z x sd / sqrt(queries). Measured with
 * bench:recall-target (held-out queries, 4 sets x 3 targets): at 95% the generated 200k x 768
 * set's 0.99 took oversample 8, where its held-out queries (noisier than its documents) reached
 * 0.9895; at 99% it takes 10 (0.9920), and every other row kept its setting or took one step more.
 */
export const CALIBRATION_CONFIDENCE = 0.99;
const Z = 2.3263;

/** What a calibration searches: the index's own search, as a user calls it. */
export interface CalibratedSearch {
  search(
    vector: Float32Array,
    options: { readonly k: number; readonly oversample: number; readonly numCandidates: number; readonly signal?: AbortSignal },
  ): Promise<{ readonly hits: readonly { readonly doc: number }[]; readonly stats: { readonly timings: { readonly totalMs: number } } }>;
}

export interface CalibrateRecallOptions {
  /** Held-out queries (count x dims): searched as given. Default: a sample of the index's own live docs. */
  readonly queries?: Float32Array;
  /** Docs sampled as queries when no held-out ones are given (default DEFAULT_CALIBRATION_QUERIES). */
  readonly sample?: number;
  /** Seed of the sample (default 1: a calibration measured again picks the same docs). */
  readonly seed?: number;
  /** recall@k (default 10). */
  readonly k?: number;
  /** The beam a setting searches with, given its candidates (the engine's default beam). */
  readonly beam: (candidates: number) => number;
  /** Stored as the index's default target (RecallCalibration.defaultTarget). */
  readonly defaultTarget?: number | null;
  /**
   * Searches in flight at once. Default: the executor's threads + 1, since searches also run on
   * the calling thread (Fashion-MNIST, 2 workers: 2.5-2.7 s at 3 against 3.2-3.7 s at 2; 4 no better).
   */
  readonly concurrency?: number;
  /** Progress on stderr (default), off, or to a stream. */
  readonly progress?: boolean | ProgressStream;
  readonly signal?: AbortSignal;
}

/**
 * Measures what oversample and beam reach what recall@k on this index: exact fp32 ground truth
 * for the sample (on the executor, every segment's vectors in parallel ranges), then the sample
 * searched through `index` at each of CALIBRATION_OVERSAMPLES, with the default beam and (once
 * the recall is in a target's range) smaller ones (CALIBRATION_BEAM_FRACTIONS). A doc used as a
 * query is left out of its own neighbours and of its hits: it is searched with k + 1 and one more
 * candidate, so the other docs get exactly the k x oversample candidates a search at k gets.
 */
export async function calibrateRecall(index: CalibratedSearch, reader: IndexReader, executor: Executor, options: CalibrateRecallOptions): Promise<RecallCalibration> {
  const k = options.k ?? 10;
  const dims = reader.field.dims;
  const held = options.queries;
  if (held !== undefined && (held.length === 0 || held.length % dims !== 0)) throw new RangeError(`held-out queries must be count x ${dims} floats, got ${held.length}`);
  const sample = held === undefined ? sampleDocuments(reader, options.sample ?? DEFAULT_CALIBRATION_QUERIES, options.seed ?? 1) : null;
  const queries = shared(held ?? sample!.vectors);
  const count = queries.length / dims;
  if (count === 0) throw new RangeError(`index ${reader.dir} has no live doc with a vector to calibrate with`);
  const self = sample?.docs ?? null;
  const truthK = k + (self ? 1 : 0);
  const progress = (label: string, total: number, unit: string) =>
    new Progress({
      label,
      total,
      unit,
      ...(typeof options.progress === 'object' ? { stream: options.progress } : {}),
      ...(options.progress === false ? { enabled: false } : {}),
    });
  const truth = await groundTruth(reader, executor, queries, truthK, progress, options.signal);
  const neighbours = (q: number): Set<number> => {
    const out = new Set<number>();
    for (let j = 0; j < truthK && out.size < k; j++) {
      const doc = truth[q * truthK + j]!;
      if (doc >= 0 && doc !== self?.[q]) out.add(doc);
    }
    return out;
  };
  const truths = Array.from({ length: count }, (_, q) => neighbours(q));

  const points: RecallPoint[] = [];
  /** The default beam's points, one per oversample: where measuring stops. */
  const defaults: RecallPoint[] = [];
  const concurrency = Math.max(1, options.concurrency ?? executor.threads + 1);
  const searching = progress('calibrate: searches', count * CALIBRATION_OVERSAMPLES.length, 'queries x oversamples');
  try {
    let smallerBeams = false;
    for (const oversample of CALIBRATION_OVERSAMPLES) {
      const candidates = Math.ceil(k * oversample);
      const settings: MeasuredSetting[] = beamsAt(options.beam(candidates), candidates, smallerBeams).map((numCandidates) => ({
        numCandidates,
        // With the query's own doc among the hits: k + 1 hits and one more candidate than k x oversample.
        options: self
          ? { k: k + 1, oversample: Math.max(1, (candidates + 0.5) / (k + 1)), numCandidates: Math.max(numCandidates, candidates + 1), signal: options.signal }
          : { k, oversample, numCandidates, signal: options.signal },
        recalls: new Float64Array(count),
        ms: 0,
      }));
      let next = 0;
      const worker = async () => {
        for (let q = next++; q < count; q = next++) {
          const want = truths[q]!;
          // Each query searches every beam, starting at a different one: their times share the machine's drift.
          for (let j = 0; j < settings.length; j++) {
            const setting = settings[(q + j) % settings.length]!;
            const result = await index.search(queries.subarray(q * dims, (q + 1) * dims), setting.options);
            let found = 0;
            let taken = 0;
            for (const hit of result.hits) {
              if (hit.doc === self?.[q]) continue;
              if (taken++ === k) break;
              if (want.has(hit.doc)) found++;
            }
            setting.recalls[q] = want.size === 0 ? 1 : found / want.size;
            setting.ms += result.stats.timings.totalMs;
          }
          searching.tick(1);
        }
      };
      // Every search settles before a failure is thrown: a closing index must not be released under one.
      const settled = await Promise.allSettled(Array.from({ length: Math.min(concurrency, count) }, worker));
      for (const r of settled) if (r.status === 'rejected') throw r.reason;
      for (const setting of settings) {
        const { mean, lowerBound } = meanAndLowerBound(setting.recalls);
        points.push({ oversample, numCandidates: setting.numCandidates, recall: mean, lowerBound, meanMs: setting.ms / count });
      }
      const atDefault: RecallPoint = points[points.length - settings.length]!;
      defaults.push(atDefault);
      if (atDefault.lowerBound >= MAX_RECALL_TARGET || atDefault.recall >= PLATEAU_RECALL || plateaued(defaults)) break;
      smallerBeams = atDefault.recall >= SMALLER_BEAMS_FROM_RECALL;
    }
    searching.finish();
  } catch (e) {
    searching.stop();
    throw e;
  }
  return {
    k,
    queries: count,
    source: self ? 'documents' : 'held-out',
    generation: reader instanceof DirectoryReader ? reader.commit.generation : 0,
    docs: liveDocCount(reader),
    measuredAt: Date.now(),
    confidence: CALIBRATION_CONFIDENCE,
    defaultTarget: options.defaultTarget ?? null,
    points,
  };
}

/**
 * The beams a calibration measures at each oversample, as fractions of the engine's default beam
 * for its candidates: the default reaches the most, a smaller one visits fewer nodes, and
 * whether the smaller one still reaches a target at the same oversample depends on the index.
 * Fashion-MNIST cosine (one 60k segment, 300 queries, recall@10 / nodes visited): oversample 3
 * at beam 200 / 100 / 50 gave 0.9623 / 0.9623 / 0.9590 for 1,426 / 925 / 603 visits, so a beam
 * of 100 reached 0.96 at 0.65x the first phase. The 1M x 1024 set's 131k segments lose
 * 0.003-0.005 at beam 100 (see DEFAULT_EF_PER_CANDIDATE). bench:peers (gen 200k x 768, warm):
 * oversample 3 at beam 50 reached 0.936 at 0.50 ms against 0.945 at 0.98 ms at beam 200.
 */
export const CALIBRATION_BEAM_FRACTIONS: readonly number[] = [1, 0.5, 0.25];

/**
 * Smaller beams are measured at an oversample once the default beam's mean recall at the one
 * before reached this: below it they only add time to a calibration (they reach less than the
 * default beam at the same oversample), and no target a user names is that low.
 */
const SMALLER_BEAMS_FROM_RECALL = 0.8;

/** One setting's searches at one oversample, as they are measured. */
interface MeasuredSetting {
  readonly numCandidates: number;
  readonly options: Parameters<CalibratedSearch['search']>[1];
  readonly recalls: Float64Array;
  ms: number;
}

/** The beams measured at `candidates` (the default beam first, then smaller ones above the candidates), descending. */
function beamsAt(defaultBeam: number, candidates: number, smaller: boolean): number[] {
  if (!smaller) return [defaultBeam];
  const beams = [defaultBeam];
  for (const f of CALIBRATION_BEAM_FRACTIONS) {
    const beam = Math.round(defaultBeam * f);
    if (beam > candidates && beam < beams.at(-1)!) beams.push(beam);
  }
  return beams;
}

/**
 * A mean recall past which more candidates buy nothing a target can use: the settings beyond it
 * are the calibration's most expensive (Fashion-MNIST cosine sat at 0.999 from oversample 20 to
 * 40, 5.1 s of calibration against 2.4 s for euclidean, which stopped at 13). A target above the
 * bound measured there (~0.996) is refused.
 */
const PLATEAU_RECALL = 0.999;

/**
 * Whether the last three settings lifted the mean by less than 0.001 together: what keeps a
 * 0.999 bound out of reach (a doc the graph never reaches, duplicate vectors) does not give way
 * to more candidates.
 */
function plateaued(points: readonly RecallPoint[]): boolean {
  const n = points.length;
  return n >= 4 && points[n - 1]!.recall - points[n - 4]!.recall < 0.001;
}

/** Mean of per-query recalls and its one-sided lower confidence bound (normal approximation), clamped to [0, mean]. */
export function meanAndLowerBound(recalls: Float64Array): { mean: number; lowerBound: number } {
  const n = recalls.length;
  let sum = 0;
  for (const r of recalls) sum += r;
  const mean = sum / n;
  let ss = 0;
  for (const r of recalls) ss += (r - mean) ** 2;
  const sd = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  return { mean, lowerBound: Math.max(0, mean - (Z * sd) / Math.sqrt(n)) };
}

/** Live docs of the reader (deleted ones not counted). */
export function liveDocCount(reader: IndexReader): number {
  let n = 0;
  for (const leaf of reader.leaves) n += liveCount(leaf);
  return n;
}

function liveCount(leaf: LeafReaderContext): number {
  const live = leaf.reader.liveDocs;
  return live ? new FixedBitSet(leaf.reader.maxDoc, live).cardinality() : leaf.reader.maxDoc;
}

/** Up to `count` distinct live docs with vectors, drawn uniformly with a seeded generator, and their vectors. */
function sampleDocuments(reader: IndexReader, count: number, seed: number): { docs: Int32Array; vectors: Float32Array } {
  const dims = reader.field.dims;
  const withVectors = reader.leaves.filter((l) => l.reader.handle.vectors.size > 0);
  const total = withVectors.reduce((a, l) => a + l.reader.handle.vectors.size, 0);
  const want = Math.min(count, liveDocCount(reader), total);
  const chosen = new Map<number, LeafReaderContext>();
  let state = seed >>> 0 || 1;
  const random = () => {
    // xorshift32: reproducible across runs and platforms.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let tries = 0; chosen.size < want && tries < want * 50; tries++) {
    let pick = Math.floor(random() * total);
    const leaf = withVectors.find((l) => {
      if (pick < l.reader.handle.vectors.size) return true;
      pick -= l.reader.handle.vectors.size;
      return false;
    })!;
    const doc = ordToDoc(leaf.reader.handle.vectors, pick);
    const live = leaf.reader.liveDocs;
    if (live && ((live[doc >>> 5]! >>> (doc & 31)) & 1) === 0) continue;
    chosen.set(leaf.docBase + doc, leaf);
  }
  const picked = Int32Array.from(chosen.keys());
  const all = new Float32Array(picked.length * dims);
  picked.forEach((doc, i) => {
    const leaf = chosen.get(doc)!;
    const v = leaf.reader.handle.vectors;
    const ord = docToOrd(v, doc - leaf.docBase);
    const fd = openSync(openablePath(v), 'r');
    try {
      readSync(fd, new Uint8Array(all.buffer, i * dims * 4, dims * 4), 0, dims * 4, v.offset + ord * v.byteSize);
    } finally {
      closeSync(fd);
    }
  });
  // A zero vector is no query (cosine refuses it; it has no neighbours anyway).
  const keep = [...picked.keys()].filter((i) => all.subarray(i * dims, (i + 1) * dims).some((x) => x !== 0));
  const vectors = new Float32Array(keep.length * dims);
  keep.forEach((i, j) => {
    vectors.set(all.subarray(i * dims, (i + 1) * dims), j * dims);
  });
  return { docs: Int32Array.from(keep, (i) => picked[i]!), vectors };
}

/** The ground truth's name of each similarity (its ranking keys are in src/gen/GroundTruth.ts). */
const GROUND_TRUTH_SIMILARITY: Readonly<Record<SimilarityName, GenSimilarity>> = {
  EUCLIDEAN: 'euclidean',
  DOT_PRODUCT: 'dot_product',
  COSINE: 'cosine',
  MAXIMUM_INNER_PRODUCT: 'max_inner_product',
};

/** Exact top-k global docs of every query over the reader's live docs: queries x k, best first, -1 where fewer. */
async function groundTruth(
  reader: IndexReader,
  executor: Executor,
  queries: Float32Array,
  k: number,
  progress: (label: string, total: number, unit: string) => Progress,
  signal?: AbortSignal,
): Promise<Int32Array> {
  const dims = reader.field.dims;
  const similarity = GROUND_TRUTH_SIMILARITY[reader.field.similarity.name];
  const leaves = reader.leaves.filter((l) => l.reader.handle.vectors.size > 0);
  const total = leaves.reduce((a, l) => a + l.reader.handle.vectors.size, 0);
  const rangeOrds = Math.max(4096, Math.ceil(total / (executor.threads * 4)));
  const top = new TopK(queries.length / dims, k);
  const counter = Progress.counter();
  const bar = progress('calibrate: ground truth', total, 'vectors').attach(counter);
  // One job per range; only `threads` in flight, so that a closing index (its signal) stops the
  // queueing at once and waits for at most one range per worker, and searches are not held
  // behind a whole index's worth of queued ranges.
  const jobs: { readonly leaf: LeafReaderContext; readonly args: SegmentGroundTruthArgs }[] = [];
  for (const leaf of leaves) {
    const v = leaf.reader.handle.vectors;
    const ordToDocTable = v.ordToDoc === null ? null : shared(v.ordToDoc);
    const liveDocs = leaf.reader.liveDocs ? (shared(leaf.reader.liveDocs) as Uint32Array) : null;
    for (let first = 0; first < v.size; first += rangeOrds) {
      const ords = Math.min(rangeOrds, v.size - first);
      jobs.push({ leaf, args: { path: openablePath(v), offset: v.offset, dim: dims, firstOrd: first, ords, ordToDoc: ordToDocTable, liveDocs, queries, k, similarity, counter } });
    }
  }
  let next = 0;
  const lane = async () => {
    for (let j = next++; j < jobs.length; j = next++) {
      signal?.throwIfAborted();
      const { leaf, args } = jobs[j]!;
      const v = leaf.reader.handle.vectors;
      const partial = await executor.run(SEGMENT_GROUND_TRUTH, args);
      for (let q = 0; q < partial.queries; q++) {
        for (let i = 0; i < partial.k; i++) {
          const ord = partial.ids[q * partial.k + i]!;
          if (ord >= 0) top.offer(q, partial.scores[q * partial.k + i]!, leaf.docBase + ordToDoc(v, ord));
        }
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(executor.threads, jobs.length) }, lane));
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    bar.stop();
    throw failed.reason;
  }
  bar.finish();
  return top.resultRows().ids;
}
