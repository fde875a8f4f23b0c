/**
 * The indexes a server serves, by name: one fixed index (`prescore serve --index DIR` or
 * `--lucene DIR`, {@link SingleIndexCatalog}), or every index under a data directory, where
 * indexes are created and deleted over HTTP (`--data DIR`, DataDirectory). Routes look an index
 * up per request, so one that is deleted meanwhile answers 404 from then on while requests
 * already running on it finish.
 */
import type { VectorIndex } from '../api/types.js';
import { Mapping } from '../../segments/document/Mapping.js';
import { HttpError, indexNotFound } from './errors.js';
import type { IndexWrites } from './IndexWrites.js';
import { INDEX_SETTINGS_KEY, encodeIndexSettings, parseSettingsUpdate, type IndexSettings } from './IndexSettings.js';
import { SearchValidator, type IndexShape } from './validation.js';

/** One served index: its searcher, its write side (null: read-only) and its request validator. */
export interface ServedIndex {
  readonly name: string;
  readonly index: VectorIndex;
  readonly writes: IndexWrites | null;
  /** The settings it was created with (write-side settings; shown by `GET /:index`). */
  readonly settings: IndexSettings;
  /** Checks search bodies against the index's dims, field, similarity and mapping. */
  readonly validator: () => Promise<SearchValidator>;
}

/** The served indexes. */
export interface IndexCatalog {
  /** The index named so, or undefined. */
  get(name: string): ServedIndex | undefined;
  /** Every served index, by name. */
  list(): readonly ServedIndex[];
  /** `PUT /:index`: creates an index from Elasticsearch's create-index body; HttpError when it cannot. */
  create(name: string, body: unknown): Promise<ServedIndex>;
  /** `DELETE /:index`: stops serving the index and deletes its files. */
  delete(name: string): Promise<void>;
  /** `PUT /:index/_settings`: changes the index's dynamic settings (kept in its commit); the index as served from now on. */
  updateSettings(name: string, body: unknown): Promise<ServedIndex>;
  /** Commits every index's writes and closes it (the server's shutdown). */
  close(): Promise<void>;
}

/** Whether `x` is a catalog rather than one index (what createApp and startServer take). */
export function isCatalog(x: VectorIndex | IndexCatalog): x is IndexCatalog {
  return typeof (x as Partial<IndexCatalog>).list === 'function' && typeof (x as Partial<VectorIndex>).search !== 'function';
}

/** The index named `name`, else Elasticsearch's 404 `index_not_found_exception`. */
export function resolveIndex(catalog: IndexCatalog, name: string | undefined): ServedIndex {
  const served = name === undefined ? undefined : catalog.get(name);
  if (served === undefined) throw indexNotFound(name ?? '');
  return served;
}

/**
 * Applies a settings update to a served index that takes writes: the new settings are committed
 * (user data {@link INDEX_SETTINGS_KEY}, so a restart keeps them) and take effect at once.
 * Returns the served index with its new settings.
 */
export async function updateServedSettings(served: ServedIndex, body: unknown): Promise<ServedIndex> {
  const settings = parseSettingsUpdate(body, served.settings);
  if (served.writes === null) throw new HttpError(400, 'illegal_argument_exception', `index [${served.name}] is served read-only: its settings cannot change`);
  const writer = await served.writes.writer();
  await writer.commit({ [INDEX_SETTINGS_KEY]: encodeIndexSettings(settings) });
  served.writes.setRefreshInterval(settings.refreshIntervalMs);
  return { ...served, settings };
}

/** A served index around an open VectorIndex. `maxTimeoutMs` bounds the timeouts its searches may ask for. */
export function servedIndex(name: string, index: VectorIndex, writes: IndexWrites | null, settings: IndexSettings, maxTimeoutMs: number): ServedIndex {
  return { name, index, writes, settings, validator: memoValidator(index, maxTimeoutMs) };
}

/** The one index of a `--index` or `--lucene` server: indexes are neither created nor deleted. */
export class SingleIndexCatalog implements IndexCatalog {
  private all: readonly ServedIndex[];

  constructor(private served: ServedIndex) {
    this.all = [served];
  }

  async updateSettings(name: string, body: unknown): Promise<ServedIndex> {
    this.served = await updateServedSettings(resolveIndex(this, name), body);
    this.all = [this.served];
    return this.served;
  }

  get(name: string): ServedIndex | undefined {
    return name === this.served.name ? this.served : undefined;
  }

  list(): readonly ServedIndex[] {
    return this.all;
  }

  async create(name: string): Promise<ServedIndex> {
    if (name === this.served.name) throw new HttpError(400, 'resource_already_exists_exception', `index [${name}/${name}] already exists`, { index: name, index_uuid: name });
    throw fixedServer(`cannot create index [${name}]`);
  }

  async delete(name: string): Promise<void> {
    resolveIndex(this, name);
    throw fixedServer(`cannot delete index [${name}]`);
  }

  async close(): Promise<void> {
    try {
      await this.served.writes?.close();
    } finally {
      await this.served.index.close();
    }
  }
}

function fixedServer(what: string): HttpError {
  return new HttpError(400, 'illegal_argument_exception', `${what}: this server serves one index (--index or --lucene); start it with --data DIR to create and delete indexes`);
}

/**
 * The validator needs the field name and similarity (from describe()) and the mapping's fields
 * (filters): made once, and again when a refresh brings another mapping.
 */
function memoValidator(index: VectorIndex, maxTimeoutMs: number): () => Promise<SearchValidator> {
  let pending: Promise<SearchValidator> | undefined;
  let mappingJson: string | undefined;
  return () => {
    const json = JSON.stringify(index.mapping?.() ?? null);
    if (json !== mappingJson) pending = undefined;
    mappingJson = json;
    pending ??= index.describe().then(
      (d) => {
        const mapping = index.mapping?.();
        const fields = mapping ? Mapping.parse(mapping) : null;
        const shape: IndexShape = {
          dims: index.dims,
          field: d.field,
          rejectZeroVector: /cosine/i.test(d.similarity),
          ...(fields ? { fields: (p: string) => fields.field(p) } : {}),
        };
        return new SearchValidator(shape, { maxTimeoutMs });
      },
      (e: unknown) => {
        pending = undefined; // retry on the next request
        throw e;
      },
    );
    return pending;
  };
}
