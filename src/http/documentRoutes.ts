/**
 * The document read routes, as Elasticsearch answers them: `GET /` (the cluster's identity, which
 * Elasticsearch's clients read), `GET|HEAD /:index/_doc/:id`, `GET|POST /_mget` and
 * `/:index/_mget`, `GET|POST /:index/_count`, and what hits carry (`_source`, `fields`).
 */
import type { Context, Hono } from 'hono';
import type { GetOptions, IndexedDoc, SearchHit, SourceOption } from '../api/types.js';
import { packageVersion } from '../executor/packageRoot.js';
import { HttpError, indexNotFound, validationError, type ValidationIssue } from './errors.js';
import { readJsonBody } from './body.js';
import { parseQuery, parseSourceOption } from './dsl/SearchBody.js';
import type { SearchValidator } from './validation.js';
import type { FilterQuery } from '../../query/filter/index.js';
import { MatchAllDocsQuery } from '../../query/filter/index.js';
import { PRIMARY_TERM } from '../../segments/index/IndexWriter.js';
import { resolveIndex, type IndexCatalog, type ServedIndex } from './IndexCatalog.js';
import { realtimeDocument, realtimeSource } from './writeRoutes.js';

/** The Elasticsearch version this server answers as (the API it follows: Elasticsearch 9's). */
export const ES_COMPATIBLE_VERSION = '9.1.0';
/** The Lucene version of the formats prescore writes and reads. */
const LUCENE_VERSION = '10.2.2';

// biome-ignore lint/suspicious/noExplicitAny: hono's Env of the app, which the routes only pass along
type App = Hono<any>;

export interface DocumentRouteDeps {
  /** The served indexes (a GET sees an index's unrefreshed writes when it takes them). */
  readonly catalog: IndexCatalog;
  readonly maxBodyBytes: number;
  /** Runs engine work in an admission slot under a deadline (app.ts). */
  // biome-ignore lint/suspicious/noExplicitAny: the app's Context
  readonly admittedRun: <T>(c: Context<any>, timeoutMs: number | undefined, run: (signal: AbortSignal) => Promise<T>) => Promise<T>;
}

/** A native hit's document parts (`_source`, `fields`), when it has them. */
export function hitContents(h: Pick<SearchHit, 'source' | 'fields'>): { _source?: Record<string, unknown>; fields?: Record<string, unknown[]> } {
  return { ...(h.source ? { _source: h.source } : {}), ...(h.fields ? { fields: h.fields } : {}) };
}

/** An Elasticsearch hit's document parts. */
export const esContents = hitContents;

export function mountDocumentRoutes(app: App, deps: DocumentRouteDeps): void {
  const { catalog } = deps;

  app.get('/', (c) => {
    c.set('route', '/');
    return c.json({
      name: 'prescore',
      cluster_name: 'prescore',
      cluster_uuid: 'prescore',
      version: {
        number: ES_COMPATIBLE_VERSION,
        build_flavor: 'default',
        build_type: 'prescore',
        build_hash: `prescore-${packageVersion()}`,
        build_date: '2026-01-01T00:00:00.000Z',
        build_snapshot: false,
        lucene_version: LUCENE_VERSION,
        minimum_wire_compatibility_version: '8.19.0',
        minimum_index_compatibility_version: '8.0.0',
      },
      tagline: 'You Know, for Search',
    });
  });

  /** One document as `GET _doc` and `_mget` answer it: realtime when the index takes writes, else from the served commit. */
  const getOne = async (served: ServedIndex, id: string, source: SourceOption | undefined): Promise<Record<string, unknown>> => {
    const name = served.name;
    const realtime = await realtimeDocument(served.writes, id);
    if (realtime !== undefined) {
      if (realtime === null) return { _index: name, _id: id, found: false };
      const body = realtimeSource(realtime, source);
      return { _index: name, _id: id, _version: realtime.version, _seq_no: realtime.seqNo, _primary_term: PRIMARY_TERM, found: true, ...(body ? { _source: body } : {}) };
    }
    const doc = served.index.get ? await served.index.get(id, { source: source ?? true }) : null;
    return doc ? { _index: name, _id: id, _version: 1, _seq_no: 0, _primary_term: 1, found: true, ...sourcePart(doc) } : { _index: name, _id: id, found: false };
  };

  const getDoc = async (c: Context) => {
    c.set('route', '/:index/_doc/:id');
    const served = resolveIndex(catalog, c.req.param('index'));
    const answer = await getOne(served, c.req.param('id')!, sourceFromQuery(c));
    if (c.req.method === 'HEAD') return c.body(null, answer.found ? 200 : 404);
    return c.json(answer, answer.found ? 200 : 404);
  };
  app.get('/:index/_doc/:id', getDoc);
  app.on('HEAD', '/:index/_doc/:id', getDoc);

  const mget = async (c: Context) => {
    c.set('route', '/_mget');
    const target = c.req.param('index');
    if (target !== undefined) resolveIndex(catalog, target);
    const body = await readJsonBody(c.req.raw, deps.maxBodyBytes, undefined);
    const requests = mgetRequests(body, target, sourceFromQuery(c));
    const docs = [];
    for (const r of requests) {
      const served = catalog.get(r.index);
      docs.push(served === undefined ? { _index: r.index, _id: r.id, error: indexNotFound(r.index).body().error } : await getOne(served, r.id, r.source));
    }
    return c.json({ docs });
  };
  for (const path of ['/_mget', '/:index/_mget']) {
    app.get(path, mget);
    app.post(path, mget);
  }

  const count = async (c: Context) => {
    c.set('route', '/:index/_count');
    const { index, writes, validator } = resolveIndex(catalog, c.req.param('index'));
    const text =
      c.req.raw.headers.get('content-length') === '0' || c.req.raw.body === null
        ? null
        : await readJsonBody(c.req.raw, deps.maxBodyBytes, undefined).catch((e: unknown) => {
            if (e instanceof HttpError && e.type === 'parse_error' && /empty/.test(e.reason)) return null;
            throw e;
          });
    const filter = await countFilter(text, await validator());
    await writes?.beforeSearch();
    if (!index.count) throw new HttpError(400, 'illegal_argument_exception', 'this index cannot count documents');
    const n = await deps.admittedRun(c, undefined, () => index.count!(filter));
    return c.json({ count: n, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
  };
  app.get('/:index/_count', count);
  app.post('/:index/_count', count);
}

function sourcePart(doc: IndexedDoc): { _source?: Record<string, unknown>; fields?: Record<string, unknown[]> } {
  return hitContents(doc);
}

/** `_source`, `_source_includes` and `_source_excludes` query parameters (GET _doc, _mget). */
function sourceFromQuery(c: Context): SourceOption | undefined {
  const source = c.req.query('_source');
  const includes = c.req.query('_source_includes') ?? c.req.query('_source_include');
  const excludes = c.req.query('_source_excludes') ?? c.req.query('_source_exclude');
  const list = (v: string) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  if (source === 'false') return false;
  if (includes !== undefined || excludes !== undefined) return { includes: includes ? list(includes) : [], excludes: excludes ? list(excludes) : [] };
  if (source !== undefined && source !== 'true') return list(source);
  return source === 'true' ? true : undefined;
}

interface MgetRequest {
  readonly index: string;
  readonly id: string;
  readonly source: SourceOption | undefined;
}

/** `{"docs": [{"_index", "_id", "_source"}]}` or `{"ids": [...]}`, as Elasticsearch's _mget takes them. */
function mgetRequests(body: unknown, defaultIndex: string | undefined, querySource: SourceOption | undefined): MgetRequest[] {
  const issues: ValidationIssue[] = [];
  const obj = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  const out: MgetRequest[] = [];
  if (obj && Array.isArray(obj.ids)) {
    obj.ids.forEach((id, i) => {
      if (defaultIndex === undefined) issues.push({ path: 'ids', reason: 'need an index: use /:index/_mget, or docs with _index' });
      else if (typeof id === 'string' || typeof id === 'number') out.push({ index: defaultIndex, id: String(id), source: querySource });
      else issues.push({ path: `ids[${i}]`, reason: 'must be a string' });
    });
  } else if (obj && Array.isArray(obj.docs)) {
    obj.docs.forEach((d, i) => {
      const r = d !== null && typeof d === 'object' ? (d as Record<string, unknown>) : null;
      if (!r || (typeof r._id !== 'string' && typeof r._id !== 'number')) {
        issues.push({ path: `docs[${i}]._id`, reason: 'is required (a string)' });
        return;
      }
      if (r._index !== undefined && typeof r._index !== 'string') issues.push({ path: `docs[${i}]._index`, reason: 'must be a string' });
      const index = typeof r._index === 'string' ? r._index : defaultIndex;
      if (index === undefined) {
        issues.push({ path: `docs[${i}]._index`, reason: 'is required under /_mget (or use /:index/_mget)' });
        return;
      }
      out.push({
        index,
        id: String(r._id),
        source: parseSourceOption(r._source, issues, `docs[${i}]._source`) ?? querySource,
      });
    });
  } else issues.push({ path: '', reason: 'must be {"docs": [{"_id": ...}, ...]} or {"ids": [...]}' });
  if (issues.length > 0) throw validationError(issues);
  return out;
}

/** A `_count` body's `query` (a filter; none counts every live doc). */
async function countFilter(body: unknown, validator: SearchValidator): Promise<FilterQuery | null> {
  if (body === null || body === undefined) return null;
  const obj = typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  const issues: ValidationIssue[] = [];
  if (!obj) throw validationError([{ path: '', reason: 'must be an object like {"query": {...}}' }]);
  for (const k of Object.keys(obj)) if (k !== 'query') issues.push({ path: k, reason: 'unknown field (supported: query)' });
  if (obj.query === undefined) {
    if (issues.length) throw validationError(issues);
    return null;
  }
  const shape = validator.shape;
  if (!shape.fields) throw validationError([{ path: 'query', reason: 'this index has no mapping (it was built before documents), so it has no fields to query' }]);
  const plan = parseQuery(obj.query, { field: shape.fields, vectorField: shape.field }, issues);
  if (plan?.kind === 'knn') issues.push({ path: 'query', reason: 'a kNN query cannot be counted (it matches k docs); count with a filter' });
  if (issues.length > 0 || plan === null) throw validationError(issues);
  return plan.kind === 'filter' && !(plan.filter instanceof MatchAllDocsQuery) ? plan.filter : null;
}

export type { GetOptions };
