/**
 * Multi-valued columns, branch-free: a per-doc loop over a doc's values exits after a
 * data-dependent number of steps (0-3 values: a mispredicted branch per doc, ~10x the cost of a
 * single-valued fill). Instead one pass over all values writes the running count of matching
 * values (`counts[j + 1] = counts[j] + match(value j)`), then a doc matches when its range of
 * values added to the count: `counts[offsets[d + 1]] > counts[offsets[d]]`. Two streaming passes,
 * ~2-3 ns per value.
 */

/** Counts kept for reuse up to this many values (16 MiB); larger columns get a fresh array per fill. */
const MAX_KEPT = 1 << 22;
let scratch = new Int32Array(1 << 16);

/** Counts for values [offsets[0], offsets[maxDoc]): a reused scratch array (one per thread) or a fresh one. */
export function valueCounts(offsets: Int32Array, maxDoc: number): Int32Array {
  const n = offsets[maxDoc] + 1;
  let counts = scratch;
  if (counts.length < n) {
    counts = new Int32Array(n);
    if (n <= MAX_KEPT) scratch = counts;
  }
  counts[offsets[0]] = 0;
  return counts;
}

/** Docs whose values hold at least one counted match, into `out`. */
export function fillFromCounts(offsets: Int32Array, counts: Int32Array, out: Uint32Array, maxDoc: number): void {
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i += 4) {
      const a = counts[offsets[d + i]],
        b = counts[offsets[d + i + 1]],
        c = counts[offsets[d + i + 2]],
        e = counts[offsets[d + i + 3]],
        f = counts[offsets[d + i + 4]];
      bits |= (+(b > a) | (+(c > b) << 1) | (+(e > c) << 2) | (+(f > e) << 3)) << i;
    }
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) bits |= +(counts[offsets[d + i + 1]] > counts[offsets[d + i]]) << i;
    out[full] = bits;
  }
}
