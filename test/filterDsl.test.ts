import { describe, expect, it } from 'vitest';
import { DateFormat, parseDateMath } from '../segments/document/DateFormat.js';
import { booleanMapping, dateMapping, keywordMapping, numberMapping, type FieldMapping } from '../segments/document/FieldMapping.js';
import { calculateMinShouldMatch, TermInSetQuery, type FilterQuery } from '../query/filter/index.js';
import { parseFilterClause, parseKnnFilter } from '../src/http/dsl/FilterDsl.js';
import type { HttpError } from '../src/http/errors.js';
import {
  compareNumeric,
  compareUtf8,
  LONGS,
  pick,
  randomSegments,
  rng,
  toLeaf,
  TERMS,
  DOUBLES,
  DATES,
  type DocValue,
  type FieldSpec,
  type PlainDoc,
} from './support/filterLeaves.js';

const MAPPING = new Map<string, FieldMapping>([
  ['tag', keywordMapping()],
  ['tags', keywordMapping()],
  ['n', numberMapping('long')],
  ['ns', numberMapping('long')],
  ['i', numberMapping('integer')],
  ['x', numberMapping('double')],
  ['xs', numberMapping('double')],
  ['f', numberMapping('float')],
  ['at', dateMapping()],
  ['day', dateMapping({ format: DateFormat.of('yyyy/MM/dd||epoch_millis') })],
  ['flag', booleanMapping()],
  ['title', { type: 'text', docValues: false }],
  ['nodv', keywordMapping({ docValues: false })],
  ['vec', { type: 'dense_vector', docValues: false, dims: 3, similarity: 'cosine', indexOptions: null }],
]);
const NOW = Date.UTC(2024, 0, 2, 15, 30);
const options = { field: (p: string) => MAPPING.get(p), nowMs: NOW };

function translate(json: unknown): string {
  const r = parseKnnFilter(json, options);
  if (!r.ok) throw new Error(`unexpected error: ${r.error.reason}`);
  return r.value.toString();
}

function error(json: unknown): { path: string; reason: string; error: HttpError } {
  const r = parseKnnFilter(json, options);
  if (r.ok) throw new Error(`expected an error, got ${r.value}`);
  const first = (r.error.details.issues as { path: string; reason: string }[])[0];
  return { ...first, error: r.error };
}

describe('Elasticsearch query DSL -> filters (JSON -> toString)', () => {
  const day = Date.UTC(2024, 0, 1);
  it.each<[string, unknown, string]>([
    ['term shorthand', { term: { tag: 'a' } }, 'tag:a'],
    ['term with value', { term: { tag: { value: 'a', boost: 2, _name: 'q' } } }, 'tag:a'],
    ['any scalar on a keyword is its string', { term: { tag: 5 } }, 'tag:5'],
    ['a long takes 5 or "5"', { term: { n: '5' } }, 'n:5'],
    ['a long given as a string stays exact beyond 2^53', { term: { n: '9007199254740993' } }, 'n:9007199254740993'],
    ['a fraction matches no long (as Elasticsearch)', { term: { n: 5.5 } }, 'MatchNoDocsQuery("5.5 has a fraction: no long equals it")'],
    ['-0 on a double stays -0', { term: { x: -0 } }, 'x:-0'],
    ['a float term is rounded to float32', { term: { f: 0.1 } }, `f:${Math.fround(0.1)}`],
    ['a date term in the field format', { term: { at: '2024-01-01' } }, `at:${day}`],
    ['a date term with rounding is a range', { term: { at: 'now/d' } }, `at:[${Date.UTC(2024, 0, 2)} TO ${Date.UTC(2024, 0, 3) - 1}]`],
    ['a boolean takes "true"', { term: { flag: 'true' } }, 'flag:1'],
    ['term on _id is ids', { term: { _id: 'doc-1' } }, '_id:(doc-1)'],
    ['terms', { terms: { tag: ['b', 'a', 'b'], boost: 1 } }, 'tag:(a b)'],
    ['empty terms match nothing', { terms: { tag: [] } }, 'MatchNoDocsQuery("no terms supplied for \\"terms\\" query")'],
    ['terms on longs drop fractions', { terms: { n: [1, '2', 2.5] } }, 'n:(1 2)'],
    ['range on a long: exclusive and fractional bounds become inclusive integers', { range: { n: { gt: 5, lte: 9.5 } } }, 'n:[6 TO 9]'],
    ['range on a long: negative fraction', { range: { n: { gte: -1.5, lt: '10' } } }, 'n:[-1 TO 9]'],
    ['range on a double keeps exclusive bounds', { range: { x: { gt: '0', lt: 2.5 } } }, 'x:{0 TO 2.5}'],
    ['open range', { range: { x: { gte: null, lt: 1 } } }, 'x:[* TO 1}'],
    ['range on a keyword', { range: { tag: { gte: 'a', lt: 'c' } } }, 'tag:[a TO c}'],
    ['range on a date with date math: gt rounds up', { range: { at: { gt: '2024-01-01||/d', lte: 'now/d' } } }, `at:{${Date.UTC(2024, 0, 2) - 1} TO ${Date.UTC(2024, 0, 3) - 1}]`],
    ['range on a date: gte and lt round down', { range: { at: { gte: 'now-1d/d', lt: 'now/d' } } }, `at:[${day} TO ${Date.UTC(2024, 0, 2)}}`],
    ['range with its own format', { range: { at: { gte: '01/02/2024', format: 'dd/MM/yyyy' } } }, `at:[${Date.UTC(2024, 1, 1)} TO *]`],
    ['range in the field format', { range: { day: { lt: '2024/01/02' } } }, `day:[* TO ${Date.UTC(2024, 0, 2)}}`],
    ['deprecated from/to', { range: { n: { from: 1, to: 3, include_upper: false } } }, 'n:[1 TO 2]'],
    ['exists', { exists: { field: 'tag' } }, 'FieldExistsQuery [field=tag]'],
    ['ids', { ids: { values: ['b', 'a', 7] } }, '_id:(7 a b)'],
    ['match_all', { match_all: {} }, '*:*'],
    ['match_none', { match_none: { _name: 'x' } }, 'MatchNoDocsQuery("match_none")'],
    ['constant_score', { constant_score: { filter: { term: { tag: 'a' } }, boost: 3 } }, 'tag:a'],
    [
      'bool',
      { bool: { must: { term: { tag: 'a' } }, filter: [{ exists: { field: 'x' } }], should: [{ term: { flag: true } }], must_not: { term: { n: 1 } } } },
      '+tag:a #FieldExistsQuery [field=x] flag:1 -n:1',
    ],
    [
      'minimum_should_match as a percentage',
      { bool: { should: [{ term: { tag: 'a' } }, { term: { tag: 'b' } }, { term: { tag: 'c' } }], minimum_should_match: '70%' } },
      '(tag:a tag:b tag:c)~2',
    ],
    [
      'minimum_should_match negative',
      { bool: { should: [{ term: { tag: 'a' } }, { term: { tag: 'b' } }, { term: { tag: 'c' } }], minimum_should_match: -1 } },
      '(tag:a tag:b tag:c)~2',
    ],
    ['knn.filter as an array: all must match', [{ term: { tag: 'a' } }, { range: { x: { lt: 1 } } }], '#tag:a #x:[* TO 1}'],
    ['knn.filter as an empty array', [], '*:*'],
  ])('%s', (_, json, want) => {
    expect(translate(json)).toBe(want);
  });

  it('terms beyond Elasticsearch cap of 65,536 values', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => `user-${i}`);
    const r = parseKnnFilter({ terms: { tag: values } }, options);
    expect(r.ok && r.value instanceof TermInSetQuery && r.value.values.length).toBe(100_000);
  });

  it('bool.filter clauses translate alone too', () => {
    const r = parseFilterClause({ term: { tag: 'a' } }, options, 'query.bool.filter[0]');
    expect(r.ok && r.value.toString()).toBe('tag:a');
  });
});

describe('DSL errors name the JSON path (400 validation_error)', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['unknown query type', [{ term: { tag: 'a' } }, { prefix: { tag: 'a' } }], 'knn.filter[1]', /unknown query \[prefix\] \(supported in filters: term, terms, range/],
    ['full-text query', { match: { title: 'hello' } }, 'knn.filter', /full-text query: prescore offers no full-text search/],
    ['term on a text field', { term: { title: 'hello' } }, 'knn.filter.term.title', /text field: prescore offers no full-text search/],
    ['field not in the mapping', { term: { nope: 'a' } }, 'knn.filter.term.nope', /no field \[nope\] in the index mapping/],
    ['field without doc values', { exists: { field: 'nodv' } }, 'knn.filter.exists.field', /no doc values/],
    ['the vector field', { exists: { field: 'vec' } }, 'knn.filter.exists.field', /dense_vector/],
    ['value that is not a number', [{ term: { tag: 'a' } }, { range: { x: { gte: 'cheap' } } }], 'knn.filter[1].range.x.gte', /must be a number/],
    ['nested path', { bool: { must: [{ term: { tag: 'a' } }, { range: { n: { gte: 'x' } } }] } }, 'knn.filter.bool.must[1].range.n.gte', /must be a number/],
    ['long out of range', { term: { n: '9223372036854775808' } }, 'knn.filter.term.n', /out of range for a long/],
    ['integer out of range in a range', { range: { i: { lt: 3e9 } } }, 'knn.filter.range.i.lt', /out of range for an integer/],
    ['boolean', { term: { flag: 'yes' } }, 'knn.filter.term.flag', /expected \[true\] or \[false\]/],
    ['date', { range: { at: { gte: 'yesterday' } } }, 'knn.filter.range.at.gte', /failed to parse date field \[yesterday\]/],
    ['date math', { range: { at: { gte: 'now-1x' } } }, 'knn.filter.range.at.gte', /failed to parse date field/],
    ['unknown range parameter', { range: { x: { gte: 1, above: 2 } } }, 'knn.filter.range.x.above', /unknown field \(supported: gt, gte, lt, lte/],
    ['two lower bounds', { range: { x: { gt: 1, gte: 2 } } }, 'knn.filter.range.x.gte', /lower bound is already given by \[gt\]/],
    ['format on a non-date field', { range: { x: { gte: 1, format: 'yyyy' } } }, 'knn.filter.range.x.format', /date fields only/],
    ['time_zone', { range: { at: { gte: '2024-01-01', time_zone: '+01:00' } } }, 'knn.filter.range.at.time_zone', /not supported/],
    ['term value missing', { term: { tag: { boost: 1 } } }, 'knn.filter.term.tag.value', /is required/],
    ['term on two fields', { term: { tag: 'a', tags: 'b' } }, 'knn.filter.term.tags', /doesn't support multiple fields/],
    ['case_insensitive', { term: { tag: { value: 'a', case_insensitive: true } } }, 'knn.filter.term.tag.case_insensitive', /not supported/],
    ['a term value that is an object', { term: { tag: { value: { a: 1 } } } }, 'knn.filter.term.tag.value', /single value/],
    ['terms lookup', { terms: { tag: { index: 'users', id: '2', path: 'tags' } } }, 'knn.filter.terms.tag', /terms lookup/],
    ['a null among terms', { terms: { n: [1, 2, null] } }, 'knn.filter.terms.n[2]', /single value/],
    ['bad minimum_should_match', { bool: { should: [{ match_all: {} }], minimum_should_match: '50 %' } }, 'knn.filter.bool.minimum_should_match', /invalid minimum_should_match/],
    ['bool occurrence that is not a query', { bool: { filter: 'x' } }, 'knn.filter.bool.filter', /query object or an array/],
    ['two queries in one object', { term: { tag: 'a' }, range: { x: { lt: 1 } } }, 'knn.filter', /one query per object/],
    ['an empty query', [{}], 'knn.filter[0]', /empty query/],
    ['not an object', ['term'], 'knn.filter[0]', /must be a query object/],
    ['ids values', { ids: { values: 'a' } }, 'knn.filter.ids.values', /array of ids/],
    ['boost', { match_all: { boost: 'high' } }, 'knn.filter.match_all.boost', /must be a number/],
  ])('%s', (_, json, path, reason) => {
    const e = error(json);
    expect(e.path).toBe(path);
    expect(e.reason).toMatch(reason);
    expect(e.error.status).toBe(400);
    expect(e.error.body().error.type).toBe('validation_error');
    expect(e.error.reason).toContain(`[${path}]`);
  });

  it('reports several issues, bounded', () => {
    const r = parseKnnFilter({ terms: { n: Array.from({ length: 100 }, () => 'x') } }, options);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect((r.error.details.issues as unknown[]).length).toBe(21);
      expect(r.error.reason).toMatch(/and 99 more issues/);
    }
  });
});

// ---------------------------------------------------------------- end to end: random DSL -> bitset vs an ES reference

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

type Json = unknown;

function randomScalar(r: () => number, field: FieldSpec): Json {
  switch (field.type) {
    case 'keyword':
      return r() < 0.9 ? pick(r, TERMS) : pick(r, [5, true, 'zz']);
    case 'long': {
      const v = r() < 0.8 ? pick(r, LONGS) : BigInt(Math.floor(r() * 200) - 100);
      const u = r();
      if (u < 0.3 && v >= -(2n ** 53n) && v <= 2n ** 53n) return Number(v);
      if (u < 0.4 && v > -(2n ** 53n) && v < 2n ** 53n) return Number(v) + pick(r, [0.5, -0.25]);
      if (u < 0.45) return pick(r, [-0, '-0', '5.0', '1e1']);
      return v.toString();
    }
    case 'double': {
      const v = r() < 0.8 ? pick(r, DOUBLES) : Math.round((r() * 20 - 10) * 4) / 4;
      return r() < 0.7 ? v : Object.is(v, -0) ? '-0' : String(v);
    }
    case 'date': {
      const u = r();
      if (u < 0.4) return pick(r, DATES);
      if (u < 0.7) return new Date(pick(r, DATES)).toISOString();
      return pick(r, ['now', 'now/d', 'now-1d/d', 'now-1d', '2024-01-01||+1d/d', '2024-01-01T12:00:00Z||/h', '2024-01-01', '2024-01-02T00:00:00+01:00']);
    }
    case 'boolean':
      return pick(r, [true, false, 'true', 'false']);
  }
}

function randomDsl(r: () => number, depth: number): Json {
  const field = pick(r, FIELDS);
  const u = r();
  if (depth > 0 && u < 0.3) {
    const list = () => {
      const n = pick(r, [0, 0, 1, 1, 2, 3]);
      const items = Array.from({ length: n }, () => randomDsl(r, depth - 1));
      return n === 1 && r() < 0.5 ? items[0] : items;
    };
    const bool: Record<string, Json> = {};
    for (const k of ['must', 'filter', 'should', 'must_not']) if (r() < 0.6) bool[k] = list();
    if (r() < 0.4) bool.minimum_should_match = pick(r, [0, 1, 2, -1, '50%', '-50%', '100%', '2<75%', 3]);
    if (r() < 0.05) bool.adjust_pure_negative = false;
    return { bool };
  }
  if (u < 0.45) return { term: { [field.name]: r() < 0.7 ? randomScalar(r, field) : { value: randomScalar(r, field) } } };
  if (u < 0.6) return { terms: { [field.name]: Array.from({ length: pick(r, [0, 1, 2, 4, 9]) }, () => randomScalar(r, field)) } };
  if (u < 0.85) {
    const params: Record<string, Json> = {};
    if (r() < 0.75) params[pick(r, ['gt', 'gte'])] = randomScalar(r, field);
    if (r() < 0.75) params[pick(r, ['lt', 'lte'])] = randomScalar(r, field);
    return { range: { [field.name]: params } };
  }
  if (u < 0.92) return { exists: { field: field.name } };
  if (u < 0.96) return { ids: { values: Array.from({ length: 3 }, () => `doc-${Math.floor(r() * 400)}`) } };
  return pick(r, [{ match_all: {} }, { match_none: {} }]);
}

/** Elasticsearch's meaning of a scalar for a field, for the reference. */
function esNumber(v: Json): number | bigint {
  if (typeof v === 'string') return /^[+-]?\d+$/.test(v.trim()) ? BigInt(v.trim()) : Number(v);
  return v as number;
}

function realCompare(a: DocValue, b: number | bigint): number {
  // A long field compares as real numbers: -0 is 0.
  return compareNumeric(a as bigint, typeof b === 'number' && b === 0 ? 0 : b);
}

function fieldType(name: string) {
  return FIELDS.find((f) => f.name === name)!.type;
}

function dateBound(v: Json, roundUp: boolean): number {
  return parseDateMath(v, DateFormat.of('strict_date_optional_time||epoch_millis'), NOW, roundUp);
}

function esTermMatches(name: string, docValue: DocValue, v: Json): boolean {
  switch (fieldType(name)) {
    case 'keyword':
      return docValue === String(v);
    case 'boolean':
      return docValue === (v === true || v === 'true' ? 1 : 0);
    case 'date':
      return (docValue as number) >= dateBound(v, false) && (docValue as number) <= dateBound(v, true);
    case 'double':
      return compareNumeric(docValue as number, Number(v)) === 0;
    case 'long': {
      const x = esNumber(v);
      if (typeof x === 'number' && !Number.isInteger(x)) return false;
      return realCompare(docValue, x) === 0;
    }
  }
}

function esRangeMatches(name: string, docValue: DocValue, op: string, v: Json): boolean {
  const type = fieldType(name);
  let c: number;
  switch (type) {
    case 'keyword':
      c = compareUtf8(docValue as string, String(v));
      break;
    case 'boolean':
      c = (docValue as number) - (v === true || v === 'true' ? 1 : 0);
      break;
    case 'date':
      c = (docValue as number) - dateBound(v, op === 'gt' || op === 'lte');
      break;
    case 'double':
      c = compareNumeric(docValue as number, Number(v));
      break;
    case 'long':
      c = realCompare(docValue, esNumber(v));
      break;
  }
  return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
}

/** Elasticsearch's semantics of a DSL query on one (live) doc, straight from the JSON. */
function esReference(json: Json, doc: PlainDoc): boolean {
  if (Array.isArray(json)) return json.every((c) => esReference(c, doc));
  const [type, body] = Object.entries(json as Record<string, Json>)[0] as [string, any];
  const values = (name: string) => doc.values.get(name) ?? [];
  switch (type) {
    case 'term': {
      const [name, raw] = Object.entries(body)[0] as [string, any];
      const v = raw !== null && typeof raw === 'object' ? raw.value : raw;
      return values(name).some((d) => esTermMatches(name, d, v));
    }
    case 'terms': {
      const [name, list] = Object.entries(body)[0] as [string, Json[]];
      return values(name).some((d) => list.some((v) => esTermMatches(name, d, v)));
    }
    case 'range': {
      const [name, params] = Object.entries(body)[0] as [string, Record<string, Json>];
      return values(name).some((d) => Object.entries(params).every(([op, v]) => esRangeMatches(name, d, op, v)));
    }
    case 'exists':
      return values(body.field).length > 0;
    case 'ids':
      return body.values.includes(doc.id);
    case 'match_all':
      return true;
    case 'match_none':
      return false;
    case 'bool': {
      const list = (k: string): Json[] => (body[k] === undefined ? [] : Array.isArray(body[k]) ? body[k] : [body[k]]);
      const required = [...list('must'), ...list('filter')],
        should = list('should'),
        mustNot = list('must_not');
      const m = (c: Json) => esReference(c, doc);
      if (required.length + should.length + mustNot.length === 0) return true;
      if (required.length === 0 && should.length === 0) return body.adjust_pure_negative !== false && !mustNot.some(m);
      if (!required.every(m) || mustNot.some(m)) return false;
      const msm = body.minimum_should_match === undefined ? 0 : calculateMinShouldMatch(should.length, body.minimum_should_match);
      const count = should.filter(m).length;
      if (msm > 0) return count >= msm;
      return required.length > 0 || count >= 1;
    }
  }
  throw new Error(`no reference for ${type}`);
}

describe('random DSL, end to end: the bitset equals Elasticsearch semantics evaluated per doc', () => {
  it('thousands of random filters over random segments', () => {
    let checked = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const r = rng(seed * 31337);
      const segments = randomSegments(r, FIELDS, 3);
      const leaves = segments.map((s) => toLeaf(s, FIELDS, r, { forceMulti: r() < 0.3 }));
      for (let i = 0; i < 300; i++) {
        const json = r() < 0.2 ? [randomDsl(r, 3), randomDsl(r, 3)] : randomDsl(r, 4);
        const result = parseKnnFilter(json, options);
        if (!result.ok) throw new Error(`${JSON.stringify(json)}: ${result.error.reason}`);
        const query: FilterQuery = result.value;
        leaves.forEach((leaf, s) => {
          const want: number[] = [];
          segments[s].docs.forEach((d, k) => {
            if (d.live && esReference(json, d)) want.push(k);
          });
          expect([...query.bitset(leaf)], `${JSON.stringify(json)} -> ${query}`).toEqual(want);
          checked++;
        });
      }
    }
    expect(checked).toBe(10 * 300 * 3);
  });
});
