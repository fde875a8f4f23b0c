import { InputError } from './InputError.js';

/**
 * Finiteness checks for vector data. `x - x` is 0 for every finite float and NaN for NaN and
 * +-Infinity, so one subtraction and compare per element, no branches on the value itself and no
 * allocation: fast enough to validate data at disk speed.
 */

/** Index of the first non-finite element of `a[from..to)`, or -1. */
export function firstNonFinite(a: Float32Array | Float64Array, from = 0, to = a.length): number {
  // Sum 8 lanes at a time: a NaN/Infinity anywhere poisons the sum (Inf - Inf = NaN). Only on a
  // hit do we go back and locate the element.
  let i = from;
  const end8 = from + ((to - from) & ~7);
  for (; i < end8; i += 8) {
    const s =
      a[i] -
      a[i] +
      (a[i + 1] - a[i + 1]) +
      (a[i + 2] - a[i + 2]) +
      (a[i + 3] - a[i + 3]) +
      (a[i + 4] - a[i + 4]) +
      (a[i + 5] - a[i + 5]) +
      (a[i + 6] - a[i + 6]) +
      (a[i + 7] - a[i + 7]);
    if (s !== 0) {
      for (let j = i; j < i + 8; j++) if (a[j] - a[j] !== 0) return j;
    }
  }
  for (; i < to; i++) if (a[i] - a[i] !== 0) return i;
  return -1;
}

/** Human description of a bad float value ("NaN", "Infinity", "-Infinity"). */
export function describeNonFinite(x: number): string {
  return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
}

/** Throws an InputError naming the file, row and component of the first non-finite value of a batch. */
export function assertFiniteRows(path: string, vectors: Float32Array, dims: number, firstRow: number): void {
  const bad = firstNonFinite(vectors);
  if (bad < 0) return;
  throw new InputError(path, `value is ${describeNonFinite(vectors[bad])} (vectors must be finite)`, {
    row: firstRow + Math.floor(bad / dims),
    component: bad % dims,
  });
}

/** Index of the first all-zero row of `vectors` (rows x dims), or -1. Stops at a row's first non-zero. */
export function firstZeroRow(vectors: Float32Array, dims: number, rows = vectors.length / dims): number {
  outer: for (let r = 0; r < rows; r++) {
    const end = (r + 1) * dims;
    for (let i = r * dims; i < end; i++) if (vectors[i] !== 0) continue outer;
    return r;
  }
  return -1;
}

/**
 * Cosine similarity is undefined for a zero vector (it has no direction), so Lucene rejects one in
 * a cosine field at index time; so does prescore's builder, naming the row.
 */
export function assertNoZeroRows(path: string, vectors: Float32Array, dims: number, rows: number, firstRow: number): void {
  const r = firstZeroRow(vectors, dims, rows);
  if (r < 0) return;
  throw new InputError(path, 'vector is all zeros; cosine similarity is undefined for a zero vector (remove the row, or build with --similarity dot_product or l2_norm)', {
    row: firstRow + r,
  });
}
