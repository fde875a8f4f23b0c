/**
 * Edits of a document's `_source` at the byte level, so that what is kept is the JSON as the user
 * sent it (number spellings, key order, whitespace, integers beyond 2^53), not a re-serialization
 * of its parsed form.
 *
 * Why remove the vector: as Elasticsearch 9.2 does by default (`_source.exclude_vectors`), the
 * vector is not stored twice. It lives in the segment's `.vec` as float32, and a search that asks
 * for it in `_source` gets it back from there (exactly the float32 values the index holds).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * `json` (an object) without its top-level member `key` (with the comma that joined it to a
 * neighbour), or `json` itself when there is no such member. The input must be valid JSON (the
 * caller has parsed it); a shape this scanner does not expect returns the input unchanged.
 */
export function withoutTopLevelMember(json: Uint8Array, key: string): Uint8Array {
  let i = ws(json, 0);
  if (json[i] !== OPEN_BRACE) return json;
  i = ws(json, i + 1);
  let previousEnd = -1; // end of the previous member's value (where its separating comma starts)
  while (i < json.length && json[i] === QUOTE) {
    const memberStart = i;
    const keyEnd = stringEnd(json, i);
    if (keyEnd < 0) return json;
    const name = memberName(json, i, keyEnd);
    i = ws(json, keyEnd);
    if (json[i] !== COLON) return json;
    const valueEnd = valueEndAt(json, ws(json, i + 1));
    if (valueEnd < 0) return json;
    const after = ws(json, valueEnd);
    if (name === key) {
      // `{"a":1, "v":[..], "b":2}`: drop `"v":[..], ` (up to the next key); as the last member,
      // drop `, "v":[..]` (from the previous value's end).
      const cut = json[after] === COMMA ? [memberStart, ws(json, after + 1)] : previousEnd >= 0 ? [previousEnd, after] : [memberStart, after];
      const out = new Uint8Array(json.length - (cut[1]! - cut[0]!));
      out.set(json.subarray(0, cut[0]));
      out.set(json.subarray(cut[1]), cut[0]!);
      return out;
    }
    if (json[after] !== COMMA) return json;
    previousEnd = valueEnd;
    i = ws(json, after + 1);
  }
  return json;
}

function memberName(json: Uint8Array, start: number, end: number): string {
  const raw = json.subarray(start + 1, end - 1);
  if (!raw.includes(BACKSLASH)) return decoder.decode(raw);
  return JSON.parse(decoder.decode(json.subarray(start, end))) as string;
}

/** The index after the string starting at `i`, or -1. */
function stringEnd(s: Uint8Array, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** The index after the JSON value starting at `i`, or -1. */
function valueEndAt(s: Uint8Array, i: number): number {
  const c = s[i];
  if (c === QUOTE) return stringEnd(s, i);
  if (c === OPEN_BRACKET) {
    // A flat array without strings (a vector: ~9 KB of numbers for 768 dims) ends at the first
    // `]`: found by the typed array's native search, then checked to hold no string or nesting.
    const b = Buffer.from(s.buffer, s.byteOffset, s.byteLength);
    const close = b.indexOf(CLOSE_BRACKET, i + 1);
    if (close >= 0) {
      const inner = b.subarray(i + 1, close);
      if (inner.indexOf(QUOTE) < 0 && inner.indexOf(OPEN_BRACKET) < 0 && inner.indexOf(OPEN_BRACE) < 0) return close + 1;
    }
  }
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const d = s[j];
      if (d === QUOTE) {
        j = stringEnd(s, j) - 1;
        if (j < 0) return -1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let j = i;
  while (j < s.length && s[j] !== COMMA && s[j] !== CLOSE_BRACE && s[j] !== CLOSE_BRACKET && !isWs(s[j]!)) j++;
  return j > i ? j : -1;
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function ws(s: Uint8Array, i: number): number {
  while (i < s.length && isWs(s[i]!)) i++;
  return i;
}
