/**
 * Request schemas (zod) for the native and the Elasticsearch-compatible search bodies, and the
 * translation of zod issues into field-path errors (`knn.query_vector[3]: must be a finite
 * number, got "x"`). Unknown fields are rejected, naming them, as Elasticsearch does.
 */
import { z } from 'zod';
import { MAX_K, MAX_NUM_CANDIDATES, MAX_OVERSAMPLE, MAX_RESCORE_CANDIDATES, MIN_OVERSAMPLE, READ_PATHS, type ReadPath } from '../api/types.js';
import { MAX_RECALL_TARGET, MIN_RECALL_TARGET } from '../../segments/index/RecallCalibration.js';
import { MAX_REPORTED_ISSUES, validationError, type HttpError, type Result, type ValidationIssue } from './errors.js';
import type { FilterQuery } from '../../query/filter/index.js';
import type { DocvalueField, SourceOption } from '../api/types.js';
import type { FieldLookup } from './dsl/FilterDsl.js';
import { parseFieldList, parseKnnSectionFilter, parseQuery, parseSourceOption, type BodyContext } from './dsl/SearchBody.js';

/** Largest finite float32; a JSON number beyond it would silently become Infinity in the engine. */
export const FLOAT32_MAX = 3.4028234663852886e38;
export { MAX_REPORTED_ISSUES, type Result } from './errors.js';

/** A validated search, in engine terms. */
export interface SearchRequest {
  readonly vector: Float32Array;
  readonly k: number;
  readonly numCandidates: number | undefined;
  readonly oversample: number | undefined;
  /** The recall@10 to reach (the index's calibration picks oversample and num_candidates). */
  readonly recallTarget: number | undefined;
  readonly readPath: ReadPath | undefined;
  readonly timeoutMs: number | undefined;
  /** Return a per-phase profile in `stats.profile` (Elasticsearch's `profile: true`); implies `stats`. */
  readonly profile: boolean;
  /** Return the search's `stats` (and `queue_ms`) with its hits (native route only; off by default, as Elasticsearch's `profile`). */
  readonly stats: boolean;
  /** Pre-filter (Elasticsearch's `knn.filter`), or null. */
  readonly filter: FilterQuery | null;
  /** What each hit carries besides id and score. */
  readonly fetch: HitContents;
}

/** `_source`, `fields` and `docvalue_fields` of a request. */
export interface HitContents {
  readonly source: SourceOption | undefined;
  readonly fields: readonly string[] | undefined;
  readonly docvalueFields: readonly DocvalueField[] | undefined;
}

/** An Elasticsearch search: a kNN search (top-level `knn` or a `knn` query), or a `query` that only filters. */
export type EsSearchRequest =
  | (SearchRequest & { readonly kind: 'knn'; readonly size: number; readonly from: number })
  | {
      readonly kind: 'filter';
      readonly filter: FilterQuery;
      readonly size: number;
      readonly from: number;
      readonly fetch: HitContents;
      readonly timeoutMs: number | undefined;
      readonly profile: boolean;
    };

export interface IndexShape {
  readonly dims: number;
  /** The vector field's name (the ES route's `knn.field` must equal it). */
  readonly field: string;
  /** Cosine cannot score a zero vector (ES rejects it too). */
  readonly rejectZeroVector: boolean;
  /** The index's fields by dotted path (its mapping), for filters; absent: the index has no mapping (no filter can be read). */
  readonly fields?: FieldLookup;
}

export interface Limits {
  readonly maxTimeoutMs: number;
}

const intIn = (min: number, max: number) => {
  const error = `must be an integer in [${min}, ${max}]`;
  return z.int({ error }).min(min, { error }).max(max, { error });
};

const numberIn = (min: number, max: number) => {
  const error = `must be a number in [${min}, ${max}]`;
  return z.number({ error }).min(min, { error }).max(max, { error });
};

const profileSchema = z.boolean({ error: 'must be a boolean' });
const statsSchema = z.boolean({ error: 'must be a boolean' });

const readPathSchema = z.enum(READ_PATHS, { error: `must be one of ${READ_PATHS.map((p) => `"${p}"`).join(', ')}` });

/**
 * Byte order of a vector given as a base64 string: the native API takes little-endian float32
 * (the bytes of a Float32Array on every common CPU, and of `.vec` files); the Elasticsearch route
 * takes big-endian, as Elasticsearch's `dense_vector` reads base64 vectors (and its clients write them).
 */
export type VectorByteOrder = 'little-endian' | 'big-endian';

/**
 * The query vector: an array of exactly `dims` finite float32-representable numbers, converted
 * to a Float32Array in the same pass; a Float32Array already parsed from the body's text
 * (vectorJson.ts: its numbers were checked there); or a base64 string of `dims` float32 values in
 * `order`. Hand-written rather than `z.array(z.number())` so a bad 10k-dim vector costs one loop
 * and a bounded number of issues.
 */
function vectorSchema(shape: IndexShape, order: VectorByteOrder) {
  // What the OpenAPI document shows for this field (the transform itself has no JSON Schema).
  const described = {
    description: `The query vector: ${shape.dims} finite float32 numbers, or a base64 string of their ${order} float32 bytes.`,
    oneOf: [
      { type: 'array', items: { type: 'number' }, minItems: shape.dims, maxItems: shape.dims },
      { type: 'string', contentEncoding: 'base64', description: `${shape.dims * 4} bytes: ${shape.dims} ${order} float32 values` },
    ],
  };
  return z
    .unknown()
    .meta(described)
    .transform((value, ctx) => {
      if (typeof value === 'string') return base64Vector(value, shape, order, ctx);
      if (value instanceof Float32Array) {
        if (value.length !== shape.dims) {
          ctx.addIssue({ code: 'custom', message: `must have ${shape.dims} elements (the index's dims), got ${value.length}` });
          return z.NEVER;
        }
        return rejectZero(value, shape, ctx);
      }
      if (!Array.isArray(value)) {
        ctx.addIssue({
          code: 'custom',
          message:
            value === undefined ? 'is required' : `must be an array of ${shape.dims} numbers or a base64 string of ${shape.dims} ${order} float32 values, got ${typeName(value)}`,
        });
        return z.NEVER;
      }
      let bad = 0;
      if (value.length !== shape.dims) {
        ctx.addIssue({ code: 'custom', message: `must have ${shape.dims} elements (the index's dims), got ${value.length}` });
        bad++;
      }
      const out = new Float32Array(value.length);
      for (let i = 0; i < value.length; i++) {
        const x: unknown = value[i];
        let problem: string | undefined;
        if (typeof x !== 'number') problem = `must be a finite number, got ${typeName(x)}`;
        else if (!Number.isFinite(x)) problem = 'must be a finite number (the JSON value overflows a double)';
        else if (Math.abs(x) > FLOAT32_MAX) problem = `must be within float32 range (|x| <= ${FLOAT32_MAX}), got ${x}`;
        if (problem !== undefined) {
          if (bad++ < MAX_REPORTED_ISSUES) ctx.addIssue({ code: 'custom', message: problem, path: [i] });
          continue;
        }
        out[i] = x as number;
      }
      if (bad > MAX_REPORTED_ISSUES) {
        ctx.addIssue({ code: 'custom', message: `has ${bad} invalid elements in total (first ${MAX_REPORTED_ISSUES} listed)` });
      }
      return bad === 0 ? rejectZero(out, shape, ctx) : z.NEVER;
    });
}

function rejectZero(vector: Float32Array, shape: IndexShape, ctx: z.RefinementCtx): Float32Array {
  if (shape.rejectZeroVector && vector.every((x) => x === 0)) {
    ctx.addIssue({ code: 'custom', message: 'must not be the zero vector (cosine similarity is undefined for it)' });
    return z.NEVER;
  }
  return vector;
}

/** A base64 string of `dims` float32 values in `order` (standard alphabet, padded), as a Float32Array. */
function base64Vector(text: string, shape: IndexShape, order: VectorByteOrder, ctx: z.RefinementCtx): Float32Array {
  const bytes = shape.dims * 4;
  // Node's decoder skips what is not base64; encoding back tells a string that is exactly base64
  // (standard alphabet, padded) from one that is not, in a few microseconds for 4 KB (a regex: 16).
  const decoded = Buffer.from(text, 'base64');
  if (decoded.toString('base64') !== text) {
    ctx.addIssue({
      code: 'custom',
      message: `must be an array of ${shape.dims} numbers or a base64 string (standard alphabet, padded) of ${bytes} bytes; this string is not base64`,
    });
    return z.NEVER;
  }
  if (decoded.byteLength !== bytes) {
    ctx.addIssue({ code: 'custom', message: `must hold ${shape.dims} float32 values (${bytes} bytes, ${order}); the base64 string holds ${decoded.byteLength} bytes` });
    return z.NEVER;
  }
  const view = new DataView(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  const out = new Float32Array(shape.dims);
  let bad = 0;
  for (let i = 0; i < shape.dims; i++) {
    const x = view.getFloat32(4 * i, order === 'little-endian');
    if (!Number.isFinite(x)) {
      if (bad++ < MAX_REPORTED_ISSUES) ctx.addIssue({ code: 'custom', message: `must be a finite float32, got ${x} (check the byte order: ${order})`, path: [i] });
      continue;
    }
    out[i] = x;
  }
  if (bad > MAX_REPORTED_ISSUES) ctx.addIssue({ code: 'custom', message: `has ${bad} invalid elements in total (first ${MAX_REPORTED_ISSUES} listed)` });
  return bad === 0 ? rejectZero(out, shape, ctx) : z.NEVER;
}

export function nativeSchema(shape: IndexShape, limits: Limits) {
  return z.strictObject({
    vector: vectorSchema(shape, 'little-endian'),
    k: intIn(1, MAX_K).meta({ description: 'Hits to return.' }),
    num_candidates: intIn(1, MAX_NUM_CANDIDATES).meta({ description: "The first phase's HNSW beam per segment, at least k (default max(200, 4 x k x oversample))." }).optional(),
    oversample: numberIn(MIN_OVERSAMPLE, MAX_OVERSAMPLE)
      .meta({ description: `k x oversample first-phase candidates are rescored from fp32 (default 5; k x oversample at most ${MAX_RESCORE_CANDIDATES}).` })
      .optional(),
    recall_target: recallTargetSchema().optional(),
    read_path: readPathSchema.meta({ description: "How the fp32 vectors are read (default: the server's --read-path)." }).optional(),
    timeout_ms: intIn(1, limits.maxTimeoutMs).meta({ description: "The search's deadline, queueing included; 504 beyond (default: the server's --timeout-ms)." }).optional(),
    stats: statsSchema.meta({ description: "Return the search's `stats` and `queue_ms` with its hits (default false)." }).optional(),
    profile: profileSchema.meta({ description: 'Return where the time went in `stats.profile` (implies stats; default false).' }).optional(),
    filter: filterSchema().optional(),
    _source: sourceSchema().optional(),
    fields: fieldListSchema('Mapped fields (patterns) whose values each hit carries in `fields`, read from its source.').optional(),
    docvalue_fields: fieldListSchema('Fields whose doc values each hit carries in `fields` (dates take a `format`).').optional(),
  });
}

/** A recall@10 to reach, instead of oversample and num_candidates. */
function recallTargetSchema() {
  return numberIn(MIN_RECALL_TARGET, MAX_RECALL_TARGET).meta({
    description:
      "The recall@10 to reach: the index's calibration (`GET /v1/indexes`) picks the cheapest oversample and num_candidates measured to reach it; not with those. A target no measured setting reaches is a 400.",
    examples: [0.95],
  });
}

/** A pre-filter in Elasticsearch's Query DSL (read by FilterDsl after the schema). */
function filterSchema() {
  return z.unknown().meta({
    description:
      'Pre-filter: Elasticsearch Query DSL (term, terms, range, exists, ids, bool, match_all, match_none), one clause or a list that must all match. Only docs it accepts are returned, min(k, accepted) of them.',
    anyOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }],
    examples: [{ term: { category: 'shoes' } }],
  });
}

function sourceSchema() {
  return z.unknown().meta({
    description:
      'The document source on each hit: true, false, a field pattern, a list of patterns, or {includes, excludes, exclude_vectors} (`*` wildcards; exclude_vectors default true).',
    anyOf: [{ type: 'boolean' }, { type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'object' }],
  });
}

function fieldListSchema(description: string) {
  return z
    .unknown()
    .meta({ description, type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { field: { type: 'string' }, format: { type: 'string' } } }] } });
}

/** ES time value (`"500ms"`, `"2s"`, `"1m"`) in milliseconds. */
function esTimeValue(limits: Limits) {
  const units: Record<string, number> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1000, m: 60_000 };
  const described = {
    type: 'string',
    pattern: '^\\d+(nanos|micros|ms|s|m)$',
    description: `Elasticsearch's time value, between 1ms and ${limits.maxTimeoutMs}ms`,
    examples: ['500ms'],
  };
  return z
    .unknown()
    .meta(described)
    .transform((value, ctx) => {
      const m = typeof value === 'string' ? /^(\d+)(nanos|micros|ms|s|m)$/.exec(value.trim()) : null;
      const ms = m ? Math.ceil(Number(m[1]) * units[m[2]!]!) : NaN;
      if (!(ms >= 1 && ms <= limits.maxTimeoutMs)) {
        ctx.addIssue({ code: 'custom', message: `must be a time value like "500ms" or "2s", between 1ms and ${limits.maxTimeoutMs}ms` });
        return z.NEVER;
      }
      return ms;
    });
}

export function esSchema(shape: IndexShape, limits: Limits) {
  return z.strictObject({
    knn: z
      .strictObject(
        {
          field: z.string({ error: 'must be a string naming the vector field' }).meta({ description: `The vector field (this index serves \`${shape.field}\`).` }),
          query_vector: vectorSchema(shape, 'big-endian'),
          k: intIn(1, MAX_K).meta({ description: 'Nearest neighbours to find (default: size).' }).optional(),
          num_candidates: intIn(1, MAX_NUM_CANDIDATES).meta({ description: "The HNSW beam per segment, at least k (default Elasticsearch's min(1.5 x k, 10000))." }).optional(),
          rescore_vector: z
            .strictObject(
              { oversample: numberIn(MIN_OVERSAMPLE, MAX_OVERSAMPLE).meta({ description: 'k x oversample candidates are rescored from fp32 (default 5).' }) },
              { error: 'must be an object like {"oversample": 3}' },
            )
            .optional(),
          recall_target: recallTargetSchema().optional(),
          filter: filterSchema().optional(),
          boost: z.number({ error: 'must be a number' }).optional(),
        },
        { error: 'must be an object (one knn search; arrays of knn are not supported)' },
      )
      .optional(),
    query: z
      .unknown()
      .meta({
        description:
          'A `knn` query (Elasticsearch 8.12+: {"knn": {"field", "query_vector", "k", "num_candidates", "filter"}}; OpenSearch: {"knn": {"<field>": {"vector", "k", "filter"}}}), such a query as the kNN clause of a `bool` whose other clauses pre-filter it, or a filter alone (its docs are the hits).',
        type: 'object',
      })
      .optional(),
    size: intIn(0, MAX_K).meta({ description: 'Hits to return (default 10).' }).optional(),
    from: intIn(0, MAX_K).meta({ description: 'Hits to skip (default 0); from + size at most k.' }).optional(),
    _source: sourceSchema().optional(),
    fields: fieldListSchema('Mapped fields (patterns) whose values each hit carries in `fields`, read from its source.').optional(),
    docvalue_fields: fieldListSchema('Fields whose doc values each hit carries in `fields` (dates take a `format`).').optional(),
    track_total_hits: z
      .union([z.boolean(), z.int()], { error: 'must be a boolean or an integer' })
      .meta({ description: 'Accepted for compatibility: total hits are always exact.' })
      .optional(),
    timeout: esTimeValue(limits).optional(),
    profile: profileSchema.meta({ description: 'Return where the time went in `profile` (default false).' }).optional(),
  });
}

/** Validates search bodies against one index's shape; schemas are built once. */
export class SearchValidator {
  private readonly native: ReturnType<typeof nativeSchema>;
  private readonly es: ReturnType<typeof esSchema>;

  constructor(
    readonly shape: IndexShape,
    readonly limits: Limits,
  ) {
    this.native = nativeSchema(shape, limits);
    this.es = esSchema(shape, limits);
  }

  nativeSearch(body: unknown): Result<SearchRequest> {
    return parseNativeSearch(this.native, this.shape, body);
  }

  esSearch(body: unknown): Result<EsSearchRequest> {
    return parseEsSearch(this.es, this.shape, body);
  }
}

function parseNativeSearch(schema: ReturnType<typeof nativeSchema>, shape: IndexShape, body: unknown): Result<SearchRequest> {
  const parsed = schema.safeParse(body);
  const issues = parsed.success ? [] : zodIssues(parsed.error.issues, body, NATIVE_FIELDS);
  const obj = asRecord(body);
  let filter: FilterQuery | null = null;
  let fetch: HitContents = NO_CONTENTS;
  if (obj) {
    checkCandidates(obj.k, obj.num_candidates, 'num_candidates', issues);
    checkRescoreWindow(obj.k, obj.oversample, 'oversample', issues);
    checkRecallTarget(obj.recall_target, { num_candidates: obj.num_candidates, oversample: obj.oversample }, 'recall_target', issues);
    if (obj.filter !== undefined) filter = readFilter(obj.filter, shape, issues, 'filter');
    fetch = hitContents(obj, issues);
  }
  if (!parsed.success || issues.length > 0) return { ok: false, error: toError(issues) };
  const b = parsed.data;
  return {
    ok: true,
    value: {
      vector: b.vector,
      k: b.k,
      numCandidates: b.num_candidates,
      oversample: b.oversample,
      recallTarget: b.recall_target,
      readPath: b.read_path,
      timeoutMs: b.timeout_ms,
      profile: b.profile === true,
      stats: b.stats === true || b.profile === true,
      filter,
      fetch,
    },
  };
}

const NO_CONTENTS: HitContents = { source: undefined, fields: undefined, docvalueFields: undefined };

/** `_source`, `fields` and `docvalue_fields` of a body (their issues named by path). */
function hitContents(obj: Record<string, unknown>, issues: ValidationIssue[]): HitContents {
  const fields = parseFieldList(obj.fields, issues, 'fields');
  return {
    source: parseSourceOption(obj._source, issues),
    fields: fields?.map((f) => f.field),
    docvalueFields: parseFieldList(obj.docvalue_fields, issues, 'docvalue_fields'),
  };
}

function bodyContext(shape: IndexShape): BodyContext {
  return { field: shape.fields ?? (() => undefined), vectorField: shape.field };
}

function readFilter(json: unknown, shape: IndexShape, issues: ValidationIssue[], path: string): FilterQuery | null {
  if (!shape.fields) {
    issues.push({ path, reason: 'this index has no mapping (it was built before documents), so it has no fields to filter on; rebuild it with its documents' });
    return null;
  }
  return parseKnnSectionFilter(json, bodyContext(shape), issues, path);
}

/** ES's default beam width when `num_candidates` is absent: min(1.5 k, 10000). */
export function esDefaultNumCandidates(k: number): number {
  return Math.max(k, Math.min(MAX_NUM_CANDIDATES, Math.round(1.5 * k)));
}

function parseEsSearch(schema: ReturnType<typeof esSchema>, shape: IndexShape, body: unknown): Result<EsSearchRequest> {
  const parsed = schema.safeParse(body);
  const issues = parsed.success ? [] : zodIssues(parsed.error.issues, body, ES_FIELDS);
  const obj = asRecord(body);
  const knn = asRecord(obj?.knn);
  const size = Number.isInteger(obj?.size) ? (obj!.size as number) : 10;
  const from = Number.isInteger(obj?.from) ? (obj!.from as number) : 0;
  let knnFilter: FilterQuery | null = null;
  if (knn) {
    if (typeof knn.field === 'string' && knn.field !== shape.field) {
      issues.push({ path: 'knn.field', reason: `field [${knn.field}] is not a vector field of this index (it serves [${shape.field}])` });
    }
    checkCandidates(knn.k ?? size, knn.num_candidates, 'knn.num_candidates', issues);
    checkRescoreWindow(knn.k ?? size, asRecord(knn.rescore_vector)?.oversample, 'knn.rescore_vector.oversample', issues);
    checkRecallTarget(knn.recall_target, { num_candidates: knn.num_candidates, rescore_vector: knn.rescore_vector }, 'knn.recall_target', issues);
    if (knn.filter !== undefined) knnFilter = readFilter(knn.filter, shape, issues, 'knn.filter');
  }
  let plan: ReturnType<typeof parseQuery> = null;
  if (obj?.query !== undefined) {
    if (knn) issues.push({ path: 'query', reason: 'a query beside the knn section would combine scores, which is not supported; put filters in knn.filter' });
    else if (!shape.fields && !isKnnOnly(obj.query))
      issues.push({ path: 'query', reason: 'this index has no mapping (it was built before documents), so it has no fields to query' });
    else plan = parseQuery(obj.query, bodyContext(shape), issues);
  } else if (obj && !knn) issues.push({ path: 'knn', reason: 'is required (or a query)' });
  const fetch = obj ? hitContents(obj, issues) : NO_CONTENTS;
  let vector: Float32Array | undefined;
  if (plan?.kind === 'knn') {
    const v = vectorSchema(shape, 'big-endian').safeParse(plan.knn.vector);
    if (!v.success)
      for (const i of zodIssues(v.error.issues, plan.knn.vector, {}))
        issues.push({ path: i.path === '' ? plan.knn.vectorPath : `${plan.knn.vectorPath}${i.path.startsWith('[') ? '' : '.'}${i.path}`, reason: i.reason });
    else vector = v.data;
    checkCandidates(plan.knn.k ?? size, plan.knn.numCandidates, `${plan.knn.path}.num_candidates`, issues);
    checkRescoreWindow(plan.knn.k ?? size, plan.knn.oversample, `${plan.knn.path}.rescore_vector.oversample`, issues);
    checkRecallTarget(plan.knn.recallTarget, { num_candidates: plan.knn.numCandidates, rescore_vector: plan.knn.oversample }, `${plan.knn.path}.recall_target`, issues);
  }
  if (!parsed.success || issues.length > 0) return { ok: false, error: toError(issues) };
  const b = parsed.data;
  if (plan?.kind === 'filter') return { ok: true, value: { kind: 'filter', filter: plan.filter, size, from, fetch, timeoutMs: b.timeout, profile: b.profile === true } };
  const clause = plan?.kind === 'knn' ? plan.knn : null;
  // ES: k defaults to size (from + size); the response holds hits [from, from + size) of the k nearest.
  const k = (clause ? clause.k : b.knn!.k) ?? from + size;
  if (k < 1) return { ok: false, error: toError([{ path: clause ? `${clause.path}.k` : 'knn.k', reason: 'must be given (or size >= 1) so that k >= 1' }]) };
  const numCandidates = clause ? clause.numCandidates : b.knn!.num_candidates;
  const recallTarget = clause ? clause.recallTarget : b.knn!.recall_target;
  return {
    ok: true,
    value: {
      kind: 'knn',
      vector: clause ? vector! : b.knn!.query_vector,
      k,
      // A recall target chooses the beam; without one, Elasticsearch's default beam.
      numCandidates: numCandidates ?? (recallTarget === undefined ? esDefaultNumCandidates(k) : undefined),
      oversample: clause ? clause.oversample : b.knn!.rescore_vector?.oversample,
      recallTarget,
      readPath: undefined,
      timeoutMs: b.timeout,
      profile: b.profile === true,
      stats: false,
      filter: clause ? clause.filter : knnFilter,
      fetch,
      size,
      from,
    },
  };
}

/** Whether a query is a bare knn query (readable on an index without a mapping). */
function isKnnOnly(query: unknown): boolean {
  const q = asRecord(query);
  const knn = asRecord(q?.knn);
  return q !== undefined && Object.keys(q).length === 1 && knn !== undefined && knn.filter === undefined;
}

const NATIVE_FIELDS: Record<string, readonly string[]> = {
  '': ['vector', 'k', 'num_candidates', 'oversample', 'recall_target', 'read_path', 'timeout_ms', 'stats', 'profile', 'filter', '_source', 'fields', 'docvalue_fields'],
};
const ES_FIELDS: Record<string, readonly string[]> = {
  '': ['knn', 'query', 'size', 'from', '_source', 'fields', 'docvalue_fields', 'track_total_hits', 'timeout', 'profile'],
  knn: ['field', 'query_vector', 'k', 'num_candidates', 'rescore_vector', 'recall_target', 'filter', 'boost'],
  'knn.rescore_vector': ['oversample'],
};

function checkCandidates(k: unknown, numCandidates: unknown, path: string, issues: ValidationIssue[]): void {
  if (Number.isInteger(k) && Number.isInteger(numCandidates) && (numCandidates as number) < (k as number)) {
    issues.push({ path, reason: `must be >= k (${k as number}), got ${numCandidates as number}` });
  }
}

/** A recall target chooses the beam and the oversample itself: naming either beside it is a mistake. */
function checkRecallTarget(target: unknown, settings: Record<string, unknown>, path: string, issues: ValidationIssue[]): void {
  if (target === undefined) return;
  const named = Object.keys(settings).filter((name) => settings[name] !== undefined);
  if (named.length > 0) issues.push({ path, reason: `chooses num_candidates and oversample itself: give recall_target or ${named.join(' and ')}, not both` });
}

/** k x oversample first-phase candidates are rescored: at most MAX_RESCORE_CANDIDATES. */
function checkRescoreWindow(k: unknown, oversample: unknown, path: string, issues: ValidationIssue[]): void {
  if (Number.isInteger(k) && typeof oversample === 'number' && oversample >= MIN_OVERSAMPLE && oversample <= MAX_OVERSAMPLE) {
    const n = Math.ceil((k as number) * oversample);
    if (n > MAX_RESCORE_CANDIDATES) {
      issues.push({ path, reason: `k x oversample = ${n} candidates exceeds ${MAX_RESCORE_CANDIDATES}; lower k or oversample` });
    }
  }
}

function toError(issues: ValidationIssue[]): HttpError {
  return validationError(issues.slice(0, MAX_REPORTED_ISSUES + 1), issues.length);
}

/** zod issues -> field-path issues, with the offending value quoted where it is short. */
export function zodIssues(raw: readonly z.core.$ZodIssue[], body: unknown, known: Record<string, readonly string[]>): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of raw) {
    const path = formatPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const allowed = known[path];
      for (const key of issue.keys) {
        const hint = allowed ? ` (supported: ${allowed.join(', ')})` : '';
        out.push({ path: joinPath(path, key), reason: `unknown field${hint}` });
      }
      continue;
    }
    const value = valueAt(body, issue.path);
    if (value === undefined && issue.code === 'invalid_type') {
      out.push({ path, reason: 'is required' });
      continue;
    }
    let reason = issue.message;
    // JSON.parse turns 1e400 into Infinity, which JSON.stringify would print as "null".
    if (typeof value === 'number' && !Number.isFinite(value)) reason += ', got a number that is not finite (the JSON value overflows a double)';
    else if (!/\bgot\b|required/.test(reason) && isShort(value)) reason += `, got ${JSON.stringify(value)}`;
    out.push({ path, reason });
  }
  return out;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s = typeof p === 'number' ? `${s}[${p}]` : joinPath(s, String(p));
  return s;
}

function joinPath(base: string, key: string): string {
  return base === '' ? key : `${base}.${key}`;
}

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = body;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function isShort(v: unknown): boolean {
  return v === null || typeof v === 'boolean' || typeof v === 'number' || (typeof v === 'string' && v.length <= 40);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length <= 40 ? `string ${JSON.stringify(v)}` : 'a string';
  if (typeof v === 'object') return 'an object';
  return typeof v === 'number' || typeof v === 'boolean' ? `${typeof v} ${String(v)}` : typeof v;
}
