/**
 * The HTTP API over one `VectorIndex`: the native `/v1/search`, Elasticsearch's `/:index/_search`
 * (the knn section, knn queries, filters), its document routes (documentRoutes.ts), `/health`,
 * `/v1/indexes` and `/metrics`. Searches pass admission
 * control (bounded in-flight + bounded FIFO queue, 429 beyond) and run under a deadline whose
 * AbortSignal reaches the engine; a client disconnect aborts them too.
 */
import { RecallTargetError } from '../calibration/RecallTargetError.js';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { QueryProfiler, monotonicMs, type IndexMemory, type QueryProfile, type SearchResult, type VectorIndex } from '../api/types.js';
import type { Release, Ticket } from './Admission.js';
import { readJsonBody } from './body.js';
import type { VectorPath } from './vectorJson.js';
import { CLIENT_CLOSED_REQUEST, ClientClosedError, HttpError, SearchTimeoutError, ShuttingDownError } from './errors.js';
import { PROMETHEUS_CONTENT_TYPE } from './metrics.js';
import { resolveServerOptions, type ServerOptions } from './options.js';
import { ServerRuntime } from './ServerRuntime.js';
import { IncompatibleRefreshError, type RefreshOutcome } from './ReopeningIndex.js';
import type { SearchRequest } from './validation.js';
import { openApiDocument, type OpenApiSettings } from './openapi.js';
import { DOCS_ASSETS, docsAsset, docsPage, type DocsAsset } from './docsPage.js';
import { esContents, hitContents, mountDocumentRoutes } from './documentRoutes.js';
import { mountWriteRoutes } from './writeRoutes.js';
import { DEFAULT_REFRESH_INTERVAL_MS, type IndexWrites } from './IndexWrites.js';
import { SingleIndexCatalog, isCatalog, resolveIndex, servedIndex, type IndexCatalog, type ServedIndex } from './IndexCatalog.js';
import { defaultIndexSettings } from './IndexSettings.js';
import { mountIndexRoutes } from './indexRoutes.js';

type Env = { Variables: { route: string; ticket: Ticket }; Bindings: Partial<HttpBindings> };
/** The hono app {@link createApp} builds (its `fetch` serves requests; `request` is handy in tests). */
export type PrescoreApp = Hono<Env>;

interface Completed {
  readonly result: SearchResult;
  readonly tookMs: number;
  readonly queueMs: number;
}

/**
 * Builds the app. `runtime` holds admission, metrics and drain state; pass one to share it
 * with a server (startServer does), or let the app make its own.
 */
export function createApp(indexes: VectorIndex | IndexCatalog, options: Partial<ServerOptions> = {}, runtime?: ServerRuntime, writes: IndexWrites | null = null): PrescoreApp {
  const opts = resolveServerOptions(options);
  const rt = runtime ?? new ServerRuntime(opts);
  const catalog: IndexCatalog = isCatalog(indexes)
    ? indexes
    : new SingleIndexCatalog(servedIndex(opts.name ?? indexes.name, indexes, writes, defaultIndexSettings(DEFAULT_REFRESH_INTERVAL_MS), opts.maxTimeoutMs));
  const app = new Hono<Env>();

  app.use('*', async (c, next) => {
    const t0 = performance.now();
    rt.requestStarted();
    try {
      await next();
    } finally {
      rt.requestEnded();
      if (rt.draining) c.res.headers.set('Connection', 'close');
      // Elasticsearch's clients accept only a server whose answers say it is Elasticsearch (README).
      c.res.headers.set('X-Elastic-Product', 'Elasticsearch');
      rt.metrics.observeRequest(c.get('route') ?? 'unmatched', c.req.method, c.res.status, (performance.now() - t0) / 1000);
    }
  });

  /**
   * A search route's admission: the request takes its place on arrival, before its body is read
   * (Admission), and gives it up when its handler returns; a request finding every place held is
   * shed with 429 without its body being read.
   */
  const admitted =
    (route: string): MiddlewareHandler<Env> =>
    async (c, next) => {
      c.set('route', route);
      refuseWhenStopped();
      const ticket = rt.admit();
      c.set('ticket', ticket);
      try {
        await next();
      } finally {
        ticket.leave();
      }
    };

  app.post('/v1/search', admitted('/v1/search'), async (c) => {
    const arrivedAt = monotonicMs();
    const served = onlyIndex('/v1/search');
    const body = await readJsonBody(c.req.raw, opts.maxBodyBytes, c.env?.incoming, { path: NATIVE_VECTOR, dims: served.index.dims });
    const parsedAt = monotonicMs();
    const parsed = (await served.validator()).nativeSearch(body);
    if (!parsed.ok) throw parsed.error;
    const { result, tookMs, queueMs } = await search(c, served, parsed.value, entryProfile(parsed.value, arrivedAt, parsedAt));
    return c.json({
      hits: result.hits.map((h) => ({ id: h.id, doc: h.doc, score: finiteScore(h.score, h.id), ...hitContents(h) })),
      total_hits: result.totalHits,
      took_ms: round3(tookMs),
      // The search's own figures only when asked for (`stats` or `profile`), as Elasticsearch returns `profile`.
      ...(parsed.value.stats ? { queue_ms: round3(queueMs), stats: statsJson(result) } : {}),
    });
  });

  app.post('/:index/_search', admitted('/:index/_search'), async (c) => {
    const served = resolveIndex(catalog, c.req.param('index'));
    const { index, name } = served;
    const arrivedAt = monotonicMs();
    const body = await readJsonBody(c.req.raw, opts.maxBodyBytes, c.env?.incoming, { path: ES_VECTOR, dims: index.dims });
    const parsedAt = monotonicMs();
    const parsed = (await served.validator()).esSearch(body);
    if (!parsed.ok) throw parsed.error;
    const req = parsed.value;
    // Elasticsearch returns each hit's _source unless told otherwise (indexes with documents).
    const fetch = { ...req.fetch, source: req.fetch.source ?? (index.mapping?.() ? true : undefined) };
    const shards = { total: 1, successful: 1, skipped: 0, failed: 0 };
    if (req.kind === 'filter') {
      const t0 = performance.now();
      const { total, hits } = await admittedRun(c, req.timeoutMs, (signal) => {
        if (!index.match) throw new HttpError(400, 'illegal_argument_exception', 'this index cannot answer a query without knn');
        signal.throwIfAborted();
        return index.match(req.filter, { from: req.from, size: req.size, ...fetch });
      });
      return c.json({
        took: Math.round(performance.now() - t0),
        timed_out: false,
        _shards: shards,
        hits: {
          total: { value: total, relation: 'eq' },
          max_score: hits.length > 0 ? 1 : null,
          hits: hits.map((h) => ({ _index: name, _id: h.id, _score: 1, ...esContents(h) })),
        },
      });
    }
    const { result, tookMs } = await search(c, served, { ...req, fetch }, entryProfile(req, arrivedAt, parsedAt));
    const hits = result.hits.slice(req.from, req.from + req.size);
    return c.json({
      ...(result.stats.profile ? { profile: profileJson(result.stats.profile) } : {}),
      took: Math.round(tookMs),
      timed_out: false,
      _shards: shards,
      hits: {
        total: { value: result.hits.length, relation: 'eq' },
        // Null only when there is no hit at all, as Elasticsearch answers then.
        max_score: result.hits.length > 0 ? finiteScore(result.hits[0]!.score, result.hits[0]!.id) : null,
        hits: hits.map((h) => ({ _index: name, _id: h.id, _score: finiteScore(h.score, h.id), ...esContents(h) })),
      },
    });
  });

  // GET too: Elasticsearch takes both, and its client's helpers.bulk refreshes with GET.
  app.on(['GET', 'POST'], '/:index/_refresh', async (c) => {
    c.set('route', '/:index/_refresh');
    const served = resolveIndex(catalog, c.req.param('index'));
    const outcome = await refreshIndex(served.writes ?? served.index);
    return c.json({ _shards: { total: 1, successful: 1, failed: 0 }, refreshed: outcome.refreshed, docs: outcome.docs });
  });

  app.get('/health', (c) => {
    c.set('route', '/health');
    const served = catalog.list();
    const body = {
      status: rt.draining ? 'draining' : 'ok',
      // The one index's name and dims (null on a server of none or several), then every name.
      index: served.length === 1 ? served[0]!.name : null,
      dims: served.length === 1 ? served[0]!.index.dims : null,
      indexes: served.map((s) => s.name),
      inflight: rt.admission.inflight,
      queued: rt.admission.queued,
      max_inflight: rt.admission.maxInflight,
      max_queue: rt.admission.maxQueue,
    };
    // 503 while draining, so load balancers stop routing here before the listener closes.
    return c.json(body, rt.draining ? 503 : 200);
  });

  app.get('/v1/indexes', async (c) => {
    c.set('route', '/v1/indexes');
    const descriptions = await Promise.all(catalog.list().map(async (s) => ({ ...(await s.index.describe()), name: s.name })));
    return c.json({ indexes: descriptions });
  });

  // The first phase's memory is fixed while the served indexes are: read again only when they change.
  let memoryOf: { readonly indexes: readonly ServedIndex[]; readonly known: Promise<void> } | undefined;
  app.get('/metrics', async (c) => {
    c.set('route', '/metrics');
    const served = catalog.list();
    if (memoryOf?.indexes !== served) {
      const known = Promise.all(served.map((s) => s.index.describe())).then(
        (ds) => rt.metrics.setIndexMemory(totalMemory(ds.map((d) => d.memory))),
        () => void (memoryOf = undefined),
      );
      memoryOf = { indexes: served, known };
    }
    await memoryOf.known;
    return c.body(rt.metrics.render(), 200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE });
  });

  // The OpenAPI document of this server, its examples made for its first index (its name, dims and
  // field; a server of none shows a 3-dims `my-index`), built once per first index.
  let openApi: { readonly first: ServedIndex | undefined; readonly text: Promise<string> } | undefined;
  app.get('/openapi.json', async (c) => {
    c.set('route', '/openapi.json');
    const first = catalog.list()[0];
    if (openApi?.first !== first) {
      const text = (first ? first.validator().then((v) => ({ name: first.name, shape: v.shape, limits: v.limits })) : Promise.resolve(placeholderApi(opts))).then(
        (settings) => JSON.stringify(openApiDocument(settings)),
        (e: unknown) => {
          openApi = undefined;
          throw e;
        },
      );
      openApi = { first, text };
    }
    return c.body(await openApi.text, 200, { 'Content-Type': 'application/json' });
  });

  app.get('/docs', (c) => {
    c.set('route', '/docs');
    return c.html(
      docsPage(
        `prescore: ${
          catalog
            .list()
            .map((s) => s.name)
            .join(', ') || 'no index yet'
        }`,
      ),
    );
  });

  for (const path of Object.keys(DOCS_ASSETS) as DocsAsset[]) {
    app.get(path, (c) => {
      c.set('route', '/docs');
      const { body, type } = docsAsset(path);
      return c.body(new Uint8Array(body), 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
    });
  }

  mountWriteRoutes(app, { catalog, maxBodyBytes: opts.maxBodyBytes, maxBulkBytes: opts.maxBulkBytes });
  mountIndexRoutes(app, { catalog, maxBodyBytes: opts.maxBodyBytes });
  mountDocumentRoutes(app, { catalog, maxBodyBytes: opts.maxBodyBytes, admittedRun: (c, timeoutMs, run) => admittedRun(c, timeoutMs, run) });

  // A known path with another method is 405 naming the allowed ones (RFC 9110 15.5.6), not 404.
  for (const [path, route, allow] of ROUTES) {
    app.all(path, (c) => {
      c.set('route', route);
      const e = new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${route}; use ${allow.join(' or ')}`, {}, { Allow: allow.join(', ') });
      return c.json(e.body(), 405, e.headers);
    });
  }

  app.notFound((c) => {
    const e = new HttpError(404, 'not_found', `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
    return c.json(e.body(), 404);
  });

  app.onError((err, c) => {
    const e = err instanceof HttpError ? err : new HttpError(500, 'internal_error', `internal error: ${err.message}`);
    if (!(err instanceof HttpError)) rt.log(`prescore http: ${c.req.method} ${c.req.path} failed: ${err.stack ?? err.message}`);
    return c.json(e.body(), e.status as ContentfulStatusCode, e.headers);
  });

  /**
   * While draining, a request that reached the app is still answered in full (shutdown drops
   * nothing that was received); the drain deadline bounds how long that may take. Only once the
   * server has stopped (the index may be closed) is a search refused.
   */
  function refuseWhenStopped(): void {
    if (rt.stopped) {
      throw new HttpError(503, 'shutting_down', 'server has shut down; retry on another instance', {}, { 'Retry-After': '1' });
    }
  }

  /** The execution slot, deadline and cancellation around one engine search. */
  /** The index of a route that names none (`/v1/search`): the server's only one. */
  function onlyIndex(route: string): ServedIndex {
    const all = catalog.list();
    if (all.length !== 1) throw new HttpError(400, 'illegal_argument_exception', `${route} searches a server's only index; this one serves ${all.length}: use /:index/_search`);
    return all[0]!;
  }

  async function search(c: Context<Env>, served: ServedIndex, req: SearchRequest, profiler: QueryProfiler | undefined): Promise<Completed> {
    const { index, writes } = served;
    if (writes !== null) await writes.beforeSearch();
    const t0 = performance.now();
    const admissionAt = profiler ? monotonicMs() : 0;
    let queueMs = 0;
    const result = await admittedRun(
      c,
      req.timeoutMs,
      (signal) =>
        index.search(req.vector, {
          k: req.k,
          numCandidates: req.numCandidates,
          oversample: req.oversample,
          ...(req.recallTarget !== undefined ? { recallTarget: req.recallTarget } : {}),
          readPath: req.readPath ?? opts.readPath,
          signal,
          profile: profiler,
          callerThread: rt.callerThread,
          filter: req.filter,
          source: req.fetch.source,
          fields: req.fetch.fields,
          docvalueFields: req.fetch.docvalueFields,
        }),
      (waitedMs) => {
        queueMs = waitedMs;
        if (profiler) profiler.phase('http.admission', admissionAt);
      },
    );
    rt.metrics.observeQuery(result.stats);
    return { result, queueMs, tookMs: performance.now() - t0 };
  }

  /**
   * Runs `run` in the request's admission slot (the ticket its route took on arrival), under the
   * deadline (`timeoutMs`, else the server's) and the client's disconnect, either of which aborts
   * the signal `run` is given.
   */
  async function admittedRun<T>(c: Context<Env>, timeoutMs: number | undefined, run: (signal: AbortSignal) => Promise<T>, admitted?: (queueMs: number) => void): Promise<T> {
    refuseWhenStopped();
    const t0 = performance.now();
    const deadline = timeoutMs ?? opts.defaultTimeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new SearchTimeoutError(deadline)), deadline);
    const client = c.req.raw.signal;
    const onClientGone = () => controller.abort(new ClientClosedError());
    if (client.aborted) onClientGone();
    else client.addEventListener('abort', onClientGone, { once: true });
    const untrack = rt.track(controller);
    let stage: 'queue' | 'engine' = 'queue';
    // Routes outside the search admission middleware take their place here (and give it up below).
    const own = c.get('ticket') === undefined ? rt.admit() : null;
    try {
      const ticket = own ?? c.get('ticket');
      const release: Release = await ticket.run(controller.signal);
      const queueMs = performance.now() - t0;
      rt.metrics.queueWait.observe({}, queueMs / 1000);
      admitted?.(queueMs);
      if (controller.signal.aborted) {
        release();
        throw controller.signal.reason;
      }
      stage = 'engine';
      let running: Promise<T>;
      try {
        running = run(controller.signal);
      } catch (e) {
        release();
        throw e;
      }
      // The slot is held until the engine settles, even when the deadline answers first: an
      // engine slow to honour its signal must not push real concurrency past maxInflight.
      running.then(release, release);
      return await untilAborted(running, controller.signal);
    } catch (e) {
      throw searchFailure(e, controller.signal, stage);
    } finally {
      own?.leave();
      clearTimeout(timer);
      client.removeEventListener('abort', onClientGone);
      untrack();
    }
  }

  function searchFailure(e: unknown, signal: AbortSignal, stage: 'queue' | 'engine'): HttpError {
    if (e instanceof HttpError) return e;
    if (e instanceof RecallTargetError) return new HttpError(400, 'illegal_argument_exception', e.message);
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      if (reason instanceof SearchTimeoutError) {
        rt.metrics.timeouts.inc({ stage });
        const where = stage === 'queue' ? ' (still queued; it never ran)' : '';
        return new HttpError(504, 'search_timeout', `${reason.message}${where}`, { timeout_ms: reason.timeoutMs, stage });
      }
      if (reason instanceof ClientClosedError) {
        rt.metrics.cancelled.inc();
        return new HttpError(CLIENT_CLOSED_REQUEST, 'client_closed_request', reason.message);
      }
      if (reason instanceof ShuttingDownError) {
        return new HttpError(503, 'shutting_down', `search aborted: ${reason.message}`, {}, { 'Retry-After': '1' });
      }
    }
    rt.metrics.engineErrors.inc();
    const message = e instanceof Error ? e.message : String(e);
    rt.log(`prescore http: search failed: ${e instanceof Error && e.stack ? e.stack : message}`);
    return new HttpError(500, 'search_error', `search failed: ${message}`);
  }

  return app;
}

/** The search route a request path names (what the admission middleware and the server's shed path count), or null. */
export function searchRoute(path: string): '/v1/search' | '/:index/_search' | null {
  const end = path.indexOf('?');
  const p = end < 0 ? path : path.slice(0, end);
  if (p === '/v1/search') return '/v1/search';
  return /^\/[^/]+\/_search$/.test(p) ? '/:index/_search' : null;
}

/** Where each request shape holds its query vector. */
const NATIVE_VECTOR: VectorPath = ['vector'];
const ES_VECTOR: VectorPath = ['knn', 'query_vector'];

/** Every route: its path pattern, its name in metrics and errors, and the methods it answers (HEAD with GET). */
export const ROUTES: readonly (readonly [string, string, readonly string[]])[] = [
  ['/v1/search', '/v1/search', ['POST']],
  ['/v1/indexes', '/v1/indexes', ['GET', 'HEAD']],
  ['/health', '/health', ['GET', 'HEAD']],
  ['/metrics', '/metrics', ['GET', 'HEAD']],
  ['/:index/_search', '/:index/_search', ['POST']],
  ['/:index/_refresh', '/:index/_refresh', ['GET', 'HEAD', 'POST']],
  ['/openapi.json', '/openapi.json', ['GET', 'HEAD']],
  ['/docs', '/docs', ['GET', 'HEAD']],
  ['/', '/', ['GET', 'HEAD']],
  ['/_mapping', '/_mapping', ['GET', 'HEAD']],
  ['/_mget', '/_mget', ['GET', 'POST']],
  ['/:index/_mapping', '/:index/_mapping', ['GET', 'HEAD']],
  ['/:index/_settings', '/:index/_settings', ['GET', 'HEAD', 'PUT']],
  ['/:index/_mget', '/_mget', ['GET', 'POST']],
  ['/:index/_count', '/:index/_count', ['GET', 'POST']],
  ['/:index/_doc/:id', '/:index/_doc/:id', ['GET', 'HEAD', 'PUT', 'POST', 'DELETE']],
  ['/:index/_doc', '/:index/_doc', ['POST']],
  ['/:index/_create/:id', '/:index/_create/:id', ['PUT', 'POST']],
  ['/:index/_update/:id', '/:index/_update/:id', ['POST']],
  ['/_bulk', '/_bulk', ['POST', 'PUT']],
  ['/:index/_forcemerge', '/:index/_forcemerge', ['POST']],
  ['/:index/_flush', '/:index/_flush', ['GET', 'POST']],
  ['/_cluster/health', '/_cluster/health', ['GET', 'HEAD']],
  ['/_cluster/health/:index', '/_cluster/health', ['GET', 'HEAD']],
  ['/_cat/indices', '/_cat/indices', ['GET', 'HEAD']],
  ['/:index/_bulk', '/_bulk', ['POST', 'PUT']],
  ['/:index', '/:index', ['GET', 'HEAD', 'PUT', 'DELETE']],
];

/** An index the server can reopen at a new commit (ReopeningIndex). */
interface Refreshable {
  refresh(): Promise<RefreshOutcome>;
}

/** Reopens the served index (through its writes when it takes them: the newest commit plus the writes since). */
async function refreshIndex(index: VectorIndex | IndexWrites): Promise<RefreshOutcome> {
  if (typeof (index as Partial<Refreshable>).refresh !== 'function') {
    throw new HttpError(400, 'illegal_argument_exception', 'this server cannot reopen its index (it was started without a reopenable index)');
  }
  try {
    return await (index as unknown as Refreshable).refresh();
  } catch (e) {
    if (e instanceof IncompatibleRefreshError) throw new HttpError(409, 'illegal_argument_exception', `refresh refused: ${e.message}`);
    throw new HttpError(500, 'refresh_failed', `refresh failed, still serving the previous commit: ${(e as Error).message}`);
  }
}

/**
 * JSON has no NaN or Infinity (JSON.stringify writes null): a non-finite score would reach the
 * client as a silent `null`. The engine never produces one for valid input (cosine rejects zero
 * vectors at build and query time), so one here is a bug to report, not to serialise.
 */
function finiteScore(score: number, id: string): number {
  if (!Number.isFinite(score)) throw new HttpError(500, 'search_error', `search produced a non-finite score (${score}) for doc [${id}]`);
  return score;
}

/** A profiler for a request that asked for one, holding the body read + JSON parse and the validation as its first phases. */
function entryProfile(req: SearchRequest, arrivedAt: number, parsedAt: number): QueryProfiler | undefined {
  if (!req.profile) return undefined;
  const profiler = new QueryProfiler('http', arrivedAt);
  profiler.phase('http.body', arrivedAt, parsedAt);
  profiler.phase('http.validate', parsedAt);
  return profiler;
}

/** The OpenAPI examples of a server with no index yet. */
function placeholderApi(opts: ServerOptions): OpenApiSettings {
  return { name: 'my-index', shape: { dims: 3, field: 'vector', rejectZeroVector: true }, limits: { maxTimeoutMs: opts.maxTimeoutMs } };
}

/** The first-phase memory of several indexes, as one. */
function totalMemory(all: readonly IndexMemory[]): IndexMemory {
  const sum = (f: (m: IndexMemory) => number) => all.reduce((t, m) => t + f(m), 0);
  const vectors = all.reduce((t, m) => t + (m.bytesPerVector > 0 ? (m.codes + m.graphs) / m.bytesPerVector : 0), 0);
  return {
    state: all.some((m) => m.state === 'planned') ? 'planned' : 'held',
    codes: sum((m) => m.codes),
    graphs: sum((m) => m.graphs),
    scratchPerWorker: all.reduce((t, m) => Math.max(t, m.scratchPerWorker), 0),
    scratchClaimed: sum((m) => m.scratchClaimed),
    workers: all.reduce((t, m) => Math.max(t, m.workers), 0),
    total: sum((m) => m.total),
    arenas: sum((m) => m.arenas),
    bytesPerVector: vectors > 0 ? (sum((m) => m.codes) + sum((m) => m.graphs)) / vectors : 0,
  };
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** QueryStats in the API's snake_case. */
function statsJson(result: SearchResult) {
  const s = result.stats;
  return {
    read_path: s.readPath,
    candidates: s.candidates,
    visited: s.visited,
    exhaustive_segments: s.exhaustiveSegments,
    pages_prefetched: s.pagesPrefetched,
    pages_resident: s.pagesResident,
    pages_read_ahead: s.pagesReadAhead,
    syscalls: s.syscalls,
    reads_before_prefetch: s.readsBeforePrefetch,
    deferred: s.deferred,
    max_prefetch_distance: s.maxPrefetchDistance,
    timings: {
      first_phase_ms: s.timings.firstPhaseMs,
      rescore_ms: s.timings.rescoreMs,
      total_ms: s.timings.totalMs,
      ...(s.timings.filterMs !== undefined ? { filter_ms: s.timings.filterMs } : {}),
    },
    rescored_on: s.rescoredOn,
    searched_on: s.searchedOn,
    slices_taken_back: s.slicesTakenBack,
    ...(s.filter ? { filter: s.filter.map((f) => ({ segment: f.segment, cardinality: f.cardinality, strategy: f.strategy, visited: f.visited, nearby: f.nearby })) } : {}),
    ...(s.recall
      ? {
          recall: {
            target: s.recall.target,
            oversample: s.recall.oversample,
            num_candidates: s.recall.numCandidates,
            calibrated_recall: s.recall.calibratedRecall,
            reached: s.recall.reached,
          },
        }
      : {}),
    ...(s.profile ? { profile: profileJson(s.profile) } : {}),
  };
}

/** The search profile in the API's snake_case. */
function profileJson(p: QueryProfile) {
  return {
    entry: p.entry,
    phases: p.phases.map((x) => ({ name: x.name, start_ms: x.startMs, duration_ms: x.durationMs })),
    hops: p.hops.map((h) => ({ task: h.task, thread_id: h.threadId, start_ms: h.startMs, queue_ms: h.queueMs, run_ms: h.runMs, return_ms: h.returnMs })),
    segments: p.segments.map((s) => ({ segment: s.segment, thread_id: s.threadId, quantize_ms: s.quantizeMs, search_ms: s.searchMs, visited: s.visited, strategy: s.strategy })),
    rescore: p.rescore.map((r) => ({
      on: r.on,
      thread_id: r.threadId,
      entries: r.entries,
      run_ms: r.runMs,
      pages_prefetched: r.pagesPrefetched,
      pages_resident: r.pagesResident,
      syscalls: r.syscalls,
    })),
    gc: p.gc.map((g) => ({ kind: g.kind, start_ms: g.startMs, duration_ms: g.durationMs })),
  };
}

function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
