import { describe, expect, it } from 'vitest';
import { packAsBinary, transposeHalfByte, binaryCodeBytes, discretize } from '../segments/quantization/BitPacking.js';
import { OptimizedScalarQuantizer, roundSmall, roundToGrid } from '../segments/quantization/OptimizedScalarQuantizer.js';
import { l2normalize } from '../segments/util/VectorUtil.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { binaryRecordBytes } from '../segments/quantized/ScalarQuantizedVectorsFormat.js';
import { mulberry32 } from '../src/gen/Rng.js';
import { Kernels } from '../segments/kernels/Kernels.js';
import { QueryQuantizer } from '../segments/quantized/QueryQuantizer.js';
import { computeCentroid, LUCENE_SETTINGS, quantizationSettings, quantizeField } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { DEFAULT_ROTATION_SEED, RandomizedHadamard } from '../segments/quantization/RandomizedHadamard.js';

describe('SINGLE_BIT_QUERY_NIBBLE layout (segments/quantized/ScalarQuantizedVectorsFormat.ts)', () => {
  it('packs doc bits [1,0,1,1,0,0,1,0] to 0xB2 (first dimension in the MSB)', () => {
    const packed = new Uint8Array(1);
    packAsBinary(new Uint8Array([1, 0, 1, 1, 0, 0, 1, 0]), packed);
    expect(packed[0]).toBe(0xb2);
  });

  it('transposes query nibbles [15,0,7,8,3,12,1,0] into planes [0xAA,0xA8,0xA4,0x94], LSB plane first', () => {
    const planes = new Uint8Array(4);
    transposeHalfByte(new Uint8Array([15, 0, 7, 8, 3, 12, 1, 0]), planes);
    expect([...planes]).toEqual([0xaa, 0xa8, 0xa4, 0x94]);
  });

  it('sizes 1-bit records as ceil(D/8) + 16 bytes: 112 for D=768, 29 for D=100 (query code 52)', () => {
    expect(binaryRecordBytes(768)).toBe(112);
    expect(binaryRecordBytes(100)).toBe(29);
    expect(binaryCodeBytes(100)).toBe(13);
    expect(discretize(100, 8) / 2).toBe(52);
  });
});

describe('OptimizedScalarQuantizer', () => {
  const rng = mulberry32(7);
  const dims = 64;
  const centroid = Float32Array.from({ length: dims }, () => rng() * 0.1);

  it('keeps codes within [0, 2^bits - 1], sums them, and centres the input in place', () => {
    for (const bits of [1, 4, 7]) {
      const v = Float32Array.from({ length: dims }, () => rng() * 2 - 1);
      const original = v.slice();
      const codes = new Uint8Array(dims);
      const r = new OptimizedScalarQuantizer(VectorSimilarityFunction.EUCLIDEAN).scalarQuantize(v, codes, bits, centroid);
      expect(Math.max(...codes)).toBeLessThanOrEqual((1 << bits) - 1);
      expect(r.quantizedComponentSum).toBe(codes.reduce((a, b) => a + b, 0));
      expect(r.lowerInterval).toBeLessThan(r.upperInterval);
      for (let i = 0; i < dims; i++) expect(v[i]).toBe(Math.fround(original[i] - centroid[i]));
      // EUCLIDEAN stores ||x - c||^2
      const norm2 = v.reduce((a, x) => Math.fround(a + Math.fround(x * x)), 0);
      expect(r.additionalCorrection).toBe(norm2);
    }
  });

  it('stores x·c (on the uncentred vector) as the correction for non-EUCLIDEAN similarities', () => {
    const v = Float32Array.from({ length: dims }, () => rng() * 2 - 1);
    let dot = 0;
    for (let i = 0; i < dims; i++) dot = Math.fround(dot + Math.fround(v[i] * centroid[i]));
    const r = new OptimizedScalarQuantizer(VectorSimilarityFunction.DOT_PRODUCT).scalarQuantize(v, new Uint8Array(dims), 1, centroid);
    expect(r.additionalCorrection).toBe(dot);
  });

  it('keeps the initial interval when the vector equals the centroid (no optimisation possible)', () => {
    const v = centroid.slice();
    const codes = new Uint8Array(dims);
    const r = new OptimizedScalarQuantizer(VectorSimilarityFunction.EUCLIDEAN).scalarQuantize(v, codes, 4, centroid);
    expect(r.lowerInterval).toBe(0);
    expect(r.upperInterval).toBe(0);
    expect(r.additionalCorrection).toBe(0);
  });

  it('rounds like Java on a zero-width interval: NaN grid positions become code 0, never NaN', () => {
    // One dimension: the interval collapses to the centred value and (x - a) / step is 0 / 0.
    // Java's Math.round(NaN) is 0, so Lucene writes code 0, sum 0 and the collapsed interval.
    const centroidOne = new Float32Array([0.25]);
    const codes = new Uint8Array(1).fill(9);
    const r = new OptimizedScalarQuantizer(VectorSimilarityFunction.EUCLIDEAN).scalarQuantize(new Float32Array([1]), codes, 4, centroidOne);
    expect(r.lowerInterval).toBe(0.75);
    expect(r.upperInterval).toBe(0.75);
    expect(r.quantizedComponentSum).toBe(0);
    expect(codes[0]).toBe(0);
  });

  it('roundSmall is Math.round (half up) on the grid range, including just below one half, and maps NaN to 0', () => {
    expect(roundSmall(0.49999999999999994)).toBe(0);
    expect(roundSmall(0.5)).toBe(1);
    expect(roundSmall(14.5)).toBe(15);
    expect(roundSmall(Number.NaN)).toBe(0);
    for (let i = 0; i < 20_000; i++) {
      const x = rng() * 300;
      expect(roundSmall(x)).toBe(Math.round(x));
      const half = Math.floor(x) + 0.5;
      for (const y of [half, half - 2 ** -44, half + 2 ** -44]) expect(roundSmall(y)).toBe(Math.round(y));
    }
  });

  it('reduces reconstruction error compared with the initial ±g·σ interval (the optimisation helps)', () => {
    let better = 0;
    for (let t = 0; t < 20; t++) {
      const v = Float32Array.from({ length: 256 }, () => gaussian(rng) * (1 + rng()));
      const c = new Float32Array(256);
      const codes = new Uint8Array(256);
      const copy = v.slice();
      const r = new OptimizedScalarQuantizer(VectorSimilarityFunction.EUCLIDEAN).scalarQuantize(copy, codes, 4, c);
      const step = (r.upperInterval - r.lowerInterval) / 15;
      let err = 0;
      for (let i = 0; i < 256; i++) err += (v[i] - (r.lowerInterval + codes[i] * step)) ** 2;
      expect(Number.isFinite(err)).toBe(true);
      if (err < 0.05 * 256) better++;
    }
    expect(better).toBeGreaterThan(15);
  });
});

describe('QueryQuantizer with kernels (the first phase: loss-and-grid pass in wasm SIMD)', () => {
  it('a grid point (float)(k / last) equals (float)(k * (1 / last)) for every index of every bit count', () => {
    // The wasm pass multiplies by the reciprocal instead of dividing; exact on this finite domain.
    for (let bits = 1; bits <= 8; bits++) {
      const last = (1 << bits) - 1;
      for (let k = 0; k <= last + 1; k++) expect(Math.fround(k * (1 / last))).toBe(Math.fround(k / last));
    }
  });

  it('matches the scalar quantizer: same codes and corrections, intervals within float rounding', async () => {
    const kernels = await Kernels.load();
    const rng = mulberry32(11);
    let identical = 0;
    const trials = 300;
    for (let t = 0; t < trials; t++) {
      const dims = [7, 64, 100, 385, 1024][t % 5];
      const sim = [VectorSimilarityFunction.COSINE, VectorSimilarityFunction.EUCLIDEAN, VectorSimilarityFunction.DOT_PRODUCT][t % 3];
      const centroid = Float32Array.from({ length: dims }, () => (rng() - 0.5) * 0.2);
      const query = Float32Array.from({ length: dims }, () => gaussian(rng) * (t % 2 ? 1 : 0.01));
      const codeBytes = Math.ceil(dims / 8);
      const pa = new Uint8Array(4 * codeBytes);
      const pb = new Uint8Array(4 * codeBytes);
      const simd = new QueryQuantizer(sim, dims, kernels);
      const a = new QueryQuantizer(sim, dims).quantize(query, centroid, pa);
      const b = simd.quantize(query, centroid, pb);
      simd.release();
      expect(Math.abs(b.lower - a.lower)).toBeLessThanOrEqual(1e-5 * Math.abs(a.lower) + 1e-12);
      expect(Math.abs(b.upper - a.upper)).toBeLessThanOrEqual(1e-5 * Math.abs(a.upper) + 1e-12);
      expect(b.additionalCorrection).toBe(a.additionalCorrection);
      if (a.lower === b.lower && a.upper === b.upper && a.componentSum === b.componentSum && pa.every((x, i) => x === pb[i])) identical++;
    }
    // Only the order of the loss sums differs; in practice the intervals come out identical.
    expect(identical).toBeGreaterThanOrEqual(0.95 * trials);
    expect(kernels.heapStats().usedBytes).toBe(0);
  });
});

describe('the quantizer passes in wasm (Kernels.osqNormalize, Kernels.osqCodes)', () => {
  const DIMS = [1, 7, 31, 32, 33, 100, 385, 768, 1024];

  it('osqNormalize is VectorUtil.l2normalize bit for bit, and leaves a unit or zero vector as it is', async () => {
    const kernels = await Kernels.load();
    const rng = mulberry32(5);
    for (const dims of DIMS) {
      const ptr = kernels.alloc(4 * dims, 16);
      for (let t = 0; t < 20; t++) {
        const scale = [1, 1e-3, 1e3, 0][t % 4];
        const v = Float32Array.from({ length: dims }, () => gaussian(rng) * scale);
        const inWasm = new Float32Array(kernels.memory.buffer, ptr, dims);
        inWasm.set(v);
        const norm2 = kernels.osqNormalize(ptr, dims);
        if (scale === 0) {
          expect(norm2).toBe(0);
          expect(() => l2normalize(Float32Array.from(v))).toThrow(RangeError);
        } else expect(norm2).toBeGreaterThan(0);
        const js = scale === 0 ? v : l2normalize(Float32Array.from(v));
        expect(Array.from(new Float32Array(kernels.memory.buffer, ptr, dims))).toEqual(Array.from(js));
        // Already unit (within 1e-5): unchanged, as in JS.
        const again = Float32Array.from(new Float32Array(kernels.memory.buffer, ptr, dims));
        if (scale !== 0) {
          kernels.osqNormalize(ptr, dims);
          expect(Array.from(new Float32Array(kernels.memory.buffer, ptr, dims))).toEqual(Array.from(again));
        }
      }
      kernels.free(ptr);
    }
    expect(kernels.heapStats().usedBytes).toBe(0);
  });

  it('osqCodes is roundToGrid bit for bit: codes and their sum, NaN to 0, a degenerate interval, every bit count', async () => {
    const kernels = await Kernels.load();
    const rng = mulberry32(9);
    for (const dims of DIMS) {
      const ptr = kernels.alloc(5 * dims, 16);
      for (let bits = 1; bits <= 8; bits++) {
        const v = Float32Array.from({ length: dims }, () => gaussian(rng) * 0.2);
        if (dims > 3) v[3] = Number.NaN;
        new Float32Array(kernels.memory.buffer, ptr, dims).set(v);
        for (const [a, b] of [
          [-0.3, 0.25],
          [0.1, 0.1],
          [-1e-7, 2e-7],
        ].map(([x, y]) => [Math.fround(x), Math.fround(y)])) {
          const step = Math.fround(Math.fround(b - a) / ((1 << bits) - 1));
          const js = new Uint8Array(dims);
          const jsSum = roundToGrid(v, a, b, step, js);
          const sum = kernels.osqCodes(ptr, dims, a, b, step, ptr + 4 * dims);
          expect(sum).toBe(jsSum);
          expect(Array.from(new Uint8Array(kernels.memory.buffer, ptr + 4 * dims, dims))).toEqual(Array.from(js));
        }
      }
      kernels.free(ptr);
    }
  });
});

function gaussian(rng: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
}

describe('quantizeField with kernels (segments/quantized/KernelOsqPass.ts)', () => {
  const dims = 96;
  const n = 300;
  const rng = mulberry32(21);
  const vectors = Float32Array.from({ length: n * dims }, () => gaussian(rng) + 0.3);
  const source = { size: n, dims, vector: (o: number) => vectors.subarray(o * dims, (o + 1) * dims) };

  it('leaves Lucene-exact codes to the scalar pass, byte for byte, and frees what it took', async () => {
    const kernels = await Kernels.load();
    for (const sim of [VectorSimilarityFunction.COSINE, VectorSimilarityFunction.EUCLIDEAN]) {
      const scalar = quantizeField(source, sim, { settings: LUCENE_SETTINGS, withQueryRecords: true });
      const withKernels = quantizeField(source, sim, { settings: LUCENE_SETTINGS, withQueryRecords: true, kernels });
      expect(withKernels.records).toEqual(scalar.records);
      expect(withKernels.queryRecords).toEqual(scalar.queryRecords);
    }
    expect(kernels.heapStats().usedBytes).toBe(0);
  });

  it('takes the centroid of rotated vectors as the rotated mean, within float rounding of the mean of the rotated vectors', () => {
    const rotation = new RandomizedHadamard(dims, DEFAULT_ROTATION_SEED);
    const sums = new Float64Array(dims);
    const v = new Float32Array(dims);
    for (let o = 0; o < n; o++) {
      v.set(source.vector(o));
      rotation.apply(v, v);
      for (let i = 0; i < dims; i++) sums[i]! += v[i]!;
    }
    const centroid = computeCentroid(source, VectorSimilarityFunction.EUCLIDEAN, 'mean', rotation);
    for (let i = 0; i < dims; i++) expect(centroid[i]).toBeCloseTo(sums[i]! / n, 5);
  });

  it('quantizes extended-format codes (rotated, mean centroid; 1 and 2 bits) in wasm as the scalar pass does, but for intervals within float rounding', async () => {
    const kernels = await Kernels.load();
    for (const bits of [1, 2] as const) {
      const settings = quantizationSettings({ bits });
      const scalar = quantizeField(source, VectorSimilarityFunction.COSINE, { settings, withQueryRecords: true });
      const withKernels = quantizeField(source, VectorSimilarityFunction.COSINE, { settings, withQueryRecords: true, kernels });
      expect(withKernels.centroid).toEqual(scalar.centroid);
      let differing = 0;
      for (let i = 0; i < scalar.records.length; i++) if (withKernels.records[i] !== scalar.records[i]) differing++;
      for (let i = 0; i < scalar.queryRecords!.length; i++) if (withKernels.queryRecords![i] !== scalar.queryRecords![i]) differing++;
      expect(differing).toBeLessThanOrEqual(0.001 * (scalar.records.length + scalar.queryRecords!.length));
    }
    expect(kernels.heapStats().usedBytes).toBe(0);
  });
});
