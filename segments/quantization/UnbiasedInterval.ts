import type { QuantizationResult } from './OptimizedScalarQuantizer.js';

const f = Math.fround;

/**
 * Rescales a doc's quantization interval so that its dequantized vector has no shrinkage along the
 * vector itself: with x the centred vector and x̃ = a + l·code (per component, l the grid step
 * the estimator uses), returns the interval α·[a, u] with α = ‖x‖² / (x̃·x), so that α x̃·x = ‖x‖².
 *
 * Why: the estimator's error for a query q near a doc x is dominated by (x̃ − x)·x, the doc's own
 * shrinkage, and that differs from doc to doc, so it reorders the nearest neighbours. The OSQ
 * interval search only weights it in its loss (1 − λ) and stops after a few rounds on a grid, so
 * some remains; removing it exactly is RaBitQ's unbiased estimator, ⟨x̄, q⟩ / ⟨x̄, x⟩, folded
 * into the stored interval. Measured with `npm run bench:recall-error` (Fashion-MNIST cosine,
 * rotated codes): see docs/recall-and-tuning.md.
 *
 * The codes and quantizedComponentSum stay as they are, and the estimator reads the interval as
 * before, so a segment with rescaled intervals has exactly Lucene's bytes and meaning (any reader
 * of the format scores it unchanged); only the interval values differ from Lucene's optimizer.
 * `centred` is the vector after scalarQuantize (it centres in place), `codes` its codes.
 */
export function unbiasedInterval(centred: Float32Array, codes: Uint8Array, bits: number, r: QuantizationResult): QuantizationResult {
  const a = r.lowerInterval;
  // The grid step as the estimator forms it: (u − a) · 1f / (2^bits − 1), in float32.
  const step = f(f(r.upperInterval - a) * f(1 / ((1 << bits) - 1)));
  let xx = 0,
    sumX = 0,
    codeX = 0;
  for (let i = 0; i < centred.length; i++) {
    const x = centred[i];
    xx += x * x;
    sumX += x;
    codeX += codes[i] * x;
  }
  const along = a * sumX + step * codeX; // x̃·x
  const alpha = xx / along;
  if (!(along > 0) || !Number.isFinite(alpha)) return r; // a vector at the centroid, or a degenerate grid: keep Lucene's
  return { ...r, lowerInterval: f(alpha * a), upperInterval: f(alpha * r.upperInterval) };
}
