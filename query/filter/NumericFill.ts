import type { NumericColumn } from './FilterLeaf.js';
import type { NumericBounds } from './NumericBounds.js';
import { fillFromCounts, valueCounts } from './MultiValued.js';
import { TWO_53 } from './Values.js';

/**
 * The docs of a numeric column with a value in `bounds`, written a 32-doc word at a time into
 * `out` (zeroed, `maxDoc` bits; live docs not applied; docs without a value never match). One loop per column shape,
 * each branch-free in its inner comparison (`+(v >= lo) & +(v <= hi)`: a taken/not-taken branch
 * per doc costs ~5x on random data); a multi-valued doc matches when any of its values does
 * (counted branch-free: MultiValued).
 */
export function fillNumericRange(column: NumericColumn, bounds: NumericBounds, out: Uint32Array, maxDoc: number): void {
  if (column.exactLongs !== null) {
    if (bounds.emptyLong) return;
    if (column.offsets === null) exactSingle(column.values, column.exactLongs, bounds, out, maxDoc);
    else exactMulti(column.values, column.exactLongs, column.offsets, bounds, out, maxDoc);
  } else {
    if (bounds.empty) return;
    if (column.offsets === null) {
      if (bounds.zeroAware) zeroAwareSingle(column.values, bounds, out, maxDoc);
      else if (bounds.lo === bounds.hi) equalsSingle(column.values, bounds.lo, out, maxDoc);
      else plainSingle(column.values, bounds.lo, bounds.hi, out, maxDoc);
    } else {
      if (bounds.zeroAware) zeroAwareMulti(column.values, column.offsets, bounds, out, maxDoc);
      else plainMulti(column.values, column.offsets, bounds.lo, bounds.hi, out, maxDoc);
    }
  }
  if (column.offsets === null && column.present !== null) andPresent(out, column.present);
}

export function andPresent(out: Uint32Array, present: Uint32Array): void {
  const n = Math.min(out.length, present.length);
  for (let w = 0; w < n; w++) out[w] &= present[w];
  if (n < out.length) out.fill(0, n);
}

function plainSingle(values: Float64Array, lo: number, hi: number, out: Uint32Array, maxDoc: number): void {
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i += 8) {
      const a = values[d + i],
        b = values[d + i + 1],
        c = values[d + i + 2],
        e = values[d + i + 3];
      const f = values[d + i + 4],
        g = values[d + i + 5],
        h = values[d + i + 6],
        k = values[d + i + 7];
      bits |=
        ((+(a >= lo) & +(a <= hi)) |
          ((+(b >= lo) & +(b <= hi)) << 1) |
          ((+(c >= lo) & +(c <= hi)) << 2) |
          ((+(e >= lo) & +(e <= hi)) << 3) |
          ((+(f >= lo) & +(f <= hi)) << 4) |
          ((+(g >= lo) & +(g <= hi)) << 5) |
          ((+(h >= lo) & +(h <= hi)) << 6) |
          ((+(k >= lo) & +(k <= hi)) << 7)) <<
        i;
    }
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) {
      const v = values[d + i];
      bits |= (+(v >= lo) & +(v <= hi)) << i;
    }
    out[full] = bits;
  }
}

/** A point that is not a zero: `===` is exact (only zeros compare equal across signs). */
function equalsSingle(values: Float64Array, x: number, out: Uint32Array, maxDoc: number): void {
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i += 4) {
      bits |= (+(values[d + i] === x) | (+(values[d + i + 1] === x) << 1) | (+(values[d + i + 2] === x) << 2) | (+(values[d + i + 3] === x) << 3)) << i;
    }
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) bits |= +(values[d + i] === x) << i;
    out[full] = bits;
  }
}

function plainMulti(values: Float64Array, offsets: Int32Array, lo: number, hi: number, out: Uint32Array, maxDoc: number): void {
  const counts = valueCounts(offsets, maxDoc);
  let acc = 0;
  for (let j = offsets[0], end = offsets[maxDoc]; j < end; j++) {
    const v = values[j];
    acc += +(v >= lo) & +(v <= hi);
    counts[j + 1] = acc;
  }
  fillFromCounts(offsets, counts, out, maxDoc);
}

/** One value against bounds that involve a zero: -0.0 and +0.0 decided by sign (rare: only when a bound is a zero). */
function zeroAwareMatch(v: number, lo: number, hi: number, negZero: number, posZero: number): number {
  if (v !== 0) return +(v >= lo) & +(v <= hi);
  return 1 / v < 0 ? negZero : posZero;
}

function zeroAwareSingle(values: Float64Array, bounds: NumericBounds, out: Uint32Array, maxDoc: number): void {
  const { lo, hi } = bounds;
  const negZero = +bounds.negZero,
    posZero = +bounds.posZero;
  const words = (maxDoc + 31) >>> 5;
  let d = 0;
  for (let w = 0; w < words; w++) {
    let bits = 0;
    const n = Math.min(32, maxDoc - d);
    for (let i = 0; i < n; i++, d++) bits |= zeroAwareMatch(values[d], lo, hi, negZero, posZero) << i;
    out[w] = bits;
  }
}

function zeroAwareMulti(values: Float64Array, offsets: Int32Array, bounds: NumericBounds, out: Uint32Array, maxDoc: number): void {
  const { lo, hi } = bounds;
  const negZero = +bounds.negZero,
    posZero = +bounds.posZero;
  const counts = valueCounts(offsets, maxDoc);
  let acc = 0;
  for (let j = offsets[0], end = offsets[maxDoc]; j < end; j++) {
    acc += zeroAwareMatch(values[j], lo, hi, negZero, posZero);
    counts[j + 1] = acc;
  }
  fillFromCounts(offsets, counts, out, maxDoc);
}

/**
 * One value of an integer column with exact longs: within ±2^53 the double is the long and
 * compares exactly against the rounded long bounds (a bound beyond 2^53 still orders right
 * against it); beyond, the exact long decides.
 */
function exactMatch(v: number, exact: BigInt64Array, j: number, loF: number, hiF: number, lo: bigint, hi: bigint): number {
  if (v > -TWO_53 && v < TWO_53) return +(v >= loF) & +(v <= hiF);
  const x = exact[j];
  return +(x >= lo && x <= hi);
}

function exactSingle(values: Float64Array, exact: BigInt64Array, bounds: NumericBounds, out: Uint32Array, maxDoc: number): void {
  const lo = bounds.loLong,
    hi = bounds.hiLong;
  const loF = Number(lo),
    hiF = Number(hi);
  const words = (maxDoc + 31) >>> 5;
  let d = 0;
  for (let w = 0; w < words; w++) {
    let bits = 0;
    const n = Math.min(32, maxDoc - d);
    for (let i = 0; i < n; i++, d++) bits |= exactMatch(values[d], exact, d, loF, hiF, lo, hi) << i;
    out[w] = bits;
  }
}

function exactMulti(values: Float64Array, exact: BigInt64Array, offsets: Int32Array, bounds: NumericBounds, out: Uint32Array, maxDoc: number): void {
  const lo = bounds.loLong,
    hi = bounds.hiLong;
  const loF = Number(lo),
    hiF = Number(hi);
  const counts = valueCounts(offsets, maxDoc);
  let acc = 0;
  for (let j = offsets[0], end = offsets[maxDoc]; j < end; j++) {
    acc += exactMatch(values[j], exact, j, loF, hiF, lo, hi);
    counts[j + 1] = acc;
  }
  fillFromCounts(offsets, counts, out, maxDoc);
}

/**
 * Clears from `bits` (a set of candidate docs, a 32-doc word at a time) each doc without a value
 * of `column` in `bounds`: the same test as fillNumericRange, doc by doc over the set bits only,
 * so a conjunction whose other clauses left few docs pays for those, not for the column.
 */
export function refineNumericRange(column: NumericColumn, bounds: NumericBounds, bits: Uint32Array, maxDoc: number): void {
  const { values, offsets, present, exactLongs } = column;
  if (exactLongs !== null ? bounds.emptyLong : bounds.empty) {
    bits.fill(0);
    return;
  }
  const lo = bounds.lo,
    hi = bounds.hi;
  const loL = bounds.loLong,
    hiL = bounds.hiLong,
    loF = Number(loL),
    hiF = Number(hiL);
  const negZero = +bounds.negZero,
    posZero = +bounds.posZero,
    zeroAware = bounds.zeroAware;
  const one = (j: number): number => {
    const v = values[j];
    if (exactLongs !== null) return exactMatch(v, exactLongs, j, loF, hiF, loL, hiL);
    return zeroAware ? zeroAwareMatch(v, lo, hi, negZero, posZero) : +(v >= lo) & +(v <= hi);
  };
  const words = Math.min(bits.length, (maxDoc + 31) >>> 5);
  for (let w = 0; w < words; w++) {
    let word = bits[w];
    if (word === 0) continue;
    let keep = word;
    while (word !== 0) {
      const bit = 31 - Math.clz32(word & -word);
      word &= word - 1;
      const d = (w << 5) | bit;
      let match = 0;
      if (offsets === null) match = present !== null && ((present[w] >>> bit) & 1) === 0 ? 0 : one(d);
      else for (let j = offsets[d], end = offsets[d + 1]; j < end && match === 0; j++) match = one(j);
      if (match === 0) keep &= ~(1 << bit);
    }
    bits[w] = keep;
  }
}
