/**
 * Lucene's order-preserving number encodings (NumericUtils): how a `double` or `float` field's
 * values are kept as longs in SORTED_NUMERIC doc values, so that comparing the longs compares the
 * numbers. The IEEE 754 bits are taken as a signed integer, and for negative numbers every bit
 * but the sign is flipped (which reverses their order). -0.0 sorts just below +0.0; NaN is never
 * indexed (the document parser refuses it).
 */

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

const LOW_63 = 0x7fffffffffffffffn;

/** NumericUtils.doubleToSortableLong. */
export function doubleToSortableLong(value: number): bigint {
  f64[0] = value;
  const bits = i64[0]!;
  return bits < 0n ? bits ^ LOW_63 : bits;
}

/** NumericUtils.sortableLongToDouble (its own inverse flip). */
export function sortableLongToDouble(encoded: bigint): number {
  i64[0] = encoded < 0n ? encoded ^ LOW_63 : encoded;
  return f64[0]!;
}

/** NumericUtils.floatToSortableInt (of the float32 value). */
export function floatToSortableInt(value: number): number {
  f32[0] = value;
  const bits = i32[0]!;
  return bits < 0 ? bits ^ 0x7fffffff : bits;
}

/** NumericUtils.sortableIntToFloat. */
export function sortableIntToFloat(encoded: number): number {
  i32[0] = encoded < 0 ? encoded ^ 0x7fffffff : encoded;
  return f32[0]!;
}
