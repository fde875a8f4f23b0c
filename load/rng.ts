/**
 * Seeded randomness for reproducible runs: the arrival schedule and the random query vectors
 * use separate streams so changing one (e.g. --dim) does not change the other.
 */

/** xoshiro128** seeded through splitmix32; uniform doubles in [0, 1). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareGaussian = NaN;

  constructor(seed: number, stream = 0) {
    let x = (Math.trunc(seed) ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  private nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Exponential with the given mean (inverse CDF; 1 - u is never 0). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** Standard normal (Box-Muller, the second value is kept for the next call). */
  gaussian(): number {
    if (!Number.isNaN(this.spareGaussian)) {
      const g = this.spareGaussian;
      this.spareGaussian = NaN;
      return g;
    }
    const u = 1 - this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareGaussian = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
