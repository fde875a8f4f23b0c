/**
 * The real data sets bench:recall runs on, loaded into memory (or mapped), with exact ground truth.
 *
 * - Fashion-MNIST (Debian package `dataset-fashion-mnist`): the 60,000 training images as the
 *   base, the first 1,000 test images as queries, 784 dims (pixels 0..255 as floats).
 * - MiniLM: the all-MiniLM-L6-v2 sentence vectors of the npm package `@sap-ux/fiori-docs-embeddings`
 *   (384 dims, unit length; 778 vectors in the version installed): every 8th vector is held out
 *   as a query, the rest is the base.
 * - gen: a `prescore gen` data set (base.fvecs mapped, query.fvecs, groundtruth.ivecs).
 *
 * Ground truth is computed by brute force in float64 (cached next to the bench's indexes). Recall
 * is tie-aware: a hit counts when its exact similarity is at least the k-th best (pixel data has
 * exact ties in Euclidean distance).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { MappedFile } from '../../segments/store/native/MappedFile.js';
import { readAllVectors, readIvecs, writeFvecs } from '../../segments/input/index.js';
import { buildIndex } from '../api/buildIndex.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { Kernels } from '../../segments/kernels/Kernels.js';
import type { FloatVectorSource } from '../../segments/quantized/ScalarQuantizedVectorsWriter.js';

export interface RecallSet {
  readonly name: string;
  readonly similarity: VectorSimilarityFunction;
  readonly dims: number;
  readonly base: FloatVectorSource;
  readonly queries: Float32Array[];
  /** Per query: the exact top ids (at least k), best first. */
  readonly truth: Int32Array[];
  /** Per query: the exact similarity of the k-th best (tie-aware recall); NaN: compare ids only. */
  readonly kthScore: Float64Array;
  /** The exact similarity used for ground truth and rescoring (float64; higher is better). */
  exact(query: Float32Array, ord: number): number;
  /** The base as an fvecs file on disk, when the set has one (gen); others are written out to build. */
  readonly input?: string;
  close(): void;
}

export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';

function readIdxImages(path: string, limit = Infinity): { n: number; dims: number; data: Float32Array } {
  if (!existsSync(path)) throw new Error(`${path} not found: apt-get install dataset-fashion-mnist`);
  const b = gunzipSync(readFileSync(path));
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (view.getInt32(0) !== 2051) throw new Error(`${path}: not an idx3 image file`);
  const n = Math.min(limit, view.getInt32(4));
  const dims = view.getInt32(8) * view.getInt32(12);
  const data = new Float32Array(n * dims);
  for (let i = 0; i < n * dims; i++) data[i] = b[16 + i];
  return { n, dims, data };
}

function arraySource(data: Float32Array, dims: number): FloatVectorSource {
  return { size: data.length / dims, dims, vector: (ord) => data.subarray(ord * dims, (ord + 1) * dims) };
}

/** float64 similarity of two vectors (monotone in Lucene's score for that similarity). */
function exactFn(similarity: VectorSimilarityFunction): (q: Float32Array, v: Float32Array) => number {
  if (similarity === VectorSimilarityFunction.EUCLIDEAN) {
    return (q, v) => {
      let s = 0;
      for (let i = 0; i < q.length; i++) {
        const d = q[i] - v[i];
        s += d * d;
      }
      return -s;
    };
  }
  if (similarity === VectorSimilarityFunction.COSINE) {
    return (q, v) => {
      let d = 0,
        nq = 0,
        nv = 0;
      for (let i = 0; i < q.length; i++) {
        d += q[i] * v[i];
        nq += q[i] * q[i];
        nv += v[i] * v[i];
      }
      return d / Math.sqrt(nq * nv);
    };
  }
  return (q, v) => {
    let d = 0;
    for (let i = 0; i < q.length; i++) d += q[i] * v[i];
    return d;
  };
}

const TRUTH_K = 100;

/**
 * Exact top TRUTH_K by brute force, cached in `cacheFile`: a float32 SIMD pass (Kernels.dotBatch)
 * shortlists 2 x TRUTH_K per query, which are then ranked by the float64 similarity.
 */
async function bruteForceTruth(
  set: { base: FloatVectorSource; queries: Float32Array[]; similarity: VectorSimilarityFunction },
  exact: (q: Float32Array, v: Float32Array) => number,
  k: number,
  cacheFile: string,
): Promise<{ truth: Int32Array[]; kthScore: Float64Array }> {
  const { base, queries } = set;
  const kk = Math.min(TRUTH_K, base.size);
  if (existsSync(cacheFile)) {
    const b = readFileSync(cacheFile);
    const ids = new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + queries.length * kk * 4));
    const scores = new Float64Array(b.buffer.slice(b.byteOffset + queries.length * kk * 4, b.byteOffset + b.byteLength));
    if (scores.length === queries.length * kk) return unpack(ids, scores);
  }
  const dims = base.dims;
  const n = base.size;
  const euclidean = set.similarity === VectorSimilarityFunction.EUCLIDEAN;
  const normalize = set.similarity === VectorSimilarityFunction.COSINE;
  const kernels = await Kernels.load();
  const docsPtr = kernels.alloc(n * dims * 4);
  const norms = new Float64Array(n);
  {
    const f32 = kernels.f32();
    for (let o = 0; o < n; o++) {
      const v = base.vector(o);
      let s = 0;
      for (let i = 0; i < dims; i++) s += v[i] * v[i];
      norms[o] = s;
      const scale = normalize ? 1 / Math.sqrt(s) : 1;
      for (let i = 0; i < dims; i++) f32[(docsPtr >>> 2) + o * dims + i] = v[i] * scale;
    }
  }
  const BATCH = 16;
  const qPtr = kernels.alloc(BATCH * dims * 4);
  const outPtr = kernels.alloc(BATCH * n * 4);
  const ids = new Int32Array(queries.length * kk);
  const scores = new Float64Array(queries.length * kk);
  const shortlist = Math.min(n, 2 * kk);
  const approx = new Float32Array(n);
  for (let q0 = 0; q0 < queries.length; q0 += BATCH) {
    const nq = Math.min(BATCH, queries.length - q0);
    const f32 = kernels.f32();
    for (let j = 0; j < nq; j++) f32.set(queries[q0 + j], (qPtr >>> 2) + j * dims);
    kernels.dotBatch(qPtr, nq, docsPtr, n, dims, outPtr);
    for (let j = 0; j < nq; j++) {
      const row = kernels.f32().subarray((outPtr >>> 2) + j * n, (outPtr >>> 2) + (j + 1) * n);
      for (let o = 0; o < n; o++) approx[o] = euclidean ? 2 * row[o] - norms[o] : row[o];
      const threshold = Float32Array.from(approx).sort()[n - shortlist];
      const cands: { o: number; s: number }[] = [];
      const q = queries[q0 + j];
      for (let o = 0; o < n; o++) if (approx[o] >= threshold) cands.push({ o, s: exact(q, base.vector(o)) });
      cands.sort((a, b) => b.s - a.s || a.o - b.o);
      for (let r = 0; r < kk; r++) {
        ids[(q0 + j) * kk + r] = cands[r].o;
        scores[(q0 + j) * kk + r] = cands[r].s;
      }
    }
  }
  writeFileSync(cacheFile, Buffer.concat([Buffer.from(ids.buffer), Buffer.from(scores.buffer)]));
  return unpack(ids, scores);

  function unpack(idArr: Int32Array, scoreArr: Float64Array) {
    const truth: Int32Array[] = [];
    const kthScore = new Float64Array(queries.length);
    for (let qi = 0; qi < queries.length; qi++) {
      truth.push(idArr.subarray(qi * kk, (qi + 1) * kk));
      kthScore[qi] = scoreArr[qi * kk + k - 1];
    }
    return { truth, kthScore };
  }
}

async function inMemorySet(
  name: string,
  similarity: VectorSimilarityFunction,
  base: Float32Array,
  queries: Float32Array[],
  dims: number,
  k: number,
  cacheDir: string,
): Promise<RecallSet> {
  const source = arraySource(base, dims);
  const fn = exactFn(similarity);
  const { truth, kthScore } = await bruteForceTruth({ base: source, queries, similarity }, fn, k, join(cacheDir, `${name}-${queries.length}.truth`));
  return { name, similarity, dims, base: source, queries, truth, kthScore, exact: (q, ord) => fn(q, source.vector(ord)), close: () => {} };
}

export function fashionMnist(similarity: VectorSimilarityFunction, queryCount: number, k: number, cacheDir: string): Promise<RecallSet> {
  const train = readIdxImages(join(FASHION_MNIST_DIR, 'train-images-idx3-ubyte.gz'));
  const test = readIdxImages(join(FASHION_MNIST_DIR, 't10k-images-idx3-ubyte.gz'), queryCount);
  const queries = Array.from({ length: test.n }, (_, i) => test.data.slice(i * test.dims, (i + 1) * test.dims));
  mkdirSync(cacheDir, { recursive: true });
  return inMemorySet(`fmnist-${similarity.userName}`, similarity, train.data, queries, train.dims, k, cacheDir);
}

export function miniLm(k: number, cacheDir: string): Promise<RecallSet> {
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = join(require.resolve('@sap-ux/fiori-docs-embeddings/package.json'), '..', 'data', 'embeddings');
  } catch {
    throw new Error('@sap-ux/fiori-docs-embeddings is not installed (npm install: it is a devDependency)');
  }
  const meta = JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8')) as { dimensions: number; totalVectors: number };
  const b = readFileSync(join(dir, 'embeddings.bin'));
  const dims = meta.dimensions;
  if (b.byteLength !== meta.totalVectors * dims * 4) throw new Error(`embeddings.bin: ${b.byteLength} bytes, expected ${meta.totalVectors} x ${dims} float32`);
  const all = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const queries: Float32Array[] = [];
  const base: number[] = [];
  for (let i = 0; i < meta.totalVectors; i++) {
    if (i % 8 === 0) queries.push(all.slice(i * dims, (i + 1) * dims));
    else base.push(i);
  }
  const data = new Float32Array(base.length * dims);
  base.forEach((row, j) => {
    data.set(all.subarray(row * dims, (row + 1) * dims), j * dims);
  });
  mkdirSync(cacheDir, { recursive: true });
  return inMemorySet('minilm', VectorSimilarityFunction.COSINE, data, queries, dims, k, cacheDir);
}

/** A `prescore gen` set: base.fvecs mapped (it may exceed what fits in a typed array), exact truth from the generator. */
export async function genSet(dir: string, queryCount: number): Promise<RecallSet> {
  const spec = JSON.parse(readFileSync(join(dir, 'dataset.json'), 'utf8')) as { n: number; dim: number; similarity?: string };
  const similarity = VectorSimilarityFunction.fromName(spec.similarity ?? 'cosine');
  const dims = spec.dim;
  const row = (dims + 1) * 4;
  const mapped = MappedFile.open(join(dir, 'base.fvecs'), 0, spec.n * row);
  const base: FloatVectorSource = {
    size: spec.n,
    dims,
    vector: (ord) => {
      const rel = ord * row + 4;
      const c = mapped.chunkIndex(rel);
      const first = (rel - mapped.chunkStart(c)) >>> 2;
      return mapped.chunkFloats(c).subarray(first, first + dims);
    },
  };
  const q = await readAllVectors(join(dir, 'query.fvecs'));
  const gt = await readIvecs(join(dir, 'groundtruth.ivecs'));
  const n = Math.min(queryCount, q.count);
  const queries = Array.from({ length: n }, (_, i) => q.vectors.slice(i * q.dims, (i + 1) * q.dims));
  const truth = Array.from({ length: n }, (_, i) => gt.data.slice(i * gt.dims, (i + 1) * gt.dims));
  const fn = exactFn(similarity);
  return {
    name: `gen-${spec.n >= 1e6 ? `${spec.n / 1e6}m` : `${spec.n / 1e3}k`}-${dims}`,
    similarity,
    dims,
    base,
    queries,
    truth,
    kthScore: new Float64Array(n).fill(NaN),
    exact: (qv, ord) => fn(qv, base.vector(ord)),
    input: join(dir, 'base.fvecs'),
    close: () => mapped.close(),
  };
}

/** Tie-aware recall@k of `hits` (ords, best first). */
export function recallOf(set: RecallSet, qi: number, hits: ArrayLike<number>, k: number): number {
  const kth = set.kthScore[qi];
  let found = 0;
  if (Number.isNaN(kth)) {
    const want = new Set(set.truth[qi].subarray(0, k));
    for (let i = 0; i < Math.min(k, hits.length); i++) if (want.has(hits[i])) found++;
  } else {
    const eps = 1e-9 * Math.max(1, Math.abs(kth));
    for (let i = 0; i < Math.min(k, hits.length); i++) if (set.exact(set.queries[qi], hits[i]) >= kth - eps) found++;
  }
  return found / k;
}

/**
 * A set by its bench name (`fmnist-cosine`, `fmnist-euclidean`, `minilm`, `gen`); null, saying
 * why, when the gen set has not been generated in `genDir`.
 */
export async function loadRecallSet(name: string, options: { queryCount: number; k: number; cacheDir: string; genDir: string }): Promise<RecallSet | null> {
  if (name === 'fmnist-cosine') return fashionMnist(VectorSimilarityFunction.COSINE, options.queryCount, options.k, options.cacheDir);
  if (name === 'fmnist-euclidean') return fashionMnist(VectorSimilarityFunction.EUCLIDEAN, options.queryCount, options.k, options.cacheDir);
  if (name === 'minilm') return miniLm(options.k, options.cacheDir);
  if (name === 'gen') {
    if (!existsSync(join(options.genDir, 'dataset.json'))) {
      console.log(`gen: no data set in ${options.genDir} (prescore gen --n 200000 --dim 768 --queries 200 --out ${options.genDir}); skipped`);
      return null;
    }
    return genSet(options.genDir, options.queryCount);
  }
  throw new Error(`unknown set ${name}: one of fmnist-cosine, fmnist-euclidean, minilm, gen`);
}

/**
 * The set's index built with `prescore build`'s defaults into `<cacheDir>/<set>/index` unless it is
 * there (not calibrated: a bench that needs a calibration makes or times it); `buildMs` is null
 * when it existed.
 */
export async function defaultIndexOf(set: RecallSet, cacheDir: string): Promise<{ dir: string; buildMs: number | null }> {
  const dir = join(cacheDir, set.name);
  const indexDir = join(dir, 'index');
  if (existsSync(indexDir)) return { dir: indexDir, buildMs: null };
  mkdirSync(dir, { recursive: true });
  let input = set.input;
  if (input === undefined) {
    const data = new Float32Array(set.base.size * set.dims);
    for (let o = 0; o < set.base.size; o++) data.set(set.base.vector(o), o * set.dims);
    input = join(dir, 'base.fvecs');
    await writeFvecs(input, data, set.dims);
  }
  const t0 = performance.now();
  await buildIndex({ input, out: indexDir, similarity: set.similarity });
  return { dir: indexDir, buildMs: performance.now() - t0 };
}
