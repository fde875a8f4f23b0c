/**
 * The OpenAPI 3.1 document of one server, generated from the zod schemas that validate its
 * requests (validation.ts, through zod-openapi) and from the response schemas below, which the
 * tests hold the server's answers to. It is built for the served index: its name, its dims (the
 * vector's length) and its vector field are in the document, and so its examples are requests
 * this server accepts as they are.
 */
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponseObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { SEGMENT_STRATEGIES } from '../../segments/index/SegmentSearchPlan.js';
import { KNN_THREADS, MAX_K, READ_PATHS } from '../api/types.js';
import { packageVersion } from '../executor/packageRoot.js';
import { ERROR_TYPES } from './errors.js';
import { esSchema, nativeSchema, type IndexShape, type Limits } from './validation.js';

/** What the document describes: the served index and the request limits. */
export interface OpenApiSettings {
  /** The index name `/{index}/_search` answers to. */
  readonly name: string;
  readonly shape: IndexShape;
  readonly limits: Limits;
}

/** The error body every route answers with (Elasticsearch's shape). */
export const errorResponseSchema = z
  .object({
    error: z.looseObject({
      type: z.enum(ERROR_TYPES).meta({ description: 'What went wrong, as Elasticsearch names it where it has a name.' }),
      reason: z.string().meta({ description: 'A sentence naming the field, value or limit at fault.' }),
      path: z.string().optional().meta({ description: 'validation_error: the first field at fault, e.g. `knn.query_vector[3]` (`""`: the body).' }),
      issues: z
        .array(z.object({ path: z.string(), reason: z.string() }))
        .optional()
        .meta({ description: 'validation_error: every field at fault (at most 21 listed).' }),
    }),
    status: z.int().meta({ description: 'The HTTP status, repeated.' }),
  })
  .meta({ description: 'An error, in the shape Elasticsearch answers with.' });

const timings = z.object({
  first_phase_ms: z.number(),
  rescore_ms: z.number(),
  total_ms: z.number(),
  filter_ms: z.number().optional().meta({ description: "A filtered search: getting the filter's bitsets (built, or found in the filter cache)." }),
});

/** The per-search profile (`profile: true`), times in milliseconds from the request's arrival. */
export const profileSchema = z.object({
  entry: z.string(),
  phases: z.array(z.object({ name: z.string(), start_ms: z.number(), duration_ms: z.number() })),
  hops: z.array(z.object({ task: z.string(), thread_id: z.int(), start_ms: z.number(), queue_ms: z.number(), run_ms: z.number(), return_ms: z.number() })),
  segments: z.array(z.object({ segment: z.string(), thread_id: z.int(), quantize_ms: z.number(), search_ms: z.number(), visited: z.int(), strategy: z.enum(SEGMENT_STRATEGIES) })),
  rescore: z.array(
    z.object({
      on: z.enum(['executor', 'caller']),
      thread_id: z.int(),
      entries: z.int(),
      run_ms: z.number(),
      pages_prefetched: z.int(),
      pages_resident: z.int(),
      syscalls: z.int(),
    }),
  ),
  gc: z.array(z.object({ kind: z.string(), start_ms: z.number(), duration_ms: z.number() })),
});

/** A search's own figures (`stats: true`): the engine's QueryStats in snake_case. */
export const statsSchema = z.object({
  read_path: z.enum(READ_PATHS),
  candidates: z.int().meta({ description: 'First-phase candidates handed to rescoring (k x oversample, or fewer).' }),
  visited: z.int().meta({ description: 'Docs the first phase scored, over all segments.' }),
  exhaustive_segments: z.int().meta({ description: 'Segments scanned flat instead of searched by their graph.' }),
  pages_prefetched: z.int(),
  pages_resident: z.int(),
  pages_read_ahead: z.int(),
  syscalls: z.int(),
  reads_before_prefetch: z.int(),
  deferred: z.boolean(),
  max_prefetch_distance: z.int(),
  timings,
  rescored_on: z.enum(['executor', 'caller', 'none']),
  searched_on: z.enum([...KNN_THREADS.filter((t) => t !== 'adaptive'), 'none']),
  slices_taken_back: z.int(),
  filter: z
    .array(
      z.object({
        segment: z.string(),
        cardinality: z.int().meta({ description: 'Live docs of the segment the filter accepts.' }),
        strategy: z.enum(SEGMENT_STRATEGIES).meta({ description: 'How the planner searched the segment for this filter.' }),
        visited: z.int().meta({ description: 'Codes scored in the segment.' }),
        nearby: z.number().meta({ description: "Share of the query's graph neighbourhood the filter accepts." }),
      }),
    )
    .optional()
    .meta({ description: 'A filtered search, per segment.' }),
  recall: z
    .object({
      target: z.number().meta({ description: 'The recall@10 asked for (or the index default).' }),
      oversample: z.number(),
      num_candidates: z.int(),
      calibrated_recall: z.number().meta({ description: "The calibration's 99% lower bound on recall@10 at this setting." }),
      reached: z.boolean().meta({ description: 'False only when an index default target is above every measured setting: the best one ran.' }),
    })
    .optional()
    .meta({ description: 'A search with a recall target: the setting its calibration chose.' }),
  profile: profileSchema.optional(),
});

/** A hit's document source: the JSON object indexed, filtered as asked, the vector left out unless asked for. */
const sourceSchema = z.looseObject({}).meta({ description: 'The document as indexed (`_source`), filtered by includes/excludes; its vector only with `exclude_vectors: false`.' });
const hitFieldsSchema = z.record(z.string(), z.array(z.unknown())).meta({ description: '`fields` and `docvalue_fields` values, each an array.' });

export const nativeSearchResponseSchema = z.object({
  hits: z.array(
    z.object({
      id: z.string().meta({ description: "The doc's id (its row in the build input, or the JSONL `id`)." }),
      doc: z.int().meta({ description: 'The global doc number.' }),
      score: z.number().meta({ description: 'The fp32 similarity, higher is nearer.' }),
      _source: sourceSchema.optional(),
      fields: hitFieldsSchema.optional(),
    }),
  ),
  total_hits: z.int(),
  took_ms: z.number().meta({ description: 'Milliseconds from the end of validation to the answer, queueing included.' }),
  queue_ms: z.number().optional().meta({ description: 'With `stats`: milliseconds spent waiting for a search slot.' }),
  stats: statsSchema.optional().meta({ description: 'With `stats: true` or `profile: true` only.' }),
});

const shards = z.object({ total: z.int(), successful: z.int(), skipped: z.int(), failed: z.int() });

export const esSearchResponseSchema = z.object({
  profile: profileSchema.optional().meta({ description: 'With `profile: true` only.' }),
  took: z.int(),
  timed_out: z.boolean(),
  _shards: shards,
  hits: z.object({
    total: z.object({ value: z.int(), relation: z.literal('eq') }),
    max_score: z.number().nullable(),
    hits: z.array(z.object({ _index: z.string(), _id: z.string(), _score: z.number(), _source: sourceSchema.optional(), fields: hitFieldsSchema.optional() })),
  }),
});

/** A stored document (GET _doc, _mget). */
/** A write's answer (index, create, update, delete), as Elasticsearch gives it. */
export const writeResponseSchema = z.looseObject({
  _index: z.string(),
  _id: z.string(),
  _version: z.int(),
  result: z.enum(['created', 'updated', 'deleted', 'not_found', 'noop']),
  _shards: z.object({ total: z.int(), successful: z.int(), failed: z.int() }),
  _seq_no: z.int(),
  _primary_term: z.int(),
  forced_refresh: z.boolean().optional(),
});

/** A `_bulk` answer: one item per action, keyed by its verb, each with its status (and its error when it failed). */
export const bulkResponseSchema = z.object({ errors: z.boolean(), took: z.int(), items: z.array(z.record(z.string(), z.looseObject({ status: z.int() }))) });

export const getResponseSchema = z.object({
  _index: z.string(),
  _id: z.string(),
  _version: z.int().optional(),
  _seq_no: z.int().optional(),
  _primary_term: z.int().optional(),
  found: z.boolean(),
  _source: sourceSchema.optional(),
  fields: hitFieldsSchema.optional(),
});

export const refreshResponseSchema = z.object({
  _shards: shards.omit({ skipped: true }),
  refreshed: z.boolean().meta({ description: 'Whether a newer commit was opened.' }),
  docs: z.int(),
});

export const healthResponseSchema = z.object({
  status: z.enum(['ok', 'draining']),
  index: z.string(),
  dims: z.int(),
  inflight: z.int(),
  queued: z.int(),
  max_inflight: z.int(),
  max_queue: z.int(),
});

export const indexesResponseSchema = z.object({
  indexes: z.array(
    z.looseObject({
      name: z.string(),
      dir: z.string(),
      field: z.string(),
      similarity: z.string(),
      dims: z.int(),
      docs: z.int(),
      segments: z.array(z.looseObject({ name: z.string(), docBase: z.int(), docs: z.int(), hasGraph: z.boolean() })),
      bytes: z.object({ vectors: z.int(), codes: z.int(), graph: z.int(), total: z.int() }),
      residentFraction: z.number().meta({ description: 'Fraction of the fp32 pages in the page cache.' }),
      defaultReadPath: z.enum(READ_PATHS),
      memory: z.looseObject({ state: z.enum(['held', 'planned']), codes: z.int(), graphs: z.int(), total: z.int() }),
    }),
  ),
});

/** Which error statuses each kind of route answers with, and why. */
const ERROR_STATUS: Record<string, string> = {
  '400': 'validation_error (naming the field path), parse_error (no body, not JSON) or illegal_argument_exception',
  '404': 'index_not_found_exception: the path names another index',
  '405': 'method_not_allowed: this path with another method (the `Allow` header lists the right ones)',
  '408': "the client did not send its headers within --header-timeout-ms or its request within --request-timeout-ms (Node's answer, no body; the connection is closed)",
  '409': 'illegal_argument_exception: the new commit has other dims, field or similarity',
  '413': 'request_entity_too_large: the body is over --max-body-bytes',
  '415': 'unsupported_media_type: the Content-Type is not application/json',
  '429': 'es_rejected_execution_exception: max_inflight + max_queue searches are held; retry after `Retry-After` seconds',
  '500': 'search_error, refresh_failed or internal_error',
  '503': 'shutting_down: the server is draining or has stopped; retry on another instance',
  '504': 'search_timeout: the deadline (timeout_ms / timeout, or --timeout-ms) passed; the search was cancelled',
};

/** Headers some errors carry. */
const ERROR_HEADERS: Record<string, z.ZodObject> = {
  '405': z.object({ Allow: z.string().meta({ description: 'The methods this path answers, e.g. `POST`.' }) }),
  '429': z.object({ 'Retry-After': z.string().meta({ description: 'Seconds to wait before retrying.' }) }),
  '503': z.object({ 'Retry-After': z.string().meta({ description: 'Seconds to wait before retrying.' }) }),
};

function errors(...statuses: `${4 | 5}${string}`[]): ZodOpenApiResponsesObject {
  const out: Record<`${4 | 5}${string}`, ZodOpenApiResponseObject> = {};
  for (const s of statuses) {
    const headers = ERROR_HEADERS[s];
    out[s] =
      s === '408'
        ? { description: ERROR_STATUS[s]! }
        : { description: ERROR_STATUS[s]!, content: { 'application/json': { schema: errorResponseSchema } }, ...(headers ? { headers } : {}) };
  }
  return out;
}

const SEARCH_ERRORS = ['400', '405', '408', '413', '415', '429', '500', '503', '504'] as const;

/** Deterministic example vectors of the index's dims (what the README's examples send). */
function exampleVector(dims: number, f: (i: number) => number): number[] {
  return Array.from({ length: dims }, (_, i) => Math.round(f(i) * 1e4) / 1e4);
}

function base64Vector(vector: readonly number[], littleEndian: boolean): string {
  const view = new DataView(new ArrayBuffer(4 * vector.length));
  vector.forEach((x, i) => {
    view.setFloat32(4 * i, x, littleEndian);
  });
  return Buffer.from(view.buffer).toString('base64');
}

/** The request examples of the two search routes (each one a body this server accepts). */
export function searchExamples(settings: OpenApiSettings): {
  native: Record<string, { summary: string; value: Record<string, unknown> }>;
  es: Record<string, { summary: string; value: Record<string, unknown> }>;
} {
  const { dims, field } = settings.shape;
  const sin = exampleVector(dims, Math.sin);
  const cos = exampleVector(dims, Math.cos);
  return {
    native: {
      minimal: { summary: 'The 5 nearest, with the defaults', value: { vector: sin, k: 5 } },
      tuned: {
        summary: 'Every parameter',
        value: { vector: sin, k: 10, num_candidates: 200, oversample: 3, read_path: 'mmap+parallel', timeout_ms: 500, stats: true, profile: false },
      },
      base64: { summary: 'The vector as base64 little-endian float32', value: { vector: base64Vector(sin, true), k: 5, stats: true } },
    },
    es: {
      knn: {
        summary: "Elasticsearch's knn search with rescoring",
        value: { knn: { field, query_vector: cos, k: 5, num_candidates: 100, rescore_vector: { oversample: 3 } } },
      },
      size: { summary: 'size, timeout and _source: false', value: { knn: { field, query_vector: cos, k: 20 }, size: 5, timeout: '2s', _source: false } },
      base64: { summary: 'The vector as base64 big-endian float32 (as dense_vector)', value: { knn: { field, query_vector: base64Vector(cos, false), k: 5 } } },
    },
  };
}

const mappingResponseSchema = z.record(z.string(), z.object({ mappings: z.looseObject({}) }));

const mgetBodySchema = z
  .union([z.object({ docs: z.array(z.looseObject({ _id: z.string(), _index: z.string().optional(), _source: z.unknown().optional() })) }), z.object({ ids: z.array(z.string()) })])
  .meta({ description: 'The documents to get: `docs` (each with `_id`, optionally `_index` and `_source`) or `ids`.' });

function mgetPath(indexParam: z.ZodObject | undefined) {
  const op = (operationId: string): ZodOpenApiOperationObject => ({
    operationId,
    summary: 'Several documents by id',
    tags: ['documents'],
    ...(indexParam ? { requestParams: { path: indexParam } } : {}),
    requestBody: { required: true, content: { 'application/json': { schema: mgetBodySchema } } },
    responses: {
      '200': {
        description: 'One entry per id asked for, in order (`found: false` for a missing one)',
        content: { 'application/json': { schema: z.object({ docs: z.array(z.looseObject({ _id: z.string(), found: z.boolean().optional() })) }) } },
      },
      ...errors('400', '405', '413', '415', ...(indexParam ? (['404'] as const) : [])),
    },
  });
  return { get: op(indexParam ? 'mgetIndex' : 'mget'), post: op(indexParam ? 'mgetIndexPost' : 'mgetPost') };
}

/** The query parameters every write takes. */
const writeQuery = z.object({
  refresh: z
    .enum(['true', 'false', 'wait_for', ''])
    .optional()
    .meta({ description: 'true or wait_for: searchable before the answer; false (default): within the refresh interval (1 s).' }),
  if_seq_no: z.string().optional().meta({ description: "Write only if the document's `_seq_no` is this (else 409)." }),
  if_primary_term: z.string().optional().meta({ description: 'With if_seq_no: always 1 here.' }),
  op_type: z.enum(['index', 'create']).optional().meta({ description: 'create: fail with 409 when the id exists.' }),
});

function writeOperation(operationId: string, summary: string, description: string, params: z.ZodObject, body: z.ZodType | null, created: boolean): ZodOpenApiOperationObject {
  return {
    operationId,
    summary,
    description: `${description} Acknowledged once durable in the translog.`,
    tags: ['documents'],
    requestParams: { path: params, query: writeQuery },
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: {
      ...(created ? { '201': { description: 'Created', content: { 'application/json': { schema: writeResponseSchema } } } } : {}),
      '200': { description: 'Done', content: { 'application/json': { schema: writeResponseSchema } } },
      ...errors('400', '404', '405', '409', '413', '415', '503'),
    },
  };
}

function bulkOperation(operationId: string, params: z.ZodObject | undefined): ZodOpenApiOperationObject {
  return {
    operationId,
    summary: 'Many writes in one NDJSON body',
    description:
      'Action lines (`{"index"|"create"|"update"|"delete": {"_id", "_index"}}`), each but delete followed by its document (update: `{"doc": {...}}`). ' +
      'A bad item fails alone (its item carries the error); the rest are synced with one fdatasync.',
    tags: ['documents'],
    requestParams: { ...(params ? { path: params } : {}), query: writeQuery.pick({ refresh: true }) },
    requestBody: { required: true, content: { 'application/x-ndjson': { schema: z.string() } } },
    responses: {
      '200': { description: 'One item per action', content: { 'application/json': { schema: bulkResponseSchema } } },
      ...errors('400', '404', '405', '413', '415', '503'),
    },
  };
}

function clusterHealthOperation(operationId: string, params: z.ZodObject | undefined): ZodOpenApiOperationObject {
  return {
    operationId,
    summary: "Elasticsearch's cluster health (one node, one shard: green while it answers)",
    tags: ['server'],
    ...(params ? { requestParams: { path: params } } : {}),
    responses: {
      '200': {
        description: 'Green',
        content: { 'application/json': { schema: z.looseObject({ cluster_name: z.string(), status: z.enum(['green', 'yellow', 'red']), number_of_nodes: z.int() }) } },
      },
      ...errors('404', '405'),
    },
  };
}

function countOperation(operationId: string, indexParam: z.ZodObject): ZodOpenApiOperationObject {
  return {
    operationId,
    summary: 'How many documents a query accepts',
    description: 'Without a body, every live document; a `query` is a filter in the Query DSL (term, terms, range, exists, ids, bool, match_all).',
    tags: ['documents'],
    requestParams: { path: indexParam },
    requestBody: { required: false, content: { 'application/json': { schema: z.object({ query: z.looseObject({}).optional() }) } } },
    responses: {
      '200': { description: 'The count', content: { 'application/json': { schema: z.object({ count: z.int(), _shards: shards }) } } },
      ...errors('400', '404', '405', '413', '415', '429', '500', '503', '504'),
    },
  };
}

/** The OpenAPI 3.1 document of a server over one index. */
export function openApiDocument(settings: OpenApiSettings): ReturnType<typeof createDocument> {
  const { name, shape, limits } = settings;
  const examples = searchExamples(settings);
  const indexParam = z.object({
    index: z.string().meta({ description: `An index name (e.g. \`${name}\`).`, example: name }),
  });
  const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
  const docParams = indexParam.extend({ id: z.string().meta({ description: "The document's id." }) });
  const documentSchema = z.record(z.string(), z.unknown()).meta({ description: `A document: its fields, and the vector under \`${shape.field}\` (${shape.dims} numbers).` });
  const nativeSearch: ZodOpenApiOperationObject = {
    operationId: 'search',
    summary: 'Search (native request shape)',
    description:
      'The k nearest docs to `vector`: a 1-bit first phase over every segment, then fp32 rescoring of k x oversample candidates. ' +
      "The answer carries the hits and `took_ms`; `stats: true` adds the search's own figures.",
    tags: ['search'],
    requestBody: { required: true, content: { 'application/json': { schema: nativeSchema(shape, limits), examples: examples.native } } },
    responses: { '200': { description: 'The hits, best first', content: json(nativeSearchResponseSchema) }, ...errors(...SEARCH_ERRORS) },
  };
  const esSearch: ZodOpenApiOperationObject = {
    operationId: 'esSearch',
    summary: "Search (Elasticsearch's knn body)",
    description: `Elasticsearch's \`_search\` with one \`knn\` clause, answered in Elasticsearch's shape. \`size\` defaults to 10, \`k\` to \`size\` (at most ${MAX_K}).`,
    tags: ['search'],
    requestParams: { path: indexParam },
    requestBody: { required: true, content: { 'application/json': { schema: esSchema(shape, limits), examples: examples.es } } },
    responses: { '200': { description: 'The hits, best first', content: json(esSearchResponseSchema) }, ...errors(...SEARCH_ERRORS, '404') },
  };
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'prescore',
      version: packageVersion(),
      description:
        `A Lucene-compatible vector search service. This server serves the index \`${name}\` (${shape.dims} dims, field \`${shape.field}\`). ` +
        'Every error has the body `{"error": {"type", "reason", ...}, "status"}`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: [
      { name: 'search', description: 'kNN searches' },
      { name: 'index', description: 'The served index' },
      { name: 'documents', description: 'Documents by id, and counts' },
      { name: 'server', description: 'Health, metrics and this document' },
    ],
    paths: {
      '/v1/search': { post: nativeSearch },
      '/{index}/_search': { post: esSearch },
      '/{index}/_refresh': {
        get: {
          operationId: 'refreshGet',
          summary: 'Make every write searchable (the newest commit plus the writes since)',
          tags: ['index'],
          requestParams: { path: indexParam },
          responses: { '200': { description: 'Refreshed (or already current)', content: json(refreshResponseSchema) }, ...errors('400', '404', '405', '409', '500') },
        },
        post: {
          operationId: 'refresh',
          summary: 'Make every write searchable: reopen the index at its newest commit, with the writes since',
          description: "As Elasticsearch's refresh: searches already running finish on the old reader. SIGHUP does the same.",
          tags: ['index'],
          requestParams: { path: indexParam },
          responses: { '200': { description: 'Refreshed (or already current)', content: json(refreshResponseSchema) }, ...errors('400', '404', '405', '409', '500') },
        },
      },
      '/v1/indexes': {
        get: {
          operationId: 'indexes',
          summary: 'Describe the served index',
          description: 'Segments, docs, dims, similarity, bytes on disk and in memory, and the fraction of fp32 pages resident.',
          tags: ['index'],
          responses: { '200': { description: 'The served index', content: json(indexesResponseSchema) }, ...errors('405') },
        },
      },
      '/health': {
        get: {
          operationId: 'health',
          summary: 'Liveness and admission state',
          tags: ['server'],
          responses: {
            '200': { description: 'Serving', content: json(healthResponseSchema) },
            '503': { description: 'Draining (shutting down): the same body with status "draining"', content: json(healthResponseSchema) },
            ...errors('405'),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics',
          tags: ['server'],
          responses: {
            '200': { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: z.string() } } },
            ...errors('405'),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document',
          tags: ['server'],
          responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.looseObject({ openapi: z.string() }) } } }, ...errors('405') },
        },
      },
      '/': {
        get: {
          operationId: 'info',
          summary: "The server's identity, as Elasticsearch answers `GET /`",
          description: "Elasticsearch's clients read it; every answer also carries `X-Elastic-Product: Elasticsearch`, which they check.",
          tags: ['server'],
          responses: {
            '200': {
              description: 'Name, version (the Elasticsearch API it follows) and tagline',
              content: json(z.looseObject({ name: z.string(), version: z.looseObject({ number: z.string() }) })),
            },
            ...errors('405'),
          },
        },
      },
      '/{index}': {
        get: {
          operationId: 'getIndex',
          summary: "The index's aliases, mappings and settings",
          tags: ['index'],
          requestParams: { path: indexParam },
          responses: {
            '200': { description: 'The index, keyed by its name', content: json(z.record(z.string(), z.looseObject({ mappings: z.looseObject({}) }))) },
            ...errors('404', '405'),
          },
        },
        put: {
          operationId: 'createIndex',
          summary: 'Create an index (servers started with --data)',
          description:
            "Elasticsearch's create-index body. `mappings` needs one `dense_vector` field with `dims` (similarity default cosine); its `index_options.type` picks the code bits (`bbq_*` 1, `int4_*` 4, `int8_*`, `hnsw`, `flat` 7; `*_flat`: no graph), `m` and `ef_construction` the graph's. Settings: `refresh_interval` (`-1`: only refreshes asked for), `translog.durability` (`request` or `async`), `translog.sync_interval`, `number_of_shards` (1), `number_of_replicas`.",
          tags: ['index'],
          requestParams: { path: indexParam },
          requestBody: {
            content: json(
              z.looseObject({
                settings: z.record(z.string(), z.unknown()).optional(),
                mappings: z.looseObject({ properties: z.record(z.string(), z.unknown()) }),
              }),
            ),
          },
          responses: {
            '200': { description: 'Created', content: json(z.object({ acknowledged: z.boolean(), shards_acknowledged: z.boolean(), index: z.string() })) },
            ...errors('400', '405'),
          },
        },
        delete: {
          operationId: 'deleteIndex',
          summary: 'Delete an index and its files (servers started with --data)',
          tags: ['index'],
          requestParams: { path: indexParam },
          responses: { '200': { description: 'Deleted', content: json(z.object({ acknowledged: z.boolean() })) }, ...errors('400', '404', '405') },
        },
      },
      '/{index}/_settings': {
        get: {
          operationId: 'getSettings',
          summary: "The index's settings, as Elasticsearch shows them",
          tags: ['index'],
          requestParams: { path: indexParam },
          responses: {
            '200': { description: 'The settings keyed by index name', content: json(z.record(z.string(), z.looseObject({ settings: z.looseObject({}) }))) },
            ...errors('404', '405'),
          },
        },
        put: {
          operationId: 'putSettings',
          summary: "Change the index's refresh_interval (kept in its commit)",
          description: '`{"index": {"refresh_interval": "-1"}}` (nested, dotted or without `index.`); settings fixed at creation (shards, translog) are a 400 naming them.',
          tags: ['index'],
          requestParams: { path: indexParam },
          requestBody: { content: json(z.record(z.string(), z.unknown())) },
          responses: { '200': { description: 'Changed', content: json(z.object({ acknowledged: z.boolean() })) }, ...errors('400', '404', '405') },
        },
      },
      '/_mapping': {
        get: {
          operationId: 'getMappings',
          summary: "Every index's mapping",
          tags: ['index'],
          responses: { '200': { description: 'Mappings keyed by index name', content: json(mappingResponseSchema) }, ...errors('405') },
        },
      },
      '/{index}/_mapping': {
        get: {
          operationId: 'getMapping',
          summary: "The index's mapping, as Elasticsearch shows it",
          tags: ['index'],
          requestParams: { path: indexParam },
          responses: { '200': { description: 'The mapping keyed by index name', content: json(mappingResponseSchema) }, ...errors('404', '405') },
        },
      },
      '/{index}/_doc/{id}': {
        get: {
          operationId: 'getDocument',
          summary: 'A document by id',
          description: 'Query parameters `_source` (true, false or field patterns), `_source_includes` and `_source_excludes` (comma-separated patterns).',
          tags: ['documents'],
          requestParams: {
            path: indexParam.extend({ id: z.string().meta({ description: "The document's id." }) }),
            query: z.object({ _source: z.string().optional(), _source_includes: z.string().optional(), _source_excludes: z.string().optional() }),
          },
          responses: {
            '200': { description: 'Found', content: json(getResponseSchema) },
            '404': { description: 'No such document (`found: false`) or index', content: json(z.union([getResponseSchema, errorResponseSchema])) },
            ...errors('405'),
          },
        },
        put: writeOperation('indexDocument', 'Index a document under an id', 'Creates it, or replaces the document with that id.', docParams, documentSchema, true),
        post: writeOperation('indexDocumentPost', 'Index a document under an id', 'As PUT.', docParams, documentSchema, true),
        delete: writeOperation('deleteDocument', 'Delete a document', '404 with `result: not_found` when there is none.', docParams, null, false),
      },
      '/{index}/_doc': {
        post: writeOperation('indexDocumentNewId', 'Index a document under a generated id', 'A 20-character id, as Elasticsearch generates.', indexParam, documentSchema, true),
      },
      '/{index}/_create/{id}': {
        put: writeOperation('createDocument', 'Index a document only if the id is new', '409 when it exists.', docParams, documentSchema, true),
        post: writeOperation('createDocumentPost', 'Index a document only if the id is new', 'As PUT.', docParams, documentSchema, true),
      },
      '/{index}/_update/{id}': {
        post: writeOperation(
          'updateDocument',
          'Merge a partial document into one',
          '`doc` merged into `_source` (objects key by key); `upsert` or `doc_as_upsert` index it when there is none (else 404); an update that changes nothing is a `noop`.',
          docParams,
          z.looseObject({
            doc: z.record(z.string(), z.unknown()).optional(),
            upsert: z.record(z.string(), z.unknown()).optional(),
            doc_as_upsert: z.boolean().optional(),
            detect_noop: z.boolean().optional(),
          }),
          true,
        ),
      },
      '/_bulk': { post: bulkOperation('bulk', undefined), put: bulkOperation('bulkPut', undefined) },
      '/{index}/_forcemerge': {
        post: {
          operationId: 'forceMerge',
          summary: 'Merge the segments down to max_num_segments (default 1), without their deleted docs',
          tags: ['index'],
          requestParams: { path: indexParam, query: z.object({ max_num_segments: z.string().optional() }) },
          responses: {
            '200': { description: 'Merged and committed', content: json(z.object({ _shards: z.object({ total: z.int(), successful: z.int(), failed: z.int() }) })) },
            ...errors('400', '404', '405', '409', '503'),
          },
        },
      },
      '/{index}/_flush': Object.fromEntries(
        (['get', 'post'] as const).map((method) => [
          method,
          {
            operationId: method === 'get' ? 'flushGet' : 'flush',
            summary: 'Commit what only the translog holds (Elasticsearch flush): the writes since the last commit become segments',
            tags: ['index'],
            requestParams: { path: indexParam },
            responses: {
              '200': { description: 'Committed', content: json(z.object({ _shards: z.object({ total: z.int(), successful: z.int(), failed: z.int() }) })) },
              ...errors('404', '405', '429'),
            },
          },
        ]),
      ),
      '/{index}/_bulk': { post: bulkOperation('bulkIndex', indexParam), put: bulkOperation('bulkIndexPut', indexParam) },
      '/_cluster/health': { get: clusterHealthOperation('clusterHealth', undefined) },
      '/_cluster/health/{index}': { get: clusterHealthOperation('indexHealth', indexParam) },
      '/_cat/indices': {
        get: {
          operationId: 'catIndices',
          summary: "The served indexes in Elasticsearch's _cat/indices columns",
          description: 'Text (`?v` adds the header) or `?format=json`: health, status, index, uuid, pri, rep, docs.count, docs.deleted, store.size, pri.store.size.',
          tags: ['index'],
          requestParams: { query: z.object({ format: z.enum(['json', 'text']).optional(), v: z.string().optional() }) },
          responses: {
            '200': {
              description: 'One row per index',
              content: { 'application/json': { schema: z.array(z.record(z.string(), z.string())) }, 'text/plain': { schema: z.string() } },
            },
            ...errors('405'),
          },
        },
      },
      '/_mget': mgetPath(undefined),
      '/{index}/_mget': mgetPath(indexParam),
      '/{index}/_count': {
        get: countOperation('count', indexParam),
        post: countOperation('countPost', indexParam),
      },
      '/docs': {
        get: {
          operationId: 'docs',
          summary: 'A browsable reference of this document',
          tags: ['server'],
          responses: { '200': { description: 'An HTML page (Swagger UI, served from this server)', content: { 'text/html': { schema: z.string() } } }, ...errors('405') },
        },
      },
    },
    components: {
      schemas: {
        NativeSearchResponse: nativeSearchResponseSchema,
        EsSearchResponse: esSearchResponseSchema,
        SearchStats: statsSchema,
        SearchProfile: profileSchema,
        Error: errorResponseSchema,
      },
    },
  });
}
