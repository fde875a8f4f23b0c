/**
 * `PUT /:index`, Elasticsearch's create-index request, read into what a new index is made of:
 *
 * ```json
 * {"settings": {"index": {"refresh_interval": "1s", "translog": {"durability": "request"}}},
 *  "mappings": {"properties": {"embedding": {"type": "dense_vector", "dims": 768, "similarity": "cosine",
 *                                             "index_options": {"type": "bbq_hnsw", "m": 16, "ef_construction": 100}},
 *                              "title": {"type": "text"}}}}
 * ```
 *
 * The mapping needs one `dense_vector` field with `dims` (similarity defaults to cosine, as in
 * Elasticsearch). `index_options.type` picks the bits of the first-phase codes (`bbq_*`: 1 bit,
 * `int4_*`: 4, `int8_*` and plain `hnsw`/`flat`: 7) and whether segments get a graph (`*_flat`:
 * never); `m` and `ef_construction` are the graph's M and beam. Without `index_options` the
 * segments are built as `prescore build` builds them. Settings may be nested (`{"index":
 * {"translog": {...}}}`), dotted (`"index.refresh_interval"`) or without the `index.` prefix.
 * The settings are kept in the index's commit (user data {@link INDEX_SETTINGS_KEY}), so a
 * restarted server serves the index as it was created.
 */
import type { DocBits } from '../../segments/quantized/ScalarEncodings.js';
import { Mapping, MappingError } from '../../segments/document/Mapping.js';
import type { Durability } from '../../segments/index/IndexWriter.js';
import { DEFAULT_SYNC_INTERVAL_MS } from '../../segments/index/IndexWriter.js';
import type { SegmentBuildParameters } from '../../segments/index/SegmentWriter.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { HttpError, validationError } from './errors.js';

/** Commit user-data key holding an index's settings as JSON ({@link encodeIndexSettings}). */
export const INDEX_SETTINGS_KEY = 'index_settings';

/** How an index takes writes: how often they become searchable and when they are durable. */
export interface IndexSettings {
  /** Scheduled refresh period; null (`refresh_interval: -1`): only refreshes asked for. */
  readonly refreshIntervalMs: number | null;
  /** `request` (default): a write is acknowledged after its fsync; `async`: synced every syncIntervalMs. */
  readonly durability: Durability;
  readonly syncIntervalMs: number;
}

/** What `PUT /:index` asks for. */
export interface CreateIndexRequest {
  readonly mapping: Mapping;
  readonly vector: { readonly field: string; readonly dims: number; readonly similarity: VectorSimilarityFunction };
  readonly segments: Partial<SegmentBuildParameters>;
  readonly settings: IndexSettings;
}

/** The code bits and graph choice of each `index_options.type` (Elasticsearch's names). */
const INDEX_OPTION_TYPES: Readonly<Record<string, { readonly bits: DocBits; readonly graph: boolean }>> = {
  bbq_hnsw: { bits: 1, graph: true },
  bbq_flat: { bits: 1, graph: false },
  int4_hnsw: { bits: 4, graph: true },
  int4_flat: { bits: 4, graph: false },
  int8_hnsw: { bits: 7, graph: true },
  int8_flat: { bits: 7, graph: false },
  hnsw: { bits: 7, graph: true },
  flat: { bits: 7, graph: false },
};

/** Settings accepted besides the write settings: one shard always; replicas are accepted and not held (one node). */
const ACCEPTED_SETTINGS = ['number_of_shards', 'number_of_replicas', 'knn', 'refresh_interval', 'translog.durability', 'translog.sync_interval'];

/** First path segments of the server's own routes (`/health`, `/v1/search`, ...): no index takes these names. */
export const SERVER_PATHS: ReadonlySet<string> = new Set(['health', 'metrics', 'docs', 'openapi.json', 'v1']);

/**
 * Elasticsearch's index-name rules: lowercase, no `\ / * ? " < > | , #` or space, not starting with
 * `-`, `_` or `+`, not `.` or `..`, at most 255 bytes. Null when the name is valid, else why not.
 */
export function invalidIndexName(name: string): string | null {
  if (name !== name.toLowerCase()) return 'must be lowercase';
  if (/[\\/*?"<>| ,#:]/.test(name)) return 'must not contain the following characters [\\, /, *, ?, ", <, >, |, space, ",", #, :]';
  if (/^[-_+]/.test(name)) return "must not start with '_', '-', or '+'";
  if (name === '.' || name === '..' || name === '') return "must not be '.', '..' or empty";
  if (Buffer.byteLength(name) > 255) return 'index name is too long (more than 255 bytes)';
  if (SERVER_PATHS.has(name)) return `[${name}] is the path of a server route`;
  return null;
}

/** Throws Elasticsearch's `invalid_index_name_exception` (400) when `name` cannot name an index. */
export function checkIndexName(name: string): void {
  const why = invalidIndexName(name);
  if (why !== null) throw new HttpError(400, 'invalid_index_name_exception', `Invalid index name [${name}], ${why}`, { index: name });
}

/** Reads a create-index body (null: no body). Bad input: a 400 naming the field. */
export function parseCreateIndex(body: unknown, defaults: IndexSettings): CreateIndexRequest {
  const root = body === null || body === undefined ? {} : object(body, '');
  for (const key of Object.keys(root))
    if (!['settings', 'mappings', 'aliases'].includes(key)) throw validationError([{ path: key, reason: 'unknown field (expected settings, mappings)' }]);
  if (root.aliases !== undefined && Object.keys(object(root.aliases, 'aliases')).length > 0)
    throw validationError([{ path: 'aliases', reason: 'aliases are not supported (name the index itself)' }]);
  const settings = parseSettings(root.settings === undefined ? {} : object(root.settings, 'settings'), defaults);
  if (root.mappings === undefined)
    throw validationError([
      { path: 'mappings', reason: 'is required: an index holds one dense_vector field, e.g. {"properties": {"vector": {"type": "dense_vector", "dims": 768}}}' },
    ]);
  let mapping: Mapping;
  let vector: ReturnType<Mapping['vectorField']>;
  try {
    mapping = Mapping.parse(root.mappings);
    vector = mapping.vectorField();
  } catch (e) {
    if (e instanceof MappingError) throw new HttpError(400, 'mapper_parsing_exception', `Failed to parse mapping: ${e.message}`, { path: `mappings.${e.path}` });
    throw e;
  }
  if (vector === null) throw validationError([{ path: 'mappings.properties', reason: 'must map one field as {"type": "dense_vector", "dims": N}' }]);
  const where = `mappings.properties.${vector.path.replace(/\./g, '.properties.')}`;
  const dims = vector.mapping.dims;
  if (dims === undefined) throw validationError([{ path: `${where}.dims`, reason: 'is required (the vectors are quantized and indexed from the first document)' }]);
  const similarity = VectorSimilarityFunction.fromName(vector.mapping.similarity ?? 'cosine');
  return { mapping, vector: { field: vector.path, dims, similarity }, segments: segmentParameters(vector.mapping.indexOptions, `${where}.index_options`), settings };
}

function segmentParameters(options: Readonly<Record<string, unknown>> | null, path: string): Partial<SegmentBuildParameters> {
  if (options === null) return {};
  const out: { -readonly [K in keyof SegmentBuildParameters]?: SegmentBuildParameters[K] } = {};
  for (const key of Object.keys(options))
    if (!['type', 'm', 'ef_construction'].includes(key))
      throw validationError([{ path: `${path}.${key}`, reason: 'unsupported index option (supported: type, m, ef_construction)' }]);
  if (options.type !== undefined) {
    const type = INDEX_OPTION_TYPES[String(options.type)];
    if (type === undefined)
      throw validationError([{ path: `${path}.type`, reason: `must be one of ${Object.keys(INDEX_OPTION_TYPES).join(', ')}, got ${JSON.stringify(options.type)}` }]);
    out.quantization = { bits: type.bits };
    if (!type.graph) out.flatThreshold = Number.MAX_SAFE_INTEGER;
  }
  if (options.m !== undefined) out.m = intIn(options.m, `${path}.m`, 2, 512);
  if (options.ef_construction !== undefined) out.beamWidth = intIn(options.ef_construction, `${path}.ef_construction`, 1, 3200);
  return out;
}

function parseSettings(settings: Record<string, unknown>, defaults: IndexSettings): IndexSettings {
  const flat = new Map<string, unknown>();
  flatten(settings, '', flat);
  let out = defaults;
  for (const [key, value] of flat) {
    const name = key.startsWith('index.') ? key.slice('index.'.length) : key;
    const path = `settings.${key}`;
    if (!ACCEPTED_SETTINGS.includes(name))
      throw new HttpError(400, 'illegal_argument_exception', `unknown setting [index.${name}] (supported: ${ACCEPTED_SETTINGS.map((s) => `index.${s}`).join(', ')})`, { path });
    switch (name) {
      case 'number_of_shards':
        if (String(value) !== '1') throw validationError([{ path, reason: `must be 1 (an index is one shard here), got ${JSON.stringify(value)}` }]);
        break;
      case 'number_of_replicas':
        intIn(value, path, 0, 1_000);
        break;
      case 'refresh_interval': {
        const ms = timeValue(value, path);
        out = { ...out, refreshIntervalMs: ms < 0 ? null : Math.max(ms, 10) };
        break;
      }
      case 'translog.durability':
        if (value !== 'request' && value !== 'async') throw validationError([{ path, reason: `must be request or async, got ${JSON.stringify(value)}` }]);
        out = { ...out, durability: value };
        break;
      case 'translog.sync_interval': {
        const ms = timeValue(value, path);
        if (ms < 100) throw validationError([{ path, reason: 'must be at least 100ms' }]);
        out = { ...out, syncIntervalMs: ms };
        break;
      }
    }
  }
  return out;
}

/** Settings `PUT /:index/_settings` may change on a served index. */
const DYNAMIC_SETTINGS = ['refresh_interval', 'number_of_replicas'];

/**
 * `PUT /:index/_settings`: `current` with the settings the body changes (`{"index":
 * {"refresh_interval": "-1"}}`, dotted, or without `index.`). Only `refresh_interval` (and
 * `number_of_replicas`, accepted) change on a served index; the others are 400s naming them.
 */
export function parseSettingsUpdate(body: unknown, current: IndexSettings): IndexSettings {
  const root = object(body ?? {}, '');
  const settings = 'settings' in root && Object.keys(root).length === 1 ? object(root.settings, 'settings') : root;
  const flat = new Map<string, unknown>();
  flatten(settings, '', flat);
  const fixed = [...flat.keys()].map((k) => (k.startsWith('index.') ? k.slice('index.'.length) : k)).filter((k) => ACCEPTED_SETTINGS.includes(k) && !DYNAMIC_SETTINGS.includes(k));
  if (fixed.length > 0)
    throw new HttpError(
      400,
      'illegal_argument_exception',
      `Can't update non dynamic settings [${fixed.map((k) => `[index.${k}]`).join(', ')}] for open indices (they are set when the index is created)`,
      {
        path: `settings.${fixed[0]}`,
      },
    );
  return parseSettings(settings, current);
}

/** The settings as `GET /:index` shows them (Elasticsearch's strings). */
export function settingsJson(name: string, s: IndexSettings): Record<string, unknown> {
  return {
    index: {
      number_of_shards: '1',
      number_of_replicas: '0',
      provided_name: name,
      refresh_interval: s.refreshIntervalMs === null ? '-1' : `${s.refreshIntervalMs}ms`,
      translog: { durability: s.durability, sync_interval: `${s.syncIntervalMs}ms` },
    },
  };
}

export function encodeIndexSettings(s: IndexSettings): string {
  return JSON.stringify({ refresh_interval_ms: s.refreshIntervalMs, durability: s.durability, sync_interval_ms: s.syncIntervalMs });
}

/** The settings a commit holds, or `defaults` for an index made by `prescore build` (it holds none). */
export function decodeIndexSettings(json: string | undefined, defaults: IndexSettings): IndexSettings {
  if (json === undefined) return defaults;
  const o = JSON.parse(json) as { refresh_interval_ms: number | null; durability: Durability; sync_interval_ms: number };
  return { refreshIntervalMs: o.refresh_interval_ms, durability: o.durability, syncIntervalMs: o.sync_interval_ms };
}

/** The settings of an index created without any. */
export function defaultIndexSettings(refreshIntervalMs: number): IndexSettings {
  return { refreshIntervalMs, durability: 'request', syncIntervalMs: DEFAULT_SYNC_INTERVAL_MS };
}

/** Elasticsearch's time values: `-1`, `0`, or a number with a unit (`500ms`, `1s`, `2m`, `1h`, `1d`). */
function timeValue(value: unknown, path: string): number {
  const text = String(value).trim();
  if (text === '-1') return -1;
  if (text === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)(nanos|micros|ms|s|m|h|d)$/.exec(text);
  if (!m) throw validationError([{ path, reason: `failed to parse [${text}] as a time value: expected -1 or a number with a unit (ms, s, m, h, d), e.g. 1s` }]);
  const unitMs = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms'];
  return Math.round(Number(m[1]) * unitMs);
}

function flatten(o: Record<string, unknown>, prefix: string, out: Map<string, unknown>): void {
  for (const [k, v] of Object.entries(o)) {
    const key = prefix + k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) flatten(v as Record<string, unknown>, `${key}.`, out);
    else out.set(key, v);
  }
}

function object(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw validationError([{ path, reason: 'must be an object' }]);
  return v as Record<string, unknown>;
}

function intIn(v: unknown, path: string, min: number, max: number): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
    throw validationError([{ path, reason: `must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}` }]);
  return n;
}
