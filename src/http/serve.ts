/**
 * `prescore serve`: open one index through an injected opener, serve it over HTTP, drain on
 * SIGTERM/SIGINT. Settings come from flags, then PRESCORE_* environment variables, then
 * defaults (flags win).
 */
import { basename, resolve } from 'node:path';
import { MappingError, type Mapping } from '../../segments/document/Mapping.js';
import { UsageError } from '../cliFlags.js';
import { readMappingFile } from '../mappingFile.js';
import { parseArgs } from 'node:util';
import { DEFAULT_OVERSAMPLE, KNN_THREADS, READ_PATHS, RESCORE_THREADS, type KnnThread, type ReadPath, type RescoreThread, type VectorIndex } from '../api/types.js';
import { DEFAULT_EF_PER_CANDIDATE, DEFAULT_NUM_CANDIDATES, DEFAULT_RECALL_TARGET } from '../api/openIndex.js';
import { DEFAULT_SERVER_OPTIONS, resolveServerOptions, type ServerOptions } from './options.js';
import { WarmUpError } from './warmUp.js';
import { startServer, type RunningServer } from './server.js';
import { ReopeningIndex } from './ReopeningIndex.js';
import { DEFAULT_REFRESH_INTERVAL_MS } from './IndexWrites.js';
import { SingleIndexCatalog, servedIndex, type IndexCatalog } from './IndexCatalog.js';
import { DataDirectory, openServedIndex, type ServedIndexDeps } from './DataDirectory.js';
import { defaultIndexSettings } from './IndexSettings.js';
import { openIndexWriter } from '../api/openIndexWriter.js';
import { CALIBRATE_AT_OPEN_DOCS, CALIBRATE_WHEN, type CalibrateWhen } from '../calibration/IndexRecallCalibration.js';
import { MAX_RECALL_TARGET, MIN_RECALL_TARGET } from '../../segments/index/RecallCalibration.js';

/** What `serve` asks the opener for. */
export interface OpenIndexRequest {
  /** `prescore` for `--index DIR` (a `prescore build` directory), `lucene` for `--lucene DIR`. */
  readonly format: 'prescore' | 'lucene';
  /** The served index name (`--name`, default the directory's base name). */
  readonly name: string;
  /** `--read-path`, when given: the default read path for searches that name none. */
  readonly readPath: ReadPath | undefined;
  /** `--field`: the vector field to serve (needed for Lucene directories with several). */
  readonly field: string | undefined;
  /** `--sidecar-dir`: where a Lucene index's 1-bit sidecar lives (default: under ~/.cache/prescore). */
  readonly sidecarDir: string | undefined;
  /** `--mapping FILE` (Lucene directories): the index's mapping, which Lucene's files do not hold. */
  readonly mapping?: Mapping;
  /** `--first-phase`: 'codes' (1-bit codes in RAM, a sidecar for Lucene) or 'graph' (the graph and fp32 vectors on disk). */
  readonly firstPhase?: FirstPhaseMode;
  /** `--knn-thread`: where the first phase runs (default the engine's, adaptive). */
  readonly knnThread?: KnnThread;
  /** `--rescore-thread`: where rescoring runs (default the engine's, adaptive). */
  readonly rescoreThread?: RescoreThread;
  /** `--calibrate`: when an index without a recall calibration measures one (default the engine's, open). */
  readonly calibrate?: CalibrateWhen;
  /** `--recall-target`: the recall@10 of searches that name no oversample, num_candidates or recall_target (null: none). */
  readonly recallTarget?: number | null;
}

export const FIRST_PHASE_MODES = ['codes', 'graph'] as const;
export type FirstPhaseMode = (typeof FIRST_PHASE_MODES)[number];

export type IndexOpener = (dir: string, request: OpenIndexRequest) => Promise<VectorIndex>;

export interface SignalSource {
  on(event: 'SIGTERM' | 'SIGINT' | 'SIGHUP', listener: () => void): unknown;
  off(event: 'SIGTERM' | 'SIGINT' | 'SIGHUP', listener: () => void): unknown;
}

export interface ServeIo {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly stdout?: (line: string) => void;
  readonly stderr?: (line: string) => void;
  /** Default: `process`. */
  readonly signals?: SignalSource;
  /** Called once the server listens (tests use it to find the port). */
  readonly onListening?: (server: RunningServer) => void;
}

/** One setting: its flag, environment variable and help text. */
interface Setting {
  readonly flag: string;
  readonly env: string;
  readonly arg: string;
  readonly help: string;
}

export const SERVE_SETTINGS = {
  index: { flag: 'index', env: 'PRESCORE_INDEX', arg: 'DIR', help: 'prescore index directory to serve (from `prescore build`)' },
  lucene: { flag: 'lucene', env: 'PRESCORE_LUCENE', arg: 'DIR', help: 'serve a Lucene index directory instead (read-only)' },
  data: {
    flag: 'data',
    env: 'PRESCORE_DATA',
    arg: 'DIR',
    help: 'serve every index under DIR (one subdirectory each; none at first) and create new ones there with PUT /:index',
  },
  field: { flag: 'field', env: 'PRESCORE_FIELD', arg: 'NAME', help: 'vector field to serve (Lucene directories)' },
  sidecarDir: {
    flag: 'sidecar-dir',
    env: 'PRESCORE_SIDECAR_DIR',
    arg: 'DIR',
    help: "Lucene directories: where prescore's 1-bit codes are built (never inside the Lucene directory)",
  },
  mapping: {
    flag: 'mapping',
    env: 'PRESCORE_MAPPING',
    arg: 'FILE',
    help: "Lucene directories: the index's mapping, Elasticsearch's `mappings` object as JSON (Lucene's files hold none); filters, fields and docvalue_fields name its fields",
  },
  firstPhase: {
    flag: 'first-phase',
    env: 'PRESCORE_FIRST_PHASE',
    arg: 'MODE',
    help: 'codes: 1-bit codes in RAM (a sidecar for Lucene); graph: search the HNSW graph and fp32 vectors in place on disk (default codes)',
  },
  knnThread: {
    flag: 'knn-thread',
    env: 'PRESCORE_KNN_THREAD',
    arg: 'WHERE',
    help: `where the first phase runs: ${KNN_THREADS.join(' | ')} (default adaptive: the server's thread while no other request is held, else the workers)`,
  },
  rescoreThread: {
    flag: 'rescore-thread',
    env: 'PRESCORE_RESCORE_THREAD',
    arg: 'WHERE',
    help: `where fp32 rescoring runs: ${RESCORE_THREADS.join(' | ')} (default adaptive)`,
  },
  calibrate: {
    flag: 'calibrate',
    env: 'PRESCORE_CALIBRATE',
    arg: 'WHEN',
    help: `when an index without a recall calibration (for recall_target) measures one: ${CALIBRATE_WHEN.join(' | ')} (default open: in the background at start, for indexes of ${CALIBRATE_AT_OPEN_DOCS.toLocaleString('en')}+ docs; smaller ones at the first recall_target search)`,
  },
  recallTarget: {
    flag: 'recall-target',
    env: 'PRESCORE_RECALL_TARGET',
    arg: 'R',
    help: `the recall@10 (e.g. 0.95) searches that name no oversample, num_candidates or recall_target aim for on a calibrated index, or none (they run oversample ${DEFAULT_OVERSAMPLE}) (default: the one stored with the index by \`prescore build --recall-target\`, else ${DEFAULT_RECALL_TARGET})`,
  },
  name: { flag: 'name', env: 'PRESCORE_NAME', arg: 'NAME', help: "index name for /:index/_search (default: the directory's name, or its parent's when it is called `index`)" },
  host: { flag: 'host', env: 'PRESCORE_HOST', arg: 'HOST', help: `address to bind (default ${DEFAULT_SERVER_OPTIONS.host})` },
  port: { flag: 'port', env: 'PRESCORE_PORT', arg: 'PORT', help: `port, 0 = any free port (default ${DEFAULT_SERVER_OPTIONS.port})` },
  maxInflight: { flag: 'max-inflight', env: 'PRESCORE_MAX_INFLIGHT', arg: 'N', help: `searches executing at once (default ${DEFAULT_SERVER_OPTIONS.maxInflight})` },
  maxQueue: { flag: 'max-queue', env: 'PRESCORE_MAX_QUEUE', arg: 'N', help: `searches waiting for a slot before 429 (default ${DEFAULT_SERVER_OPTIONS.maxQueue})` },
  readPath: { flag: 'read-path', env: 'PRESCORE_READ_PATH', arg: 'PATH', help: `default read path: ${READ_PATHS.join(' | ')} (default: the index's)` },
  maxBodyBytes: { flag: 'max-body-bytes', env: 'PRESCORE_MAX_BODY_BYTES', arg: 'N', help: `request body cap, 413 beyond (default ${DEFAULT_SERVER_OPTIONS.maxBodyBytes})` },
  maxBulkBytes: { flag: 'max-bulk-bytes', env: 'PRESCORE_MAX_BULK_BYTES', arg: 'N', help: `_bulk body cap, 413 beyond (default ${DEFAULT_SERVER_OPTIONS.maxBulkBytes})` },
  refreshIntervalMs: {
    flag: 'refresh-interval-ms',
    env: 'PRESCORE_REFRESH_INTERVAL_MS',
    arg: 'MS',
    help: `how often writes are made searchable while the index is searched (default ${DEFAULT_REFRESH_INTERVAL_MS})`,
  },
  timeoutMs: { flag: 'timeout-ms', env: 'PRESCORE_TIMEOUT_MS', arg: 'MS', help: `default search deadline, 504 beyond (default ${DEFAULT_SERVER_OPTIONS.defaultTimeoutMs})` },
  maxTimeoutMs: {
    flag: 'max-timeout-ms',
    env: 'PRESCORE_MAX_TIMEOUT_MS',
    arg: 'MS',
    help: `largest timeout_ms a request may ask for (default ${DEFAULT_SERVER_OPTIONS.maxTimeoutMs})`,
  },
  headersTimeoutMs: {
    flag: 'header-timeout-ms',
    env: 'PRESCORE_HEADER_TIMEOUT_MS',
    arg: 'MS',
    help: `a client must send its request headers within this, else 408 (default ${DEFAULT_SERVER_OPTIONS.headersTimeoutMs})`,
  },
  requestTimeoutMs: {
    flag: 'request-timeout-ms',
    env: 'PRESCORE_REQUEST_TIMEOUT_MS',
    arg: 'MS',
    help: `a client must send its whole request (headers + body) within this, else 408 (default ${DEFAULT_SERVER_OPTIONS.requestTimeoutMs})`,
  },
  warmUpRequests: {
    flag: 'warm-up-requests',
    env: 'PRESCORE_WARM_UP_REQUESTS',
    arg: 'N',
    help: `searches the server sends itself before it listens, so the first clients meet compiled code (default ${DEFAULT_SERVER_OPTIONS.warmUpRequests})`,
  },
  drainTimeoutMs: {
    flag: 'drain-timeout-ms',
    env: 'PRESCORE_DRAIN_TIMEOUT_MS',
    arg: 'MS',
    help: `on SIGTERM, wait this long for in-flight requests (default ${DEFAULT_SERVER_OPTIONS.drainTimeoutMs})`,
  },
} as const satisfies Record<string, Setting>;

type Key = keyof typeof SERVE_SETTINGS;

export function serveUsage(): string {
  const rows = Object.values(SERVE_SETTINGS).map((s: Setting) => {
    const left = `  --${s.flag} ${s.arg}`;
    return `${left.padEnd(28)}${s.help} [${s.env}]`;
  });
  return [
    'usage: prescore serve (--index DIR | --lucene DIR [--field NAME] | --data DIR) [options]',
    '',
    ...rows,
    `  ${'--help'.padEnd(26)}this text`,
    '',
    `Search defaults (per request: recall_target, or num_candidates and oversample): on an index with a recall`,
    `calibration (\`prescore build\` measures one), recall_target ${DEFAULT_RECALL_TARGET} (the cheapest setting measured to reach it);`,
    `without one, num_candidates max(${DEFAULT_NUM_CANDIDATES}, ${DEFAULT_EF_PER_CANDIDATE} x k x oversample), oversample ${DEFAULT_OVERSAMPLE} (recall@10 0.926 on the demo).`,
    '',
    'Flags override environment variables. SIGTERM/SIGINT: stop accepting, answer every request',
    'already received, then exit 0 (bounded by --drain-timeout-ms). SIGHUP or POST /:index/_refresh:',
    'reopen the index at its newest commit (searches running on the old one finish on it).',
  ].join('\n');
}

/** The parsed command line: where the index is, how to open it, how to serve it. */
export interface ServeConfig {
  /** The index directory, or with `data` the data directory holding one index per subdirectory. */
  readonly dir: string;
  /** `--data`: serve every index under `dir` (each opened as `open` says, named after its directory). */
  readonly data: boolean;
  readonly open: OpenIndexRequest;
  readonly server: ServerOptions;
  /** How often writes become searchable (IndexWrites). */
  readonly refreshIntervalMs: number;
}

/** Flags > environment > defaults. Throws UsageError on bad input. */
export function parseServeArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ServeConfig | 'help' {
  const args = argv[0] === 'serve' ? argv.slice(1) : [...argv];
  const options = Object.fromEntries(Object.values(SERVE_SETTINGS).map((s) => [s.flag, { type: 'string' as const }]));
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return 'help';

  const flag = (k: Key) => values[SERVE_SETTINGS[k].flag] as string | undefined;
  const get = (k: Key): string | undefined => flag(k) ?? nonEmpty(env[SERVE_SETTINGS[k].env]);
  const where = (k: Key) => `--${SERVE_SETTINGS[k].flag} (or ${SERVE_SETTINGS[k].env})`;
  const int = (k: Key): number | undefined => {
    const v = get(k);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v.trim())) throw new UsageError(`${where(k)} must be a non-negative integer, got ${JSON.stringify(v)}`);
    return Number(v);
  };

  // The index source: a flag for any of them beats the environment for all.
  const sources = ['index', 'lucene', 'data'] as const;
  const given = sources.some((k) => flag(k) !== undefined) ? sources.map((k) => [k, flag(k)] as const) : sources.map((k) => [k, nonEmpty(env[SERVE_SETTINGS[k].env])] as const);
  const chosen = given.filter(([, v]) => v !== undefined);
  if (chosen.length > 1)
    throw new UsageError(`give one of --index, --lucene and --data, not ${chosen.length === 2 ? 'both' : 'all three'} (${chosen.map(([k]) => `--${k}`).join(', ')})`);
  if (chosen.length === 0) throw new UsageError('--index DIR (or --lucene DIR, or --data DIR) is required');
  const [source, dir] = chosen[0]! as readonly [(typeof sources)[number], string];
  const luceneDir = source === 'lucene' ? dir : undefined;
  if (source === 'data')
    for (const k of ['name', 'field', 'mapping', 'sidecarDir'] as const)
      if (get(k) !== undefined) throw new UsageError(`${where(k)} is for one index (--index or --lucene); under --data each index is named after its directory`);

  /** A setting that must be one of `allowed` (undefined when not given). */
  const oneOf = <T extends string>(key: keyof typeof SERVE_SETTINGS, allowed: readonly T[]): T | undefined => {
    const v = get(key);
    if (v !== undefined && !(allowed as readonly string[]).includes(v)) throw new UsageError(`${where(key)} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
    return v as T | undefined;
  };
  const readPath = oneOf('readPath', READ_PATHS);
  const firstPhase = oneOf('firstPhase', FIRST_PHASE_MODES);
  const knnThread = oneOf('knnThread', KNN_THREADS);
  const rescoreThread = oneOf('rescoreThread', RESCORE_THREADS);
  const calibrate = oneOf('calibrate', CALIBRATE_WHEN);
  const recallTargetValue = get('recallTarget');
  const recallTarget = recallTargetValue === undefined ? undefined : recallTargetValue === 'none' ? null : Number(recallTargetValue);
  if (typeof recallTarget === 'number' && !(recallTarget >= MIN_RECALL_TARGET && recallTarget <= MAX_RECALL_TARGET))
    throw new UsageError(`${where('recallTarget')} must be a recall in [${MIN_RECALL_TARGET}, ${MAX_RECALL_TARGET}], got ${JSON.stringify(recallTargetValue)}`);
  const name = source === 'data' ? undefined : (get('name') ?? defaultIndexName(dir));
  const mappingFile = get('mapping');
  if (mappingFile !== undefined && luceneDir === undefined) {
    throw new UsageError(`${where('mapping')} is for --lucene directories: a prescore index keeps the mapping it was built with`);
  }
  let mapping: Mapping | undefined;
  try {
    mapping = mappingFile === undefined ? undefined : readMappingFile(mappingFile);
  } catch (e) {
    throw e instanceof MappingError ? new UsageError(e.message) : e;
  }

  const refreshIntervalMs = int('refreshIntervalMs') ?? DEFAULT_REFRESH_INTERVAL_MS;
  if (!(Number.isInteger(refreshIntervalMs) && refreshIntervalMs >= 10 && refreshIntervalMs <= 3_600_000))
    throw new UsageError(`--refresh-interval-ms must be an integer in [10, 3600000], got ${refreshIntervalMs}`);
  let server: ServerOptions;
  try {
    server = resolveServerOptions({
      name,
      host: get('host'),
      port: int('port'),
      maxInflight: int('maxInflight'),
      maxQueue: int('maxQueue'),
      readPath,
      maxBodyBytes: int('maxBodyBytes'),
      maxBulkBytes: int('maxBulkBytes'),
      defaultTimeoutMs: int('timeoutMs'),
      maxTimeoutMs: int('maxTimeoutMs'),
      drainTimeoutMs: int('drainTimeoutMs'),
      headersTimeoutMs: int('headersTimeoutMs'),
      requestTimeoutMs: int('requestTimeoutMs'),
      warmUpRequests: int('warmUpRequests'),
    });
  } catch (e) {
    throw new UsageError(flagNames((e as Error).message));
  }
  return {
    dir,
    data: source === 'data',
    open: {
      format: luceneDir !== undefined ? 'lucene' : 'prescore',
      name: name ?? '',
      readPath,
      field: get('field'),
      sidecarDir: get('sidecarDir'),
      mapping,
      firstPhase,
      knnThread,
      rescoreThread,
      ...(calibrate !== undefined ? { calibrate } : {}),
      ...(recallTarget !== undefined ? { recallTarget } : {}),
    },
    server,
    refreshIntervalMs,
  };
}

/**
 * Runs the server until SIGTERM/SIGINT. Returns the exit code: 0 after a clean drain, 1 when
 * the index cannot be opened or the port bound, 2 on usage errors. A second signal during the
 * drain aborts what is still running.
 */
export async function serveCommand(argv: string[], openIndex: IndexOpener, io: ServeIo = {}): Promise<number> {
  const out = io.stdout ?? ((line: string) => process.stdout.write(line + '\n'));
  const err = io.stderr ?? ((line: string) => process.stderr.write(line + '\n'));
  const signals: SignalSource = io.signals ?? process;

  let config: ServeConfig;
  try {
    const parsed = parseServeArgs(argv, io.env ?? process.env);
    if (parsed === 'help') {
      out(serveUsage());
      return 0;
    }
    config = parsed;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`prescore serve: ${e.message}`);
    err(serveUsage());
    return 2;
  }

  // Signals that arrive while the index opens must not kill the process with nothing drained.
  let stopRequested: ((signal: string) => void) | undefined;
  const stopped = new Promise<string>((resolve) => (stopRequested = resolve));
  let signalCount = 0;
  let server: RunningServer | undefined;
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => () => {
    signalCount++;
    if (signalCount === 1) stopRequested!(signal);
    else if (server) {
      err(`prescore serve: ${signal} again: aborting in-flight requests`);
      void server.close({ force: true });
    }
  };
  const onTerm = onSignal('SIGTERM');
  const onInt = onSignal('SIGINT');
  signals.on('SIGTERM', onTerm);
  signals.on('SIGINT', onInt);

  try {
    const deps: ServedIndexDeps = {
      openIndex: (dir, name) => openIndex(dir, { ...config.open, name }),
      openWriter: openIndexWriter,
      defaults: defaultIndexSettings(config.refreshIntervalMs),
      maxTimeoutMs: config.server.maxTimeoutMs,
      log: err,
    };
    let catalog: IndexCatalog;
    try {
      catalog = await openCatalog(config, deps);
    } catch (e) {
      err(`prescore serve: cannot open ${config.data ? 'data directory' : `${config.open.format} index`} ${config.dir}: ${(e as Error).message}`);
      return 1;
    }
    const onHup = () => {
      for (const { name, index } of catalog.list()) {
        if (!(index instanceof ReopeningIndex)) continue;
        index.refresh().then(
          (r) => err(r.refreshed ? `prescore serve: SIGHUP: reopened [${name}] (${r.docs} docs)` : `prescore serve: SIGHUP: [${name}] unchanged`),
          (e: unknown) => err(`prescore serve: SIGHUP: reopening [${name}] failed, still serving the previous commit: ${(e as Error).message}`),
        );
      }
    };
    signals.on('SIGHUP', onHup);

    try {
      if (signalCount > 0) return 0;
      try {
        server = await startServer(catalog, config.server, { log: err });
      } catch (e) {
        if (e instanceof WarmUpError) err(`prescore serve: ${config.dir} cannot answer searches: ${e.message}`);
        else err(`prescore serve: cannot listen on ${config.server.host}:${config.server.port}: ${(e as Error).message}`);
        return 1;
      }
      const served = catalog.list();
      if (config.data)
        out(
          `prescore: serving ${served.length} ${served.length === 1 ? 'index' : 'indexes'}${served.length > 0 ? ` (${served.map((s) => s.name).join(', ')})` : ''} from ${config.dir}`,
        );
      else {
        const { index, name } = served[0]!;
        const description = await index.describe().catch(() => undefined);
        const docs = description ? `${description.docs} docs, ` : '';
        out(`prescore: serving index "${name}" (${docs}${index.dims} dims) from ${config.dir}`);
      }
      out(`listening on ${server.url}`);
      const first = served[0];
      out(first ? curlExample(server, first.name, (await first.index.describe().catch(() => undefined))?.field ?? 'FIELD', first.index.dims) : createExample(server));
      io.onListening?.(server);

      const signal = await stopped;
      const active = server.runtime.open;
      err(`prescore serve: ${signal}: draining ${active} open request${active === 1 ? '' : 's'} (up to ${config.server.drainTimeoutMs} ms)`);
      await server.close();
      return 0;
    } finally {
      signals.off('SIGHUP', onHup);
      await catalog.close().catch((e: unknown) => err(`prescore serve: closing failed: ${(e as Error).message}`));
    }
  } finally {
    signals.off('SIGTERM', onTerm);
    signals.off('SIGINT', onInt);
  }
}

/** The served indexes: the one of --index or --lucene, or every one under --data. */
async function openCatalog(config: ServeConfig, deps: ServedIndexDeps): Promise<IndexCatalog> {
  if (config.data) return DataDirectory.open(config.dir, deps);
  const name = config.open.name;
  if (config.open.format === 'prescore') return new SingleIndexCatalog(await openServedIndex(config.dir, name, deps));
  // A Lucene directory is served read-only.
  const reopen = () => deps.openIndex(config.dir, name);
  const index = await ReopeningIndex.wrap(await reopen(), reopen);
  return new SingleIndexCatalog(servedIndex(name, index, null, deps.defaults, deps.maxTimeoutMs));
}

/** How to make the first index of a server that has none. */
function createExample(server: RunningServer): string {
  const base = server.url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
  const body = JSON.stringify({ mappings: { properties: { vector: { type: 'dense_vector', dims: 3, similarity: 'cosine' }, title: { type: 'text' } } } });
  return ['no index yet; create one:', `  curl -sS -X PUT -H 'content-type: application/json' ${base}/my-index -d '${body}'`].join('\n');
}

/** A paste-ready query: node (always present here) writes a constant vector of the right size. */
function curlExample(server: RunningServer, name: string, field: string, dims: number): string {
  const base = server.url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
  const body = (shape: string) => `node -e '${`console.log(JSON.stringify(${shape}))`.replace(/'/g, `'\\''`)}'`;
  const curl = (path: string) => `curl -sS -H 'content-type: application/json' --data-binary @- ${base}${path}`;
  return [
    'try:',
    `  ${body(`{vector: Array(${dims}).fill(0.1), k: 10}`)} | ${curl('/v1/search')}`,
    `  ${body(`{knn: {field: ${JSON.stringify(field)}, query_vector: Array(${dims}).fill(0.1), k: 10, num_candidates: 100}}`)} | ${curl(`/${name}/_search`)}`,
  ].join('\n');
}

/**
 * The served name when --name is absent: the directory's name, except that a directory called
 * `index` (as `prescore start` lays out `data/demo/index`) is named after its parent, `demo`.
 */
export function defaultIndexName(dir: string): string {
  const abs = resolve(dir);
  const base = basename(abs);
  const parent = basename(resolve(abs, '..'));
  const name = base === 'index' && parent !== '' ? parent : base;
  // The name must be usable in a URL path segment (see resolveServerOptions).
  return name.replace(/[\s/\\*?"<>|,#]/g, '_') || 'index';
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

/** resolveServerOptions names options in camelCase; the CLI user knows the flags. */
function flagNames(message: string): string {
  const byOption: Record<string, Key> = {
    port: 'port',
    maxInflight: 'maxInflight',
    maxQueue: 'maxQueue',
    maxBodyBytes: 'maxBodyBytes',
    maxBulkBytes: 'maxBulkBytes',
    defaultTimeoutMs: 'timeoutMs',
    maxTimeoutMs: 'maxTimeoutMs',
    drainTimeoutMs: 'drainTimeoutMs',
    headersTimeoutMs: 'headersTimeoutMs',
    requestTimeoutMs: 'requestTimeoutMs',
    warmUpRequests: 'warmUpRequests',
    host: 'host',
    name: 'name',
    readPath: 'readPath',
  };
  const m = /^(\w+) (.*)$/.exec(message);
  const key = m ? byOption[m[1]!] : undefined;
  return key ? `--${SERVE_SETTINGS[key].flag} (or ${SERVE_SETTINGS[key].env}) ${m![2]}` : message;
}
