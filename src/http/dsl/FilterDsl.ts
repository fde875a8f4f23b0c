/**
 * Elasticsearch's Query DSL, as `knn.filter` and `bool.filter` take it, translated into filters
 * (query/filter): `term`, `terms` (no 65,536 cap), `range` (dates with `format` and date math),
 * `exists`, `ids`, `bool`, `match_all`, `match_none`, and `constant_score` around a filter.
 * Values are read by the field's mapping (FieldValues). Whatever does not translate is a
 * validation error naming its JSON path (`knn.filter[1].range.price.gte: must be a number ...`,
 * HTTP 400 as every request error): unknown query types and parameters, fields missing from the
 * mapping or without doc values, values that do not fit the field, and `text` fields (no
 * full-text search is offered). Unlike Elasticsearch, a field the mapping lacks is an error, not
 * an empty match: a typo must not silently filter everything out.
 */
import { DateFormat } from '../../../segments/document/DateFormat.js';
import type { FieldMapping } from '../../../segments/document/FieldMapping.js';
import {
  BooleanQuery,
  calculateMinShouldMatch,
  FieldExistsQuery,
  IdsQuery,
  MatchAllDocsQuery,
  MatchNoDocsQuery,
  SortedNumericDocValuesRangeQuery,
  TermInSetQuery,
  TermQuery,
  TermRangeQuery,
  type FilterQuery,
  type FilterValue,
  type NumericValue,
} from '../../../query/filter/index.js';
import { MAX_REPORTED_ISSUES, validationError, type Result, type ValidationIssue } from '../errors.js';
import { booleanValue, dateValue, floatingValue, integerValue, keywordValue, show, type Read } from './FieldValues.js';

/** A field's mapping by dotted path (Mapping.field), undefined when unmapped. */
export type FieldLookup = (path: string) => FieldMapping | undefined;

export interface FilterDslOptions {
  readonly field: FieldLookup;
  /** `now` for date math, epoch ms; default the time of the call (one `now` per request, as Elasticsearch). */
  readonly nowMs?: number;
}

export const FILTER_CLAUSES = ['term', 'terms', 'range', 'exists', 'ids', 'bool', 'match_all', 'match_none', 'constant_score'] as const;

const FULL_TEXT = new Set([
  'match',
  'match_phrase',
  'match_phrase_prefix',
  'match_bool_prefix',
  'multi_match',
  'query_string',
  'simple_query_string',
  'combined_fields',
  'intervals',
  'more_like_this',
]);
const COMMON = ['boost', '_name'];
const BOOL_KEYS = ['must', 'filter', 'should', 'must_not', 'minimum_should_match', 'adjust_pure_negative', ...COMMON];
const TERM_KEYS = ['value', 'case_insensitive', ...COMMON];
const RANGE_KEYS = ['gt', 'gte', 'lt', 'lte', 'from', 'to', 'include_lower', 'include_upper', 'format', 'time_zone', 'relation', ...COMMON];

/**
 * `knn.filter`: one query, or an array of queries that must all match (an empty array filters
 * nothing out).
 *
 * @example
 * const r = parseKnnFilter([{ term: { tenant: 't1' } }, { range: { price: { lt: 100 } } }], { field: (p) => mapping.field(p) });
 * if (r.ok) r.value.bitset(leaf); // else r.error: the HttpError (400) to answer with
 */
export function parseKnnFilter(json: unknown, options: FilterDslOptions, path = 'knn.filter'): Result<FilterQuery> {
  const p = new DslParser(options);
  let query: FilterQuery | null;
  if (Array.isArray(json)) {
    const clauses = json.map((c, i) => p.clause(c, `${path}[${i}]`));
    query = clauses.some((c) => c === null)
      ? null
      : clauses.length === 0
        ? new MatchAllDocsQuery()
        : clauses.length === 1
          ? clauses[0]
          : new BooleanQuery({ filter: clauses as FilterQuery[] });
  } else query = p.clause(json, path);
  return p.result(query);
}

/** One query clause (an element of `bool.filter`, a `query`), at `path` in the request body. */
export function parseFilterClause(json: unknown, options: FilterDslOptions, path: string): Result<FilterQuery> {
  const p = new DslParser(options);
  return p.result(p.clause(json, path));
}

type TermRead =
  | { readonly kind: 'value'; readonly value: FilterValue }
  | { readonly kind: 'range'; readonly lo: number; readonly hi: number }
  | { readonly kind: 'none'; readonly reason: string };

class DslParser {
  private readonly issues: ValidationIssue[] = [];
  private total = 0;
  private readonly lookup: FieldLookup;
  private readonly nowMs: number;

  constructor(options: FilterDslOptions) {
    this.lookup = options.field;
    this.nowMs = options.nowMs ?? Date.now();
  }

  result(query: FilterQuery | null): Result<FilterQuery> {
    if (this.total > 0 || query === null) return { ok: false, error: validationError(this.issues, Math.max(this.total, this.issues.length)) };
    return { ok: true, value: query };
  }

  /** Records an issue (the first MAX_REPORTED_ISSUES + 1 are kept, all are counted); null for chaining. */
  private issue(path: string, reason: string): null {
    if (this.total++ <= MAX_REPORTED_ISSUES) this.issues.push({ path, reason });
    return null;
  }

  clause(json: unknown, path: string): FilterQuery | null {
    const obj = asObject(json);
    if (obj === null) return this.issue(path, `must be a query object such as {"term": {"field": "value"}}, got ${describe(json)}`);
    const keys = Object.keys(obj);
    if (keys.length === 0) return this.issue(path, `is an empty query; expected one of ${FILTER_CLAUSES.join(', ')}`);
    if (keys.length > 1) return this.issue(path, `holds ${keys.length} queries [${keys.join(', ')}]: one query per object (combine them with bool)`);
    const type = keys[0];
    const body = obj[type];
    const at = join(path, type);
    switch (type) {
      case 'term':
        return this.term(body, at);
      case 'terms':
        return this.terms(body, at);
      case 'range':
        return this.range(body, at);
      case 'exists':
        return this.exists(body, at);
      case 'ids':
        return this.ids(body, at);
      case 'bool':
        return this.bool(body, at);
      case 'match_all':
      case 'match_none':
        if (this.params(body, at, COMMON) === null) return null;
        return type === 'match_all' ? new MatchAllDocsQuery() : new MatchNoDocsQuery('match_none');
      case 'constant_score': {
        const params = this.params(body, at, ['filter', ...COMMON]);
        if (params === null) return null;
        if (!('filter' in params)) return this.issue(join(at, 'filter'), 'is required');
        return this.clause(params.filter, join(at, 'filter'));
      }
      default:
        if (FULL_TEXT.has(type)) return this.issue(path, `[${type}] is a full-text query: prescore offers no full-text search; filter with ${FILTER_CLAUSES.join(', ')}`);
        return this.issue(path, `unknown query [${type}] (supported in filters: ${FILTER_CLAUSES.join(', ')})`);
    }
  }

  // ------------------------------------------------------------------ term, terms

  private term(body: unknown, path: string): FilterQuery | null {
    const entry = this.singleField(body, path, 'term', []);
    if (entry === null) return null;
    const [field, raw] = entry;
    let value: unknown = raw;
    let at = join(path, field);
    const obj = asObject(raw);
    if (obj !== null) {
      const params = this.params(obj, at, TERM_KEYS);
      if (params === null) return null;
      if (!('value' in params)) return this.issue(join(at, 'value'), 'is required');
      if (params.case_insensitive !== undefined && params.case_insensitive !== false)
        return this.issue(join(at, 'case_insensitive'), 'is not supported: terms match exactly (give false or leave it out)');
      value = params.value;
      at = join(at, 'value');
    }
    if (field === '_id') {
      const id = keywordValue(value);
      return id.ok ? new IdsQuery([id.value]) : this.issue(at, id.reason);
    }
    const mapping = this.field(field, join(path, field));
    if (mapping === null) return null;
    const read = this.termValue(mapping, value, at);
    if (read === null) return null;
    if (read.kind === 'none') return new MatchNoDocsQuery(read.reason);
    if (read.kind === 'range') return read.lo === read.hi ? new TermQuery(field, read.lo) : new SortedNumericDocValuesRangeQuery(field, read.lo, read.hi);
    return new TermQuery(field, read.value);
  }

  private terms(body: unknown, path: string): FilterQuery | null {
    const entry = this.singleField(body, path, 'terms', COMMON);
    if (entry === null) return null;
    const [field, raw] = entry;
    const at = join(path, field);
    if (!Array.isArray(raw)) {
      return this.issue(
        at,
        asObject(raw) !== null ? 'terms lookup (values from another document) is not supported: give the values as an array' : `must be an array of values, got ${describe(raw)}`,
      );
    }
    if (field === '_id') {
      const ids = this.idValues(raw, at);
      return ids === null ? null : new IdsQuery(ids);
    }
    const mapping = this.field(field, at);
    if (mapping === null) return null;
    const values: FilterValue[] = [];
    const ranges: FilterQuery[] = [];
    const before = this.total;
    for (let i = 0; i < raw.length; i++) {
      const read = this.termValue(mapping, raw[i], `${at}[${i}]`);
      if (read === null || read.kind === 'none') continue;
      if (read.kind === 'value') values.push(read.value);
      else if (read.lo === read.hi) values.push(read.lo);
      else ranges.push(new SortedNumericDocValuesRangeQuery(field, read.lo, read.hi));
    }
    if (this.total > before) return null;
    if (values.length === 0 && ranges.length === 0) return new MatchNoDocsQuery(raw.length === 0 ? 'no terms supplied for "terms" query' : 'no value of the terms fits the field');
    if (ranges.length === 0) return new TermInSetQuery(field, values);
    // Rounded date math (`now/d`) makes a term a range: the terms are then a disjunction.
    return new BooleanQuery({ should: values.length === 0 ? ranges : [new TermInSetQuery(field, values), ...ranges] });
  }

  /** A term's value by the field's type: a value, a date range (date math rounding), or no match (a fraction on an integer field, as Elasticsearch). */
  private termValue(mapping: FieldMapping, v: unknown, path: string): TermRead | null {
    if (v === null || typeof v === 'object') return this.issue(path, `must be a single value (string, number or boolean), got ${describe(v)}`);
    switch (mapping.type) {
      case 'keyword':
        return this.value(keywordValue(v), path);
      case 'boolean':
        return this.value(booleanValue(v), path);
      case 'date': {
        const lo = dateValue(v, mapping.format, this.nowMs, false);
        if (!lo.ok) return this.issue(path, lo.reason);
        const hi = dateValue(v, mapping.format, this.nowMs, true);
        if (!hi.ok) return this.issue(path, hi.reason);
        return { kind: 'range', lo: lo.value, hi: hi.value };
      }
      case 'double':
      case 'float':
        return this.value(floatingValue(v, mapping.type), path);
      case 'text':
      case 'dense_vector':
        return this.issue(path, `field of type [${mapping.type}] cannot be filtered on`);
      default: {
        const read = integerValue(v, mapping.type);
        if (!read.ok) return this.issue(path, read.reason);
        if (typeof read.value === 'number' && !Number.isInteger(read.value)) return { kind: 'none', reason: `${read.value} has a fraction: no ${mapping.type} equals it` };
        return { kind: 'value', value: read.value };
      }
    }
  }

  private value(read: Read<FilterValue>, path: string): TermRead | null {
    return read.ok ? { kind: 'value', value: read.value } : this.issue(path, read.reason);
  }

  // ------------------------------------------------------------------ range

  private range(body: unknown, path: string): FilterQuery | null {
    const entry = this.singleField(body, path, 'range', []);
    if (entry === null) return null;
    const [field, raw] = entry;
    const at = join(path, field);
    const params = this.params(raw, at, RANGE_KEYS);
    if (params === null) return null;
    const before = this.total;
    let lower: { key: string; value: unknown; inclusive: boolean } | null = null;
    let upper: { key: string; value: unknown; inclusive: boolean } | null = null;
    const includeLower = params.include_lower === undefined ? true : this.booleanParam(params.include_lower, join(at, 'include_lower'));
    const includeUpper = params.include_upper === undefined ? true : this.booleanParam(params.include_upper, join(at, 'include_upper'));
    for (const key of Object.keys(params)) {
      const value = params[key];
      if (value === null) continue; // Elasticsearch: a null bound is open.
      const isLower = key === 'gt' || key === 'gte' || key === 'from';
      const isUpper = key === 'lt' || key === 'lte' || key === 'to';
      if (!isLower && !isUpper) continue;
      const bound = { key, value, inclusive: key === 'gte' || key === 'lte' || (key === 'from' && includeLower !== false) || (key === 'to' && includeUpper !== false) };
      const taken = isLower ? lower : upper;
      if (taken !== null) {
        this.issue(join(at, key), `the ${isLower ? 'lower' : 'upper'} bound is already given by [${taken.key}]: give one of ${isLower ? 'gt, gte' : 'lt, lte'}`);
        continue;
      }
      if (isLower) lower = bound;
      else upper = bound;
    }
    if (params.time_zone !== undefined)
      this.issue(join(at, 'time_zone'), 'is not supported: dates without a zone offset are read as UTC (write the offset in the bound, e.g. 2024-01-01T00:00:00+02:00)');
    if (params.relation !== undefined && !(typeof params.relation === 'string' && params.relation.toLowerCase() === 'intersects')) {
      this.issue(join(at, 'relation'), 'is not supported: only "intersects", the default (range fields are not offered)');
    }
    const mapping = this.field(field, at);
    if (mapping === null || this.total > before) return null;
    let format: DateFormat | null = null;
    if (params.format !== undefined) {
      if (mapping.type !== 'date') return this.issue(join(at, 'format'), `applies to date fields only; [${field}] is of type [${mapping.type}]`);
      if (typeof params.format !== 'string') return this.issue(join(at, 'format'), `must be a string, got ${describe(params.format)}`);
      try {
        format = DateFormat.of(params.format);
      } catch (e) {
        return this.issue(join(at, 'format'), (e as Error).message);
      }
    }
    const lo = lower,
      hi = upper;
    const read = <T>(b: { key: string; value: unknown } | null, reader: (v: unknown) => Read<T>): T | null | undefined => {
      if (b === null) return null;
      const r = reader(b.value);
      if (!r.ok) {
        this.issue(join(at, b.key), r.reason);
        return undefined;
      }
      return r.value;
    };
    switch (mapping.type) {
      case 'keyword': {
        const l = read(lo, keywordValue),
          u = read(hi, keywordValue);
        if (l === undefined || u === undefined) return null;
        return new TermRangeQuery(field, l, u, lo?.inclusive ?? true, hi?.inclusive ?? true);
      }
      case 'boolean': {
        const l = read(lo, booleanValue),
          u = read(hi, booleanValue);
        if (l === undefined || u === undefined) return null;
        return new SortedNumericDocValuesRangeQuery(field, l, u, lo?.inclusive ?? true, hi?.inclusive ?? true);
      }
      case 'date': {
        const fmt = format ?? mapping.format;
        // Elasticsearch rounds `gt` and `lte` up (to the unit's last millisecond), `gte` and `lt` down.
        const l = read(lo, (v) => dateValue(v, fmt, this.nowMs, !(lo?.inclusive ?? true)));
        const u = read(hi, (v) => dateValue(v, fmt, this.nowMs, hi?.inclusive ?? true));
        if (l === undefined || u === undefined) return null;
        return new SortedNumericDocValuesRangeQuery(field, l, u, lo?.inclusive ?? true, hi?.inclusive ?? true);
      }
      case 'double':
      case 'float': {
        const type = mapping.type;
        const l = read(lo, (v) => floatingValue(v, type)),
          u = read(hi, (v) => floatingValue(v, type));
        if (l === undefined || u === undefined) return null;
        return new SortedNumericDocValuesRangeQuery(field, l, u, lo?.inclusive ?? true, hi?.inclusive ?? true);
      }
      case 'text':
      case 'dense_vector':
        return this.issue(at, `field of type [${mapping.type}] cannot be filtered on`);
      default: {
        const type = mapping.type;
        const l = read(lo, (v) => integerValue(v, type)),
          u = read(hi, (v) => integerValue(v, type));
        if (l === undefined || u === undefined) return null;
        return new SortedNumericDocValuesRangeQuery(field, integerBound(l, lo?.inclusive ?? true, 'lower'), integerBound(u, hi?.inclusive ?? true, 'upper'));
      }
    }
  }

  private booleanParam(v: unknown, path: string): boolean | null {
    if (typeof v === 'boolean') return v;
    this.issue(path, `must be a boolean, got ${describe(v)}`);
    return null;
  }

  // ------------------------------------------------------------------ exists, ids

  private exists(body: unknown, path: string): FilterQuery | null {
    const params = this.params(body, path, ['field', ...COMMON]);
    if (params === null) return null;
    if (params.field === undefined) return this.issue(join(path, 'field'), 'is required');
    if (typeof params.field !== 'string') return this.issue(join(path, 'field'), `must be a field name, got ${describe(params.field)}`);
    return this.field(params.field, join(path, 'field')) === null ? null : new FieldExistsQuery(params.field);
  }

  private ids(body: unknown, path: string): FilterQuery | null {
    const params = this.params(body, path, ['values', ...COMMON]);
    if (params === null) return null;
    if (!Array.isArray(params.values))
      return this.issue(join(path, 'values'), params.values === undefined ? 'is required' : `must be an array of ids, got ${describe(params.values)}`);
    const ids = this.idValues(params.values, join(path, 'values'));
    return ids === null ? null : new IdsQuery(ids);
  }

  private idValues(values: readonly unknown[], path: string): string[] | null {
    const before = this.total;
    const ids: string[] = [];
    values.forEach((v, i) => {
      if (typeof v === 'string') ids.push(v);
      else if (typeof v === 'number' && Number.isFinite(v)) ids.push(String(v));
      else this.issue(`${path}[${i}]`, `must be an id (a string), got ${describe(v)}`);
    });
    return this.total > before ? null : ids;
  }

  // ------------------------------------------------------------------ bool

  private bool(body: unknown, path: string): FilterQuery | null {
    const params = this.params(body, path, BOOL_KEYS);
    if (params === null) return null;
    const before = this.total;
    const occurrence = (key: string): FilterQuery[] => {
      const v = params[key];
      if (v === undefined) return [];
      const at = join(path, key);
      if (Array.isArray(v)) return v.map((c, i) => this.clause(c, `${at}[${i}]`)).filter((q): q is FilterQuery => q !== null);
      if (asObject(v) !== null) {
        const q = this.clause(v, at);
        return q === null ? [] : [q];
      }
      this.issue(at, `must be a query object or an array of them, got ${describe(v)}`);
      return [];
    };
    const must = occurrence('must'),
      filter = occurrence('filter'),
      should = occurrence('should'),
      mustNot = occurrence('must_not');
    let minimumShouldMatch = 0;
    const msm = params.minimum_should_match;
    if (msm !== undefined && msm !== null) {
      const at = join(path, 'minimum_should_match');
      if (typeof msm !== 'number' && typeof msm !== 'string') this.issue(at, `must be an integer or a percentage like "75%", got ${describe(msm)}`);
      else {
        try {
          minimumShouldMatch = calculateMinShouldMatch(should.length, msm);
        } catch (e) {
          this.issue(at, (e as Error).message);
        }
      }
    }
    let adjustPureNegative = true;
    if (params.adjust_pure_negative !== undefined) adjustPureNegative = this.booleanParam(params.adjust_pure_negative, join(path, 'adjust_pure_negative')) ?? true;
    if (this.total > before) return null;
    return new BooleanQuery({ must, filter, should, mustNot, minimumShouldMatch, adjustPureNegative });
  }

  // ------------------------------------------------------------------ shared

  /** A field filters can read: mapped, with doc values, not text. */
  private field(name: string, path: string): FieldMapping | null {
    const mapping = this.lookup(name);
    if (mapping === undefined) return this.issue(path, `no field [${name}] in the index mapping`);
    if (mapping.type === 'text') {
      return this.issue(
        path,
        `field [${name}] is a text field: prescore offers no full-text search and keeps text in _source only; filter on a keyword field (such as a [${name}.keyword] sub-field, when the mapping has one)`,
      );
    }
    if (mapping.type === 'dense_vector') return this.issue(path, `field [${name}] is the dense_vector field: it cannot be filtered on`);
    if (!mapping.docValues) return this.issue(path, `field [${name}] has no doc values (doc_values: false): it cannot be filtered on`);
    return mapping;
  }

  /** An object of parameters among `allowed` (unknown ones are issues; boost and _name checked). */
  private params(body: unknown, path: string, allowed: readonly string[]): Record<string, unknown> | null {
    const obj = asObject(body);
    if (obj === null) return this.issue(path, `must be an object, got ${describe(body)}`);
    const before = this.total;
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.issue(join(path, key), `unknown field (supported: ${allowed.join(', ')})`);
    }
    if (obj.boost !== undefined && allowed.includes('boost') && typeof obj.boost !== 'number') this.issue(join(path, 'boost'), `must be a number, got ${describe(obj.boost)}`);
    if (obj._name !== undefined && allowed.includes('_name') && typeof obj._name !== 'string') this.issue(join(path, '_name'), `must be a string, got ${describe(obj._name)}`);
    return this.total > before ? null : obj;
  }

  /** `{"<field>": <value>}` with exactly one field besides `extra` parameters (term, terms, range). */
  private singleField(body: unknown, path: string, type: string, extra: readonly string[]): [string, unknown] | null {
    const obj = asObject(body);
    if (obj === null) return this.issue(path, `must be an object like {"<field>": ...}, got ${describe(body)}`);
    const fields = Object.keys(obj).filter((k) => !extra.includes(k));
    if (fields.length === 0) return this.issue(path, 'names no field');
    if (fields.length > 1) return this.issue(join(path, fields[1]), `[${type}] query doesn't support multiple fields, found [${fields[0]}] and [${fields[1]}]`);
    if (this.params(Object.fromEntries(extra.filter((k) => k in obj).map((k) => [k, obj[k]])), path, extra) === null) return null;
    return [fields[0], obj[fields[0]]];
  }
}

/**
 * An integer field's bound made inclusive as Elasticsearch does: a fraction rounds inward
 * (`gt: 1.5` and `gte: 1.5` are both `>= 2`), an exclusive integer moves by one.
 */
function integerBound(v: NumericValue | null, inclusive: boolean, side: 'lower' | 'upper'): NumericValue | null {
  if (v === null) return null;
  let b: bigint;
  if (typeof v === 'number' && !Number.isInteger(v)) b = BigInt(side === 'lower' ? Math.ceil(v) : Math.floor(v));
  else b = BigInt(v) + (inclusive ? 0n : side === 'lower' ? 1n : -1n);
  return b >= -(2n ** 53n) && b <= 2n ** 53n ? Number(b) : b;
}

function asObject(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function join(base: string, key: string): string {
  return base === '' ? key : `${base}.${key}`;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'an object';
  return show(v);
}
