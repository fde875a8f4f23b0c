import { describe, expect, it } from 'vitest';
import { OptimizedScalarQuantizer } from '../segments/quantization/OptimizedScalarQuantizer.js';
import { unbiasedInterval } from '../segments/quantization/UnbiasedInterval.js';
import { LUCENE_SETTINGS, quantizationSettings, quantizeField } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { encodingForBits } from '../segments/quantized/ScalarEncodings.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { generateVectors } from '../src/gen/generateDataset.js';

const dims = 100;
const f = Math.fround;

/** The centred vector, its codes and Lucene's interval for it, and x̃ = a + l·code in float64. */
function quantized(bits: number, seed: number) {
  const centroid = Float32Array.from({ length: dims }, (_, i) => f(0.1 * Math.sin(i)));
  const x = Float32Array.from({ length: dims }, (_, i) => f(Math.sin(seed * 7.3 + i * 1.7) * (1 + (i % 5))));
  const centred = Float32Array.from(x);
  const codes = new Uint8Array(dims);
  const r = new OptimizedScalarQuantizer(VectorSimilarityFunction.DOT_PRODUCT).scalarQuantize(centred, codes, bits, centroid);
  return { centred, codes, r };
}

function along(centred: Float32Array, codes: Uint8Array, bits: number, lower: number, upper: number): number {
  const l = (upper - lower) / ((1 << bits) - 1);
  let s = 0;
  for (let i = 0; i < dims; i++) s += (lower + l * codes[i]) * centred[i];
  return s;
}

const norm2 = (v: Float32Array) => v.reduce((s, x) => s + x * x, 0);

describe('unbiased doc intervals', () => {
  for (const bits of [1, 2, 4, 7, 8]) {
    it(`${bits}-bit: the dequantized doc's component along the doc is the doc's own length (no shrinkage)`, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const { centred, codes, r } = quantized(bits, seed);
        const u = unbiasedInterval(centred, codes, bits, r);
        expect(along(centred, codes, bits, u.lowerInterval, u.upperInterval) / norm2(centred)).toBeCloseTo(1, 5);
        // Lucene's optimizer leaves some shrinkage (or growth) that differs from doc to doc.
        if (bits <= 4) expect(Math.abs(along(centred, codes, bits, r.lowerInterval, r.upperInterval) / norm2(centred) - 1)).toBeGreaterThan(1e-5);
      }
    });
  }

  it('only rescales the interval: codes, component sum and corrective term stay', () => {
    const { centred, codes, r } = quantized(2, 3);
    const before = Uint8Array.from(codes);
    const u = unbiasedInterval(centred, codes, 2, r);
    expect(codes).toEqual(before);
    expect(u.quantizedComponentSum).toBe(r.quantizedComponentSum);
    expect(u.additionalCorrection).toBe(r.additionalCorrection);
    const alpha = u.lowerInterval / r.lowerInterval;
    expect(u.upperInterval / r.upperInterval).toBeCloseTo(alpha, 5);
  });

  it('keeps the interval of a vector at the centroid', () => {
    const centred = new Float32Array(dims);
    const r = { lowerInterval: -0.5, upperInterval: 0.5, additionalCorrection: 0, quantizedComponentSum: 0 };
    expect(unbiasedInterval(centred, new Uint8Array(dims), 2, r)).toBe(r);
  });
});

describe('which builds rescale their intervals', () => {
  const count = 50;
  const vectors = generateVectors({ seed: '4', dim: dims, similarity: 'cosine' }, 'base', count);
  const source = { size: count, dims, vector: (o: number) => vectors.subarray(o * dims, (o + 1) * dims) };
  const sim = VectorSimilarityFunction.COSINE;

  it("multi-bit builds with an extension do by default; 1-bit builds and Lucene's exact settings do not", () => {
    for (const bits of [2, 4, 7, 8] as const) {
      expect(quantizationSettings({ bits }).intervals).toBe('unbiased');
      expect(quantizationSettings({ bits, rotation: false }).intervals).toBe('unbiased'); // plain-mean centroid
      expect(quantizationSettings({ bits, rotation: false, centroid: 'lucene' }).intervals).toBe('lucene');
    }
    expect(quantizationSettings().intervals).toBe('lucene');
    expect(quantizationSettings({ rotation: false, centroid: 'lucene' }).intervals).toBe('lucene');
    expect(quantizationSettings({ rotation: false, centroid: 'lucene', intervals: 'unbiased' }).intervals).toBe('unbiased');
    expect(LUCENE_SETTINGS.intervals).toBe('lucene');
  });

  it("rescaled and Lucene's records differ only in the two interval floats, by one factor per doc", () => {
    const base = quantizationSettings({ bits: 2, rotation: false, centroid: 'lucene' });
    const lucene = quantizeField(source, sim, { settings: base });
    const unbiased = quantizeField(source, sim, { settings: { ...base, intervals: 'unbiased' } });
    const codeBytes = encodingForBits(2).docCodeBytes(dims);
    const recordBytes = codeBytes + 16;
    const lv = new DataView(lucene.records.buffer);
    const uv = new DataView(unbiased.records.buffer);
    for (let o = 0; o < count; o++) {
      const off = o * recordBytes;
      expect(unbiased.records.subarray(off, off + codeBytes)).toEqual(lucene.records.subarray(off, off + codeBytes));
      const c = off + codeBytes;
      expect(uv.getFloat32(c + 8, true)).toBe(lv.getFloat32(c + 8, true));
      expect(uv.getInt32(c + 12, true)).toBe(lv.getInt32(c + 12, true));
      const alpha = uv.getFloat32(c, true) / lv.getFloat32(c, true);
      expect(alpha).toBeGreaterThan(0.8);
      expect(alpha).toBeLessThan(1.25);
      expect(uv.getFloat32(c + 4, true) / lv.getFloat32(c + 4, true)).toBeCloseTo(alpha, 5);
    }
  });
});
