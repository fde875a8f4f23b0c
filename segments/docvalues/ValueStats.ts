import { DirectWriter } from '../packed/DirectWriter.js';
import { LONG_MAX, LONG_MIN, NUMERIC_BLOCK_SIZE } from './Lucene90DocValuesFormat.js';

/** A long: a safe-integer number or any int64 as a bigint. */
export type Long = number | bigint;

/**
 * The values of a field in doc order: docs with a value, how many each has, all values flattened
 * (as numbers when every one is a safe integer, else as exact int64s).
 */
export interface FieldValues {
  readonly docs: Int32Array;
  /** Values per doc (parallel to docs), or null when each doc has exactly one. */
  readonly counts: Int32Array | null;
  readonly values: Float64Array | BigInt64Array;
}

const HALF_MIN = LONG_MIN / 2n;
const HALF_MAX = LONG_MAX / 2n;

/** Lucene's MinMaxTracker: global and per-block min / max, and the bits each way would take. */
class MinMax {
  min = LONG_MAX;
  max = LONG_MIN;
  count = 0;
  spaceInBits = 0;
  update(v: bigint): void {
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    this.count++;
  }
  merge(o: MinMax): void {
    if (o.min < this.min) this.min = o.min;
    if (o.max > this.max) this.max = o.max;
    this.count += o.count;
  }
  finish(): void {
    if (this.max > this.min) this.spaceInBits += DirectWriter.unsignedBitsRequired(BigInt.asIntN(64, this.max - this.min)) * this.count;
  }
  nextBlock(): void {
    this.finish();
    this.min = LONG_MAX;
    this.max = LONG_MIN;
    this.count = 0;
  }
}

/** What the writer's encoding choice is made from: bounds, GCD, distinct values (up to 256) and the bits each layout takes. */
export interface ValueStats {
  readonly min: bigint;
  readonly max: bigint;
  readonly gcd: bigint;
  readonly unique: bigint[] | null;
  readonly globalSpace: number;
  readonly blockSpace: number;
}

/** max - min of safe integers is itself safe: every difference the stats take is exact in doubles. */
export function safeSpan(values: Float64Array): boolean {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    if (values[i] < min) min = values[i];
    if (values[i] > max) max = values[i];
  }
  return values.length === 0 || max - min <= Number.MAX_SAFE_INTEGER;
}

export function asBigInts(values: Float64Array | BigInt64Array): BigInt64Array {
  return values instanceof BigInt64Array ? values : BigInt64Array.from(values, (x) => BigInt(x));
}

/** Lucene's stats pass over numbers (safe integers with a safe span: no GCD give-up can trigger). */
export function numberStats(values: Float64Array, ords: boolean): ValueStats {
  const n = values.length;
  const first = n > 0 ? values[0] : 0;
  let gcd = 0;
  let unique: Set<number> | null = ords ? null : new Set();
  let min = Infinity;
  let max = -Infinity;
  let blockSpace = 0;
  for (let from = 0; from < n; from += NUMERIC_BLOCK_SIZE) {
    const end = Math.min(n, from + NUMERIC_BLOCK_SIZE);
    let bmin = values[from];
    let bmax = values[from];
    for (let i = from; i < end; i++) {
      const x = values[i];
      if (gcd !== 1) gcd = gcdOfNumbers(gcd, x - first);
      if (x < bmin) bmin = x;
      if (x > bmax) bmax = x;
      if (unique !== null && !unique.has(x)) {
        unique.add(x);
        if (unique.size > 256) unique = null;
      }
    }
    if (bmax > bmin) blockSpace += DirectWriter.unsignedBitsRequired(bmax - bmin) * (end - from);
    if (bmin < min) min = bmin;
    if (bmax > max) max = bmax;
  }
  const globalSpace = max > min ? DirectWriter.unsignedBitsRequired(max - min) * n : 0;
  return {
    min: n === 0 ? LONG_MAX : BigInt(min),
    max: n === 0 ? LONG_MIN : BigInt(max),
    gcd: BigInt(gcd),
    unique: unique === null ? null : [...unique].map((u) => BigInt(u)),
    globalSpace,
    blockSpace,
  };
}

/** The same pass over int64s, with Lucene's give-up on the GCD near the ends of the range. */
export function bigStats(values: BigInt64Array, ords: boolean): ValueStats {
  const n = values.length;
  const first = n > 0 ? values[0] : 0n;
  const global = new MinMax();
  const block = new MinMax();
  let gcd = 0n;
  let unique: Set<bigint> | null = ords ? null : new Set();
  for (let i = 0; i < n; i++) {
    const x = values[i];
    if (gcd !== 1n) {
      // Far from zero, x - first could overflow and corrupt the GCD: Lucene gives up on it.
      gcd = x < HALF_MIN || x > HALF_MAX ? 1n : gcdOf(gcd, x - first);
    }
    block.update(x);
    if (block.count === NUMERIC_BLOCK_SIZE) {
      global.merge(block);
      block.nextBlock();
    }
    if (unique !== null && !unique.has(x)) {
      unique.add(x);
      if (unique.size > 256) unique = null;
    }
  }
  global.merge(block);
  global.finish();
  block.finish();
  return { min: global.min, max: global.max, gcd, unique: unique === null ? null : [...unique], globalSpace: global.spaceInBits, blockSpace: block.spaceInBits };
}

function gcdOfNumbers(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** (v - min) / gcd in int64 as Java computes it, as the unsigned pattern DirectWriter stores. */
export function packed(v: bigint, min: bigint, gcd: bigint): bigint {
  return BigInt.asUintN(64, BigInt.asIntN(64, v - min) / gcd);
}

function gcdOf(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
