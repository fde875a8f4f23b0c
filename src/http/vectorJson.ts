/**
 * A search body's query vector read straight from the body's bytes into a Float32Array.
 *
 * Why: a search body is almost all vector (1024 numbers are ~12.8 KB of a ~12.9 KB body), and
 * decoding it to a string, `JSON.parse` into a JS array of doubles and a validation pass copying
 * that into a Float32Array walk it three times and leave ~1,000 heap numbers per request to the
 * GC. Here the vector's array is found by a scan of the body's top-level structure and its
 * numbers are parsed in one pass over the bytes into the Float32Array the engine takes; the rest
 * of the body (a few dozen bytes, the array replaced by `0`) still goes through `JSON.parse`
 * (body.ts), which keeps its semantics and its error messages for everything else.
 *
 * The scan gives up (the caller then parses the whole body with `JSON.parse`, and validation
 * reports what is wrong, with the element's index) on anything it does not expect: a vector that
 * is not an array of exactly `dims` plain JSON numbers each finite in float32, a key with an
 * escape on the way to it, a key on the path given twice. Its numbers are exactly JSON.parse's:
 * decimal to the nearest double (Clinger's fast path, m x 10^e exact when m < 2^53 and
 * |e| <= 22, else `Number` of the token), then to float32, as `Float32Array.from(JSON.parse(...))`
 * rounds. The array is ASCII by construction, so the bytes before and after it are each valid
 * UTF-8 exactly when the whole body is.
 */

/** A key path from the body's root to the vector: ['vector'], or ['knn', 'query_vector']. */
export type VectorPath = readonly [string] | readonly [string, string];

/** A found vector: the byte range of its array (`[` to after `]`) and its numbers. */
export interface FoundVector {
  readonly start: number;
  readonly end: number;
  readonly vector: Float32Array;
}

/** Largest finite float32 (a JSON number beyond it is left to validation to report). */
const FLOAT32_MAX = 3.4028234663852886e38;
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const MAX_EXACT = 2 ** 53;
const latin1 = new TextDecoder('latin1');

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** Thrown inside the scan when it gives up; never escapes this module. */
const GIVE_UP = Symbol('give up');

/**
 * The array at `path` of the JSON body in `bytes`, parsed as `dims` float32 numbers, or null:
 * not there, not such an array, or anything the scan does not expect (see above).
 */
export function findVector(bytes: Uint8Array, path: VectorPath, dims: number): FoundVector | null {
  const scan: Scan = { path, dims, seen: path.map(() => false), found: null };
  try {
    const i = ws(bytes, 0);
    if (at(bytes, i) !== OPEN_BRACE) return null;
    scanObject(bytes, i, 0, scan);
  } catch (e) {
    if (e !== GIVE_UP) throw e;
    return null;
  }
  return scan.found;
}

/** Puts the found vector in the parsed rest of the body (where `0` stood in for its array). */
export function placeVector(rest: unknown, path: VectorPath, vector: Float32Array): void {
  let parent = rest as Record<string, unknown>;
  for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]!] as Record<string, unknown>;
  parent[path[path.length - 1]!] = vector;
}

/** A byte, or -1 past the end (so every comparison below fails there). */
function at(s: Uint8Array, i: number): number {
  return i < s.length ? s[i]! : -1;
}

/** What a scan has found of the vector so far. */
interface Scan {
  readonly path: VectorPath;
  readonly dims: number;
  /** Per level of the path, whether its key was seen (JSON.parse keeps the last of a repeated key: left to it). */
  readonly seen: boolean[];
  found: FoundVector | null;
}

/** Scans the object at `i` (level `level` of the path), descending along the path; the index after its `}`. */
function scanObject(s: Uint8Array, i: number, level: number, scan: Scan): number {
  i = ws(s, i + 1);
  if (at(s, i) === CLOSE_BRACE) return i + 1;
  const key = scan.path[level]!;
  const last = level === scan.path.length - 1;
  for (;;) {
    if (at(s, i) !== QUOTE) throw GIVE_UP;
    const keyEnd = plainStringEnd(s, i);
    const onPath = keyEnd - i - 2 === key.length && sameAscii(s, i + 1, key);
    i = ws(s, keyEnd);
    if (at(s, i) !== COLON) throw GIVE_UP;
    i = ws(s, i + 1);
    const c = at(s, i);
    if (onPath) {
      if (scan.seen[level]) throw GIVE_UP;
      scan.seen[level] = true;
    }
    if (onPath && last && c === OPEN_BRACKET) {
      const vector = new Float32Array(scan.dims);
      const end = parseNumbers(s, i, vector);
      scan.found = { start: i, end, vector };
      i = end;
    } else if (onPath && !last && c === OPEN_BRACE) {
      i = scanObject(s, i, level + 1, scan);
    } else if (onPath) {
      // Not an array (a base64 string, say): validation reads it from JSON.parse's result.
      throw GIVE_UP;
    } else {
      i = skipValue(s, i);
    }
    i = ws(s, i);
    const d = at(s, i);
    if (d === CLOSE_BRACE) return i + 1;
    if (d !== COMMA) throw GIVE_UP;
    i = ws(s, i + 1);
  }
}

/**
 * Parses `[n, n, ...]` at `i` into `out` (exactly out.length plain numbers); the index after `]`.
 * Bytes are read as `s[i]` without a bounds check: past the end that is undefined, every
 * comparison with it fails, and the scan gives up. (Through `at()` this loop took 1.2-1.6x as
 * long: 1024 numbers, 107-111 against 57-91 us.)
 */
function parseNumbers(s: Uint8Array, i: number, out: Float32Array): number {
  i = ws(s, i + 1);
  let n = 0;
  if (s[i]! === CLOSE_BRACKET) throw GIVE_UP;
  for (;;) {
    if (n === out.length) throw GIVE_UP;
    const start = i;
    let c = s[i]!;
    const negative = c === MINUS;
    if (negative) c = s[++i]!;
    let mantissa = 0;
    let digits = 0; // significant digits in the mantissa
    let scale = 0; // decimal exponent of the mantissa's last digit
    let exact = true;
    if (c === ZERO) {
      c = s[++i]!;
    } else if (c > ZERO && c <= NINE) {
      do {
        if (digits < 15) {
          mantissa = mantissa * 10 + (c - ZERO);
          digits++;
        } else {
          exact = false;
        }
        c = s[++i]!;
      } while (c >= ZERO && c <= NINE);
    } else {
      throw GIVE_UP;
    }
    if (c === DOT) {
      c = s[++i]!;
      if (!(c >= ZERO && c <= NINE)) throw GIVE_UP;
      do {
        if (mantissa === 0 && c === ZERO) {
          scale--; // a leading zero of the fraction: no significant digit yet
        } else if (digits < 15) {
          mantissa = mantissa * 10 + (c - ZERO);
          digits++;
          scale--;
        } else {
          exact = false;
        }
        c = s[++i]!;
      } while (c >= ZERO && c <= NINE);
    }
    if (c === LOWER_E || c === UPPER_E) {
      c = s[++i]!;
      let expNegative = false;
      if (c === MINUS || c === PLUS) {
        expNegative = c === MINUS;
        c = s[++i]!;
      }
      if (!(c >= ZERO && c <= NINE)) throw GIVE_UP;
      let exp = 0;
      do {
        if (exp < 100_000) exp = exp * 10 + (c - ZERO);
        c = s[++i]!;
      } while (c >= ZERO && c <= NINE);
      scale += expNegative ? -exp : exp;
    }
    let value: number;
    if (exact && mantissa < MAX_EXACT && scale >= -22 && scale <= 22) {
      value = scale < 0 ? mantissa / POW10[-scale]! : mantissa * POW10[scale]!;
      if (negative) value = -value;
    } else {
      value = Number(latin1.decode(s.subarray(start, i)));
    }
    if (!(Math.abs(value) <= FLOAT32_MAX)) throw GIVE_UP;
    out[n++] = value;
    i = ws(s, i);
    c = s[i]!;
    if (c === COMMA) {
      i = ws(s, i + 1);
      continue;
    }
    if (c === CLOSE_BRACKET && n === out.length) return i + 1;
    throw GIVE_UP;
  }
}

/** The index after the string starting at `i`; gives up on an escape (a key the scan compares must be plain). */
function plainStringEnd(s: Uint8Array, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = at(s, j);
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) throw GIVE_UP;
  }
  throw GIVE_UP;
}

/** The index after the JSON value starting at `i` (its syntax is JSON.parse's to check). */
function skipValue(s: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < s.length; i++) {
    const c = at(s, i);
    if (c === QUOTE) {
      for (i++; i < s.length; i++) {
        const d = at(s, i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
      if (depth === 0) return i + 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === COMMA || c === SPACE || c === TAB || c === LF || c === CR)) {
      return i;
    }
  }
  throw GIVE_UP;
}

/** Whether the bytes at `i` are `key`'s characters (keys compared here are ASCII). */
function sameAscii(s: Uint8Array, i: number, key: string): boolean {
  for (let j = 0; j < key.length; j++) if (s[i + j] !== key.charCodeAt(j)) return false;
  return true;
}

function ws(s: Uint8Array, i: number): number {
  for (;;) {
    const c = at(s, i);
    if (c !== SPACE && c !== TAB && c !== LF && c !== CR) return i;
    i++;
  }
}
