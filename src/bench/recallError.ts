/**
 * `npm run bench:recall-error`: where the first phase's estimate goes wrong, per doc encoding and
 * per query precision, on one bench:recall set (default Fashion-MNIST cosine).
 *
 * Every doc is quantized exactly as a segment build does (rotation, centroid, OSQ), then
 * dequantized to its centred float vector x̃ − c; queries likewise at 4 or 8 bits, or kept exact.
 * The estimate of a doc is then (x̃ − c)·(q̃ − c) + the doc's corrective term (what Lucene's
 * estimator computes, up to per-query constants and float32 rounding), for every doc, in wasm
 * SIMD (Kernels.dotBatch). Per variant: recall@10 after exact rescoring of the top k x oversample,
 * and for the true top 30 of each query the error of the estimate against the true similarity,
 * with each query's mean error removed (a per-query constant does not change the order): its
 * spread is what mis-orders the nearest neighbours.
 *
 *   npm run bench:recall-error -- [--set fmnist-cosine|fmnist-euclidean|minilm] [--queries 300] [--bits 1,2,4]
 *
 * Doc variants: every bit count with Lucene's intervals and with unbiased ones
 * (UnbiasedInterval.ts, as a build applies them); query variants: Lucene's 4 bits, 8 bits, exact.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { packageRoot } from '../executor/packageRoot.js';
import { Kernels } from '../../segments/kernels/Kernels.js';
import { computeCentroid } from '../../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { OptimizedScalarQuantizer } from '../../segments/quantization/OptimizedScalarQuantizer.js';
import { unbiasedInterval } from '../../segments/quantization/UnbiasedInterval.js';
import { RandomizedHadamard, DEFAULT_ROTATION_SEED } from '../../segments/quantization/RandomizedHadamard.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { dotProduct } from '../../segments/util/VectorUtil.js';
import { fashionMnist, miniLm, recallOf, type RecallSet } from './recallData.js';
import { table } from './benchData.js';

const { values } = parseArgs({
  options: {
    set: { type: 'string' },
    queries: { type: 'string' },
    bits: { type: 'string' },
  },
});

const K = 10;
const OVERSAMPLES = [1, 2, 3, 5];
const TOP = 30;
const CACHE = join(packageRoot(), '.bench', 'recall');
const setName = values.set ?? 'fmnist-cosine';
const queryCount = Number(values.queries ?? 300);
let set: RecallSet;
if (setName === 'fmnist-cosine') set = await fashionMnist(VectorSimilarityFunction.COSINE, queryCount, K, CACHE);
else if (setName === 'fmnist-euclidean') set = await fashionMnist(VectorSimilarityFunction.EUCLIDEAN, queryCount, K, CACHE);
else if (setName === 'minilm') set = await miniLm(K, CACHE);
else throw new Error(`unknown set ${setName}`);
const docs = set.base.size;
const queries = set.queries.slice(0, queryCount);
const dims = set.dims;
const cosine = set.similarity === VectorSimilarityFunction.COSINE;
const euclidean = set.similarity === VectorSimilarityFunction.EUCLIDEAN;
const kernels = await Kernels.load();
const rotation = new RandomizedHadamard(dims, DEFAULT_ROTATION_SEED);
const centroid = computeCentroid(set.base, set.similarity, cosine ? 'mean' : 'lucene', rotation);

/** The vector as the quantizer sees it (normalised for COSINE, rotated), centred on the centroid. */
function centred(v: Float32Array): Float32Array {
  const out = new Float32Array(dims);
  const m = cosine ? Math.fround(Math.sqrt(dotProduct(v, 0, v, 0, dims))) : 1;
  for (let i = 0; i < dims; i++) out[i] = v[i] / m;
  rotation.apply(out, out);
  for (let i = 0; i < dims; i++) out[i] -= centroid[i];
  return out;
}

const quantizer = new OptimizedScalarQuantizer(set.similarity);
const codes = new Uint8Array(dims);
/** Quantizes the centred vector x (as scalarQuantize sees it after centring) and writes x̃ − c into out. */
function dequantized(x: Float32Array, bits: number, out: Float32Array, off: number, unbiased = false): void {
  const scratch = Float32Array.from(x, (v, i) => v + centroid[i]);
  let r = quantizer.scalarQuantize(scratch, codes, bits, centroid);
  if (unbiased) r = unbiasedInterval(scratch, codes, bits, r);
  const step = (r.upperInterval - r.lowerInterval) / ((1 << bits) - 1);
  for (let i = 0; i < dims; i++) out[off + i] = r.lowerInterval + step * codes[i];
}

/** The doc's term outside the centred dot product: x·c (dot-like similarities), −‖x − c‖²/2 (EUCLIDEAN, as a score to maximise). */
const docTerm = new Float64Array(docs);
const exactDocs = new Float32Array(docs * dims);
for (let o = 0; o < docs; o++) {
  const x = centred(set.base.vector(o));
  exactDocs.set(x, o * dims);
  let xx = 0,
    xc = 0;
  for (let i = 0; i < dims; i++) {
    xx += x[i] * x[i];
    xc += (x[i] + centroid[i]) * centroid[i];
  }
  docTerm[o] = euclidean ? -xx / 2 : xc;
}

interface DocVariant {
  readonly name: string;
  readonly vectors: Float32Array;
}
const docBits = (values.bits ?? '1,2,4').split(',').map(Number);
const docVariants: DocVariant[] = [{ name: 'exact', vectors: exactDocs }];
for (const bits of docBits) {
  const v = new Float32Array(docs * dims);
  for (let o = 0; o < docs; o++) dequantized(exactDocs.subarray(o * dims, (o + 1) * dims), bits, v, o * dims);
  docVariants.push({ name: `${bits}-bit`, vectors: v });
  // The same codes with each doc's interval rescaled so that (x̃ − c)·(x − c) = ‖x − c‖².
  const u = new Float32Array(docs * dims);
  for (let o = 0; o < docs; o++) dequantized(exactDocs.subarray(o * dims, (o + 1) * dims), bits, u, o * dims, true);
  docVariants.push({ name: `${bits}-bit unbiased`, vectors: u });
}

const queryVariants = ['exact', '4-bit', '8-bit'] as const;
const centredQueries = queries.map(centred);
function queryVector(qi: number, variant: (typeof queryVariants)[number]): Float32Array {
  const q = centredQueries[qi];
  if (variant === 'exact') return q;
  const out = new Float32Array(dims);
  dequantized(q, variant === '4-bit' ? 4 : 8, out, 0);
  return out;
}

const docsPtr = kernels.alloc(docs * dims * 4);
const qPtr = kernels.alloc(dims * 4);
const outPtr = kernels.alloc(docs * 4);
const est = new Float64Array(docs);
const rows: (string | number)[][] = [];
const loadBefore = loadavg();
for (const dv of docVariants) {
  kernels.f32().set(dv.vectors, docsPtr >>> 2);
  for (const qv of queryVariants) {
    if (dv.name === 'exact' && qv !== 'exact') continue;
    const recall = OVERSAMPLES.map(() => 0);
    let spread = 0,
      bias = 0,
      topSlots = 0;
    for (let qi = 0; qi < queries.length; qi++) {
      const q = queryVector(qi, qv);
      kernels.f32().set(q, qPtr >>> 2);
      kernels.dotBatch(qPtr, 1, docsPtr, docs, dims, outPtr);
      const s = kernels.f32().subarray(outPtr >>> 2, (outPtr >>> 2) + docs);
      for (let o = 0; o < docs; o++) {
        est[o] = s[o] + docTerm[o];
      }
      const maxK = K * Math.max(...OVERSAMPLES);
      const top = topByEstimate(maxK);
      OVERSAMPLES.forEach((os, j) => {
        recall[j] += recallOf(set, qi, rescore(qi, top.subarray(0, K * os)), K);
      });
      // Error of the estimate on the true top TOP, this query's mean error removed.
      const truth = set.truth[qi].subarray(0, TOP);
      const trueCentred = exactCentredDots(qi, truth);
      let m = 0;
      const err = Array.from(truth, (o, r) => est[o] - docTerm[o] - trueCentred[r]);
      for (const e of err) m += e;
      m /= err.length;
      for (const e of err) spread += (e - m) * (e - m);
      bias += m;
      topSlots += err.length;
    }
    rows.push([dv.name, qv, ...recall.map((r) => (r / queries.length).toFixed(3)), Math.sqrt(spread / topSlots).toExponential(2), (bias / queries.length).toExponential(2)]);
    process.stderr.write(`  docs ${dv.name} x query ${qv}: ${rows[rows.length - 1].slice(2).join(' ')}\n`);
  }
}

function topByEstimate(n: number): Int32Array {
  // Insertion into a sorted top-n list (ties by ord, the scan's total order): docs rarely enter it.
  const ords = new Int32Array(n).fill(-1);
  const scores = new Float64Array(n).fill(-Infinity);
  for (let o = 0; o < docs; o++) {
    const e = est[o];
    if (!(e > scores[n - 1])) continue;
    let j = n - 1;
    while (j > 0 && scores[j - 1] < e) {
      scores[j] = scores[j - 1];
      ords[j] = ords[j - 1];
      j--;
    }
    scores[j] = e;
    ords[j] = o;
  }
  return ords;
}

function rescore(qi: number, cands: Int32Array): Int32Array {
  const scored = Array.from(cands, (o) => ({ o, s: set.exact(set.queries[qi], o) }));
  scored.sort((a, b) => b.s - a.s || a.o - b.o);
  return Int32Array.from(scored.slice(0, K), (x) => x.o);
}

function exactCentredDots(qi: number, ords: Int32Array): Float64Array {
  const q = centredQueries[qi];
  return Float64Array.from(ords, (o) => {
    let d = 0;
    for (let i = 0; i < dims; i++) d += exactDocs[o * dims + i] * q[i];
    return d;
  });
}

process.stdout.write(
  `bench:recall-error  ${set.name}: ${docs} docs x ${dims}, ${queries.length} queries, rotated codes (centroid ${cosine ? 'plain mean' : "Lucene's"}); ` +
    `load ${loadBefore.map((x) => x.toFixed(1)).join(' ')} -> ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}\n\n` +
    table(['docs', 'query', ...OVERSAMPLES.map((o) => `os${o}`), `err spread top${TOP}`, 'mean err'], rows) +
    '\n',
);
set.close();
