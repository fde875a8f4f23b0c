import { describe, expect, it } from 'vitest';
import { VectorSimilarityFunction as Sim } from '../segments/index/VectorSimilarityFunction.js';

const bits = (x: number) => new DataView(Float32Array.of(x).buffer).getUint32(0, true);
const v = (...xs: number[]) => Float32Array.from(xs);

describe('VectorSimilarityFunction scores (formulas: segments/index/VectorSimilarityFunction.ts)', () => {
  it('EUCLIDEAN is 1 / (1 + squared distance)', () => {
    expect(bits(Sim.EUCLIDEAN.compare(v(1, 2, 3), v(4, 6, 8)))).toBe(0x3ca0a0a1);
  });

  it('DOT_PRODUCT is max((1 + dot) / 2, 0)', () => {
    expect(bits(Sim.DOT_PRODUCT.compare(v(0.6, 0.8), v(0.8, 0.6)))).toBe(0x3f7ae148);
    expect(Sim.DOT_PRODUCT.compare(v(1, 0), v(-1, 0))).toBe(0);
    expect(Sim.DOT_PRODUCT.compare(v(1, 2), v(-3, -4))).toBe(0);
  });

  it('COSINE is max((1 + cos) / 2, 0)', () => {
    expect(bits(Sim.COSINE.compare(v(1, 0), v(1, 1)))).toBe(0x3f5a827a);
    expect(Sim.COSINE.compare(v(3, 4), v(6, 8))).toBe(1);
  });

  it('MAXIMUM_INNER_PRODUCT maps r >= 0 to r + 1 and r < 0 to 1 / (1 - r)', () => {
    expect(Sim.MAXIMUM_INNER_PRODUCT.compare(v(1, 2), v(3, 4))).toBe(12);
    expect(bits(Sim.MAXIMUM_INNER_PRODUCT.compare(v(1, 2), v(-3, -4)))).toBe(0x3daaaaab);
    expect(Sim.MAXIMUM_INNER_PRODUCT.compare(v(1, 0), v(0, 1))).toBe(1);
  });

  it('uses the on-disk ordinals 0 EUCLIDEAN, 1 DOT_PRODUCT, 2 COSINE, 3 MAXIMUM_INNER_PRODUCT', () => {
    expect(Sim.values.map((s) => [s.ordinal, s.name])).toEqual([
      [0, 'EUCLIDEAN'],
      [1, 'DOT_PRODUCT'],
      [2, 'COSINE'],
      [3, 'MAXIMUM_INNER_PRODUCT'],
    ]);
    expect(Sim.fromName('max_inner_product')).toBe(Sim.MAXIMUM_INNER_PRODUCT);
    expect(() => Sim.fromName('manhattan')).toThrow(/cosine, dot_product, euclidean or max_inner_product/);
  });
});
