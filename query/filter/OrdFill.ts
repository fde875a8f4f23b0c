import type { KeywordColumn } from './FilterLeaf.js';
import { fillFromCounts, valueCounts } from './MultiValued.js';

/**
 * The docs of a keyword column whose ords match, written a 32-doc word at a time into `out`
 * (zeroed, `maxDoc` bits; live docs not applied). Terms are looked up once per segment by the
 * caller (ord, ceilingOrd); the loops compare ints only. A multi-valued doc matches when any of
 * its ords does (counted branch-free: MultiValued).
 */

/** Ords in [lo, hi] (lo >= 0, so a single-valued doc without a value, ord -1, never matches). */
export function fillOrdRange(column: KeywordColumn, lo: number, hi: number, out: Uint32Array, maxDoc: number): void {
  const { ords, offsets } = column;
  if (offsets === null && lo === hi) {
    fillOrdEquals(ords, lo, out, maxDoc);
    return;
  }
  if (offsets === null) {
    const full = maxDoc >>> 5;
    let d = 0;
    for (let w = 0; w < full; w++, d += 32) {
      let bits = 0;
      for (let i = 0; i < 32; i += 4) {
        const a = ords[d + i],
          b = ords[d + i + 1],
          c = ords[d + i + 2],
          e = ords[d + i + 3];
        bits |= ((+(a >= lo) & +(a <= hi)) | ((+(b >= lo) & +(b <= hi)) << 1) | ((+(c >= lo) & +(c <= hi)) << 2) | ((+(e >= lo) & +(e <= hi)) << 3)) << i;
      }
      out[w] = bits;
    }
    if (d < maxDoc) {
      let bits = 0;
      for (let i = 0; d + i < maxDoc; i++) {
        const o = ords[d + i];
        bits |= (+(o >= lo) & +(o <= hi)) << i;
      }
      out[full] = bits;
    }
    return;
  }
  const counts = valueCounts(offsets, maxDoc);
  let acc = 0;
  for (let j = offsets[0], end = offsets[maxDoc]; j < end; j++) {
    const o = ords[j];
    acc += +(o >= lo) & +(o <= hi);
    counts[j + 1] = acc;
  }
  fillFromCounts(offsets, counts, out, maxDoc);
}

/** A single-valued column's docs with ord `ord` (one compare per doc: ~25% faster than a range). */
function fillOrdEquals(ords: Int32Array, ord: number, out: Uint32Array, maxDoc: number): void {
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i += 4) {
      bits |= (+(ords[d + i] === ord) | (+(ords[d + i + 1] === ord) << 1) | (+(ords[d + i + 2] === ord) << 2) | (+(ords[d + i + 3] === ord) << 3)) << i;
    }
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) bits |= +(ords[d + i] === ord) << i;
    out[full] = bits;
  }
}

/**
 * Ords marked in `table`, indexed by ord + 1 (entry 0, a missing single value, is 0): a terms
 * set's matching ords, one byte each, so a lookup is one load whatever the set's size.
 */
export function fillOrdTable(column: KeywordColumn, table: Uint8Array, out: Uint32Array, maxDoc: number): void {
  const { ords, offsets } = column;
  if (offsets === null) {
    const full = maxDoc >>> 5;
    let d = 0;
    for (let w = 0; w < full; w++, d += 32) {
      let bits = 0;
      for (let i = 0; i < 32; i += 4) {
        bits |= (table[ords[d + i] + 1] | (table[ords[d + i + 1] + 1] << 1) | (table[ords[d + i + 2] + 1] << 2) | (table[ords[d + i + 3] + 1] << 3)) << i;
      }
      out[w] = bits;
    }
    if (d < maxDoc) {
      let bits = 0;
      for (let i = 0; d + i < maxDoc; i++) bits |= table[ords[d + i] + 1] << i;
      out[full] = bits;
    }
    return;
  }
  const counts = valueCounts(offsets, maxDoc);
  let acc = 0;
  for (let j = offsets[0], end = offsets[maxDoc]; j < end; j++) {
    acc += table[ords[j] + 1];
    counts[j + 1] = acc;
  }
  fillFromCounts(offsets, counts, out, maxDoc);
}

/** Docs with at least one value in a multi-valued column (numeric or keyword: only offsets are read, as counts). */
export function fillHasValues(offsets: Int32Array, out: Uint32Array, maxDoc: number): void {
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i++) bits |= +(offsets[d + i + 1] > offsets[d + i]) << i;
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) bits |= +(offsets[d + i + 1] > offsets[d + i]) << i;
    out[full] = bits;
  }
}

/** Docs with a value in a single-valued keyword column (ord >= 0: the sign bit of ~ord). */
export function fillHasOrd(ords: Int32Array, out: Uint32Array, maxDoc: number): void {
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i += 4) {
      bits |= ((~ords[d + i] >>> 31) | ((~ords[d + i + 1] >>> 31) << 1) | ((~ords[d + i + 2] >>> 31) << 2) | ((~ords[d + i + 3] >>> 31) << 3)) << i;
    }
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) bits |= (~ords[d + i] >>> 31) << i;
    out[full] = bits;
  }
}
