/**
 * The parts of a search body that say which documents and what of them: the filter of a kNN
 * search in each request shape clients send, and what each hit carries.
 *
 * kNN shapes (all give one vector, a k, optional num_candidates and a pre-filter):
 * - Elasticsearch's top-level `knn` section, with `knn.filter` (one clause or a list);
 * - Elasticsearch 8.12+'s `knn` query: `{"query": {"knn": {"field", "query_vector", "k", "num_candidates", "filter"}}}`;
 * - OpenSearch's `knn` query: `{"query": {"knn": {"<field>": {"vector", "k", "filter"}}}}`;
 * - either `knn` query as a `bool` clause (`must` or `should`, alone), whose `filter` and
 *   `must_not` clauses (and other `must` clauses) become its pre-filter, as Elasticsearch applies
 *   them.
 * A `query` without a kNN clause is a filter: its matching docs are the hits (score 1, doc order).
 *
 * What hits carry: `_source` (true / false / patterns / `{includes, excludes, exclude_vectors}`),
 * `fields` and `docvalue_fields` (strings or `{field, format}`), as Elasticsearch reads them.
 */
import type { FilterQuery } from '../../../query/filter/index.js';
import { BooleanQuery, calculateMinShouldMatch } from '../../../query/filter/index.js';
import type { DocvalueField, SourceOption } from '../../api/types.js';
import type { ValidationIssue } from '../errors.js';
import { parseFilterClause, parseKnnFilter, type FieldLookup } from './FilterDsl.js';
import { MAX_RECALL_TARGET, MIN_RECALL_TARGET } from '../../../segments/index/RecallCalibration.js';

/** A kNN clause as a query gives it (its vector still unparsed: the caller's schema reads it). */
export interface KnnClause {
  readonly path: string;
  readonly field: string;
  /** The vector's JSON value (array or base64 string) and where it is. */
  readonly vector: unknown;
  readonly vectorPath: string;
  readonly k: number | undefined;
  readonly numCandidates: number | undefined;
  readonly oversample: number | undefined;
  /** prescore's extension: the recall@10 to reach (the index's calibration picks the setting). */
  readonly recallTarget: number | undefined;
  readonly filter: FilterQuery | null;
}

/** What a `query` asks: a kNN clause with its pre-filter, or a plain filter. */
export type QueryPlan = { readonly kind: 'knn'; readonly knn: KnnClause } | { readonly kind: 'filter'; readonly filter: FilterQuery };

export interface BodyContext {
  readonly field: FieldLookup;
  /** The index's vector field. */
  readonly vectorField: string;
  readonly nowMs?: number;
}

const ES_KNN_KEYS = ['field', 'query_vector', 'k', 'num_candidates', 'filter', 'rescore_vector', 'recall_target', 'similarity', 'boost', '_name'];
const OS_KNN_KEYS = ['vector', 'k', 'filter', 'method_parameters', 'rescore', 'boost', '_name'];

/** Reads `query`; issues name their paths. Null when it has errors (in `issues`). */
export function parseQuery(json: unknown, ctx: BodyContext, issues: ValidationIssue[], path = 'query'): QueryPlan | null {
  const obj = record(json);
  if (!obj || Object.keys(obj).length !== 1) {
    issues.push({ path, reason: 'must be an object with one query type, e.g. {"knn": {...}} or {"bool": {...}}' });
    return null;
  }
  const [type, body] = Object.entries(obj)[0]!;
  if (type === 'knn') {
    const knn = knnQuery(body, ctx, issues, `${path}.knn`);
    return knn ? { kind: 'knn', knn } : null;
  }
  if (type === 'bool') {
    const b = record(body);
    const knns = b ? [...clauses(b.must, `${path}.bool.must`), ...clauses(b.should, `${path}.bool.should`)].filter(([, c]) => record(c)?.knn !== undefined) : [];
    if (knns.length === 0) return filterOnly(json, ctx, issues, path);
    if (knns.length > 1) {
      issues.push({ path: knns[1]![2], reason: 'one kNN clause per search is supported' });
      return null;
    }
    const [, clause, at] = knns[0]!;
    const inShould = at.startsWith(`${path}.bool.should`);
    if (inShould && clauses(b!.should, '').length > 1) {
      issues.push({ path: at, reason: 'a kNN clause in bool.should must be the only should clause (scores are not combined)' });
      return null;
    }
    for (const key of Object.keys(b!))
      if (!['must', 'should', 'filter', 'must_not', 'minimum_should_match', 'boost', '_name'].includes(key))
        issues.push({ path: `${path}.bool.${key}`, reason: 'unknown field (supported: must, should, filter, must_not, minimum_should_match)' });
    const knn = knnQuery(record(clause)!.knn, ctx, issues, `${at}.knn`);
    // The rest of the bool is the kNN's pre-filter: filter and the other must clauses required,
    // must_not excluded, should (beside a knn in must) as Elasticsearch's bool takes it.
    const each = (json: unknown, base: string) =>
      clauses(json, base)
        .filter(([, c]) => c !== clause)
        .map(([, c, p]) => filterClause(c, ctx, issues, p));
    const filter = [...each(b!.filter, `${path}.bool.filter`), ...each(b!.must, `${path}.bool.must`)];
    const mustNot = each(b!.must_not, `${path}.bool.must_not`);
    const should = inShould ? [] : each(b!.should, `${path}.bool.should`);
    let msm: number | undefined;
    if (!inShould && b!.minimum_should_match !== undefined) {
      const m = calculateMinShouldMatch(should.length, b!.minimum_should_match as string | number);
      if (typeof b!.minimum_should_match !== 'number' && typeof b!.minimum_should_match !== 'string')
        issues.push({ path: `${path}.bool.minimum_should_match`, reason: 'must be an integer or a percentage' });
      else msm = m;
    }
    if (!knn || [...filter, ...mustNot, ...should].some((q) => q === null)) return null;
    if (filter.length + mustNot.length + should.length === 0) return { kind: 'knn', knn };
    const pre = new BooleanQuery({
      filter: [...(knn.filter ? [knn.filter] : []), ...(filter as FilterQuery[])],
      mustNot: mustNot as FilterQuery[],
      should: should as FilterQuery[],
      ...(msm === undefined ? {} : { minimumShouldMatch: msm }),
    });
    return { kind: 'knn', knn: { ...knn, filter: pre } };
  }
  return filterOnly(json, ctx, issues, path);
}

/** The top-level `knn` section's filter (`knn.filter`). */
export function parseKnnSectionFilter(json: unknown, ctx: BodyContext, issues: ValidationIssue[], path = 'knn.filter'): FilterQuery | null {
  const r = parseKnnFilter(json, ctx, path);
  if (r.ok) return r.value;
  issues.push(...((r.error.details.issues as ValidationIssue[]) ?? [{ path, reason: r.error.reason }]));
  return null;
}

function filterOnly(json: unknown, ctx: BodyContext, issues: ValidationIssue[], path: string): QueryPlan | null {
  const f = filterClause(json, ctx, issues, path);
  return f === null ? null : { kind: 'filter', filter: f };
}

function filterClause(json: unknown, ctx: BodyContext, issues: ValidationIssue[], path: string): FilterQuery | null {
  const r = parseFilterClause(json, ctx, path);
  if (r.ok) return r.value;
  issues.push(...((r.error.details.issues as ValidationIssue[]) ?? [{ path, reason: r.error.reason }]));
  return null;
}

/** A `knn` query, in Elasticsearch's or OpenSearch's shape. */
function knnQuery(json: unknown, ctx: BodyContext, issues: ValidationIssue[], path: string): KnnClause | null {
  const obj = record(json);
  if (!obj) {
    issues.push({ path, reason: 'must be an object' });
    return null;
  }
  const keys = Object.keys(obj);
  const openSearch = keys.length === 1 && !ES_KNN_KEYS.includes(keys[0]!) && record(obj[keys[0]!]) !== undefined;
  if (openSearch) {
    const field = keys[0]!;
    const at = `${path}.${field}`;
    const body = record(obj[field])!;
    for (const k of Object.keys(body)) if (!OS_KNN_KEYS.includes(k)) issues.push({ path: `${at}.${k}`, reason: `unknown field (supported: ${OS_KNN_KEYS.join(', ')})` });
    if (body.method_parameters !== undefined && record(body.method_parameters) === undefined) issues.push({ path: `${at}.method_parameters`, reason: 'must be an object' });
    checkField(field, ctx, issues, at);
    const k = intParam(body.k, `${at}.k`, issues, true);
    const ef = record(body.method_parameters)?.ef_search;
    return clauseOf(
      {
        path: at,
        field,
        vector: body.vector,
        vectorPath: `${at}.vector`,
        k,
        numCandidates: ef === undefined ? undefined : intParam(ef, `${at}.method_parameters.ef_search`, issues, false),
        oversample: osOversample(body.rescore, `${at}.rescore`, issues),
        recallTarget: undefined,
      },
      body.filter,
      ctx,
      issues,
      `${at}.filter`,
    );
  }
  for (const k of keys) if (!ES_KNN_KEYS.includes(k)) issues.push({ path: `${path}.${k}`, reason: `unknown field (supported: ${ES_KNN_KEYS.join(', ')})` });
  if (typeof obj.field !== 'string') issues.push({ path: `${path}.field`, reason: obj.field === undefined ? 'is required' : 'must be a string naming the vector field' });
  else checkField(obj.field, ctx, issues, `${path}.field`);
  if (obj.similarity !== undefined)
    issues.push({ path: `${path}.similarity`, reason: 'is not supported (a minimum similarity would return fewer than k hits); filter on fields instead' });
  const rescore = record(obj.rescore_vector);
  if (obj.rescore_vector !== undefined && (!rescore || typeof rescore.oversample !== 'number' || Object.keys(rescore).some((k) => k !== 'oversample'))) {
    issues.push({ path: `${path}.rescore_vector`, reason: 'must be an object like {"oversample": 3}' });
  }
  return clauseOf(
    {
      path,
      field: typeof obj.field === 'string' ? obj.field : ctx.vectorField,
      vector: obj.query_vector,
      vectorPath: `${path}.query_vector`,
      k: intParam(obj.k, `${path}.k`, issues, false),
      numCandidates: intParam(obj.num_candidates, `${path}.num_candidates`, issues, false),
      oversample: typeof rescore?.oversample === 'number' ? rescore.oversample : undefined,
      recallTarget: recallTargetParam(obj.recall_target, `${path}.recall_target`, issues),
    },
    obj.filter,
    ctx,
    issues,
    `${path}.filter`,
  );
}

function clauseOf(base: Omit<KnnClause, 'filter'>, filterJson: unknown, ctx: BodyContext, issues: ValidationIssue[], filterPath: string): KnnClause | null {
  if (base.vector === undefined) issues.push({ path: base.vectorPath, reason: 'is required' });
  const before = issues.length;
  const filter = filterJson === undefined ? null : parseKnnSectionFilter(filterJson, ctx, issues, filterPath);
  return issues.length > before || base.vector === undefined ? null : { ...base, filter };
}

/** A knn clause's `recall_target`: a recall@10 in [MIN_RECALL_TARGET, MAX_RECALL_TARGET]. */
function recallTargetParam(json: unknown, path: string, issues: ValidationIssue[]): number | undefined {
  if (json === undefined) return undefined;
  if (typeof json === 'number' && json >= MIN_RECALL_TARGET && json <= MAX_RECALL_TARGET) return json;
  issues.push({ path, reason: `must be a number between ${MIN_RECALL_TARGET} and ${MAX_RECALL_TARGET}, got ${JSON.stringify(json)}` });
  return undefined;
}

/** OpenSearch's `rescore: {oversample_factor}` (or `true`). */
function osOversample(json: unknown, path: string, issues: ValidationIssue[]): number | undefined {
  if (json === undefined || json === false) return undefined;
  if (json === true) return undefined;
  const r = record(json);
  if (!r || typeof r.oversample_factor !== 'number') {
    issues.push({ path, reason: 'must be true, false or {"oversample_factor": n}' });
    return undefined;
  }
  return r.oversample_factor;
}

function checkField(field: string, ctx: BodyContext, issues: ValidationIssue[], path: string): void {
  if (field !== ctx.vectorField) issues.push({ path, reason: `field [${field}] is not a vector field of this index (it serves [${ctx.vectorField}])` });
}

function intParam(v: unknown, path: string, issues: ValidationIssue[], required: boolean): number | undefined {
  if (v === undefined) {
    if (required) issues.push({ path, reason: 'is required' });
    return undefined;
  }
  if (!Number.isInteger(v) || (v as number) < 1) {
    issues.push({ path, reason: `must be a positive integer, got ${JSON.stringify(v)}` });
    return undefined;
  }
  return v as number;
}

/** `[index, clause, path]` of a clause or list of clauses. */
function clauses(json: unknown, path: string): [number, unknown, string][] {
  if (json === undefined) return [];
  return Array.isArray(json) ? json.map((c, i) => [i, c, `${path}[${i}]`]) : [[0, json, path]];
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * `_source` as Elasticsearch takes it: a boolean, a pattern, a list of patterns, or
 * `{includes | include, excludes | exclude, exclude_vectors}`.
 */
export function parseSourceOption(json: unknown, issues: ValidationIssue[], path = '_source'): SourceOption | undefined {
  if (json === undefined) return undefined;
  if (typeof json === 'boolean') return json;
  if (typeof json === 'string') return [json];
  if (Array.isArray(json)) {
    if (json.every((p) => typeof p === 'string')) return json as string[];
    issues.push({ path, reason: 'must be a boolean, a field pattern, a list of patterns or {includes, excludes, exclude_vectors}' });
    return undefined;
  }
  const obj = record(json);
  if (!obj) {
    issues.push({ path, reason: 'must be a boolean, a field pattern, a list of patterns or {includes, excludes, exclude_vectors}' });
    return undefined;
  }
  const patterns = (key: string): string[] | undefined => {
    const v = obj[key];
    if (v === undefined) return undefined;
    if (typeof v === 'string') return [v];
    if (Array.isArray(v) && v.every((p) => typeof p === 'string')) return v as string[];
    issues.push({ path: `${path}.${key}`, reason: 'must be a field pattern or a list of patterns' });
    return undefined;
  };
  for (const k of Object.keys(obj))
    if (!['includes', 'include', 'excludes', 'exclude', 'exclude_vectors'].includes(k))
      issues.push({ path: `${path}.${k}`, reason: 'unknown field (supported: includes, excludes, exclude_vectors)' });
  if (obj.exclude_vectors !== undefined && typeof obj.exclude_vectors !== 'boolean') issues.push({ path: `${path}.exclude_vectors`, reason: 'must be a boolean' });
  return {
    includes: patterns('includes') ?? patterns('include') ?? [],
    excludes: patterns('excludes') ?? patterns('exclude') ?? [],
    ...(typeof obj.exclude_vectors === 'boolean' ? { excludeVectors: obj.exclude_vectors } : {}),
  };
}

/** `fields` / `docvalue_fields`: strings or `{field, format}` objects. */
export function parseFieldList(json: unknown, issues: ValidationIssue[], path: string): DocvalueField[] | undefined {
  if (json === undefined) return undefined;
  if (!Array.isArray(json)) {
    issues.push({ path, reason: 'must be a list of field patterns or {"field": ..., "format": ...} objects' });
    return undefined;
  }
  const out: DocvalueField[] = [];
  json.forEach((f, i) => {
    if (typeof f === 'string') out.push({ field: f });
    else if (record(f) && typeof record(f)!.field === 'string' && (record(f)!.format === undefined || typeof record(f)!.format === 'string')) {
      out.push({ field: record(f)!.field as string, ...(record(f)!.format === undefined ? {} : { format: record(f)!.format as string }) });
    } else issues.push({ path: `${path}[${i}]`, reason: 'must be a field pattern or {"field": ..., "format": ...}' });
  });
  return out;
}
