import { MAX_LONG, MIN_LONG, numericKey, type NumericValue } from './Values.js';

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = 1 - LO;

/**
 * The bounds of a numeric range, normalised once so that the fill loops compare with `>=` and
 * `<=` only. Two forms:
 *
 * - doubles, inclusive, in Lucene's total order of doubles (the order of
 *   `doubleToSortableLong`: -0.0 below +0.0). An exclusive bound becomes the next double inward
 *   (Lucene's DoublePoint.nextUp / nextDown, which step between -0.0 and +0.0). JavaScript's
 *   `>=` treats -0 and +0 as equal, so `negZero` / `posZero` say whether each zero is in the
 *   range, and `zeroAware` whether the plain comparison gets a zero wrong (a bound at +0.0
 *   inclusive excludes -0.0, as in Elasticsearch: `gte: 0` does not match a stored -0.0).
 * - longs, inclusive (`loLong`, `hiLong`), for integer columns with exact longs beyond ±2^53:
 *   a fractional bound rounds inward (`gte: 1.5` is `>= 2`). A long compares as the double it
 *   equals (0 as +0.0), so both forms agree on every segment: `gt: -0.0` matches 0 and `lte: -0.0`
 *   does not. (Elasticsearch's long fields read a -0.0 bound as 0; the DSL hands integer fields
 *   integer bounds, so that never arises from a request.)
 *
 * Bigint bounds are exact in both forms (rounded outward to the nearest double when they have
 * none, so no long is lost or gained at the edge).
 */
export class NumericBounds {
  /** Inclusive double bounds (-Infinity / +Infinity when open). */
  readonly lo: number;
  readonly hi: number;
  /** No double is in range. */
  readonly empty: boolean;
  /** Whether -0.0 and +0.0 are in range (Lucene's order). */
  readonly negZero: boolean;
  readonly posZero: boolean;
  /** `v >= lo && v <= hi` is wrong for a zero: the fill loops check zeros' signs. */
  readonly zeroAware: boolean;
  /** Inclusive long bounds (MIN_LONG / MAX_LONG when open). */
  readonly loLong: bigint;
  readonly hiLong: bigint;
  /** No long is in range. */
  readonly emptyLong: boolean;

  constructor(
    readonly lower: NumericValue | null,
    readonly upper: NumericValue | null,
    readonly includeLower: boolean,
    readonly includeUpper: boolean,
  ) {
    for (const b of [lower, upper]) if (typeof b === 'number' && Number.isNaN(b)) throw new RangeError('a numeric range bound must not be NaN');
    this.lo = lower === null ? -Infinity : includeLower ? ceilDouble(lower) : aboveDouble(lower);
    this.hi = upper === null ? Infinity : includeUpper ? floorDouble(upper) : belowDouble(upper);
    this.empty = totalOrderCompare(this.lo, this.hi) > 0 || Number.isNaN(this.lo) || Number.isNaN(this.hi);
    this.negZero = !this.empty && totalOrderCompare(this.lo, -0) <= 0 && totalOrderCompare(-0, this.hi) <= 0;
    this.posZero = !this.empty && totalOrderCompare(this.lo, 0) <= 0 && totalOrderCompare(0, this.hi) <= 0;
    const plain = 0 >= this.lo && 0 <= this.hi;
    this.zeroAware = !this.empty && (plain !== this.negZero || plain !== this.posZero);
    this.loLong = lower === null ? MIN_LONG : longAtLeast(lower, includeLower);
    this.hiLong = upper === null ? MAX_LONG : longAtMost(upper, includeUpper);
    this.emptyLong = this.loLong > this.hiLong;
  }

  /** `lower <= x <= upper` in one value: a term on a numeric field. */
  static point(value: NumericValue): NumericBounds {
    return new NumericBounds(value, value, true, true);
  }

  /** Whether `v` (a double of a column) is in range, in Lucene's order: the reference the fill loops agree with. */
  matchesDouble(v: number): boolean {
    if (this.empty) return false;
    if (v === 0) return Object.is(v, -0) ? this.negZero : this.posZero;
    return v >= this.lo && v <= this.hi;
  }

  /** The bounds as Lucene's toString spells them (`[` inclusive, `{` exclusive, `*` open, as `[* TO 5}`): canonical, also the cache key's. */
  key(): string {
    const lo = this.lower === null ? '*' : numericKey(this.lower);
    const hi = this.upper === null ? '*' : numericKey(this.upper);
    return `${this.lower === null || this.includeLower ? '[' : '{'}${lo} TO ${hi}${this.upper === null || this.includeUpper ? ']' : '}'}`;
  }
}

/** Compares doubles in Lucene's order (-0.0 < +0.0); NaN is never given here. */
export function totalOrderCompare(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === 0 && b === 0) {
    const na = Object.is(a, -0),
      nb = Object.is(b, -0);
    return na === nb ? 0 : na ? -1 : 1;
  }
  return 0;
}

/** Lucene's DoublePoint.nextUp: the next double up, with -0.0 -> +0.0. */
export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Object.is(x, -0) ? 0 : Number.MIN_VALUE;
  f64[0] = x;
  if (x > 0) {
    u32[LO] = (u32[LO] + 1) >>> 0;
    if (u32[LO] === 0) u32[HI] = (u32[HI] + 1) >>> 0;
  } else {
    if (u32[LO] === 0) u32[HI] = (u32[HI] - 1) >>> 0;
    u32[LO] = (u32[LO] - 1) >>> 0;
  }
  return f64[0];
}

/** Lucene's DoublePoint.nextDown: the next double down, with +0.0 -> -0.0. */
export function nextDown(x: number): number {
  return -nextUp(-x);
}

/** The smallest double >= v. */
function ceilDouble(v: NumericValue): number {
  if (typeof v === 'number') return v;
  const d = Number(v);
  return BigInt(d) < v ? nextUp(d) : d;
}

/** The largest double <= v. */
function floorDouble(v: NumericValue): number {
  if (typeof v === 'number') return v;
  const d = Number(v);
  return BigInt(d) > v ? nextDown(d) : d;
}

/** The smallest double > v. */
function aboveDouble(v: NumericValue): number {
  if (typeof v === 'number') return v === Infinity ? NaN : nextUp(v);
  const d = ceilDouble(v);
  return BigInt(d) === v ? nextUp(d) : d;
}

/** The largest double < v. */
function belowDouble(v: NumericValue): number {
  if (typeof v === 'number') return v === -Infinity ? NaN : nextDown(v);
  const d = floorDouble(v);
  return BigInt(d) === v ? nextDown(d) : d;
}

/** The smallest long >= v (or > v); MAX_LONG + 1 when none. */
function longAtLeast(v: NumericValue, inclusive: boolean): bigint {
  let l: bigint;
  if (typeof v === 'bigint') l = inclusive ? v : v + 1n;
  else if (v === -Infinity) return MIN_LONG;
  else if (v === Infinity) return MAX_LONG + 1n;
  // Above -0.0 in Lucene's order is +0.0: the long 0.
  else if (Object.is(v, -0) && !inclusive) return 0n;
  else l = inclusive ? BigInt(Math.ceil(v)) : BigInt(Math.floor(v)) + 1n;
  return l < MIN_LONG ? MIN_LONG : l;
}

/** The largest long <= v (or < v); MIN_LONG - 1 when none. */
function longAtMost(v: NumericValue, inclusive: boolean): bigint {
  let l: bigint;
  if (typeof v === 'bigint') l = inclusive ? v : v - 1n;
  else if (v === Infinity) return MAX_LONG;
  else if (v === -Infinity) return MIN_LONG - 1n;
  // At or below -0.0 excludes the long 0 (+0.0).
  else if (Object.is(v, -0)) return -1n;
  else l = inclusive ? BigInt(Math.floor(v)) : BigInt(Math.ceil(v)) - 1n;
  return l > MAX_LONG ? MAX_LONG : l;
}
