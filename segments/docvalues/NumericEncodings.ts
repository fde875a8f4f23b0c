/**
 * Doc values store int64s only. Floating-point fields are longs whose bits the indexing code chose:
 *
 * | encoding         | written by                                              | long -> value                                   |
 * |------------------|---------------------------------------------------------|-------------------------------------------------|
 * | `long`           | NumericDocValuesField, SortedNumericDocValuesField, ES long/integer/short/byte/date, ords | the long itself |
 * | `double`         | Lucene's DoubleDocValuesField (Double.doubleToRawLongBits) | the IEEE-754 double with those 64 bits         |
 * | `float`          | Lucene's FloatDocValuesField (Float.floatToRawIntBits, sign-extended) | the float32 of the low 32 bits       |
 * | `sortableDouble` | NumericUtils.doubleToSortableLong (Elasticsearch double fields, SortedNumericSortField) | flip the 63 low bits of a negative pattern, then as `double` |
 * | `sortableFloat`  | NumericUtils.floatToSortableInt (Elasticsearch float fields) | flip the 31 low bits of a negative int, then as `float` |
 *
 * The index does not say which one a field uses: the mapping that wrote it does. Decoding is exact
 * (a double's 64 bits go through the column's BigInt64Array bytes, never through a rounded number).
 */
export type NumericEncoding = 'long' | 'double' | 'float' | 'sortableDouble' | 'sortableFloat';

const scratch = new DataView(new ArrayBuffer(8));

/** One long as the value its encoding stands for (`long` as a number must be safe: see toSafeNumber). */
export function decodeLong(v: bigint, encoding: Exclude<NumericEncoding, 'long'>): number {
  switch (encoding) {
    case 'double':
    case 'sortableDouble': {
      let bits = BigInt.asIntN(64, v);
      if (encoding === 'sortableDouble' && bits < 0n) bits ^= 0x7fffffffffffffffn;
      scratch.setBigInt64(0, bits, true);
      return scratch.getFloat64(0, true);
    }
    default: {
      let bits = Number(BigInt.asIntN(32, v));
      if (encoding === 'sortableFloat' && bits < 0) bits ^= 0x7fffffff;
      scratch.setInt32(0, bits, true);
      return scratch.getFloat32(0, true);
    }
  }
}

/** The encoding's inverse, for writers: the long that stands for `value`. */
export function encodeLong(value: number, encoding: Exclude<NumericEncoding, 'long'>): bigint {
  switch (encoding) {
    case 'double':
    case 'sortableDouble': {
      scratch.setFloat64(0, value, true);
      let bits = scratch.getBigInt64(0, true);
      if (encoding === 'sortableDouble' && bits < 0n) bits ^= 0x7fffffffffffffffn;
      return bits;
    }
    default: {
      scratch.setFloat32(0, value, true);
      let bits = scratch.getInt32(0, true);
      if (encoding === 'sortableFloat' && bits < 0) bits ^= 0x7fffffff;
      return BigInt(bits);
    }
  }
}

/** A whole column of longs (exact) as the floating-point values they encode, word by word. */
export function decodeFloatingColumn(longs: BigInt64Array, encoding: Exclude<NumericEncoding, 'long'>): Float64Array {
  const words = new Int32Array(longs.buffer, longs.byteOffset, longs.length * 2);
  if (encoding === 'double' || encoding === 'sortableDouble') {
    const out = new Float64Array(longs.length);
    const outWords = new Int32Array(out.buffer);
    for (let i = 0; i < longs.length; i++) {
      let lo = words[2 * i];
      let hi = words[2 * i + 1];
      if (encoding === 'sortableDouble' && hi < 0) {
        lo = ~lo;
        hi ^= 0x7fffffff;
      }
      outWords[2 * i] = lo;
      outWords[2 * i + 1] = hi;
    }
    return out;
  }
  const out = new Float64Array(longs.length);
  const f32 = new Float32Array(1);
  const i32 = new Int32Array(f32.buffer);
  for (let i = 0; i < longs.length; i++) {
    let bits = words[2 * i];
    if (encoding === 'sortableFloat' && bits < 0) bits ^= 0x7fffffff;
    i32[0] = bits;
    out[i] = f32[0];
  }
  return out;
}
