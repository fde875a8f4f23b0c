/**
 * Elasticsearch's document write API over the served index's IndexWriter: `PUT|POST
 * /:index/_doc/:id`, `POST /:index/_doc` (generated id), `PUT|POST /:index/_create/:id`,
 * `POST /:index/_update/:id` (a partial document merged into `_source`), `DELETE
 * /:index/_doc/:id`, and `POST|PUT /_bulk`, `/:index/_bulk` (NDJSON: index, create, update and
 * delete; a bad item fails alone). Each answer carries `_seq_no`, `_primary_term` and
 * `_version`; `if_seq_no`/`if_primary_term` and `create` conflicts answer 409
 * `version_conflict_engine_exception`. A write is acknowledged once it is durable in the
 * translog (one fdatasync shared by concurrent requests); `?refresh=true|wait_for` makes it
 * searchable before the answer, otherwise the next scheduled refresh does (1 s).
 * `POST /:index/_forcemerge?max_num_segments=N` merges the segments down to N (default 1).
 * `POST /:index/_flush` commits what only the translog holds (Elasticsearch's flush).
 */
import type { Context, Hono } from 'hono';
import { DocumentError } from '../../segments/document/DocumentParser.js';
import { filterSource } from '../../segments/document/SourceFilter.js';
import { PRIMARY_TERM, VersionConflictError, type CurrentDocument, type IndexWriter, type WriteOptions, type WriteResult } from '../../segments/index/IndexWriter.js';
import { generatedId } from '../../segments/input/DocumentSource.js';
import type { SourceOption } from '../api/types.js';
import { readBodyBytes, readJsonBody, parseJsonBody } from './body.js';
import { HttpError, diskFull, validationError } from './errors.js';
import type { IndexWrites } from './IndexWrites.js';
import { resolveIndex, type IndexCatalog, type ServedIndex } from './IndexCatalog.js';
import { stepAsideForSearches } from '../../query/CallerThread.js';

// biome-ignore lint/suspicious/noExplicitAny: hono's Env of the app, which the routes only pass along
type App = Hono<any>;

export interface WriteRouteDeps {
  /** The served indexes (one without writes: a Lucene directory, or an app made without them, is read-only). */
  readonly catalog: IndexCatalog;
  readonly maxBodyBytes: number;
  readonly maxBulkBytes: number;
}

const SHARDS = { total: 1, successful: 1, failed: 0 } as const;
const decoder = new TextDecoder();
const NEWLINE = 0x0a;
/**
 * A `_bulk` yields to the event loop after this much work, in milliseconds (checked between
 * items; an item of 768 numbers takes ~0.1-0.2 ms): a search's continuation that becomes ready
 * meanwhile waits at most about this long.
 */
const BULK_TURN_MS = 2;
/** What `_bulk` bodies arrive as: NDJSON (Elasticsearch 9's client: its vendor type), or JSON from simpler clients. */
const NDJSON_TYPES = ['application/x-ndjson', 'application/vnd.elasticsearch+x-ndjson'];

/** One write of a bulk request or a single-document route, before it runs. */
type WriteOp =
  | { readonly kind: 'index'; readonly id: string | null; readonly doc: unknown; readonly source: Uint8Array; readonly options: WriteOptions }
  | { readonly kind: 'update'; readonly id: string; readonly body: unknown; readonly options: WriteOptions }
  | { readonly kind: 'delete'; readonly id: string; readonly options: WriteOptions };

/** A write's answer: the status and the body (the bulk item, or the single route's whole answer). */
interface WriteAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export function mountWriteRoutes(app: App, deps: WriteRouteDeps): void {
  const { catalog } = deps;

  /** The named index's writer; a 429 (after reading the body) when its indexing memory is over its bound. */
  const writerFor = async (target: string | undefined, c: Context): Promise<Writing> => {
    const writing = await writingOn(resolveIndex(catalog, target));
    const refusal = shed(writing);
    if (refusal !== null) {
      // Read the body before answering: a server that answers mid-upload closes the connection, and
      // the client sees a broken pipe instead of the 429 it can retry on.
      await c.req.raw.arrayBuffer().catch(() => {});
      throw refusal;
    }
    return writing;
  };

  /** Runs one write, syncs the translog, refreshes when asked, and answers as Elasticsearch does. */
  const single = (route: string, op: (c: Context) => Promise<WriteOp>) => async (c: Context) => {
    c.set('route', route);
    const writing = await writerFor(c.req.param('index'), c);
    const { writer, name } = writing;
    const refresh = refreshParam(c);
    const answer = apply(writer, await op(c), name);
    if (!('error' in answer.body)) {
      await acknowledge([writing], refresh);
    }
    if ('error' in answer.body) throw errorOf(answer);
    return c.json({ ...answer.body, ...(refresh === 'true' ? { forced_refresh: true } : {}) }, answer.status as 200);
  };

  const indexOp = (opType: 'index' | 'create', generatedId: boolean) => async (c: Context) => {
    const bytes = await readBodyBytes(c.req.raw, deps.maxBodyBytes);
    const doc = parseJsonBody(bytes);
    const op = c.req.query('op_type') === 'create' ? 'create' : opType;
    return { kind: 'index', id: generatedId ? null : c.req.param('id')!, doc, source: bytes, options: { ...concurrencyParams(c), opType: op } } satisfies WriteOp;
  };

  app.put('/:index/_doc/:id', single('/:index/_doc/:id', indexOp('index', false)));
  app.post('/:index/_doc/:id', single('/:index/_doc/:id', indexOp('index', false)));
  app.post('/:index/_doc', single('/:index/_doc', indexOp('index', true)));
  app.put('/:index/_create/:id', single('/:index/_create/:id', indexOp('create', false)));
  app.post('/:index/_create/:id', single('/:index/_create/:id', indexOp('create', false)));
  app.delete(
    '/:index/_doc/:id',
    single('/:index/_doc/:id', async (c) => ({ kind: 'delete', id: c.req.param('id')!, options: concurrencyParams(c) })),
  );
  app.post(
    '/:index/_update/:id',
    single('/:index/_update/:id', async (c) => ({
      kind: 'update',
      id: c.req.param('id')!,
      body: await readJsonBody(c.req.raw, deps.maxBodyBytes),
      options: concurrencyParams(c),
    })),
  );

  app.post('/:index/_forcemerge', async (c) => {
    c.set('route', '/:index/_forcemerge');
    const { writes, writer, name } = await writerFor(c.req.param('index'), c);
    const raw = c.req.query('max_num_segments');
    if (raw !== undefined && !/^[1-9]\d*$/.test(raw)) throw validationError([{ path: 'max_num_segments', reason: `must be a positive integer, got ${JSON.stringify(raw)}` }]);
    await orDiskFull(writer.forceMerge(raw === undefined ? 1 : Number(raw)), name);
    writes.changed();
    return c.json({ _shards: SHARDS });
  });

  // Elasticsearch's flush: what only the translog holds is committed to segments. GET too, as ES takes both.
  app.on(['GET', 'POST'], '/:index/_flush', async (c) => {
    c.set('route', '/:index/_flush');
    const served = resolveIndex(deps.catalog, c.req.param('index'));
    // An index never written to (no writer open) holds nothing beyond its commit.
    const writer = await served.writes?.openedWriter();
    if (writer) await orDiskFull(writer.commit(), served.name);
    return c.json({ _shards: SHARDS });
  });

  const bulk = async (c: Context) => {
    c.set('route', '/_bulk');
    const target = c.req.param('index');
    // The path's index is checked (and shed when over its bound) before the body is read.
    const first = target === undefined ? null : await writerFor(target, c);
    const refresh = refreshParam(c);
    const t0 = performance.now();
    const bytes = await readBodyBytes(c.req.raw, deps.maxBulkBytes, NDJSON_TYPES);
    const items: Record<string, unknown>[] = [];
    let errors = false;
    let sliceStart = performance.now();
    // Each index an item names, looked up once: its writer, or why its items fail.
    const touched = new Map<string, Writing | HttpError>(first ? [[first.name, first]] : []);
    const writingFor = async (index: string): Promise<Writing | HttpError> => {
      let w = touched.get(index);
      if (w === undefined) {
        try {
          const writing = await writingOn(resolveIndex(catalog, index));
          w = shed(writing) ?? writing;
        } catch (e) {
          if (!(e instanceof HttpError)) throw e;
          w = e;
        }
        touched.set(index, w);
      }
      return w;
    };
    // An item without `_index` under `/_bulk` goes to the server's only index, when it has one.
    const only = catalog.list();
    const defaultIndex = target ?? (only.length === 1 ? only[0]!.name : null);
    for (const item of bulkItems(bytes, defaultIndex)) {
      // Searches and health checks get the event loop between items: a 500-doc body of 768-dim
      // vectors takes ~100 ms of parsing and indexing, which would otherwise hold them all that
      // time; and searches waiting for their turn go first (stepAsideForSearches).
      if (performance.now() - sliceStart >= BULK_TURN_MS) {
        await stepAsideForSearches();
        sliceStart = performance.now();
      }
      let answer: WriteAnswer;
      if ('error' in item) answer = item.error;
      else {
        const writing = await writingFor(item.index);
        if (writing instanceof HttpError)
          answer = {
            status: writing.status,
            body: { _index: item.index, ...(item.op.kind === 'index' && item.op.id === null ? {} : { _id: item.op.id }), status: writing.status, error: writing.body().error },
          };
        else answer = apply(writing.writer, item.op, writing.name);
      }
      if ('error' in answer.body) errors = true;
      items.push({ [item.action]: { ...answer.body, status: answer.status } });
    }
    await acknowledge(
      [...touched.values()].filter((w): w is Writing => !(w instanceof HttpError)),
      refresh,
    );
    return c.json({ errors, took: Math.round(performance.now() - t0), items });
  };
  for (const path of ['/_bulk', '/:index/_bulk']) {
    app.post(path, bulk);
    app.put(path, bulk);
  }
}

/** An index taking writes: its name, its writes and its (open) writer. */
interface Writing {
  readonly name: string;
  readonly writes: IndexWrites;
  readonly writer: IndexWriter;
}

/** The index's writer, opened on first use; 400 for an index served read-only. */
async function writingOn(served: ServedIndex): Promise<Writing> {
  if (served.writes === null)
    throw new HttpError(400, 'illegal_argument_exception', `index [${served.name}] is served read-only (a Lucene index directory, or a server started without writes)`);
  return { name: served.name, writes: served.writes, writer: await served.writes.writer() };
}

/**
 * Elasticsearch's 429 for a write to an index over its indexing bound (documents not yet in
 * segments, or merge debt), having started what the index waits for; null when it is within it.
 */
function shed({ name, writer }: Writing): HttpError | null {
  const why = writer.backpressure;
  if (why === null) return null;
  writer.catchUp();
  // Documents wait because the disk is full (their segment could not be written): say so, as
  // Elasticsearch's flood-stage block does, rather than that writes outrun the flushes.
  const full = writer.lastWriteFailure === null ? null : diskFull(writer.lastWriteFailure, name);
  if (full !== null) return full;
  return new HttpError(429, 'es_rejected_execution_exception', `rejected execution of a write on [${name}]: ${why}; retry later`, {}, { 'Retry-After': '1' });
}

/**
 * Makes the writes made so far acknowledgeable: durable (one translog fsync per index, under
 * `request` durability; `async` indexes sync on their timer), scheduled for the next refresh, or
 * searchable now when the request asked (`refresh=true|wait_for`).
 */
async function acknowledge(writings: readonly Writing[], refresh: 'true' | 'wait_for' | 'false'): Promise<void> {
  await Promise.all(writings.map((w) => (w.writer.durability === 'request' ? orDiskFull(w.writer.sync(), w.name) : undefined)));
  for (const w of writings) w.writes.changed();
  if (refresh !== 'false') await Promise.all(writings.map((w) => orDiskFull(w.writes.refresh(), w.name)));
}

/** `work`, with a disk-full failure answered as Elasticsearch answers one (429, retry later). */
async function orDiskFull<T>(work: Promise<T>, index: string): Promise<T> {
  try {
    return await work;
  } catch (e) {
    throw diskFull(e, index) ?? e;
  }
}

/**
 * A GET that sees unrefreshed writes (Elasticsearch's realtime get) with the doc's `_seq_no` and
 * `_version`; undefined when no writer is open (the served reader answers then: nothing was written).
 */
export async function realtimeDocument(writes: IndexWrites | null, id: string): Promise<CurrentDocument | null | undefined> {
  const writer = await writes?.openedWriter();
  return writer ? writer.getDocument(id) : undefined;
}

/** A realtime doc's `_source` as a GET asks for it (`_source`, `_source_includes`, `_source_excludes`). */
export function realtimeSource(doc: CurrentDocument, option: SourceOption | undefined): Record<string, unknown> | undefined {
  if (option === false) return undefined;
  const source = JSON.parse(decoder.decode(doc.source)) as Record<string, unknown>;
  if (option === undefined || option === true) return source;
  if (Array.isArray(option)) return filterSource(source, { includes: option, excludes: [] });
  const o = option as Exclude<SourceOption, boolean | readonly string[]>;
  return filterSource(source, { includes: o.includes ?? [], excludes: o.excludes ?? [] });
}

/** Runs one write on the writer; every failure becomes the item's answer (status + Elasticsearch error). */
function apply(writer: IndexWriter, op: WriteOp, index: string): WriteAnswer {
  const meta = (id: string, r: WriteResult, status: number): WriteAnswer => ({
    status,
    body: { _index: index, _id: id, _version: r.version, result: r.result, _shards: SHARDS, _seq_no: r.seqNo, _primary_term: PRIMARY_TERM },
  });
  const id = op.kind === 'index' ? (op.id ?? undefined) : op.id;
  try {
    switch (op.kind) {
      case 'index': {
        if (typeof op.doc !== 'object' || op.doc === null || Array.isArray(op.doc)) throw new DocumentError('_source', 'a document is a JSON object');
        const docId = op.id ?? generatedId();
        const r = writer.updateDocument(docId, op.doc, { ...op.options, source: op.source });
        return meta(docId, r, r.result === 'created' ? 201 : 200);
      }
      case 'delete': {
        const r = writer.deleteDocument(op.id, op.options);
        return meta(op.id, r, r.result === 'deleted' ? 200 : 404);
      }
      case 'update':
        return update(writer, op, index, meta);
    }
  } catch (e) {
    return { status: statusOf(e), body: { _index: index, ...(id !== undefined ? { _id: id } : {}), error: errorBody(e, index, id) } };
  }
}

/** `_update`: `doc` merged into the current `_source` (objects deeply, as Elasticsearch does), `upsert` or `doc_as_upsert` when there is none. */
function update(writer: IndexWriter, op: Extract<WriteOp, { kind: 'update' }>, index: string, meta: (id: string, r: WriteResult, status: number) => WriteAnswer): WriteAnswer {
  const body = op.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationError([{ path: '', reason: 'must be an object like {"doc": {...}}' }]);
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b))
    if (!['doc', 'upsert', 'doc_as_upsert', 'detect_noop', '_source'].includes(k))
      throw validationError([{ path: k, reason: 'unknown field (supported: doc, upsert, doc_as_upsert, detect_noop)' }]);
  if (b.doc !== undefined && (typeof b.doc !== 'object' || b.doc === null || Array.isArray(b.doc))) throw validationError([{ path: 'doc', reason: 'must be an object' }]);
  if (b.upsert !== undefined && (typeof b.upsert !== 'object' || b.upsert === null || Array.isArray(b.upsert)))
    throw validationError([{ path: 'upsert', reason: 'must be an object' }]);
  if (b.doc === undefined && b.upsert === undefined) throw validationError([{ path: 'doc', reason: 'is required (a partial document)' }]);
  const current = writer.getDocument(op.id);
  if (current === null) {
    const fresh = b.doc_as_upsert === true ? b.doc : b.upsert;
    if (fresh === undefined) throw new HttpError(404, 'document_missing_exception', `[${op.id}]: document missing`, { index, shard: '0', index_uuid: index });
    const r = writer.updateDocument(op.id, fresh as object, { ...op.options, opType: 'create' });
    return meta(op.id, r, 201);
  }
  const existing = JSON.parse(decoder.decode(current.source)) as Record<string, unknown>;
  const merged = mergeInto(structuredClone(existing), (b.doc ?? {}) as Record<string, unknown>);
  if (b.detect_noop !== false && JSON.stringify(merged) === JSON.stringify(existing))
    return {
      status: 200,
      body: {
        _index: index,
        _id: op.id,
        _version: current.version,
        result: 'noop',
        _shards: { total: 0, successful: 0, failed: 0 },
        _seq_no: current.seqNo,
        _primary_term: PRIMARY_TERM,
      },
    };
  const field = writer.field.name;
  // The stored source has no vector (it lives in `.vec`): keep the current one unless the partial doc brings a new one.
  if (!(field in ((b.doc ?? {}) as object))) merged[field] = Array.from(current.vector);
  const r = writer.updateDocument(op.id, merged, op.options);
  return meta(op.id, r, 200);
}

/** Elasticsearch's source merge: objects merge key by key, anything else (arrays included) replaces. */
function mergeInto(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(patch)) {
    const t = target[k];
    if (isObject(t) && isObject(v)) mergeInto(t, v);
    else target[k] = v;
  }
  return target;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function statusOf(e: unknown): number {
  if (e instanceof HttpError) return e.status;
  if (e instanceof VersionConflictError) return 409;
  if (e instanceof DocumentError) return 400;
  return 500;
}

function errorBody(e: unknown, index: string, id: string | undefined): Record<string, unknown> {
  if (e instanceof HttpError) return e.body().error;
  if (e instanceof VersionConflictError) return { type: 'version_conflict_engine_exception', reason: e.message, index, shard: '0', index_uuid: index };
  if (e instanceof DocumentError)
    return { type: 'document_parsing_exception', reason: `[1:1] failed to parse field [${e.field}]: ${e.reason}`, field: e.field, ...(id ? { _id: id } : {}) };
  return { type: 'internal_error', reason: (e as Error).message ?? String(e) };
}

/** A failed single write as the HttpError the app's error handler answers with. */
function errorOf(answer: WriteAnswer): HttpError {
  const error = answer.body.error as { type: string; reason: string } & Record<string, unknown>;
  const { type, reason, ...details } = error;
  return new HttpError(answer.status, type as never, reason, details);
}

/** `refresh`: `true` (or empty) and `wait_for` make the write searchable before the answer; `false` (default) leaves it to the scheduled refresh. */
function refreshParam(c: Context): 'true' | 'wait_for' | 'false' {
  const v = c.req.query('refresh');
  if (v === undefined || v === 'false') return 'false';
  if (v === '' || v === 'true') return 'true';
  if (v === 'wait_for') return 'wait_for';
  throw validationError([{ path: 'refresh', reason: `must be true, false or wait_for, got ${JSON.stringify(v)}` }]);
}

/** `if_seq_no` and `if_primary_term` query parameters (non-negative integers). */
function concurrencyParams(c: Context): WriteOptions {
  const out: { ifSeqNo?: number; ifPrimaryTerm?: number } = {};
  for (const [param, key] of [
    ['if_seq_no', 'ifSeqNo'],
    ['if_primary_term', 'ifPrimaryTerm'],
  ] as const) {
    const v = c.req.query(param);
    if (v === undefined) continue;
    if (!/^\d+$/.test(v)) throw validationError([{ path: param, reason: `must be a non-negative integer, got ${JSON.stringify(v)}` }]);
    out[key] = Number(v);
  }
  return out;
}

type BulkItem = { readonly action: string; readonly index: string; readonly op: WriteOp } | { readonly action: string; readonly error: WriteAnswer };

/**
 * The items of a `_bulk` body: an action line (`{"index": {"_id": "1"}}`, `create`, `update`,
 * `delete`), then a document line for all but delete. A malformed action line fails the whole
 * request (400), as Elasticsearch does; a bad document fails only its item.
 */
function* bulkItems(bytes: Uint8Array, defaultIndex: string | null): Generator<BulkItem> {
  let pos = 0;
  let line = 0;
  const nextLine = (): Uint8Array | null => {
    while (pos < bytes.length) {
      let end = bytes.indexOf(NEWLINE, pos);
      if (end < 0) end = bytes.length;
      const text = bytes.subarray(pos, end);
      pos = end + 1;
      line++;
      if (!isBlank(text)) return text;
    }
    return null;
  };
  for (let action = nextLine(); action !== null; action = nextLine()) {
    const actionLine = line;
    let parsed: unknown;
    try {
      parsed = JSON.parse(decoder.decode(action));
    } catch (e) {
      throw new HttpError(400, 'illegal_argument_exception', `Malformed action/metadata line [${actionLine}], expected a JSON object: ${(e as Error).message}`);
    }
    const keys = isObject(parsed) ? Object.keys(parsed) : [];
    const verb = keys[0];
    if (keys.length !== 1 || !['index', 'create', 'update', 'delete'].includes(verb!) || !isObject((parsed as Record<string, unknown>)[verb!]))
      throw new HttpError(400, 'illegal_argument_exception', `Malformed action/metadata line [${actionLine}], expected {"index"|"create"|"update"|"delete": {...}}`);
    const meta = (parsed as Record<string, Record<string, unknown>>)[verb!]!;
    const index = typeof meta._index === 'string' ? meta._index : defaultIndex;
    const rawId = meta._id;
    const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : null;
    if (index === null) throw new HttpError(400, 'action_request_validation_exception', `Validation Failed: 1: index is missing (line ${actionLine});`);
    const options: WriteOptions = {
      ...(typeof meta.if_seq_no === 'number' ? { ifSeqNo: meta.if_seq_no } : {}),
      ...(typeof meta.if_primary_term === 'number' ? { ifPrimaryTerm: meta.if_primary_term } : {}),
    };
    if (verb === 'delete') {
      if (id === null) throw new HttpError(400, 'action_request_validation_exception', `Validation Failed: 1: id is missing (line ${actionLine});`);
      yield { action: verb, index, op: { kind: 'delete', id, options } };
      continue;
    }
    const docBytes = nextLine();
    if (docBytes === null)
      throw new HttpError(400, 'illegal_argument_exception', `The bulk request must be terminated by a newline [\\n]: action line [${actionLine}] has no document line`);
    let doc: unknown;
    try {
      doc = JSON.parse(decoder.decode(docBytes));
    } catch (e) {
      yield {
        action: verb!,
        error: {
          status: 400,
          body: { _index: index, ...(id ? { _id: id } : {}), error: { type: 'document_parsing_exception', reason: `[${line}:1] failed to parse: ${(e as Error).message}` } },
        },
      };
      continue;
    }
    if (verb === 'update') {
      if (id === null) throw new HttpError(400, 'action_request_validation_exception', `Validation Failed: 1: id is missing (line ${actionLine});`);
      yield { action: verb, index, op: { kind: 'update', id, body: doc, options } };
    } else yield { action: verb!, index, op: { kind: 'index', id, doc, source: docBytes.slice(), options: { ...options, opType: verb === 'create' ? 'create' : 'index' } } };
  }
}

function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}
