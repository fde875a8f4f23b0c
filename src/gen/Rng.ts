/**
 * Deterministic random numbers for the data generator: xoshiro128** (Blackman & Vigna) seeded
 * through splitmix64 from (seed, ...keys), and standard normals by the Marsaglia-Tsang ziggurat.
 * Every stream of numbers is a pure function of its keys, so a chunk generated on any worker, in
 * any order, is the same.
 */

const MASK64 = (1n << 64n) - 1n;

function splitmix64(state: bigint): { state: bigint; value: bigint } {
  const s = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = s;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return { state: s, value: z ^ (z >> 31n) };
}

/** Parses a user seed: a non-negative integer below 2^64 (decimal). */
export function parseSeed(seed: string | number | bigint): bigint {
  let v: bigint;
  try {
    v = typeof seed === 'bigint' ? seed : BigInt(typeof seed === 'number' ? seed : seed.trim());
  } catch {
    throw new RangeError(`seed must be an integer in [0, 2^64), got ${String(seed)}`);
  }
  if (v < 0n || v > MASK64) throw new RangeError(`seed must be an integer in [0, 2^64), got ${String(seed)}`);
  return v;
}

// --- Ziggurat tables (128 layers). The 32-bit draw is split: low 7 bits pick the layer, the
// high 25 bits (signed) give the value, so layer and value come from independent bits.
const ZIG_R = 3.442619855899;
const ZIG_V = 9.91256303526217e-3;
const ZIG_M = 2 ** 24;
const KN = new Int32Array(128);
const WN = new Float64Array(128);
const FN = new Float64Array(128);
{
  let dn = ZIG_R;
  let tn = dn;
  const q = ZIG_V / Math.exp(-0.5 * dn * dn);
  KN[0] = Math.floor((dn / q) * ZIG_M);
  KN[1] = 0;
  WN[0] = q / ZIG_M;
  WN[127] = dn / ZIG_M;
  FN[0] = 1;
  FN[127] = Math.exp(-0.5 * dn * dn);
  for (let i = 126; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(ZIG_V / dn + Math.exp(-0.5 * dn * dn)));
    KN[i + 1] = Math.floor((dn / tn) * ZIG_M);
    tn = dn;
    FN[i] = Math.exp(-0.5 * dn * dn);
    WN[i] = dn / ZIG_M;
  }
}

const TWO_POW_M32 = 2 ** -32;

export class Rng {
  /** xoshiro128** state (kept in a typed array: no boxing of the 32-bit words). */
  private readonly s = new Int32Array(4);

  private constructor() {}

  /**
   * The stream for (seed, keys...): splitmix64 over the seed and each key in turn, so different
   * key tuples give unrelated streams.
   */
  static from(seed: bigint, ...keys: number[]): Rng {
    let st = splitmix64(seed & MASK64);
    for (const k of keys) {
      if (!Number.isSafeInteger(k) || k < 0) throw new RangeError(`rng key must be a non-negative safe integer, got ${k}`);
      st = splitmix64(st.value ^ BigInt(k));
    }
    const a = splitmix64(st.value);
    const b = splitmix64(a.state);
    const rng = new Rng();
    rng.s[0] = Number(a.value & 0xffffffffn) | 0;
    rng.s[1] = Number(a.value >> 32n) | 0;
    rng.s[2] = Number(b.value & 0xffffffffn) | 0;
    rng.s[3] = Number(b.value >> 32n) | 0;
    if ((rng.s[0] | rng.s[1] | rng.s[2] | rng.s[3]) === 0) rng.s[0] = 1;
    return rng;
  }

  /** Next 32 random bits as a signed int32. */
  nextInt32(): number {
    const s = this.s;
    const s0 = s[0],
      s1 = s[1];
    let s2 = s[2],
      s3 = s[3];
    const x = Math.imul(s1, 5);
    const result = Math.imul((x << 7) | (x >>> 25), 9);
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s[1] = s1 ^ s2;
    s[0] = s0 ^ s3;
    s[2] = s2 ^ t;
    s[3] = (s3 << 11) | (s3 >>> 21);
    return result;
  }

  /** Uniform in [0, 1) with 32 random bits. */
  nextDouble(): number {
    return (this.nextInt32() >>> 0) * TWO_POW_M32;
  }

  /** Uniform in (0, 1): never 0, for logarithms. */
  nextOpenDouble(): number {
    return ((this.nextInt32() >>> 0) + 0.5) * TWO_POW_M32;
  }

  /** Uniform integer in [0, n), n <= 2^32 (multiply-shift; bias < n / 2^32, irrelevant here). */
  nextInt(n: number): number {
    return Math.floor((this.nextInt32() >>> 0) * TWO_POW_M32 * n);
  }

  /** A standard normal deviate. */
  normal(): number {
    const u = this.nextInt32();
    const iz = u & 127;
    const hz = u >> 7;
    if (Math.abs(hz) < KN[iz]) return hz * WN[iz];
    return this.normalSlow(hz, iz);
  }

  /** Fills out[off..off+n) with standard normals (the hot loop keeps the state in locals). */
  fillNormal(out: Float64Array, off: number, n: number): void {
    const s = this.s;
    let s0 = s[0],
      s1 = s[1],
      s2 = s[2],
      s3 = s[3];
    const end = off + n;
    for (let i = off; i < end; i++) {
      const x = Math.imul(s1, 5);
      const u = Math.imul((x << 7) | (x >>> 25), 9);
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
      const iz = u & 127;
      const hz = u >> 7;
      if (Math.abs(hz) < KN[iz]) {
        out[i] = hz * WN[iz];
      } else {
        s[0] = s0;
        s[1] = s1;
        s[2] = s2;
        s[3] = s3;
        out[i] = this.normalSlow(hz, iz);
        s0 = s[0];
        s1 = s[1];
        s2 = s[2];
        s3 = s[3];
      }
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
  }

  /** Log-normal: exp(sigma * N(0,1)), median 1. */
  logNormal(sigma: number): number {
    return Math.exp(sigma * this.normal());
  }

  private normalSlow(hz: number, iz: number): number {
    for (;;) {
      const x = hz * WN[iz];
      if (iz === 0) {
        // The tail beyond R (Marsaglia 1964).
        let tx: number, ty: number;
        do {
          tx = -Math.log(this.nextOpenDouble()) / ZIG_R;
          ty = -Math.log(this.nextOpenDouble());
        } while (ty + ty < tx * tx);
        return hz > 0 ? ZIG_R + tx : -ZIG_R - tx;
      }
      if (FN[iz] + this.nextDouble() * (FN[iz - 1] - FN[iz]) < Math.exp(-0.5 * x * x)) return x;
      const u = this.nextInt32();
      iz = u & 127;
      hz = u >> 7;
      if (Math.abs(hz) < KN[iz]) return hz * WN[iz];
    }
  }
}

/**
 * mulberry32: a tiny deterministic uniform [0, 1) generator for tests and benchmarks, where a
 * seed must reproduce a failure but statistical quality hardly matters (datasets use Rng).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
