import { SplittableRandom } from '../hnsw/SplittableRandom.js';

/** Rounds of (random signs, Hadamard on the head block, random signs, Hadamard on the tail block). */
export const HADAMARD_ROUNDS = 2;

/**
 * A seeded random orthogonal transform that costs O(D log D) per vector and is fully described by
 * its seed and dimension: the rotation applied to vectors before OSQ (prescore's extension to
 * Lucene's format, recorded in the `.vemq` meta).
 *
 * Why: 1-bit codes spend one bit per dimension whatever that dimension's variance. On data whose
 * variance sits in few coordinates (Fashion-MNIST: border pixels are always 0) most bits carry
 * nothing; an orthogonal rotation spreads the variance over every coordinate first. Distances and
 * dot products are unchanged (x·q = Rx·Rq), so Lucene's estimator applies as is to rotated doc
 * and query vectors, and the fp32 vectors (used for rescoring) are never rotated.
 *
 * The transform for D dimensions, with P the largest power of two <= D: HADAMARD_ROUNDS times,
 * flip the sign of every coordinate by a random sign vector, apply the orthonormal Walsh-Hadamard
 * transform (scaled by 1/sqrt(P)) to coordinates [0, P); then, when D > P, flip signs again and
 * apply it to [D - P, D). The two blocks overlap (2P > D), so every coordinate mixes with every
 * other, and D stays D (no padding: record sizes are those of the unrotated format).
 *
 * Signs: one SplittableRandom(seed) stream, one bit per coordinate (the low bit of nextLong),
 * drawn round by round, head signs then tail signs. Arithmetic is in float64 (deterministic in
 * JS), rounded to float32 once at the end.
 */
export class RandomizedHadamard {
  readonly block: number;
  /** Sign vectors, ±1, HADAMARD_ROUNDS x (head, tail) x dims. */
  private readonly signs: Float64Array;
  private readonly work: Float64Array;
  /** The last input apply() transformed and its output (see apply()); valid once `hasLast`. */
  private readonly lastSrc: Float32Array;
  private readonly lastOut: Float32Array;
  private hasLast = false;

  constructor(
    readonly dims: number,
    readonly seed: bigint,
  ) {
    if (!(Number.isInteger(dims) && dims >= 1)) throw new RangeError(`dims must be a positive integer: ${dims}`);
    let p = 1;
    while (p * 2 <= dims) p *= 2;
    this.block = p;
    const rng = new SplittableRandom(seed);
    this.signs = new Float64Array(HADAMARD_ROUNDS * 2 * dims);
    for (let i = 0; i < this.signs.length; i++) this.signs[i] = (rng.nextLongBits() & 1n) === 1n ? -1 : 1;
    this.work = new Float64Array(dims);
    this.lastSrc = new Float32Array(dims);
    this.lastOut = new Float32Array(dims);
  }

  /**
   * Rotates src[0..dims) into dest[0..dims) (float32); src and dest may be the same array.
   *
   * A query is rotated once for every segment it searches, and every segment of an index shares
   * the seed (so, per thread, this instance): the transform of the last input is kept and reused
   * when the next input is equal. The comparison costs ~0.5 us against 45-63 us for the transform
   * at 768 dims; on bench:profile's 4-segment 200k index, query quantization went from 0.35 to
   * 0.18 ms per search.
   */
  apply(src: Float32Array, dest: Float32Array): void {
    const d = this.dims;
    if (this.hasLast && equalPrefix(src, this.lastSrc, d)) {
      dest.set(this.lastOut);
      return;
    }
    const p = this.block;
    const w = this.work;
    for (let i = 0; i < d; i++) this.lastSrc[i] = w[i] = src[i];
    const scale = 1 / Math.sqrt(p);
    for (let r = 0; r < HADAMARD_ROUNDS; r++) {
      const head = 2 * r * d;
      for (let i = 0; i < d; i++) w[i] *= this.signs[head + i];
      fwht(w, 0, p, scale);
      if (d > p) {
        const tail = (2 * r + 1) * d;
        for (let i = 0; i < d; i++) w[i] *= this.signs[tail + i];
        fwht(w, d - p, p, scale);
      }
    }
    for (let i = 0; i < d; i++) dest[i] = this.lastOut[i] = w[i];
    this.hasLast = true;
  }
}

function equalPrefix(a: Float32Array, b: Float32Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * In-place orthonormal fast Walsh-Hadamard transform of w[from .. from + n), n a power of two.
 * Stages h and 2h run fused (four elements per step: the same additions in the same order, so
 * bit-identical to one stage at a time, and 2.4-2.7x faster at n = 256-1024 in Node 20).
 */
function fwht(w: Float64Array, from: number, n: number, scale: number): void {
  const end = from + n;
  let h = 1;
  for (; 4 * h <= n; h *= 4) {
    for (let i = from; i < end; i += 4 * h) {
      for (let j = i; j < i + h; j++) {
        const a = w[j],
          b = w[j + h],
          c = w[j + 2 * h],
          d = w[j + 3 * h];
        const s0 = a + b,
          d0 = a - b,
          s1 = c + d,
          d1 = c - d;
        w[j] = s0 + s1;
        w[j + h] = d0 + d1;
        w[j + 2 * h] = s0 - s1;
        w[j + 3 * h] = d0 - d1;
      }
    }
  }
  if (h < n) {
    for (let i = from; i < end; i += 2 * h) {
      for (let j = i; j < i + h; j++) {
        const a = w[j];
        const b = w[j + h];
        w[j] = a + b;
        w[j + h] = a - b;
      }
    }
  }
  for (let i = from; i < end; i++) w[i] *= scale;
}

/** The default rotation seed (any 64-bit value works; segments store the one they used). */
export const DEFAULT_ROTATION_SEED = 0x5eed_0f_0a_5ca1en;
