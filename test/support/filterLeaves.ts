/**
 * Filter test fixtures: segments of plain documents (values per field as arrays), turned into
 * FilterLeafs the way the doc-values reader side lays them out (keyword ords in UTF-8 byte
 * order, numeric values as doubles with exact longs beyond 2^53, single- or multi-valued,
 * present bitsets, live docs), and random data with a seeded RNG. The reference evaluations in
 * the tests read the plain documents, never the columns.
 */
import type { DocValuesColumn, FilterLeaf, KeywordColumn, NumericColumn } from '../../query/filter/FilterLeaf.js';

export type FieldType = 'keyword' | 'long' | 'double' | 'date' | 'boolean';

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /** Docs may hold several values. */
  readonly multi: boolean;
}

/** keyword: strings; long: bigints (exact); double, date (epoch ms), boolean (0/1): numbers. */
export type DocValue = string | number | bigint;

export interface PlainDoc {
  readonly id: string;
  readonly live: boolean;
  readonly values: ReadonlyMap<string, readonly DocValue[]>;
}

export interface PlainSegment {
  readonly key: string;
  readonly docs: readonly PlainDoc[];
}

/** mulberry32: a small seeded RNG. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(utf8(a), utf8(b));
}

/** Terms met in random data: UTF-8 order differs from UTF-16 order between U+FFFD and U+1F600. */
export const TERMS = ['', 'a', 'ab', 'b', 'B', 'tenant-1', 'tenant-2', 'é', '\uFFFD', '\u{1F600}', 'z z'];
const TWO_53 = 2n ** 53n;
export const LONGS: readonly bigint[] = [0n, 1n, -1n, 5n, 42n, -7n, TWO_53 - 1n, TWO_53, TWO_53 + 1n, -(TWO_53 + 1n), 2n ** 62n + 3n, 2n ** 63n - 1n, -(2n ** 63n)];
export const SMALL_LONGS: readonly bigint[] = [0n, 1n, -1n, 5n, 42n, -7n, 100n];
export const DOUBLES: readonly number[] = [0, -0, 1, -1, 1.5, -1.5, 2.5, 1e300, -1e300, 5e-324, -5e-324, 0.1, 3];
export const DATES: readonly number[] = [Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 1, 12), Date.UTC(2024, 0, 2), Date.UTC(2023, 11, 31, 23, 59, 59, 999), Date.UTC(2024, 5, 15), 0];

/** A random value of a field's type. */
export function randomValue(r: () => number, type: FieldType, wide = true): DocValue {
  switch (type) {
    case 'keyword':
      return pick(r, TERMS);
    case 'long':
      return r() < 0.7 ? pick(r, wide ? LONGS : SMALL_LONGS) : BigInt(Math.floor(r() * 200) - 100);
    case 'double':
      return r() < 0.7 ? pick(r, DOUBLES) : Math.round((r() * 20 - 10) * 4) / 4;
    case 'date':
      return r() < 0.7 ? pick(r, DATES) : Date.UTC(2024, 0, 1) + Math.floor(r() * 4) * 6 * 3_600_000;
    case 'boolean':
      return r() < 0.5 ? 0 : 1;
  }
}

/** Random segments over `fields` (up to `maxDocs` docs each, or exactly `exactDocs`): missing values, several values, deletions, an id per doc. */
export function randomSegments(r: () => number, fields: readonly FieldSpec[], count: number, maxDocs = 150, exactDocs?: number): PlainSegment[] {
  const segments: PlainSegment[] = [];
  let nextId = 0;
  for (let s = 0; s < count; s++) {
    const n = exactDocs ?? Math.floor(r() * maxDocs) + (r() < 0.2 ? 0 : 1);
    const deletes = r() < 0.6 ? r() * 0.4 : 0;
    const wideLongs = r() < 0.5;
    const docs: PlainDoc[] = [];
    for (let d = 0; d < n; d++) {
      const values = new Map<string, DocValue[]>();
      for (const f of fields) {
        const u = r();
        const k = u < 0.25 ? 0 : f.multi && u > 0.75 ? 2 + Math.floor(r() * 3) : 1;
        if (k > 0)
          values.set(
            f.name,
            Array.from({ length: k }, () => randomValue(r, f.type, wideLongs)),
          );
      }
      docs.push({ id: `doc-${nextId++}`, live: r() >= deletes, values });
    }
    segments.push({ key: `seg-${s}`, docs });
  }
  return segments;
}

/** Lucene's order of doubles: -0 before +0. */
function compareDoubles(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : Object.is(a, -0) && Object.is(b, 0) ? -1 : Object.is(a, 0) && Object.is(b, -0) ? 1 : 0;
}

export interface LeafOptions {
  /** Write multi-valued columns even when every doc has at most one value (both layouts are valid). */
  readonly forceMulti?: boolean;
  /** Set the live-docs words' bits past maxDoc (a filter must never return them). */
  readonly dirtyTail?: boolean;
}

/** The FilterLeaf of a plain segment, as the doc-values reader would decode it. */
export function toLeaf(segment: PlainSegment, fields: readonly FieldSpec[], r: () => number, options: LeafOptions = {}): FilterLeaf {
  const maxDoc = segment.docs.length;
  const words = (maxDoc + 31) >>> 5;
  let liveDocs: Uint32Array | null = null;
  if (segment.docs.some((d) => !d.live) || options.dirtyTail) {
    liveDocs = new Uint32Array(words);
    if (options.dirtyTail) liveDocs.fill(0xffffffff);
    segment.docs.forEach((d, i) => {
      if (d.live) liveDocs![i >>> 5] |= 1 << (i & 31);
      else liveDocs![i >>> 5] &= ~(1 << (i & 31));
    });
  }
  const columns = new Map<string, DocValuesColumn>();
  for (const f of fields) {
    const perDoc = segment.docs.map((d) => d.values.get(f.name) ?? []);
    if (perDoc.every((v) => v.length === 0)) continue;
    const multi = perDoc.some((v) => v.length > 1) || (options.forceMulti === true && f.multi);
    columns.set(f.name, f.type === 'keyword' ? keywordColumn(perDoc as string[][], multi) : numericColumn(perDoc as (number | bigint)[][], multi, r));
  }
  const ids = new Map<string, number>();
  for (const [i, d] of segment.docs.entries()) ids.set(d.id, i);
  return {
    key: segment.key,
    maxDoc,
    liveDocs,
    column: (field) => columns.get(field) ?? null,
    docForId: (id) => ids.get(id) ?? -1,
  };
}

function keywordColumn(perDoc: string[][], multi: boolean): KeywordColumn {
  const terms = [...new Set(perDoc.flat())].sort(compareUtf8);
  const ordOf = new Map(terms.map((t, i) => [t, i]));
  const ord = (t: string) => ordOf.get(t) ?? -1;
  const ceilingOrd = (t: string) => {
    let lo = 0,
      hi = terms.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareUtf8(terms[mid], t) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  let offsets: Int32Array | null = null;
  let ords: Int32Array;
  if (multi) {
    // SORTED_SET: a doc's distinct ords, sorted.
    const lists = perDoc.map((v) => [...new Set(v.map(ord))].sort((a, b) => a - b));
    offsets = new Int32Array(perDoc.length + 1);
    for (const [i, l] of lists.entries()) offsets![i + 1] = offsets![i] + l.length;
    ords = Int32Array.from(lists.flat());
  } else {
    ords = Int32Array.from(perDoc.map((v) => (v.length === 0 ? -1 : ord(v[0]))));
  }
  return { kind: 'keyword', termCount: terms.length, ord, ceilingOrd, term: (o) => terms[o], offsets, ords };
}

function numericColumn(perDoc: (number | bigint)[][], multi: boolean, r: () => number): NumericColumn {
  const all = perDoc.flat();
  const big = all.some((v) => typeof v === 'bigint' && (v > TWO_53 || v < -TWO_53));
  const isLong = all.some((v) => typeof v === 'bigint');
  const sortedDoc = (v: (number | bigint)[]) =>
    [...v].sort((a, b) => (typeof a === 'bigint' && typeof b === 'bigint' ? (a < b ? -1 : a > b ? 1 : 0) : compareDoubles(Number(a), Number(b))));
  let offsets: Int32Array | null = null;
  let flat: (number | bigint)[];
  let present: Uint32Array | null = null;
  if (multi) {
    const lists = perDoc.map(sortedDoc);
    offsets = new Int32Array(perDoc.length + 1);
    for (const [i, l] of lists.entries()) offsets![i + 1] = offsets![i] + l.length;
    flat = lists.flat();
  } else {
    // A doc without a value holds garbage (here: some other doc's value, often one a filter matches).
    flat = perDoc.map((v) => (v.length > 0 ? v[0] : all[Math.floor(r() * all.length)]));
    if (perDoc.some((v) => v.length === 0)) {
      present = new Uint32Array((perDoc.length + 31) >>> 5);
      perDoc.forEach((v, i) => {
        if (v.length > 0) present![i >>> 5] |= 1 << (i & 31);
      });
    }
  }
  const values = Float64Array.from(flat.map((v) => Number(v)));
  const exactLongs = big && isLong ? BigInt64Array.from(flat.map((v) => BigInt(v))) : null;
  return { kind: 'numeric', offsets, values, present, exactLongs };
}

/**
 * Compares a doc value with a bound exactly: bigints (longs) and doubles as the numbers they are,
 * doubles in Lucene's order (-0 < +0), a long 0 as +0.0.
 */
export function compareNumeric(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return compareDoubles(a, b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number') return -compareNumeric(b, a);
  const x = b as number;
  if (x === Infinity) return -1;
  if (x === -Infinity) return 1;
  if (x === 0) return a === 0n ? (Object.is(x, -0) ? 1 : 0) : a < 0n ? -1 : 1;
  const fl = BigInt(Math.floor(x));
  if (a <= fl) return a < fl || Number.isInteger(x) === false ? -1 : 0;
  return 1;
}
