/**
 * Elasticsearch's `minimum_should_match` (Queries.calculateMinShouldMatch): how many of
 * `optionalClauses` should clauses a doc must match, from a spec that is
 * - an integer: `3`; negative, that many may be missed: `-1` of 4 is 3;
 * - a percentage of the clauses, rounded down: `75%` of 3 is 2; negative, of those that may be
 *   missed: `-25%` of 4 is 3 (computed in float32 as Elasticsearch does: `70%` of 10 is 7);
 * - conditional, `N<spec` (several, space-separated, increasing N): up to N clauses all must
 *   match, above N the spec applies: `2<-25% 9<-3`.
 * The result is never negative; it may exceed the number of clauses (then nothing matches).
 * Throws a RangeError naming the spec when it does not parse.
 */
export function calculateMinShouldMatch(optionalClauses: number, spec: string | number): number {
  const text = (typeof spec === 'number' ? String(spec) : spec).trim();
  if (text.includes('<')) {
    let result = optionalClauses;
    for (const part of text.replace(/\s+<\s*|\s*<\s+/g, '<').split(' ')) {
      const pieces = part.split('<');
      if (pieces.length !== 2 || pieces[1] === '') throw invalid(spec);
      const upperBound = parseJavaInt(pieces[0], spec);
      if (optionalClauses <= upperBound) return result;
      result = calculateMinShouldMatch(optionalClauses, pieces[1]);
    }
    return result;
  }
  let result = optionalClauses;
  if (text.endsWith('%')) {
    const percent = parseJavaInt(text.slice(0, -1), spec);
    const calc = Math.fround(Math.fround(Math.imul(result, percent)) * Math.fround(1 / 100));
    result = calc < 0 ? result + Math.trunc(calc) : Math.trunc(calc);
  } else {
    const calc = parseJavaInt(text, spec);
    result = calc < 0 ? result + calc : calc;
  }
  return Math.max(result, 0);
}

/** Java's Integer.parseInt: an optional sign and digits, within int32. */
function parseJavaInt(s: string, spec: string | number): number {
  if (!/^[+-]?\d+$/.test(s)) throw invalid(spec);
  const v = Number(s);
  if (v < -(2 ** 31) || v > 2 ** 31 - 1) throw invalid(spec);
  return v;
}

function invalid(spec: string | number): RangeError {
  return new RangeError(`invalid minimum_should_match [${String(spec)}]: an integer (3, -1), a percentage (75%, -25%) or conditional (2<75%)`);
}
