import { describe, expect, it } from 'vitest';
import { ordPostings } from '../query/filter/OrdPostings.js';
import type { KeywordColumn } from '../query/filter/FilterLeaf.js';
import {
  BitSetIterator,
  BooleanQuery,
  FieldExistsQuery,
  FixedBitSet,
  IdsQuery,
  MatchAllDocsQuery,
  MatchNoDocsQuery,
  NO_MORE_DOCS,
  SortedNumericDocValuesRangeQuery,
  TermInSetQuery,
  TermQuery,
  TermRangeQuery,
  calculateMinShouldMatch,
  type FilterLeaf,
  type FilterQuery,
  type FilterValue,
  type NumericColumn,
  type NumericValue,
} from '../query/filter/index.js';
import {
  compareNumeric,
  compareUtf8,
  pick,
  randomSegments,
  randomValue,
  rng,
  toLeaf,
  TERMS,
  type DocValue,
  type FieldSpec,
  type FieldType,
  type PlainDoc,
  type PlainSegment,
} from './support/filterLeaves.js';

const FIELDS: readonly FieldSpec[] = [
  { name: 'tag', type: 'keyword', multi: false },
  { name: 'tags', type: 'keyword', multi: true },
  { name: 'n', type: 'long', multi: false },
  { name: 'ns', type: 'long', multi: true },
  { name: 'x', type: 'double', multi: false },
  { name: 'xs', type: 'double', multi: true },
  { name: 'at', type: 'date', multi: false },
  { name: 'flag', type: 'boolean', multi: false },
];
const typeOf = new Map<string, FieldType>(FIELDS.map((f) => [f.name, f.type]));

function bitsOf(set: FixedBitSet): number[] {
  return [...set];
}

/** The docs a reference evaluation accepts, live ones only. */
function expected(segment: PlainSegment, match: (d: PlainDoc) => boolean): number[] {
  const out: number[] = [];
  segment.docs.forEach((d, i) => {
    if (d.live && match(d)) out.push(i);
  });
  return out;
}

// ---------------------------------------------------------------- reference semantics

function valuesOf(doc: PlainDoc, field: string): readonly DocValue[] {
  return doc.values.get(field) ?? [];
}

function asNumber(v: FilterValue): NumericValue {
  return typeof v === 'boolean' ? (v ? 1 : 0) : (v as NumericValue);
}

function equalsValue(field: string, v: DocValue, q: FilterValue): boolean {
  if (typeOf.get(field) === 'keyword') return v === String(q);
  return compareNumeric(v as NumericValue, asNumber(q)) === 0;
}

/** Lucene's semantics of each filter, per doc, from the plain values. */
function reference(q: FilterQuery, doc: PlainDoc): boolean {
  if (q instanceof TermQuery) return valuesOf(doc, q.field).some((v) => equalsValue(q.field, v, q.value));
  if (q instanceof TermInSetQuery) return valuesOf(doc, q.field).some((v) => q.values.some((t) => equalsValue(q.field, v, t)));
  if (q instanceof SortedNumericDocValuesRangeQuery) {
    return valuesOf(doc, q.field).some((v) => {
      const lo = q.lower === null ? 1 : compareNumeric(v as NumericValue, q.lower);
      const hi = q.upper === null ? -1 : compareNumeric(v as NumericValue, q.upper);
      return (lo > 0 || (lo === 0 && q.includeLower)) && (hi < 0 || (hi === 0 && q.includeUpper));
    });
  }
  if (q instanceof TermRangeQuery) {
    return valuesOf(doc, q.field).some((v) => {
      const lo = q.lower === null ? 1 : compareUtf8(v as string, q.lower);
      const hi = q.upper === null ? -1 : compareUtf8(v as string, q.upper);
      return (lo > 0 || (lo === 0 && q.includeLower)) && (hi < 0 || (hi === 0 && q.includeUpper));
    });
  }
  if (q instanceof FieldExistsQuery) return valuesOf(doc, q.field).length > 0;
  if (q instanceof IdsQuery) return q.ids.includes(doc.id);
  if (q instanceof MatchAllDocsQuery) return true;
  if (q instanceof MatchNoDocsQuery) return false;
  if (q instanceof BooleanQuery) {
    const required = [...q.must, ...q.filter];
    const m = (c: FilterQuery) => reference(c, doc);
    if (required.length + q.should.length + q.mustNot.length === 0) return true;
    if (required.length === 0 && q.should.length === 0) return q.adjustPureNegative && !q.mustNot.some(m);
    if (!required.every(m) || q.mustNot.some(m)) return false;
    const count = q.should.filter(m).length;
    if (q.minimumShouldMatch > 0) return count >= q.minimumShouldMatch;
    return required.length > 0 || count >= 1;
  }
  throw new Error(`no reference for ${q.constructor.name}`);
}

// ---------------------------------------------------------------- random filters

function randomNumericBound(r: () => number, type: FieldType): NumericValue {
  const v = randomValue(r, type);
  if (typeof v === 'bigint') {
    const u = r();
    // Longs as numbers (exact below 2^53), fractional numbers and -0 too.
    if (u < 0.3 && v >= -(2n ** 53n) && v <= 2n ** 53n) return Number(v);
    if (u < 0.4) return Number(v) + 0.5;
    if (u < 0.45) return -0;
    return v;
  }
  return v as number;
}

function randomLeafQuery(r: () => number): FilterQuery {
  const f = pick(r, [...FIELDS, { name: 'missing', type: 'keyword' as FieldType, multi: false }]);
  const value = (): FilterValue => {
    if (f.type === 'keyword') return r() < 0.9 ? pick(r, TERMS) : pick(r, ['zz', 'a\u0000', 'ab\u{1F600}']);
    if (f.type === 'boolean' && r() < 0.3) return r() < 0.5;
    return randomNumericBound(r, f.type);
  };
  const u = r();
  if (u < 0.25) return new TermQuery(f.name, value());
  if (u < 0.45) {
    const n = pick(r, [0, 1, 2, 3, 5, 12, 70]);
    return new TermInSetQuery(f.name, Array.from({ length: n }, value));
  }
  if (u < 0.7) {
    const lo = r() < 0.25 ? null : value(),
      hi = r() < 0.25 ? null : value();
    if (f.type === 'keyword') return new TermRangeQuery(f.name, lo as string | null, hi as string | null, r() < 0.5, r() < 0.5);
    const num = (b: FilterValue | null) => (b === null ? null : asNumber(b));
    return new SortedNumericDocValuesRangeQuery(f.name, num(lo), num(hi), r() < 0.5, r() < 0.5);
  }
  if (u < 0.8) return new FieldExistsQuery(f.name);
  if (u < 0.9) return new IdsQuery(Array.from({ length: Math.floor(r() * 6) }, () => `doc-${Math.floor(r() * 400)}`));
  return r() < 0.5 ? new MatchAllDocsQuery() : new MatchNoDocsQuery();
}

function randomQuery(r: () => number, depth: number): FilterQuery {
  if (depth === 0 || r() < 0.35) return randomLeafQuery(r);
  const list = () => Array.from({ length: pick(r, [0, 0, 1, 1, 2, 3]) }, () => randomQuery(r, depth - 1));
  return new BooleanQuery({
    must: list(),
    filter: list(),
    should: list(),
    mustNot: list(),
    minimumShouldMatch: pick(r, [0, 0, 0, 1, 2, 3, 5]),
    adjustPureNegative: r() < 0.9,
  });
}

function randomLeaves(seed: number): { segments: PlainSegment[]; leaves: FilterLeaf[] } {
  const r = rng(seed);
  const segments = randomSegments(r, FIELDS, 4);
  const leaves = segments.map((s) => toLeaf(s, FIELDS, r, { forceMulti: r() < 0.3, dirtyTail: r() < 0.3 }));
  return { segments, leaves };
}

// ---------------------------------------------------------------- specifications

describe('FixedBitSet', () => {
  it('agrees with a set of ints: cardinality, get, nextSetBit, prevSetBit, iteration, and/or/andNot, intersectionCount', () => {
    const r = rng(7);
    for (let trial = 0; trial < 300; trial++) {
      const n = Math.floor(r() * 200);
      const make = () => {
        const s = new FixedBitSet(n);
        const ref = new Set<number>();
        const density = r();
        for (let d = 0; d < n; d++) if (r() < density) s.set(d), ref.add(d);
        return { s, ref };
      };
      const a = make(),
        b = make();
      const sorted = (x: Set<number>) => [...x].sort((p, q) => p - q);
      expect(a.s.cardinality()).toBe(a.ref.size);
      expect(bitsOf(a.s)).toEqual(sorted(a.ref));
      expect(a.s.isEmpty()).toBe(a.ref.size === 0);
      for (let d = 0; d <= n; d++) {
        const next = sorted(a.ref).find((x) => x >= d);
        expect(a.s.nextSetBit(d)).toBe(next ?? NO_MORE_DOCS);
        const prev = sorted(a.ref)
          .reverse()
          .find((x) => x <= d);
        expect(a.s.prevSetBit(d)).toBe(prev ?? -1);
      }
      expect(FixedBitSet.intersectionCount(a.s, b.s)).toBe([...a.ref].filter((x) => b.ref.has(x)).length);
      expect(bitsOf(a.s.clone().and(b.s))).toEqual(sorted(new Set([...a.ref].filter((x) => b.ref.has(x)))));
      expect(bitsOf(a.s.clone().or(b.s))).toEqual(sorted(new Set([...a.ref, ...b.ref])));
      expect(bitsOf(a.s.clone().andNot(b.s))).toEqual(sorted(new Set([...a.ref].filter((x) => !b.ref.has(x)))));
      const { docs, count } = a.s.toDocs();
      expect([...docs.subarray(0, count)]).toEqual(sorted(a.ref));
      const seen: number[] = [];
      a.s.forEachSetBit((d) => seen.push(d));
      expect(seen).toEqual(sorted(a.ref));
      const it = new BitSetIterator(a.s);
      const walked: number[] = [];
      for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) walked.push(d);
      expect(walked).toEqual(sorted(a.ref));
      expect(it.cost()).toBe(a.ref.size);
      if (n > 0) {
        const target = Math.floor(r() * n);
        expect(new BitSetIterator(a.s).advance(target)).toBe(sorted(a.ref).find((x) => x >= target) ?? NO_MORE_DOCS);
      }
    }
  });

  it('fromLive copies live docs and keeps no bit past numBits; null means every doc', () => {
    const live = new Uint32Array([0xffffffff, 0xffffffff]);
    live[0] = 0xfffffffe;
    const s = FixedBitSet.fromLive(live, 40);
    expect(s.cardinality()).toBe(39);
    expect(s.get(0)).toBe(false);
    expect(s.nextSetBit(40)).toBe(NO_MORE_DOCS);
    live[0] = 0;
    expect(s.get(1)).toBe(true);
    expect(FixedBitSet.fromLive(null, 33).cardinality()).toBe(33);
    expect(FixedBitSet.fromLive(null, 0).cardinality()).toBe(0);
  });
});

describe('calculateMinShouldMatch (Elasticsearch Queries.calculateMinShouldMatch)', () => {
  it.each([
    [3, '2', 2],
    [3, 5, 5],
    [4, '-1', 3],
    [0, '-1', 0],
    [3, '75%', 2],
    [4, '-25%', 3],
    [3, '-25%', 3],
    [10, '70%', 7],
    [10, '30%', 3],
    [5, '100%', 5],
    [2, '2<-25% 9<-3', 2],
    [5, '2<-25% 9<-3', 4],
    [12, '2<-25% 9<-3', 9],
    [3, ' 3 < 50% ', 3],
    [4, '3<50%', 2],
    [0, '1', 1],
  ] as const)('%i clauses, %s -> %i', (n, spec, want) => {
    expect(calculateMinShouldMatch(n, spec)).toBe(want);
  });

  it.each(['', 'x', '1.5', '50 %', '%', '3<', '2<<3', '99999999999'])('refuses %j', (spec) => {
    expect(() => calculateMinShouldMatch(3, spec)).toThrow(/minimum_should_match/);
  });
});

describe('filters match what a per-doc reference evaluation says (random documents, random filter trees)', () => {
  it('every leaf filter, thousands of cases', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { segments, leaves } = randomLeaves(seed);
      const r = rng(seed * 1000 + 1);
      for (let i = 0; i < 250; i++) {
        const q = randomLeafQuery(r);
        leaves.forEach((leaf, s) => {
          expect(bitsOf(q.bitset(leaf)), `${q} on ${leaf.key} (seed ${seed})`).toEqual(expected(segments[s], (d) => reference(q, d)));
        });
      }
    }
  });

  it('boolean trees up to depth 4, with minimum_should_match and pure negatives', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { segments, leaves } = randomLeaves(seed + 100);
      const r = rng(seed * 7919);
      for (let i = 0; i < 200; i++) {
        const q = randomQuery(r, 4);
        leaves.forEach((leaf, s) => {
          expect(bitsOf(q.bitset(leaf)), `${q} on ${leaf.key} (seed ${seed})`).toEqual(expected(segments[s], (d) => reference(q, d)));
        });
      }
    }
  });

  it('a conjunction that leaves few docs refines its ranges doc by doc, with the same docs as the bitsets', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const r = rng(seed * 104_729);
      const segments = randomSegments(r, FIELDS, 3, 2_000);
      const leaves = segments.map((s) => toLeaf(s, FIELDS, r, { forceMulti: r() < 0.3, dirtyTail: r() < 0.3 }));
      const total = segments.reduce((a, s) => a + s.docs.length, 0);
      for (let i = 0; i < 200; i++) {
        // A few ids: far below maxDoc / 32, so the range clauses refine them.
        const ids = new IdsQuery(Array.from({ length: 1 + Math.floor(r() * 20) }, () => `doc-${Math.floor(r() * total)}`));
        const ranges = Array.from({ length: 1 + Math.floor(r() * 2) }, () => {
          let q: FilterQuery;
          do q = randomLeafQuery(r);
          while (!(q instanceof SortedNumericDocValuesRangeQuery));
          return q;
        });
        const q = new BooleanQuery({ filter: [...ranges, ids] });
        leaves.forEach((leaf, s) => {
          expect(bitsOf(q.bitset(leaf)), `${q} on ${leaf.key} (seed ${seed})`).toEqual(expected(segments[s], (d) => reference(q, d)));
        });
      }
    }
  });

  it('large segments: multi-valued columns beyond the reused count scratch, integer and hashed numeric sets', () => {
    const r = rng(2024);
    const fields = FIELDS.filter((f) => f.multi || f.name === 'x');
    const [segment] = randomSegments(r, fields, 1, 0, 70_001);
    const leaf = toLeaf(segment, fields, r);
    expect((leaf.column('ns') as NumericColumn).offsets![leaf.maxDoc]).toBeGreaterThan(1 << 16);
    const queries = [
      new TermQuery('tags', 'a'),
      new TermInSetQuery('tags', ['a', 'b', '\u{1F600}']),
      new SortedNumericDocValuesRangeQuery('ns', -7, 100, false, true),
      new SortedNumericDocValuesRangeQuery('xs', 0, null),
      new TermInSetQuery('ns', [5, -7, 42, 0]),
      new TermInSetQuery('xs', [1.5, -0, 2.5]),
      new TermInSetQuery('x', [0, 3, 1, -1]),
      new FieldExistsQuery('ns'),
    ];
    for (const q of queries) expect(bitsOf(q.bitset(leaf)), String(q)).toEqual(expected(segment, (d) => reference(q, d)));
  });

  it('keyword columns with many terms: a sparse term or terms set is read from postings, a dense one by the pass, with the same docs', () => {
    const r = rng(77);
    const many = Array.from({ length: 300 }, (_, i) => `k${i}`);
    const fields: FieldSpec[] = [
      { name: 'tag', type: 'keyword', multi: false },
      { name: 'tags', type: 'keyword', multi: true },
    ];
    // k0 in about half the docs (dense: the pass), the others rare (sparse: postings); some docs without a value, some deleted.
    const value = () => (r() < 0.5 ? 'k0' : pick(r, many));
    const docs: PlainDoc[] = Array.from({ length: 5000 }, (_, i) => {
      const values = new Map<string, DocValue[]>();
      if (r() < 0.9) values.set('tag', [value()]);
      if (r() < 0.9) values.set('tags', Array.from({ length: 1 + Math.floor(r() * 3) }, value));
      return { id: `d${i}`, live: r() < 0.85, values };
    });
    const segment: PlainSegment = { key: 'many-terms', docs };
    const leaf = toLeaf(segment, fields, r);
    const postings = ordPostings(leaf.column('tags') as KeywordColumn, leaf.maxDoc)!;
    expect(postings.starts.length).toBe((leaf.column('tags') as KeywordColumn).termCount + 1);
    for (const field of ['tag', 'tags']) {
      const queries = [
        new TermQuery(field, 'k0'), // dense
        new TermQuery(field, 'k17'), // sparse
        new TermQuery(field, 'absent'),
        new TermInSetQuery(field, ['k1', 'k10', 'k100']), // consecutive ords (UTF-8 order), sparse
        new TermInSetQuery(field, ['k5', 'k50', 'k250', 'absent']), // scattered, sparse
        new TermInSetQuery(field, ['k0', 'k9']), // dense
        new TermInSetQuery(field, many.slice(1, 200)), // about a third of the docs: the pass
      ];
      for (const q of queries) expect(bitsOf(q.bitset(leaf)), String(q)).toEqual(expected(segment, (d) => reference(q, d)));
    }
    // Few terms: a single-valued column is never inverted, a multi-valued one is.
    const fewLeaf = toLeaf(
      {
        key: 'few',
        docs: docs.map((d, i) => ({
          ...d,
          values: new Map([
            ['tag', ['a']],
            ['tags', i % 7 === 0 ? ['a', 'b'] : ['b']],
          ]),
        })),
      },
      fields,
      r,
    );
    expect(ordPostings(fewLeaf.column('tag') as KeywordColumn, fewLeaf.maxDoc)).toBeNull();
    expect(ordPostings(fewLeaf.column('tags') as KeywordColumn, fewLeaf.maxDoc)).not.toBeNull();
    const sparse = new TermQuery('tags', 'a');
    expect(bitsOf(sparse.bitset(fewLeaf))).toEqual(docs.flatMap((d, i) => (d.live && i % 7 === 0 ? [i] : [])));
  });

  it('equal cache keys mean equal bitsets; reordered clauses and terms keep the key', () => {
    const { leaves } = randomLeaves(4242);
    const r = rng(99);
    const byKey = new Map<string, string>();
    const shuffle = <T>(xs: readonly T[]) => [...xs].sort(() => r() - 0.5);
    for (let i = 0; i < 1500; i++) {
      const q = randomQuery(r, 3);
      const result = JSON.stringify(leaves.map((l) => bitsOf(q.bitset(l))));
      const seen = byKey.get(q.cacheKey);
      if (seen !== undefined) expect(result, `${q} shares the key ${q.cacheKey}`).toBe(seen);
      else byKey.set(q.cacheKey, result);
      if (q instanceof BooleanQuery) {
        const swapped = new BooleanQuery({
          must: shuffle(q.filter),
          filter: shuffle(q.must),
          should: shuffle(q.should),
          mustNot: shuffle(q.mustNot),
          minimumShouldMatch: q.minimumShouldMatch,
          adjustPureNegative: q.adjustPureNegative,
        });
        expect(swapped.cacheKey).toBe(q.cacheKey);
      }
      if (q instanceof TermInSetQuery) expect(new TermInSetQuery(q.field, shuffle([...q.values, ...q.values.slice(0, 2)])).cacheKey).toBe(q.cacheKey);
    }
    expect(byKey.size).toBeGreaterThan(300);
  });
});

describe('semantics spelled out', () => {
  const segment: PlainSegment = {
    key: 's',
    docs: [
      {
        id: 'a',
        live: true,
        values: new Map<string, DocValue[]>([
          ['x', [-0]],
          ['n', [0n]],
          ['tag', ['b']],
        ]),
      },
      {
        id: 'b',
        live: true,
        values: new Map<string, DocValue[]>([
          ['x', [0]],
          ['n', [2n ** 53n + 1n]],
          ['tag', ['\u{1F600}']],
        ]),
      },
      {
        id: 'c',
        live: true,
        values: new Map<string, DocValue[]>([
          ['x', [1.5]],
          ['n', [2n ** 53n]],
          ['tag', ['\uFFFD']],
        ]),
      },
      {
        id: 'd',
        live: false,
        values: new Map<string, DocValue[]>([
          ['x', [1.5]],
          ['n', [5n]],
          ['tag', ['b']],
        ]),
      },
      { id: 'e', live: true, values: new Map<string, DocValue[]>() },
    ],
  };
  const leaf = toLeaf(segment, FIELDS, rng(1));
  const docs = (q: FilterQuery) => bitsOf(q.bitset(leaf)).map((d) => segment.docs[d].id);

  it('-0.0 sorts below +0.0 (Lucene, Elasticsearch): a term or bound at one zero does not match the other', () => {
    expect(docs(new TermQuery('x', 0))).toEqual(['b']);
    expect(docs(new TermQuery('x', -0))).toEqual(['a']);
    expect(docs(new SortedNumericDocValuesRangeQuery('x', 0, null))).toEqual(['b', 'c']);
    expect(docs(new SortedNumericDocValuesRangeQuery('x', null, 0, true, false))).toEqual(['a']);
    expect(docs(new SortedNumericDocValuesRangeQuery('x', -0, 0))).toEqual(['a', 'b']);
    expect(docs(new TermInSetQuery('x', [0, 1.5]))).toEqual(['b', 'c']);
  });

  it('longs beyond 2^53 compare exactly', () => {
    expect(docs(new TermQuery('n', 2n ** 53n + 1n))).toEqual(['b']);
    expect(docs(new TermQuery('n', 2n ** 53n))).toEqual(['c']);
    expect(docs(new SortedNumericDocValuesRangeQuery('n', 2n ** 53n, null, false))).toEqual(['b']);
    expect(docs(new SortedNumericDocValuesRangeQuery('n', 2 ** 53, null, false))).toEqual(['b']);
    expect(docs(new TermInSetQuery('n', [2n ** 53n + 1n, 0]))).toEqual(['a', 'b']);
  });

  it('keywords compare by UTF-8 bytes: U+1F600 sorts after U+FFFD', () => {
    expect(docs(new TermRangeQuery('tag', '\uFFFD', null, false))).toEqual(['b']);
    expect(docs(new TermRangeQuery('tag', 'a', '\uFFFD'))).toEqual(['a', 'c']);
  });

  it('deleted docs never match; must_not alone keeps every other live doc', () => {
    expect(docs(new MatchAllDocsQuery())).toEqual(['a', 'b', 'c', 'e']);
    expect(docs(new BooleanQuery({ mustNot: [new TermQuery('tag', 'b')] }))).toEqual(['b', 'c', 'e']);
    expect(docs(new BooleanQuery({ mustNot: [new TermQuery('tag', 'b')], adjustPureNegative: false }))).toEqual([]);
    expect(docs(new BooleanQuery({}))).toEqual(['a', 'b', 'c', 'e']);
    expect(docs(new IdsQuery(['d', 'e', 'zz']))).toEqual(['e']);
  });

  it('should: one needed without required clauses, optional with them, minimumShouldMatch beyond the count matches nothing', () => {
    const should = [new TermQuery('tag', 'b'), new FieldExistsQuery('x')];
    expect(docs(new BooleanQuery({ should }))).toEqual(['a', 'b', 'c']);
    expect(docs(new BooleanQuery({ filter: [new MatchAllDocsQuery()], should }))).toEqual(['a', 'b', 'c', 'e']);
    expect(docs(new BooleanQuery({ filter: [new MatchAllDocsQuery()], should, minimumShouldMatch: 2 }))).toEqual(['a']);
    expect(docs(new BooleanQuery({ filter: [new MatchAllDocsQuery()], minimumShouldMatch: 1 }))).toEqual([]);
    expect(docs(new BooleanQuery({ should, minimumShouldMatch: 3 }))).toEqual([]);
  });

  it('renders as Lucene does', () => {
    expect(String(new TermQuery('tag', 'b'))).toBe('tag:b');
    expect(String(new TermInSetQuery('tag', ['b', 'a', 'b']))).toBe('tag:(a b)');
    expect(String(new SortedNumericDocValuesRangeQuery('n', 1, null, false))).toBe('n:{1 TO *]');
    expect(String(new TermRangeQuery('tag', 'a', 'c'))).toBe('tag:[a TO c]');
    expect(String(new FieldExistsQuery('x'))).toBe('FieldExistsQuery [field=x]');
    const bool = new BooleanQuery({
      must: [new TermQuery('a', 1)],
      filter: [new TermQuery('b', 'x')],
      should: [new MatchAllDocsQuery()],
      mustNot: [new BooleanQuery({ should: [new TermQuery('c', 'y')] })],
      minimumShouldMatch: 1,
    });
    expect(String(bool)).toBe('(+a:1 #b:x *:* -(c:y))~1');
  });
});
