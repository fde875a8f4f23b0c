/**
 * Query values read by a field's mapping, as Elasticsearch's field types read the values of
 * `term`, `terms` and `range` (not as documents are indexed: queries always coerce strings to
 * numbers, whatever the field's `coerce`). Each reader answers a value or the reason it does not
 * fit, which the DSL reports at the value's JSON path.
 */
import { DateParseError, parseDateMath, type DateFormat } from '../../../segments/document/DateFormat.js';
import { INTEGER_BOUNDS } from '../../../segments/document/FieldMapping.js';

export type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const ok = <T>(value: T): Read<T> => ({ ok: true, value });
const fail = (reason: string): Read<never> => ({ ok: false, reason });

export type IntegerType = 'long' | 'integer' | 'short' | 'byte';

/** Java's Double.parseDouble on the decimal forms JSON clients send ("5", " -1.5 ", "1e3", ".5"). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A short rendering of a JSON value for messages. */
export function show(v: unknown): string {
  const s = typeof v === 'bigint' ? v.toString() : JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 60)}...` : s;
}

/** keyword: any scalar, as its string (Elasticsearch's keyword takes 5 and true as "5" and "true"). */
export function keywordValue(v: unknown): Read<string> {
  if (typeof v === 'string') return ok(v);
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return ok(String(v));
  return fail(`must be a string, number or boolean (a keyword value), got ${show(v)}`);
}

/** boolean: true, false, "true" or "false" as 1 / 0. */
export function booleanValue(v: unknown): Read<number> {
  if (v === true || v === 'true') return ok(1);
  if (v === false || v === 'false') return ok(0);
  return fail(`can't parse boolean value [${typeof v === 'string' ? v : show(v)}], expected [true] or [false]`);
}

/** A JSON number, or a string holding a decimal number, as a double. */
export function numberOf(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && DECIMAL.test(v.trim())) {
    const x = Number(v.trim());
    return Number.isFinite(x) ? x : null;
  }
  return null;
}

/** double / float: a number or numeric string; a float is rounded to float32 first, as the field stores it. */
export function floatingValue(v: unknown, type: 'double' | 'float'): Read<number> {
  const x = numberOf(v);
  if (x === null) return fail(`must be a number (field of type [${type}]), got ${show(v)}`);
  const y = type === 'float' ? Math.fround(x) : x;
  if (!Number.isFinite(y)) return fail(`[${type}] supports only finite values, but got [${show(v)}]`);
  return ok(y);
}

/**
 * An integer field's value: an exact integer (a bigint for integer strings and for numbers
 * beyond 2^53, else a number), or a fractional number, within the type's range. A JSON number
 * beyond 2^53 has already lost digits in JSON.parse: send such longs as strings.
 */
export function integerValue(v: unknown, type: IntegerType): Read<number | bigint> {
  let exact: bigint | null = null;
  let x: number | null = null;
  if (typeof v === 'string' && /^[+-]?\d+$/.test(v.trim())) exact = BigInt(v.trim());
  else {
    x = numberOf(v);
    if (x === null) return fail(`must be a number (field of type [${type}]), got ${show(v)}`);
    if (Number.isInteger(x)) exact = BigInt(x);
  }
  const [min, max] = INTEGER_BOUNDS[type];
  const tooBig = exact !== null ? exact < min || exact > max : x! < Number(min) || x! > Number(max);
  if (tooBig) return fail(`value [${typeof v === 'string' ? v : show(v)}] is out of range for ${type === 'integer' ? 'an' : 'a'} ${type} [${min}, ${max}]`);
  if (exact === null) return ok(x!);
  return ok(exact >= -(2n ** 53n) && exact <= 2n ** 53n ? Number(exact) : exact);
}

/** A date (epoch ms) by the format, with date math (`now-1d/d`, `2024-01-01||+1M`); `roundUp` for gt / lte and a term's upper end. */
export function dateValue(v: unknown, format: DateFormat, nowMs: number, roundUp: boolean): Read<number> {
  if (typeof v !== 'string' && !(typeof v === 'number' && Number.isFinite(v))) return fail(`must be a date string or epoch number (format [${format.pattern}]), got ${show(v)}`);
  try {
    return ok(parseDateMath(v, format, nowMs, roundUp));
  } catch (e) {
    if (e instanceof DateParseError) return fail(e.message);
    throw e;
  }
}
