import { describe, expect, it } from 'vitest';
import { CHUNK_ROWS, type GenSimilarity, type ModelSpec } from '../src/gen/DatasetSpec.js';
import { EmbeddingModel, latentDims } from '../src/gen/EmbeddingModel.js';
import { generateVectors } from '../src/gen/generateDataset.js';
import { groundTruth, prepareQueries, recallAtK, rowsOf, ScoreScratch, scoreDocs, TopK } from '../src/gen/GroundTruth.js';
import { parseSeed, Rng } from '../src/gen/Rng.js';

const SIMILARITIES: GenSimilarity[] = ['cosine', 'dot_product', 'euclidean', 'max_inner_product'];

/** A deliberately naive float64 brute force: the specification of the ground truth. */
function bruteForce(base: Float32Array, queries: Float32Array, dim: number, k: number, sim: GenSimilarity): number[][] {
  const n = base.length / dim;
  const out: number[][] = [];
  for (let q = 0; q < queries.length / dim; q++) {
    const scored: { id: number; score: number }[] = [];
    for (let d = 0; d < n; d++) {
      let dot = 0,
        qq = 0,
        dd = 0,
        dist = 0;
      for (let i = 0; i < dim; i++) {
        const x = queries[q * dim + i],
          y = base[d * dim + i];
        dot += x * y;
        qq += x * x;
        dd += y * y;
        dist += (x - y) * (x - y);
      }
      // A zero vector has no cosine: it ranks last.
      const score = sim === 'euclidean' ? -dist : sim === 'cosine' ? (qq > 0 && dd > 0 ? dot / Math.sqrt(qq * dd) : -Infinity) : dot;
      scored.push({ id: d, score });
    }
    scored.sort((a, b) => (b.score === a.score ? 0 : b.score - a.score) || a.id - b.id);
    out.push(scored.slice(0, k).map((s) => s.id));
  }
  return out;
}

function randomVectors(rows: number, dim: number, seed: number): Float32Array {
  const rng = Rng.from(BigInt(seed), 99);
  const out = new Float32Array(rows * dim);
  for (let i = 0; i < out.length; i++) out[i] = rng.normal();
  return out;
}

function norm(v: Float32Array, off: number, dim: number): number {
  let s = 0;
  for (let i = 0; i < dim; i++) s += v[off + i] * v[off + i];
  return Math.sqrt(s);
}

function distance(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s = 0;
  for (let i = 0; i < dim; i++) s += (a[ao + i] - b[bo + i]) ** 2;
  return Math.sqrt(s);
}

describe('Rng', () => {
  it('is a pure function of (seed, keys)', () => {
    const draw = (seed: bigint, ...keys: number[]) => {
      const r = Rng.from(seed, ...keys);
      return Array.from({ length: 8 }, () => r.nextInt32());
    };
    expect(draw(42n, 1, 7)).toEqual(draw(42n, 1, 7));
    expect(draw(42n, 1, 7)).not.toEqual(draw(42n, 1, 8));
    expect(draw(42n, 1, 7)).not.toEqual(draw(43n, 1, 7));
    expect(draw(42n, 1, 7)).not.toEqual(draw(42n, 2, 7));
    expect(draw(2n ** 64n - 1n, 0)).toHaveLength(8);
  });

  it('draws standard normals (ziggurat) with the right moments and tails', () => {
    const r = Rng.from(7n, 0);
    const n = 400_000;
    const x = new Float64Array(n);
    r.fillNormal(x, 0, n);
    let m = 0,
      v = 0,
      k4 = 0,
      tail = 0;
    for (const a of x) {
      m += a;
      v += a * a;
      k4 += a ** 4;
      if (Math.abs(a) > 3) tail++;
    }
    expect(Math.abs(m / n)).toBeLessThan(0.01);
    expect(Math.abs(v / n - 1)).toBeLessThan(0.01);
    expect(Math.abs(k4 / n - 3)).toBeLessThan(0.1);
    expect(tail / n).toBeGreaterThan(0.002);
    expect(tail / n).toBeLessThan(0.0034);
    // fillNormal and normal() share the stream.
    const a = Rng.from(1n, 2),
      b = Rng.from(1n, 2);
    const bulk = new Float64Array(1000);
    a.fillNormal(bulk, 0, 1000);
    expect(Array.from(bulk)).toEqual(Array.from({ length: 1000 }, () => b.normal()));
  });

  it('parses seeds', () => {
    expect(parseSeed('18446744073709551615')).toBe(2n ** 64n - 1n);
    expect(() => parseSeed('-1')).toThrow(RangeError);
    expect(() => parseSeed('2e3')).toThrow(RangeError);
    expect(() => parseSeed(String(2n ** 64n))).toThrow(RangeError);
  });
});

describe('generated vectors', () => {
  const spec: ModelSpec = { seed: '42', dim: 64, similarity: 'cosine' };

  it('are deterministic and each row depends only on its chunk (not on how many rows are asked for)', () => {
    const a = generateVectors(spec, 'base', CHUNK_ROWS + 300);
    const b = generateVectors(spec, 'base', CHUNK_ROWS + 300);
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    const prefix = generateVectors(spec, 'base', CHUNK_ROWS - 5);
    expect(prefix).toEqual(a.subarray(0, prefix.length));
    const other = generateVectors({ ...spec, seed: '43' }, 'base', 10);
    expect(other).not.toEqual(a.subarray(0, other.length));
  });

  it('are unit length for cosine and dot_product, varied norms for euclidean and max_inner_product', () => {
    for (const similarity of SIMILARITIES) {
      const v = generateVectors({ ...spec, similarity }, 'base', 500);
      const norms = Array.from({ length: 500 }, (_, r) => norm(v, r * 64, 64));
      const mean = norms.reduce((s, x) => s + x, 0) / norms.length;
      const sd = Math.sqrt(norms.reduce((s, x) => s + (x - mean) ** 2, 0) / norms.length);
      if (similarity === 'cosine' || similarity === 'dot_product') {
        expect(norms.every((x) => Math.abs(x - 1) < 1e-5)).toBe(true);
      } else {
        expect(mean).toBeGreaterThan(0.7);
        expect(mean).toBeLessThan(1.5);
        expect(sd / mean).toBeGreaterThan(0.05);
      }
    }
  });

  it('queries come from the same distribution but are not copies of base vectors', () => {
    const base = generateVectors(spec, 'base', 2000);
    const queries = generateVectors(spec, 'query', 50);
    let nearest = Infinity;
    for (let q = 0; q < 50; q++) for (let d = 0; d < 2000; d++) nearest = Math.min(nearest, distance(queries, q * 64, base, d * 64, 64));
    expect(nearest).toBeGreaterThan(1e-3);
    // Same distribution: queries' nearest base neighbours are as close as base rows' own.
    const nn = (v: Float32Array, r: number, skip: number) => {
      let best = Infinity;
      for (let d = 0; d < 2000; d++) if (d !== skip) best = Math.min(best, distance(v, r * 64, base, d * 64, 64));
      return best;
    };
    let qMean = 0,
      bMean = 0;
    for (let r = 0; r < 50; r++) {
      qMean += nn(queries, r, -1) / 50;
      bMean += nn(base, r, r) / 50;
    }
    expect(qMean / bMean).toBeGreaterThan(0.7);
    expect(qMean / bMean).toBeLessThan(1.4);
  });

  it('are not isotropic: a few principal directions carry much of the variance', () => {
    const dim = 64;
    const n = 4000;
    const v = generateVectors({ ...spec, dim }, 'base', n);
    const mean = new Float64Array(dim);
    for (let r = 0; r < n; r++) for (let i = 0; i < dim; i++) mean[i] += v[r * dim + i] / n;
    // Real embeddings are not centred.
    expect(Math.hypot(...mean)).toBeGreaterThan(0.3);
    const cov = new Float64Array(dim * dim);
    for (let r = 0; r < n; r++) {
      for (let i = 0; i < dim; i++) {
        const a = v[r * dim + i] - mean[i];
        for (let j = 0; j < dim; j++) cov[i * dim + j] += (a * (v[r * dim + j] - mean[j])) / n;
      }
    }
    let trace = 0;
    for (let i = 0; i < dim; i++) trace += cov[i * dim + i];
    // Top 5 eigenvalues by power iteration with deflation.
    let top5 = 0;
    const rng = Rng.from(1n, 5);
    for (let e = 0; e < 5; e++) {
      let x = Float64Array.from({ length: dim }, () => rng.normal());
      let lambda = 0;
      for (let it = 0; it < 300; it++) {
        const y = new Float64Array(dim);
        for (let i = 0; i < dim; i++) for (let j = 0; j < dim; j++) y[i] += cov[i * dim + j] * x[j];
        lambda = Math.hypot(...y);
        x = y.map((t) => t / lambda);
      }
      top5 += lambda;
      for (let i = 0; i < dim; i++) for (let j = 0; j < dim; j++) cov[i * dim + j] -= lambda * x[i] * x[j];
    }
    // Isotropic data would give about 5/64 = 0.08.
    expect(top5 / trace).toBeGreaterThan(0.3);
  });

  it('have nearest neighbours much closer than isotropic data of the same size (clusters, low intrinsic dimension)', () => {
    const dim = 128;
    const n = 10_000;
    const ratio = (base: Float32Array, queries: Float32Array) => {
      const truth = groundTruth(base, queries, dim, 1, 'euclidean');
      let nnSum = 0,
        randomSum = 0;
      for (let q = 0; q < 40; q++) {
        nnSum += distance(queries, q * dim, base, truth.ids[q] * dim, dim);
        randomSum += distance(queries, q * dim, base, ((q * 7919) % n) * dim, dim);
      }
      return nnSum / randomSum;
    };
    const model = ratio(generateVectors({ ...spec, dim }, 'base', n), generateVectors({ ...spec, dim }, 'query', 40));
    // The same measurement on isotropic Gaussian data (about 0.78 at this size).
    let seed = 12345;
    const gauss = () => {
      seed = (seed * 16807) % 2147483647;
      const u = seed / 2147483647;
      seed = (seed * 16807) % 2147483647;
      return Math.sqrt(-2 * Math.log(u)) * Math.cos((2 * Math.PI * seed) / 2147483647);
    };
    const isotropic = ratio(Float32Array.from({ length: n * dim }, gauss), Float32Array.from({ length: 40 * dim }, gauss));
    expect(isotropic).toBeGreaterThan(0.7);
    expect(model).toBeLessThan(0.7 * isotropic);
    expect(latentDims(1024)).toBe(64);
    expect(latentDims(16)).toBe(16);
  });

  it('the model for a spec is cached per thread', () => {
    expect(EmbeddingModel.for(spec)).toBe(EmbeddingModel.for({ ...spec }));
  });
});

describe('ground truth', () => {
  it('equals a naive float64 brute force for every similarity, ties to the lower id', () => {
    const dim = 13;
    const n = 301;
    const base = randomVectors(n, dim, 1);
    // Exact duplicates make ties: rows 200.. copy rows 10.. (and a zero vector for cosine).
    for (let r = 0; r < 30; r++) base.copyWithin((200 + r) * dim, (10 + r) * dim, (11 + r) * dim);
    base.fill(0, 150 * dim, 151 * dim);
    const queries = randomVectors(17, dim, 2);
    // A query equal to a duplicated row: its two copies tie for the top.
    queries.set(base.subarray(12 * dim, 13 * dim), 3 * dim);
    for (const sim of SIMILARITIES) {
      for (const k of [1, 10, 64]) {
        const got = groundTruth(base, queries, dim, k, sim);
        expect(got.k).toBe(k);
        expect(rowsOf(got.ids, k).map((r) => Array.from(r))).toEqual(bruteForce(base, queries, dim, k, sim));
      }
    }
    const top2 = groundTruth(base, queries, dim, 2, 'euclidean');
    expect(Array.from(top2.ids.subarray(6, 8))).toEqual([12, 202]);
    expect(top2.scores[6] === 0).toBe(true); // the query's exact copy: distance 0
  });

  it('reports scores: cosine in [-1, 1], euclidean as the negated squared distance', () => {
    const dim = 8;
    const base = randomVectors(50, dim, 3);
    const queries = randomVectors(3, dim, 4);
    const cos = groundTruth(base, queries, dim, 5, 'cosine');
    expect(Array.from(cos.scores).every((s) => s <= 1 && s >= -1)).toBe(true);
    const l2 = groundTruth(base, queries, dim, 5, 'euclidean');
    const d = distance(queries, 0, base, l2.ids[0] * dim, dim);
    expect(l2.scores[0]).toBeCloseTo(-(d * d), 10);
    for (let j = 1; j < 5; j++) expect(l2.scores[j]).toBeLessThanOrEqual(l2.scores[j - 1]);
  });

  it('returns min(k, n) neighbours', () => {
    const base = randomVectors(5, 4, 5);
    const got = groundTruth(base, randomVectors(2, 4, 6), 4, 100, 'dot_product');
    expect(got.k).toBe(5);
    expect(got.ids).toHaveLength(10);
  });

  it('merging per-range top-k lists gives the whole top-k', () => {
    const dim = 24;
    const n = 1000;
    const base = randomVectors(n, dim, 7);
    for (let r = 0; r < 50; r++) base.copyWithin((900 + r) * dim, (100 + r) * dim, (101 + r) * dim);
    const queries = randomVectors(9, dim, 8);
    const prepared = prepareQueries(queries, dim);
    for (const sim of SIMILARITIES) {
      const merged = new TopK(9, 20);
      for (const [first, rows] of [
        [0, 333],
        [333, 1],
        [334, 666],
      ]) {
        const part = new TopK(9, 20);
        scoreDocs(prepared, base, first * dim, dim, rows, first, sim, part, new ScoreScratch());
        merged.merge(part.result());
      }
      const whole = groundTruth(base, queries, dim, 20, sim);
      expect(merged.result().ids).toEqual(whole.ids);
    }
  });

  it('recallAtK compares ids as strings and counts each hit once', () => {
    const truth = [Int32Array.of(1, 2, 3), Int32Array.of(4, 5, 6)];
    expect(
      recallAtK(
        [
          ['1', '2', '3'],
          ['6', '5', '4'],
        ],
        truth,
        3,
      ),
    ).toBe(1);
    expect(
      recallAtK(
        [
          [1, 9, 9],
          [4, 4, 4],
        ],
        truth,
        3,
      ),
    ).toBeCloseTo(1 / 3);
    expect(
      recallAtK(
        [
          [3, 8],
          [7, 8],
        ],
        truth,
        2,
      ),
    ).toBe(0);
    expect(recallAtK([[2, 1, 7], [5]], truth, 2)).toBe(0.75);
    expect(() => recallAtK([[1]], truth, 1)).toThrow(RangeError);
  });
});
