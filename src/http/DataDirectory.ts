/**
 * `prescore serve --data DIR`: every index under a data directory, one subdirectory per index
 * named as the index (`DIR/products/`, a prescore index like `prescore build` writes), served at
 * once; `PUT /:index` creates one there and `DELETE /:index` deletes it. A directory that is not
 * an index (no commit: a create that was interrupted, or something else) is skipped with a log
 * line, never deleted.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { VectorIndex } from '../api/types.js';
import type { OpenIndexWriterOptions } from '../api/openIndexWriter.js';
import type { IndexWriter } from '../../segments/index/IndexWriter.js';
import { listCommitGenerations, readLatestCommit } from '../../segments/index/CommitPoint.js';
import { TRANSLOG_GENERATION_KEY } from '../../segments/index/IndexWriter.js';
import { LockObtainFailedException } from '../../segments/store/DirectoryLock.js';
import { HttpError } from './errors.js';
import { resolveIndex, servedIndex, updateServedSettings, type IndexCatalog, type ServedIndex } from './IndexCatalog.js';
import { INDEX_SETTINGS_KEY, checkIndexName, decodeIndexSettings, encodeIndexSettings, invalidIndexName, parseCreateIndex, type IndexSettings } from './IndexSettings.js';
import { IndexWrites } from './IndexWrites.js';
import { ReopeningIndex } from './ReopeningIndex.js';

/** How a served prescore index is opened, and the settings of one that holds none. */
export interface ServedIndexDeps {
  /** Opens the prescore index in `dir` (at its newest commit), served as `name`. */
  readonly openIndex: (dir: string, name: string) => Promise<VectorIndex>;
  /** Opens (or with `create`, makes) the index's writer. */
  readonly openWriter: (dir: string, options: OpenIndexWriterOptions) => Promise<IndexWriter>;
  /** Settings of an index whose commit holds none (one made by `prescore build`), and defaults of new ones. */
  readonly defaults: IndexSettings;
  /** The longest timeout a search may ask for. */
  readonly maxTimeoutMs: number;
  /** Where scheduled-refresh failures and skipped directories are reported. */
  readonly log: (line: string) => void;
}

/**
 * Serves the prescore index in `dir` as `name`: reopened at each refresh, taking writes through
 * its IndexWriter (opened now for an index a writer has written, else at the first write), with
 * the settings its commit holds.
 */
export async function openServedIndex(dir: string, name: string, deps: ServedIndexDeps): Promise<ServedIndex> {
  const commit = existsSync(dir) && listCommitGenerations(dir).length > 0 ? readLatestCommit(dir) : null;
  const settings = decodeIndexSettings(commit?.userData.get(INDEX_SETTINGS_KEY), deps.defaults);
  const openWriter = () => deps.openWriter(dir, { durability: settings.durability, syncIntervalMs: settings.syncIntervalMs });
  // An index a writer has written (its commit names a translog) gets its writer at once, as
  // Elasticsearch opens a shard's engine: writes acknowledged but not committed (the last process
  // was killed, or its last commit failed) are replayed and committed before the index is served,
  // and gets answer with each doc's real _version and _seq_no. An index only built gets its
  // writer at the first write (a rebuild in place needs the directory's lock).
  const generation = commit?.userData.get(TRANSLOG_GENERATION_KEY);
  const recovered =
    generation === undefined
      ? null
      : await openWriter().catch((e: unknown) => {
          // Another process holds the directory (a second server, a build): serve the last commit;
          // writes answer 409 until it lets go, as before the writer was opened at start.
          if (!(e instanceof LockObtainFailedException)) throw e;
          deps.log(`prescore serve: [${name}]: serving the last commit without its translog: ${e.message}`);
          return null;
        });
  const reopen = () => deps.openIndex(dir, name);
  let index: ReopeningIndex;
  try {
    index = await ReopeningIndex.wrap(await reopen(), reopen);
  } catch (e) {
    await recovered?.close();
    throw e;
  }
  if (recovered && recovered.recovered.ops > 0) deps.log(`prescore serve: [${name}]: replayed ${recovered.recovered.ops} translog ops into a commit`);
  const writes = new IndexWrites(name, index, openWriter, settings.refreshIntervalMs, deps.log);
  if (recovered) writes.adopt(recovered);
  return servedIndex(name, index, writes, settings, deps.maxTimeoutMs);
}

export class DataDirectory implements IndexCatalog {
  private readonly served = new Map<string, ServedIndex>();
  /** `served`'s values by name; a new array whenever the set changes (callers may compare them). */
  private all: readonly ServedIndex[] = [];
  /** Names being created or deleted: a second create or delete of one waits for nothing, it fails. */
  private readonly busy = new Set<string>();

  private constructor(
    readonly root: string,
    private readonly deps: ServedIndexDeps,
  ) {}

  /** Opens every index under `root` (creating `root` when missing). */
  static async open(root: string, deps: ServedIndexDeps): Promise<DataDirectory> {
    mkdirSync(root, { recursive: true });
    const data = new DataDirectory(root, deps);
    // Directories, or links to them (an index kept elsewhere can be linked in).
    const names = readdirSync(root)
      .filter((name) => statSync(join(root, name), { throwIfNoEntry: false })?.isDirectory() === true)
      .sort();
    for (const name of names) {
      const dir = join(root, name);
      const invalid = invalidIndexName(name);
      if (invalid !== null) deps.log(`prescore serve: skipping ${dir}: not an index name (${invalid})`);
      else if (listCommitGenerations(dir).length === 0) deps.log(`prescore serve: skipping ${dir}: no commit in it (an interrupted create? remove it to reuse the name)`);
      else {
        try {
          data.add(await openServedIndex(dir, name, deps));
        } catch (e) {
          deps.log(`prescore serve: skipping ${dir}: cannot open it: ${(e as Error).message}`);
        }
      }
    }
    return data;
  }

  get(name: string): ServedIndex | undefined {
    return this.served.get(name);
  }

  list(): readonly ServedIndex[] {
    return this.all;
  }

  async create(name: string, body: unknown): Promise<ServedIndex> {
    checkIndexName(name);
    const dir = join(this.root, name);
    if (this.served.has(name) || this.busy.has(name) || existsSync(dir))
      throw new HttpError(400, 'resource_already_exists_exception', `index [${name}/${name}] already exists`, { index: name, index_uuid: name });
    const request = parseCreateIndex(body, this.deps.defaults);
    this.busy.add(name);
    try {
      const writer = await this.deps.openWriter(dir, {
        create: { dims: request.vector.dims, similarity: request.vector.similarity, field: request.vector.field, mapping: request.mapping, segments: request.segments },
      });
      try {
        await writer.commit({ [INDEX_SETTINGS_KEY]: encodeIndexSettings(request.settings) });
      } finally {
        await writer.close();
      }
      const served = await openServedIndex(dir, name, this.deps);
      this.add(served);
      return served;
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    } finally {
      this.busy.delete(name);
    }
  }

  async delete(name: string): Promise<void> {
    const served = resolveIndex(this, name);
    this.busy.add(name);
    this.served.delete(name);
    this.publish();
    try {
      // Requests already running on it finish (or fail on the closed writer); new ones get 404.
      await served.writes?.discard();
      await served.index.close();
      rmSync(join(this.root, name), { recursive: true, force: true });
    } finally {
      this.busy.delete(name);
    }
  }

  async updateSettings(name: string, body: unknown): Promise<ServedIndex> {
    const updated = await updateServedSettings(resolveIndex(this, name), body);
    if (this.served.has(name)) this.add(updated); // unless deleted meanwhile
    return updated;
  }

  /** Commits every index's writes and closes it (shutdown). */
  async close(): Promise<void> {
    for (const served of this.all) {
      await served.writes?.close().catch((e: unknown) => this.deps.log(`prescore serve: committing [${served.name}] failed: ${(e as Error).message}`));
      await served.index.close().catch((e: unknown) => this.deps.log(`prescore serve: closing [${served.name}] failed: ${(e as Error).message}`));
    }
  }

  private add(served: ServedIndex): void {
    this.served.set(served.name, served);
    this.publish();
  }

  private publish(): void {
    this.all = [...this.served.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}
