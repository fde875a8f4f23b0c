import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';

const f = Math.fround;

/** Grid-table stride: room for 8 bits (256 grid points) plus one guard entry. */
const TABLE = 257;

/**
 * Initial interval half-widths, in standard deviations, per bit count 1..8 (the minimum-MSE grid
 * for a uniform distribution). float32 constants, widened to double where they meet doubles.
 */
const MINIMUM_MSE_GRID = [0.798, 1.493, 2.051, 2.514, 2.916, 3.278, 3.611, 3.922].map(f);

export const DEFAULT_LAMBDA = f(0.1);
export const DEFAULT_ITERS = 5;

/** The per-vector corrective terms stored next to every quantized vector (and computed for queries). */
export interface QuantizationResult {
  readonly lowerInterval: number;
  readonly upperInterval: number;
  /** ‖x − c‖² for EUCLIDEAN, otherwise x·c (on the uncentred vector). */
  readonly additionalCorrection: number;
  /** Σ codes over the real dimensions. */
  readonly quantizedComponentSum: number;
}

/**
 * Lucene's OptimizedScalarQuantizer: centre the vector on the segment centroid, start from a
 * ±g·σ interval (g per bit count, e.g. 0.798 for 1 bit, 2.514 for 4), then minimise an
 * anisotropic loss (parallel error weighted by 1−λ, λ = 0.1, at most 5 rounds) by coordinate
 * descent, and round every component onto the interval's grid. The codes and corrective terms it
 * returns are what `.veq` stores (segments/quantized/ScalarQuantizedVectorsFormat.ts).
 *
 * The arithmetic follows Lucene's float/double mix exactly (statistics and loss in double,
 * grid and codes in float), so codes and corrections are bit-identical to what Lucene writes.
 */
/**
 * A replacement for the loss-and-grid pass (the quantizer's inner loop): same contract as
 * OptimizedScalarQuantizer's own, possibly summing in another order (Kernels.osqLossAndGrid).
 */
export interface LossAndGridPass {
  lossAndGrid(vector: Float32Array, a: number, b: number, points: number, norm2: number, lambda: number, grid: Float64Array): number;
  /** Optional: roundToGrid, bit for bit (Kernels.osqCodes). */
  roundToGrid?(vector: Float32Array, a: number, b: number, step: number, dest: Uint8Array): number;
}

/** The quantizer's last pass: code = round((clamp(x, a, b) - a) / step) per component into dest; returns Σ codes. */
export function roundToGrid(vector: Float32Array, a: number, b: number, step: number, dest: Uint8Array): number {
  let sum = 0;
  for (let h = 0; h < vector.length; h++) {
    const xi = clamp(vector[h], a, b);
    const code = roundSmall(f(f(xi - a) / step));
    sum += code;
    dest[h] = code;
  }
  return sum;
}

export class OptimizedScalarQuantizer {
  private readonly euclidean: boolean;

  constructor(
    readonly similarity: VectorSimilarityFunction,
    readonly lambda = DEFAULT_LAMBDA,
    readonly iters = DEFAULT_ITERS,
    /** Query-side speed-up only: stored codes must come from the scalar pass (Lucene's order). */
    private readonly pass: LossAndGridPass | null = null,
  ) {
    this.euclidean = similarity === VectorSimilarityFunction.EUCLIDEAN;
  }

  /**
   * Quantizes `vector` (MUTATED: it is centred in place; copy first if you need it) to `bits`
   * bits per component into dest[0..vector.length). dest entries beyond that are not written.
   */
  scalarQuantize(vector: Float32Array, dest: Uint8Array, bits: number, centroid: Float32Array): QuantizationResult {
    if (bits < 1 || bits > 8) throw new RangeError(`bits must be in [1, 8]: ${bits}`);
    const dim = vector.length;
    let mean = 0;
    let variance = 0;
    let norm2 = 0;
    let centroidDot = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < dim; i++) {
      if (!this.euclidean) centroidDot = f(centroidDot + f(vector[i] * centroid[i]));
      const x = f(vector[i] - centroid[i]);
      vector[i] = x;
      if (x < min) min = x;
      if (x > max) max = x;
      norm2 = f(norm2 + f(x * x));
      const delta = x - mean;
      mean += delta / (i + 1);
      variance += delta * (x - mean);
    }
    variance /= dim;
    const std = Math.sqrt(variance);
    const g = MINIMUM_MSE_GRID[bits - 1];
    const interval = this.interval;
    interval[0] = f(clamp(-g * std + mean, min, max));
    interval[1] = f(clamp(g * std + mean, min, max));
    const points = 1 << bits;
    this.optimizeIntervals(interval, vector, norm2, points);

    const nSteps = points - 1;
    const a = interval[0];
    const b = interval[1];
    const step = f(f(b - a) / nSteps);
    const sum = this.pass?.roundToGrid ? this.pass.roundToGrid(vector, a, b, step, dest) : roundToGrid(vector, a, b, step, dest);
    return {
      lowerInterval: a,
      upperInterval: b,
      additionalCorrection: this.euclidean ? norm2 : centroidDot,
      quantizedComponentSum: sum,
    };
  }

  private readonly interval = new Float32Array(2);
  private readonly candidate = new Float32Array(2);

  /**
   * One pass over `vector` for the interval [a, b]: returns the anisotropic quantization loss
   * (double) and writes into `grid` the coordinate-descent sums for the same interval
   * (daa, dab, dbb, dax, dbx). Lucene computes these in two separate passes; an accepted candidate
   * interval is exactly the next iteration's grid interval, so one loop serves both. Every sum is
   * still accumulated element by element in Lucene's order, so results are bit-identical.
   */
  private lossAndGrid(vector: Float32Array, a: number, b: number, points: number, norm2: number, grid: Float64Array): number {
    const step = (b - a) / (points - 1);
    const stepInv = 1 / step;
    const gridStepInv = f(f(points - 1) / f(b - a));
    const last = points - 1;
    // The grid point s = f(k / last) takes only `points` values, so s and the products Lucene forms
    // from it are tabulated per call (same double arithmetic, so the sums are bit-identical) rather
    // than divided and multiplied out for every component.
    const t = this.gridTables;
    for (let k = 0; k <= last + 1; k++) {
      const sk = f(k / last);
      t[k] = (1 - sk) * (1 - sk);
      t[TABLE + k] = (1 - sk) * sk;
      t[2 * TABLE + k] = sk * sk;
      t[3 * TABLE + k] = 1 - sk;
      t[4 * TABLE + k] = sk;
    }
    let xe = 0,
      e = 0;
    let daa = 0,
      dab = 0,
      dbb = 0,
      dax = 0,
      dbx = 0;
    for (let i = 0; i < vector.length; i++) {
      const xi = vector[i];
      // Lucene's clamp, min(max(x, a), b), as two ternaries (much faster here); also right when a > b.
      const lo = xi < a ? a : xi;
      const c = (lo > b ? b : lo) - a;
      const xiq = a + step * roundSmall(c * stepInv);
      const d = xi - xiq;
      xe += xi * d;
      e += d * d;
      const k = roundSmall(c * gridStepInv);
      daa += t[k];
      dab += t[TABLE + k];
      dbb += t[2 * TABLE + k];
      dax += xi * t[3 * TABLE + k];
      dbx += xi * t[4 * TABLE + k];
    }
    grid[0] = daa;
    grid[1] = dab;
    grid[2] = dbb;
    grid[3] = dax;
    grid[4] = dbx;
    const lambda = this.lambda;
    return ((1 - lambda) * xe * xe) / norm2 + lambda * e;
  }

  /** Five tables of TABLE doubles (grid points 0..256): (1-s)², (1-s)s, s², 1-s, s. */
  private readonly gridTables = new Float64Array(5 * TABLE);

  private readonly grid = new Float64Array(5);
  private readonly nextGrid = new Float64Array(5);

  private lossOf(vector: Float32Array, a: number, b: number, points: number, norm2: number, grid: Float64Array): number {
    return this.pass !== null ? this.pass.lossAndGrid(vector, a, b, points, norm2, this.lambda, grid) : this.lossAndGrid(vector, a, b, points, norm2, grid);
  }

  private optimizeIntervals(interval: Float32Array, vector: Float32Array, norm2: number, points: number): void {
    let grid = this.grid;
    let nextGrid = this.nextGrid;
    let currentLoss = this.lossOf(vector, interval[0], interval[1], points, norm2, grid);
    const lambda = this.lambda;
    const scale = f(f(1 - lambda) / norm2);
    if (!Number.isFinite(scale)) return; // the vector equals the centroid: keep the initial interval
    const candidate = this.candidate;
    for (let iter = 0; iter < this.iters; iter++) {
      const daa = grid[0],
        dab = grid[1],
        dbb = grid[2],
        dax = grid[3],
        dbx = grid[4];
      const m0 = scale * dax * dax + lambda * daa;
      const m1 = scale * dax * dbx + lambda * dab;
      const m2 = scale * dbx * dbx + lambda * dbb;
      const det = m0 * m2 - m1 * m1;
      if (det === 0) return;
      candidate[0] = (m2 * dax - m1 * dbx) / det;
      candidate[1] = (m0 * dbx - m1 * dax) / det;
      const aOpt = candidate[0];
      const bOpt = candidate[1];
      if (Math.abs(f(interval[0] - aOpt)) < 1e-8 && Math.abs(f(interval[1] - bOpt)) < 1e-8) return;
      const newLoss = this.lossOf(vector, aOpt, bOpt, points, norm2, nextGrid);
      if (newLoss > currentLoss) return; // coordinate descent is not monotone here: stop when it gets worse
      interval[0] = aOpt;
      interval[1] = bOpt;
      currentLoss = newLoss;
      const swap = grid;
      grid = nextGrid;
      nextGrid = swap;
    }
  }
}

/**
 * Java's Math.round (half rounds up; NaN gives 0) for 0 <= x < 2^31 - 1, the range of every
 * quantization grid index. V8's Math.round carries a data-dependent branch that mispredicts about
 * half the time on quantization inputs (~13 ns a call against ~1 ns here). (x + 0.5) | 0 truncates,
 * which is floor for x >= 0, and is exact except for the largest double under 0.5, where x + 0.5
 * rounds up to 1.
 */
export function roundSmall(x: number): number {
  return x === 0.49999999999999994 ? 0 : (x + 0.5) | 0;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), hi);
}
