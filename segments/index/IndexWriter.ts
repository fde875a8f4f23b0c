import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { DocumentError, DocumentParser } from '../document/DocumentParser.js';
import { Mapping } from '../document/Mapping.js';
import { withoutTopLevelMember } from '../document/SourceBytes.js';
import { generatedId, type IndexedDocument } from '../input/DocumentSource.js';
import { DEFAULT_MAX_CONN } from '../hnsw/HnswGraphBuilder.js';
import { writeLiveDocs } from '../lucene/LiveDocsWriter.js';
import { DirectoryLock } from '../store/DirectoryLock.js';
import { listCommitGenerations, writeCommit, type SegmentCommitInfo, type VectorFieldInfo } from './CommitPoint.js';
import { DirectoryReader } from './DirectoryReader.js';
import { DEFAULT_GRAPH_BEAM_WIDTH, defaultMinConnections } from './graphBuildPolicy.js';
import { deleteUnreferencedFiles } from './IndexFileDeleter.js';
import type { SegmentReader } from './IndexReader.js';
import type { SegmentBuilder } from './SegmentBuildTask.js';
import { FieldNumbers } from './SegmentDocumentsWriter.js';
import { SegmentIdLookup } from './SegmentIdLookup.js';
import {
  decodeSegmentSettings,
  encodeSegmentSettings,
  nextSegmentNumber,
  SEGMENT_SETTINGS_KEY,
  SegmentWriter,
  type SegmentBuildParameters,
  type SegmentSettings,
} from './SegmentWriter.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';

/** What a new index is made of when `IndexWriter.open` finds none. */
export interface NewIndexOptions {
  readonly dims: number;
  readonly similarity: VectorSimilarityFunction;
  /** The vector field's name; default the mapping's dense_vector field, else `vector`. */
  readonly field?: string;
  /** Default: an empty mapping (fields mapped as documents bring them). */
  readonly mapping?: Mapping;
  /** How segments are built (graph threshold, M, beam, codes); defaults as `prescore build`'s. */
  readonly segments?: Partial<SegmentBuildParameters>;
}

/** How IndexWriter.open finds or makes the index, and how much it buffers. */
export interface IndexWriterOptions {
  /** Create the index when the directory holds none (otherwise opening an empty directory fails). */
  readonly create?: NewIndexOptions;
  /**
   * Buffered documents flush into a new segment once their vectors and sources take this many
   * bytes (Lucene's ramBufferSizeMB); default 64 MiB: 16k docs of 1024 dims, so an automatic
   * flush cuts a segment large enough for a graph (DEFAULT_FLAT_THRESHOLD 10k docs).
   */
  readonly ramBufferBytes?: number;
}

/** What the writer needs from the layer above: where segment codes and graphs are built. */
export interface IndexWriterServices {
  readonly buildSegment: SegmentBuilder;
}

/** How a write found the id: an add or update of a new id `created` it, of an existing one `updated` it. */
export type WriteResult = 'created' | 'updated';

/** Options of one write. */
export interface WriteOptions {
  /** The document's JSON as the user sent it, kept as its `_source` (default: JSON.stringify of the document). */
  readonly source?: Uint8Array;
}

export const DEFAULT_RAM_BUFFER_BYTES = 64 * 1024 * 1024;
/** What a buffered doc costs beyond its vector and source (maps, arrays, its id), for the RAM accounting. */
const BUFFERED_DOC_OVERHEAD = 200;
const DEFAULT_FLAT_THRESHOLD = 10_000;
/** Graph seeds: the segment number past this (reproducible, different per segment). */
const SEGMENT_SEED = 42;

const encoder = new TextEncoder();

interface BufferedDoc {
  readonly vector: Float32Array;
  readonly doc: IndexedDocument;
  readonly bytes: number;
}

/** A segment the next commit will name, with the deletions applied to it since the last commit. */
interface WriterSegment {
  info: SegmentCommitInfo;
  /** The segment's doc for an id, or -1. */
  readonly docForId: (id: string) => number;
  /** Live docs (bit d of word d >>> 5); null: every doc live and nothing deleted yet. */
  live: Uint32Array | null;
  /** Deleted docs, the commit's plus those since. */
  delCount: number;
  /** Whether deletions since the last commit need a new `.liv`. */
  dirty: boolean;
}

/** Buffered docs taken for a flush: deletes of their ids while it runs apply to the new segment once it is there. */
interface Flushing {
  readonly docs: ReadonlyMap<string, BufferedDoc>;
  readonly bytes: number;
  readonly deleted: Set<string>;
}

/**
 * Lucene's IndexWriter for a prescore index directory: documents are added, updated (by id) and
 * deleted (by id) while the index is served; `commit` makes them durable and visible to readers
 * that open the directory afterwards (DirectoryReader.openIfChanged).
 *
 * - Added documents are parsed by the index's mapping at once (a bad document fails its call and
 *   nothing else) and buffered in RAM; a flush writes them as a new segment in the same formats
 *   as `prescore build` (fp32 `.vec`, codes, a graph above the flat threshold, stored `_id` and
 *   `_source`, doc values), its codes and graph built by the `buildSegment` service.
 * - Deletes and updates by id clear the doc's live bit in whichever segment holds it; the next
 *   commit writes a new `.liv` generation for each segment that changed (segments are never
 *   rewritten) and drops segments whose every doc is deleted.
 * - `commit` flushes, writes the live docs, then publishes `commit_N` atomically (after every file
 *   it names is fsynced), then deletes files no commit needs. A crash before the commit file is
 *   renamed into place leaves the previous commit, whole; the files of the lost flush are orphans
 *   the next writer or reader deletes.
 *
 * Holds the directory's write lock from open to close: one writer (or build) per directory.
 * Flushes and commits run one at a time; adds and deletes may come while one runs.
 */
export class IndexWriter {
  private buffer = new Map<string, BufferedDoc>();
  private bufferBytes = 0;
  /** Buffers taken for flushes that have not finished, oldest first. */
  private readonly flushing: Flushing[] = [];
  private readonly segments: WriterSegment[] = [];
  /** The last serialized flush or commit: the next one runs after it. */
  private tail: Promise<unknown> = Promise.resolve();
  /** A background flush's failure, thrown by the next flush or commit (the documents stay buffered). */
  private failure: unknown = null;
  private closed = false;
  private readonly parser: DocumentParser;

  private constructor(
    readonly dir: string,
    private readonly lock: DirectoryLock,
    private readonly services: IndexWriterServices,
    private reader: DirectoryReader,
    private readonly settings: SegmentSettings,
    private readonly mapping: Mapping,
    private nextSegment: number,
    private readonly ramBufferBytes: number,
  ) {
    this.parser = new DocumentParser(mapping);
    this.adoptCommittedSegments();
  }

  /**
   * Opens a writer on `dir` (taking its write lock), continuing its newest commit; with
   * `options.create`, an empty or missing directory becomes a new index with an empty first commit.
   */
  static async open(dir: string, services: IndexWriterServices, options: IndexWriterOptions = {}): Promise<IndexWriter> {
    const ramBufferBytes = options.ramBufferBytes ?? DEFAULT_RAM_BUFFER_BYTES;
    if (!(ramBufferBytes > 0)) throw new RangeError(`ramBufferBytes must be positive, got ${ramBufferBytes}`);
    mkdirSync(dir, { recursive: true });
    const lock = await DirectoryLock.obtain(dir, 'index writer');
    try {
      if (listCommitGenerations(dir).length === 0) {
        if (options.create === undefined) throw new Error(`no prescore index in ${dir} (no commit_N file); pass create to make one`);
        writeFirstCommit(dir, options.create);
      }
      const nextSegment = nextSegmentNumber(dir);
      deleteUnreferencedFiles(dir);
      const reader = DirectoryReader.open(dir);
      try {
        const mapping = reader.mapping ?? Mapping.empty();
        const settings = segmentSettings(dir, reader, mapping);
        return new IndexWriter(dir, lock, services, reader, settings, mapping, nextSegment, ramBufferBytes);
      } catch (e) {
        reader.close();
        throw e;
      }
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /** The vector field every document must have. */
  get field(): VectorFieldInfo {
    return this.reader.field;
  }

  /** Live documents: committed, flushed and buffered, less every deletion. */
  get numDocs(): number {
    let n = this.buffer.size;
    for (const s of this.segments) n += s.info.maxDoc - s.delCount;
    return n;
  }

  /** Documents buffered in RAM (not yet in a segment). */
  get numBufferedDocs(): number {
    return this.buffer.size;
  }

  /** Bytes the buffered documents take (vectors, sources, overhead). */
  get ramBytesUsed(): number {
    return this.bufferBytes;
  }

  /**
   * Adds a document under `id` (generated, as Elasticsearch generates one, when absent); an
   * existing document with that id is replaced. Returns the id. Throws DocumentError (naming the
   * field) when the document does not fit the mapping or has no vector of the field's dims.
   */
  addDocument(doc: object, id?: string, options: WriteOptions = {}): string {
    const docId = id ?? generatedId();
    this.updateDocument(docId, doc, options);
    return docId;
  }

  /** Replaces the document `id` by `doc` (adds it when there is none): Lucene's updateDocument on the `_id` term. */
  updateDocument(id: string, doc: object, options: WriteOptions = {}): WriteResult {
    this.ensureOpen();
    checkId(id);
    const buffered = this.parse(doc, options.source);
    const existed = this.deleteId(id);
    this.buffer.set(id, buffered);
    this.bufferBytes += buffered.bytes;
    if (this.bufferBytes >= this.ramBufferBytes) this.flushInBackground();
    return existed ? 'updated' : 'created';
  }

  /** Deletes the documents with these ids; returns how many there were (an absent id is no error). */
  deleteDocuments(...ids: string[]): number {
    this.ensureOpen();
    let n = 0;
    for (const id of ids) if (this.deleteId(id)) n++;
    return n;
  }

  /** Whether a live document has this id (buffered, flushed or committed). */
  hasDocument(id: string): boolean {
    if (this.buffer.has(id)) return true;
    if (this.flushing.some((f) => f.docs.has(id) && !f.deleted.has(id))) return true;
    for (const s of this.segments) {
      const doc = s.docForId(id);
      if (doc >= 0 && isLive(s, doc)) return true;
    }
    return false;
  }

  /**
   * Writes the buffered documents as a new segment (files fsynced, not yet committed: a reader
   * sees them after the next commit). A failure leaves the documents buffered and deletes the
   * segment's files.
   */
  flush(): Promise<void> {
    this.ensureOpen();
    const taken = this.takeBuffer();
    return this.serialized(() => (taken === null ? Promise.resolve() : this.writeSegment(taken)));
  }

  /**
   * Flushes, writes a new `.liv` for every segment with new deletions, and publishes the next
   * commit with `userData` merged into the previous commit's (the mapping is always the current
   * one). Returns the new commit's generation, or the current one when nothing changed.
   */
  commit(userData: Readonly<Record<string, string>> = {}): Promise<number> {
    this.ensureOpen();
    return this.serialized(async () => {
      const taken = this.takeBuffer();
      if (taken !== null) await this.writeSegment(taken);
      return this.commitFlushed(userData);
    });
  }

  /** Commits what is pending, then releases the write lock and the writer's files (Lucene's close with commitOnClose). */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.commit();
    } finally {
      this.closed = true;
      await this.tail.catch(() => {});
      this.reader.close();
      this.lock.release();
    }
  }

  /**
   * Discards everything since the last commit (buffered documents, flushed segments, deletions),
   * deletes the files that only they used, and releases the write lock.
   */
  async rollback(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail.catch(() => {});
    this.buffer.clear();
    try {
      deleteUnreferencedFiles(this.dir);
    } finally {
      this.reader.close();
      this.lock.release();
    }
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error(`the IndexWriter of ${this.dir} is closed`);
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(() => {
      if (this.failure !== null) {
        const e = this.failure;
        this.failure = null;
        throw e;
      }
      return task();
    });
    this.tail = run.catch(() => {});
    return run;
  }

  /** Takes the buffer now (new adds start a new one) and writes it as a segment after the flushes before it. */
  private flushInBackground(): void {
    const taken = this.takeBuffer()!;
    this.serialized(() => this.writeSegment(taken)).catch((e: unknown) => {
      this.failure ??= e;
    });
  }

  private parse(doc: object, source: Uint8Array | undefined): BufferedDoc {
    const parsed = this.parser.parse(doc);
    const field = this.field;
    if (parsed.vector === null) throw new DocumentError(field.name, 'every document needs the vector field');
    if (parsed.vector.length !== field.dims) throw new DocumentError(field.name, `the vector has ${parsed.vector.length} dims, the index has ${field.dims}`);
    if (field.similarity === VectorSimilarityFunction.COSINE && parsed.vector.every((x) => x === 0))
      throw new DocumentError(field.name, 'the vector is all zeros; cosine similarity is undefined for a zero vector');
    const json = source ?? encoder.encode(JSON.stringify(doc));
    const stored = field.name.includes('.') ? json : withoutTopLevelMember(json, field.name);
    return { vector: parsed.vector, doc: { source: stored, values: parsed.values }, bytes: parsed.vector.byteLength + stored.byteLength + BUFFERED_DOC_OVERHEAD };
  }

  /** Removes `id` wherever it lives; true when a live document had it. */
  private deleteId(id: string): boolean {
    let found = false;
    const buffered = this.buffer.get(id);
    if (buffered !== undefined) {
      this.buffer.delete(id);
      this.bufferBytes -= buffered.bytes;
      found = true;
    }
    for (const f of this.flushing) {
      if (f.docs.has(id) && !f.deleted.has(id)) {
        f.deleted.add(id);
        found = true;
      }
    }
    for (const s of this.segments) {
      const doc = s.docForId(id);
      if (doc >= 0 && isLive(s, doc)) {
        deleteDoc(s, doc);
        found = true;
      }
    }
    return found;
  }

  private takeBuffer(): Flushing | null {
    if (this.buffer.size === 0) return null;
    const taken: Flushing = { docs: this.buffer, bytes: this.bufferBytes, deleted: new Set() };
    this.buffer = new Map();
    this.bufferBytes = 0;
    this.flushing.push(taken);
    return taken;
  }

  /** Writes taken docs as a new segment; on failure they go back to the buffer (less those deleted meanwhile). */
  private async writeSegment(taken: Flushing): Promise<void> {
    const writer = new SegmentWriter(this.settings, `_${(this.nextSegment++).toString(36)}`);
    try {
      for (const [id, d] of taken.docs) writer.addDocument(id, d.vector, d.doc);
      const { info, build } = writer.finish(this.mapping, SEGMENT_SEED + this.nextSegment, new Int32Array(new SharedArrayBuffer(8)));
      await this.services.buildSegment(build);
      const byId = new Map([...taken.docs.keys()].map((id, doc) => [id, doc]));
      const segment: WriterSegment = { info, docForId: (id) => byId.get(id) ?? -1, live: null, delCount: 0, dirty: false };
      for (const id of taken.deleted) deleteDoc(segment, byId.get(id)!);
      this.segments.push(segment);
    } catch (e) {
      writer.abort();
      for (const f of writer.files) rmSync(f, { force: true });
      for (const [id, d] of taken.docs) {
        if (taken.deleted.has(id) || this.buffer.has(id)) continue;
        this.buffer.set(id, d);
        this.bufferBytes += d.bytes;
      }
      throw e;
    } finally {
      this.flushing.splice(this.flushing.indexOf(taken), 1);
    }
  }

  private commitFlushed(userData: Readonly<Record<string, string>>): number {
    const previous = this.reader.commit;
    const changed = this.segments.some((s) => s.dirty) || this.segments.length !== previous.segments.length || Object.keys(userData).length > 0 || this.mappingChanged();
    if (!changed) return previous.generation;
    const infos: SegmentCommitInfo[] = [];
    for (const s of this.segments) {
      if (s.dirty) {
        const delGen = nextFreeDelGen(this.dir, s.info.name, Math.max(1, s.info.delGen + 1));
        writeLiveDocs(this.dir, s.info, delGen, s.live!);
        s.info = { ...s.info, delGen, delCount: s.delCount };
        s.dirty = false;
      }
      if (s.delCount < s.info.maxDoc) infos.push(s.info);
    }
    const generation = (listCommitGenerations(this.dir).at(-1) ?? 0) + 1;
    writeCommit(this.dir, {
      generation,
      field: previous.field,
      segments: infos,
      userData: new Map([...previous.userData, ...Object.entries(userData), ['mapping', JSON.stringify(this.mapping.toJSON())]]),
    });
    const next = DirectoryReader.open(this.dir);
    this.reader.close();
    this.reader = next;
    this.segments.length = 0;
    this.adoptCommittedSegments();
    deleteUnreferencedFiles(this.dir);
    return generation;
  }

  private mappingChanged(): boolean {
    return JSON.stringify(this.mapping.toJSON()) !== this.reader.commit.userData.get('mapping');
  }

  /** The segments of the reader's commit, with their live docs, as the writer's starting point. */
  private adoptCommittedSegments(): void {
    for (const leaf of this.reader.leaves) {
      const reader: SegmentReader = leaf.reader;
      const info = this.reader.commit.segments[leaf.ord]!;
      this.segments.push({
        info,
        docForId: (id) => SegmentIdLookup.of(reader).docForId(id),
        live: reader.liveDocs ? reader.liveDocs.slice() : null,
        delCount: info.delCount,
        dirty: false,
      });
    }
  }
}

function isLive(s: WriterSegment, doc: number): boolean {
  return s.live === null || ((s.live[doc >>> 5]! >>> (doc & 31)) & 1) === 1;
}

function deleteDoc(s: WriterSegment, doc: number): void {
  if (s.live === null) {
    s.live = new Uint32Array(Math.ceil(s.info.maxDoc / 32)).fill(0xffffffff);
    const tail = s.info.maxDoc & 31;
    if (tail !== 0) s.live[s.live.length - 1] = (1 << tail) - 1;
  }
  s.live[doc >>> 5]! &= ~(1 << (doc & 31));
  s.delCount++;
  s.dirty = true;
}

/**
 * The first deletion generation at or after `from` with no `.liv` on disk: a generation written
 * by a flush that was never committed (then rolled back or killed) is not reused while its file
 * is still there (the writer creates `.liv` files exclusively).
 */
function nextFreeDelGen(dir: string, segment: string, from: number): number {
  const taken = new Set(readdirSync(dir).filter((f) => f.startsWith(`${segment}_`) && f.endsWith('.liv')));
  let gen = from;
  while (taken.has(`${segment}_${gen.toString(36)}.liv`)) gen++;
  return gen;
}

function checkId(id: string): void {
  if (typeof id !== 'string' || id.length === 0) throw new DocumentError('_id', 'an id is a non-empty string');
  if (encoder.encode(id).length > 512) throw new DocumentError('_id', `id is longer than 512 bytes`);
}

/** The first commit of a new index: no segments, the mapping and how segments will be built. */
function writeFirstCommit(dir: string, create: NewIndexOptions): void {
  if (!(Number.isInteger(create.dims) && create.dims >= 1 && create.dims <= 4096)) throw new RangeError(`dims must be an integer in [1, 4096], got ${create.dims}`);
  const mapping = create.mapping ?? Mapping.empty();
  const mapped = mapping.vectorField();
  const name = create.field ?? mapped?.path ?? 'vector';
  if (mapped && mapped.path !== name) throw new RangeError(`field ${name}: the mapping's dense_vector field is [${mapped.path}]`);
  if (mapped?.mapping.dims !== undefined && mapped.mapping.dims !== create.dims)
    throw new RangeError(`dims ${create.dims}: the mapping's dense_vector field has ${mapped.mapping.dims}`);
  const similarity = create.similarity;
  mapping.put(name, {
    type: 'dense_vector',
    docValues: false,
    dims: create.dims,
    similarity: similarity.esName,
    indexOptions: mapped?.mapping.indexOptions ?? null,
  });
  const m = create.segments?.m ?? DEFAULT_MAX_CONN;
  const settings: SegmentSettings = {
    dir,
    fieldName: name,
    similarity,
    dims: create.dims,
    fieldNumbers: new FieldNumbers(),
    flatThreshold: create.segments?.flatThreshold ?? DEFAULT_FLAT_THRESHOLD,
    m,
    beamWidth: create.segments?.beamWidth ?? DEFAULT_GRAPH_BEAM_WIDTH,
    minConnections: create.segments?.minConnections ?? defaultMinConnections(m),
    quantization: create.segments?.quantization,
  };
  writeCommit(dir, {
    generation: 1,
    field: { name, number: 0, similarity, dims: create.dims },
    segments: [],
    userData: new Map([
      ['mapping', JSON.stringify(mapping.toJSON())],
      ['createdAt', new Date().toISOString()],
      ['flatThreshold', String(settings.flatThreshold)],
      [SEGMENT_SETTINGS_KEY, encodeSegmentSettings(settings)],
    ]),
  });
}

/**
 * How the writer makes segments: as the commit records (SEGMENT_SETTINGS_KEY); for an index built
 * before that was kept, the build's defaults with the codes' bits and rotation of its first segment.
 */
function segmentSettings(dir: string, reader: DirectoryReader, mapping: Mapping): SegmentSettings {
  const field = reader.field;
  const fieldNumbers = new FieldNumbers();
  for (const leaf of reader.leaves) for (const f of leaf.reader.documents?.fieldInfos.fields ?? []) fieldNumbers.assign(f.name, f.number);
  const recorded = decodeSegmentSettings(reader.commit.userData);
  const first = reader.leaves[0]?.reader.handle.quantized;
  const flatThreshold = Number(reader.commit.userData.get('flatThreshold') ?? DEFAULT_FLAT_THRESHOLD);
  const m = DEFAULT_MAX_CONN;
  const params: SegmentBuildParameters = recorded ?? {
    flatThreshold,
    m,
    beamWidth: DEFAULT_GRAPH_BEAM_WIDTH,
    minConnections: defaultMinConnections(m),
    quantization: first ? { bits: first.bits, rotation: first.rotationSeed ?? false } : {},
  };
  if (mapping.field(field.name) === undefined)
    mapping.put(field.name, { type: 'dense_vector', docValues: false, dims: field.dims, similarity: field.similarity.esName, indexOptions: null });
  return { dir, fieldName: field.name, similarity: field.similarity, dims: field.dims, fieldNumbers, ...params };
}
