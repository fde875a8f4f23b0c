/**
 * The index routes, as Elasticsearch answers them: `PUT /:index` (create, with mappings and
 * settings), `DELETE /:index`, `HEAD|GET /:index`, `GET /_mapping` and `/:index/_mapping`,
 * `GET /_cat/indices` and `GET /_cluster/health` (one node, one shard per index, no replicas:
 * green while it answers). Mounted after the fixed paths (`/health`, ...), which `/:index`
 * would otherwise take.
 */
import type { Context, Hono } from 'hono';
import { readJsonBody } from './body.js';
import { HttpError } from './errors.js';
import { resolveIndex, type IndexCatalog, type ServedIndex } from './IndexCatalog.js';
import { SERVER_PATHS, checkIndexName, settingsJson } from './IndexSettings.js';

// biome-ignore lint/suspicious/noExplicitAny: hono's Env of the app, which the routes only pass along
type App = Hono<any>;

export interface IndexRouteDeps {
  readonly catalog: IndexCatalog;
  readonly maxBodyBytes: number;
}

export function mountIndexRoutes(app: App, deps: IndexRouteDeps): void {
  const { catalog } = deps;

  const clusterHealth = (c: Context) => {
    c.set('route', '/_cluster/health');
    const target = c.req.param('index');
    const shards = target === undefined ? catalog.list().length : (resolveIndex(catalog, target), 1);
    return c.json({
      cluster_name: 'prescore',
      status: 'green',
      timed_out: false,
      number_of_nodes: 1,
      number_of_data_nodes: 1,
      active_primary_shards: shards,
      active_shards: shards,
      relocating_shards: 0,
      initializing_shards: 0,
      unassigned_shards: 0,
      delayed_unassigned_shards: 0,
      number_of_pending_tasks: 0,
      number_of_in_flight_fetch: 0,
      task_max_waiting_in_queue_millis: 0,
      active_shards_percent_as_number: 100,
    });
  };
  app.get('/_cluster/health', clusterHealth);
  app.get('/_cluster/health/:index', clusterHealth);

  /** `GET /_cat/indices`: Elasticsearch's columns, as text (`?v` for the header) or `?format=json`. */
  app.get('/_cat/indices', async (c) => {
    c.set('route', '/_cat/indices');
    const rows = await Promise.all(catalog.list().map(catRow));
    if (c.req.query('format') === 'json') return c.json(rows);
    const header = c.req.query('v') !== undefined && c.req.query('v') !== 'false';
    const lines = [...(header ? [CAT_COLUMNS.join(' ')] : []), ...rows.map((r) => CAT_COLUMNS.map((k) => r[k]).join(' '))];
    return c.text(lines.length > 0 ? `${lines.join('\n')}\n` : '');
  });

  const mappings = (served: ServedIndex) => ({ mappings: served.index.mapping?.() ?? {} });
  app.get('/_mapping', (c) => {
    c.set('route', '/_mapping');
    return c.json(Object.fromEntries(catalog.list().map((s) => [s.name, mappings(s)])));
  });
  app.get('/:index/_mapping', (c) => {
    c.set('route', '/:index/_mapping');
    const served = resolveIndex(catalog, c.req.param('index'));
    return c.json({ [served.name]: mappings(served) });
  });

  const indexInfo = (c: Context) => {
    c.set('route', '/:index');
    const target = c.req.param('index')!;
    if (c.req.method === 'HEAD') return c.body(null, catalog.get(target) ? 200 : 404);
    const served = resolveIndex(catalog, target);
    return c.json({ [served.name]: { aliases: {}, ...mappings(served), settings: settingsJson(served.name, served.settings) } });
  };
  app.get('/:index', indexInfo);
  app.on('HEAD', '/:index', indexInfo);

  const settingsOf = (c: Context) => {
    c.set('route', '/:index/_settings');
    const served = resolveIndex(catalog, c.req.param('index'));
    return c.json({ [served.name]: { settings: settingsJson(served.name, served.settings) } });
  };
  app.get('/:index/_settings', settingsOf);
  app.put('/:index/_settings', async (c) => {
    c.set('route', '/:index/_settings');
    const body = await readJsonBody(c.req.raw, deps.maxBodyBytes, undefined);
    await catalog.updateSettings(c.req.param('index'), body);
    return c.json({ acknowledged: true });
  });

  app.put('/:index', async (c, next) => {
    const name = c.req.param('index');
    if (SERVER_PATHS.has(name)) return next(); // `PUT /health`: the route's 405
    c.set('route', '/:index');
    checkIndexName(name);
    const body = c.req.raw.headers.get('content-length') === '0' || c.req.raw.body === null ? null : await readJsonBody(c.req.raw, deps.maxBodyBytes, undefined);
    const served = await catalog.create(name, body);
    return c.json({ acknowledged: true, shards_acknowledged: true, index: served.name });
  });

  app.delete('/:index', async (c, next) => {
    const name = c.req.param('index');
    if (SERVER_PATHS.has(name)) return next();
    c.set('route', '/:index');
    if (name.startsWith('_')) throw new HttpError(400, 'illegal_argument_exception', `cannot delete [${name}]: not an index name`);
    await catalog.delete(name);
    return c.json({ acknowledged: true });
  });
}

/** `_cat/indices`'s columns (Elasticsearch's default ones, in its order). */
const CAT_COLUMNS = ['health', 'status', 'index', 'uuid', 'pri', 'rep', 'docs.count', 'docs.deleted', 'store.size', 'pri.store.size'] as const;
type CatRow = Record<(typeof CAT_COLUMNS)[number], string>;

/** One `_cat/indices` row. */
async function catRow(served: ServedIndex): Promise<CatRow> {
  const { index, name } = served;
  const d = await index.describe();
  const live = index.count ? await index.count() : d.docs;
  return {
    health: 'green',
    status: 'open',
    index: name,
    uuid: name,
    pri: '1',
    rep: '0',
    'docs.count': String(live),
    'docs.deleted': String(Math.max(0, d.docs - live)),
    'store.size': `${d.bytes.total}b`,
    'pri.store.size': `${d.bytes.total}b`,
  };
}
