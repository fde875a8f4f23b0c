/**
 * HNSW benchmark: graph build speed, `.vem/.vex` write/read, and search latency/recall against
 * brute force, on clustered fp32 stand-in data (single thread).
 *
 *   node dist/src/bench/hnsw.js [--n 100000] [--dim 32] [--queries 500] [--k 10] [--ef 10,50,100,200]
 *                               [--m 16] [--beam 100] [--clusters 100] [--scorer lucene|plain] [--count]
 *
 * `--scorer lucene` (default) scores with segments/index/VectorSimilarityFunction (Lucene's float32
 * arithmetic, ~100-200 ns per 32-dim dot here); `plain` is an unrounded dot product, a cheaper
 * stand-in closer to what a SIMD kernel costs. Build cost is essentially (scores per insert) x
 * (cost per score): `--count` reports scores and bulkScore calls per insert (with a small
 * wrapper overhead). Times are wall clock and process CPU; the 2 cores are shared, trust CPU.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { HnswGraphBuilder } from '../../segments/hnsw/HnswGraphBuilder.js';
import { exactSearch, HnswGraphSearcher } from '../../segments/hnsw/HnswGraphSearcher.js';
import { VectorEncoding } from '../../segments/hnsw/HnswVectorsFormat.js';
import { HnswVectorsReader } from '../../segments/hnsw/HnswVectorsReader.js';
import { HnswVectorsWriter } from '../../segments/hnsw/HnswVectorsWriter.js';
import { Fp32ScorerSupplier, type RandomVectorScorer, type RandomVectorScorerSupplier, type UpdateableRandomVectorScorer } from '../../segments/hnsw/RandomVectorScorer.js';
import { wholeFile } from '../../segments/store/FileSlice.js';
import { mulberry32 } from '../gen/Rng.js';
import { percentile } from '../../load/percentile.js';

/** n vectors around `clusters` Gaussian centres (per-dim noise `spread`), optionally unit-normalized. */
export function clusteredVectors(n: number, dim: number, clusters: number, seed: number, normalize = false, spread = 0.35): Float32Array {
  const rnd = mulberry32(seed);
  const gauss = () => {
    let u = 0;
    while (u === 0) u = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
  };
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = gauss();
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rnd() * clusters);
    let norm = 0;
    for (let d = 0; d < dim; d++) {
      const v = centres[c * dim + d] + spread * gauss();
      out[i * dim + d] = v;
      norm += v * v;
    }
    if (normalize) {
      const inv = 1 / Math.sqrt(norm);
      for (let d = 0; d < dim; d++) out[i * dim + d] *= inv;
    }
  }
  return out;
}

/** Unrounded dot product (DOT_PRODUCT's unit-interval mapping), four accumulators. */
class PlainDotScorer implements UpdateableRandomVectorScorer {
  readonly maxOrd: number;
  private q = 0;
  constructor(
    private readonly v: Float32Array,
    private readonly dim: number,
    private query: Float32Array | null = null,
  ) {
    this.maxOrd = v.length / dim;
  }
  setScoringOrdinal(ord: number): void {
    this.q = ord * this.dim;
    this.query = null;
  }
  private dot(o: number): number {
    const v = this.v;
    const qa = this.query ?? v;
    const qo = this.query ? 0 : this.q;
    const dim = this.dim;
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0;
    let d = 0;
    for (; d + 3 < dim; d += 4) {
      s0 += qa[qo + d] * v[o + d];
      s1 += qa[qo + d + 1] * v[o + d + 1];
      s2 += qa[qo + d + 2] * v[o + d + 2];
      s3 += qa[qo + d + 3] * v[o + d + 3];
    }
    for (; d < dim; d++) s0 += qa[qo + d] * v[o + d];
    return Math.max(0, (1 + s0 + s1 + s2 + s3) / 2);
  }
  score(ord: number): number {
    return this.dot(ord * this.dim);
  }
  bulkScore(ords: Int32Array, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.dot(ords[i] * this.dim);
  }
  scoreRange(from: number, n: number, out: Float32Array): void {
    for (let i = 0; i < n; i++) out[i] = this.dot((from + i) * this.dim);
  }
}

interface BenchSupplier extends RandomVectorScorerSupplier {
  queryScorer(q: Float32Array): RandomVectorScorer;
}

class PlainSupplier implements BenchSupplier {
  readonly maxOrd: number;
  constructor(
    private readonly v: Float32Array,
    private readonly dim: number,
  ) {
    this.maxOrd = v.length / dim;
  }
  scorer(): UpdateableRandomVectorScorer {
    return new PlainDotScorer(this.v, this.dim);
  }
  copy(): RandomVectorScorerSupplier {
    return this;
  }
  queryScorer(q: Float32Array): RandomVectorScorer {
    return new PlainDotScorer(this.v, this.dim, q);
  }
}

class Counter {
  scores = 0;
  calls = 0;
}

class CountingSupplier implements RandomVectorScorerSupplier {
  constructor(
    private readonly inner: RandomVectorScorerSupplier,
    readonly counter: Counter,
  ) {}
  get maxOrd(): number {
    return this.inner.maxOrd;
  }
  scorer(): UpdateableRandomVectorScorer {
    const s = this.inner.scorer();
    const c = this.counter;
    return {
      maxOrd: s.maxOrd,
      score: (o) => (c.calls++, c.scores++, s.score(o)),
      bulkScore: (o, n, out) => (c.calls++, (c.scores += n), s.bulkScore(o, n, out)),
      setScoringOrdinal: (o) => s.setScoringOrdinal(o),
    };
  }
  copy(): RandomVectorScorerSupplier {
    return this;
  }
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

function cpuMs(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

export function main(): void {
  const n = Number(arg('n', '100000'));
  const dim = Number(arg('dim', '32'));
  const nq = Number(arg('queries', '500'));
  const k = Number(arg('k', '10'));
  const efs = arg('ef', '10,50,100,200').split(',').map(Number);
  const M = Number(arg('m', '16'));
  const beamWidth = Number(arg('beam', '100'));
  const clusters = Number(arg('clusters', '100'));
  const kind = arg('scorer', 'lucene');
  const count = process.argv.includes('--count');

  console.log(`hnsw bench: n=${n} dim=${dim} M=${M} beamWidth=${beamWidth} clusters=${clusters} scorer=${kind} queries=${nq} k=${k}`);
  const all = clusteredVectors(n + nq, dim, clusters, 1, true);
  const data = all.subarray(0, n * dim);
  const queries = all.subarray(n * dim);
  const supplier: BenchSupplier = kind === 'plain' ? new PlainSupplier(data, dim) : new Fp32ScorerSupplier(data, dim, VectorSimilarityFunction.DOT_PRODUCT);
  const counter = new Counter();
  const buildSupplier = count ? new CountingSupplier(supplier, counter) : supplier;

  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let lastLog = t0;
  const graph = new HnswGraphBuilder(buildSupplier, {
    M,
    beamWidth,
    progressEvery: 5000,
    onProgress: (done) => {
      const now = performance.now();
      if (now - lastLog > 10_000 && done < n) {
        lastLog = now;
        console.log(`  ... ${done} inserted, ${(done / ((now - t0) / 1000)).toFixed(0)} inserts/s wall`);
      }
    },
  }).build();
  const wall = performance.now() - t0;
  const cpu = cpuMs(c0);
  console.log(
    `build: ${(wall / 1000).toFixed(1)} s wall, ${(cpu / 1000).toFixed(1)} s cpu -> ${((n / wall) * 1000).toFixed(0)} inserts/s wall, ${((n / cpu) * 1000).toFixed(0)} inserts/s cpu`,
  );
  if (count) console.log(`  per insert: ${(counter.scores / n).toFixed(0)} scores in ${(counter.calls / n).toFixed(0)} calls`);
  console.log(`  graph: ${graph.numLevels} levels, ${(graph.edgeCount() / n).toFixed(1)} links/node (all levels), ${(graph.ramBytesUsed() / 2 ** 20).toFixed(1)} MiB resident`);

  const dir = mkdtempSync(join(tmpdir(), 'hnsw-bench-'));
  try {
    const id = new Uint8Array(16).fill(7);
    const suffix = 'Lucene99HnswVectorsFormat_0';
    const vem = join(dir, `_0_${suffix}.vem`);
    const vex = join(dir, `_0_${suffix}.vex`);
    let t = performance.now();
    const w = HnswVectorsWriter.create(vem, vex, id, suffix);
    w.writeField({ fieldNumber: 0, encoding: VectorEncoding.FLOAT32, similarity: VectorSimilarityFunction.DOT_PRODUCT, dimension: dim }, n, graph);
    w.close();
    const writeMs = performance.now() - t;
    t = performance.now();
    const reader = HnswVectorsReader.open(wholeFile(vem), wholeFile(vex), id, suffix);
    const loaded = reader.graph(0)!;
    const readMs = performance.now() - t;
    console.log(
      `files: .vem ${statSync(vem).size} B, .vex ${(statSync(vex).size / 2 ** 20).toFixed(2)} MiB; write ${writeMs.toFixed(0)} ms, open+load ${readMs.toFixed(0)} ms (${(loaded.ramBytesUsed() / 2 ** 20).toFixed(1)} MiB)`,
    );

    const truth: Int32Array[] = [];
    const scorers: RandomVectorScorer[] = [];
    const lat = new Float64Array(nq);
    for (let q = 0; q < nq; q++) {
      const s = supplier.queryScorer(queries.subarray(q * dim, (q + 1) * dim));
      scorers.push(s);
      const ts = performance.now();
      truth.push(exactSearch(s, k).ords);
      lat[q] = performance.now() - ts;
    }
    lat.sort();
    console.log(`exact: p50 ${percentile(lat, 50).toFixed(2)} ms, p99 ${percentile(lat, 99).toFixed(2)} ms per query`);

    const searcher = new HnswGraphSearcher(n);
    for (const ef of efs) {
      for (let q = 0; q < Math.min(nq, 50); q++) searcher.search(scorers[q], loaded, k, ef); // warm-up
      let hits = 0;
      let visited = 0;
      const cs = process.cpuUsage();
      for (let q = 0; q < nq; q++) {
        const ts = performance.now();
        const r = searcher.search(scorers[q], loaded, k, ef);
        lat[q] = performance.now() - ts;
        visited += r.visited;
        const want = new Set(truth[q]);
        for (const o of r.ords) if (want.has(o)) hits++;
      }
      const cpuPer = cpuMs(cs) / nq;
      lat.sort();
      console.log(
        `hnsw ef=${String(ef).padStart(4)}: recall@${k} ${(hits / (nq * k)).toFixed(4)}, visited ${(visited / nq).toFixed(0)}, p50 ${(percentile(lat, 50) * 1000).toFixed(0)} us, p99 ${(percentile(lat, 99) * 1000).toFixed(0)} us, cpu ${(cpuPer * 1000).toFixed(0)} us/query`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
