/**
 * The values filters take and how their cache keys and renderings spell them. A keyword filter
 * takes strings (numbers and booleans are turned into their string, as Elasticsearch's keyword
 * field does); a numeric filter takes numbers, bigints (longs beyond ±2^53, exactly) and
 * booleans (1 / 0).
 */
export type FilterValue = string | number | bigint | boolean;
/** A numeric filter value after coercion: a double, or a bigint for a long beyond ±2^53. */
export type NumericValue = number | bigint;

/** 2^53: integers up to it in magnitude are exact as doubles. */
export const TWO_53 = 9007199254740992;
export const MIN_LONG = -(2n ** 63n);
export const MAX_LONG = 2n ** 63n - 1n;

/** A value as a keyword term. */
export function asTerm(value: FilterValue): string {
  return typeof value === 'string' ? value : String(value);
}

/** A value as a number or a bigint, or null for a string (a keyword value meeting a numeric column). */
export function asNumeric(value: FilterValue): NumericValue | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') return null;
  if (typeof value === 'number' && Number.isNaN(value)) throw new RangeError('NaN is not a filter value');
  return value;
}

/**
 * A numeric value's canonical spelling: the same number the same way whether given as a
 * number or a bigint (integers beyond 2^53 as their digits), -0 distinct from 0 (Lucene orders
 * -0.0 below +0.0, so a filter on one does not match the other).
 */
export function numericKey(v: NumericValue): string {
  if (typeof v === 'bigint') return v.toString();
  if (Object.is(v, -0)) return '-0';
  if (Number.isInteger(v) && Math.abs(v) >= TWO_53) return BigInt(v).toString();
  return String(v);
}

/**
 * A value's spelling in a cache key: strings quoted, numbers bare, booleans as `true` / `false`
 * (a boolean means 1 / 0 on a numeric column but "true" / "false" on a keyword one).
 */
export function valueKey(v: FilterValue): string {
  return typeof v === 'string' ? JSON.stringify(v) : typeof v === 'boolean' ? String(v) : numericKey(v);
}

/** A field name or term in a cache key. */
export function quote(s: string): string {
  return JSON.stringify(s);
}

/** A value as Lucene's toString renders it (the term text, or the number). */
export function render(v: FilterValue): string {
  return typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : numericKey(v);
}
