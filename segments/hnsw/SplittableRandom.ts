const MASK = 0xffff_ffff_ffff_ffffn;
const GOLDEN_GAMMA = 0x9e37_79b9_7f4a_7c15n;

function mix64(z: bigint): bigint {
  z = ((z ^ (z >> 30n)) * 0xbf58_476d_1ce4_e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d0_49bb_1331_11ebn) & MASK;
  return z ^ (z >> 31n);
}

/**
 * java.util.SplittableRandom(seed) — the generator Lucene's HnswGraphBuilder draws node levels
 * from — reproduced exactly, so a given seed yields the same level sequence as Lucene (default
 * seed 42). Only nextLong/nextDouble are needed. BigInt is fine here: one draw per inserted node.
 */
export class SplittableRandom {
  private seed: bigint;

  constructor(seed: number | bigint) {
    this.seed = BigInt.asUintN(64, BigInt(seed));
  }

  /** The next 64 bits, as an unsigned bigint. */
  nextLongBits(): bigint {
    this.seed = (this.seed + GOLDEN_GAMMA) & MASK;
    return mix64(this.seed);
  }

  /** nextLong() as Java's signed long. */
  nextLong(): bigint {
    return BigInt.asIntN(64, this.nextLongBits());
  }

  /** Uniform in [0, 1): the top 53 bits times 2^-53. */
  nextDouble(): number {
    return Number(this.nextLongBits() >> 11n) * 2 ** -53;
  }
}
