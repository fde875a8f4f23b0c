/**
 * Float32 vector arithmetic with Lucene's scalar accumulation order (DefaultVectorUtilSupport):
 * above 32 dims, four independent stride-4 accumulators (two for cosine) summed at the end,
 * then a sequential tail. Every operation is rounded to float32 with Math.fround, so results
 * match Lucene's non-FMA scalar path exactly and its SIMD/FMA paths within ~1 ulp.
 *
 * The (array, offset) signatures let callers score straight out of a large mapped
 * Float32Array without allocating subarray views on the hot path.
 */
const f = Math.fround;

export function dotProduct(a: Float32Array, aOff: number, b: Float32Array, bOff: number, dim: number): number {
  let i = 0;
  let res = 0;
  if (dim > 32) {
    let acc1 = 0,
      acc2 = 0,
      acc3 = 0,
      acc4 = 0;
    const upper = dim & ~3;
    for (; i < upper; i += 4) {
      acc1 = f(acc1 + f(a[aOff + i] * b[bOff + i]));
      acc2 = f(acc2 + f(a[aOff + i + 1] * b[bOff + i + 1]));
      acc3 = f(acc3 + f(a[aOff + i + 2] * b[bOff + i + 2]));
      acc4 = f(acc4 + f(a[aOff + i + 3] * b[bOff + i + 3]));
    }
    res = f(f(f(acc1 + acc2) + acc3) + acc4);
  }
  for (; i < dim; i++) res = f(res + f(a[aOff + i] * b[bOff + i]));
  return res;
}

export function squareDistance(a: Float32Array, aOff: number, b: Float32Array, bOff: number, dim: number): number {
  let i = 0;
  let res = 0;
  if (dim > 32) {
    let acc1 = 0,
      acc2 = 0,
      acc3 = 0,
      acc4 = 0;
    const upper = dim & ~3;
    for (; i < upper; i += 4) {
      const d1 = f(a[aOff + i] - b[bOff + i]);
      const d2 = f(a[aOff + i + 1] - b[bOff + i + 1]);
      const d3 = f(a[aOff + i + 2] - b[bOff + i + 2]);
      const d4 = f(a[aOff + i + 3] - b[bOff + i + 3]);
      acc1 = f(acc1 + f(d1 * d1));
      acc2 = f(acc2 + f(d2 * d2));
      acc3 = f(acc3 + f(d3 * d3));
      acc4 = f(acc4 + f(d4 * d4));
    }
    res = f(f(f(acc1 + acc2) + acc3) + acc4);
  }
  for (; i < dim; i++) {
    const d = f(a[aOff + i] - b[bOff + i]);
    res = f(res + f(d * d));
  }
  return res;
}

/** Writes (a·b, a·a, b·b) as float sums (two stride-2 accumulators above 32 dims) to out[outOff ..]. */
export function cosineParts(a: Float32Array, aOff: number, b: Float32Array, bOff: number, dim: number, out: Float32Array, outOff = 0): void {
  let i = 0;
  let sum = 0,
    norm1 = 0,
    norm2 = 0;
  if (dim > 32) {
    let sum1 = 0,
      sum2 = 0,
      n11 = 0,
      n12 = 0,
      n21 = 0,
      n22 = 0;
    const upper = dim & ~1;
    for (; i < upper; i += 2) {
      const a1 = a[aOff + i],
        b1 = b[bOff + i],
        a2 = a[aOff + i + 1],
        b2 = b[bOff + i + 1];
      sum1 = f(sum1 + f(a1 * b1));
      sum2 = f(sum2 + f(a2 * b2));
      n11 = f(n11 + f(a1 * a1));
      n12 = f(n12 + f(a2 * a2));
      n21 = f(n21 + f(b1 * b1));
      n22 = f(n22 + f(b2 * b2));
    }
    sum = f(sum1 + sum2);
    norm1 = f(n11 + n12);
    norm2 = f(n21 + n22);
  }
  for (; i < dim; i++) {
    const x = a[aOff + i],
      y = b[bOff + i];
    sum = f(sum + f(x * y));
    norm1 = f(norm1 + f(x * x));
    norm2 = f(norm2 + f(y * y));
  }
  out[outOff] = sum;
  out[outOff + 1] = norm1;
  out[outOff + 2] = norm2;
}

const parts = new Float32Array(3);

/** Cosine in [-1, 1]: float sums, quotient in double, cast to float. A zero vector gives NaN. */
export function cosine(a: Float32Array, aOff: number, b: Float32Array, bOff: number, dim: number): number {
  cosineParts(a, aOff, b, bOff, dim, parts, 0);
  return f(parts[0] / Math.sqrt(parts[1] * parts[2]));
}

/**
 * Lucene's l2normalize: throws on a zero vector (unless throwOnZero is false, then returns it
 * unchanged); returns the input unchanged when |norm² - 1| <= 1e-5; otherwise divides in place.
 */
export function l2normalize(v: Float32Array, throwOnZero = true): Float32Array {
  const norm2 = dotProduct(v, 0, v, 0, v.length);
  if (norm2 === 0) {
    if (throwOnZero) throw new RangeError('cannot normalize a zero-length vector');
    return v;
  }
  if (Math.abs(norm2 - 1) <= 1e-5) return v;
  const length = f(Math.sqrt(norm2));
  for (let i = 0; i < v.length; i++) v[i] = f(v[i] / length);
  return v;
}

/** MAXIMUM_INNER_PRODUCT's monotone mapping of a raw dot product onto positive scores. */
export function scaleMaxInnerProductScore(r: number): number {
  return r < 0 ? f(1 / f(1 - r)) : f(r + 1);
}

/** max((1 + r) / 2, 0), the unit-interval mapping of DOT_PRODUCT and COSINE. NaN stays NaN. */
export function normalizeToUnitInterval(r: number): number {
  const s = f(f(1 + r) / 2);
  return s < 0 ? 0 : s;
}
