import { deferringSync, syncFiles } from '../store/DeferredSync.js';
import { DEFAULT_GRAPH_MERGE, type GraphMerge, type SegmentMerger } from './SegmentMergeTask.js';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
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
import type { SegmentBuilder } from './SegmentBuildTask.js';
import { DEFAULT_FLAT_THRESHOLD, segmentSettings } from './segmentSettings.js';
import { FieldNumbers } from './SegmentDocumentsWriter.js';
import { encodeSegmentSettings, nextSegmentNumber, SEGMENT_SETTINGS_KEY, SegmentWriter, type SegmentBuildParameters, type SegmentSettings } from './SegmentWriter.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';
import { WriterSegment, type DocVersion, type StoredDoc } from './WriterSegment.js';
import { TieredMergePolicy, type MergeCandidate } from './TieredMergePolicy.js';
import { PendingChanges, type PendingDocs } from './PendingDocs.js';
import { Translog, translogGenerations } from './Translog.js';
import { idFromString, idToString } from '../codec/CodecUtil.js';

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
  /**
   * When a write is durable. `request` (the default, Elasticsearch's): the caller awaits
   * `sync()` before acknowledging; `async`: the translog is synced every `syncIntervalMs` (a crash
   * loses at most that much of what was acknowledged).
   */
  readonly durability?: Durability;
  /** `async` durability's sync period; default 5 s (Elasticsearch's `index.translog.sync_interval`). */
  readonly syncIntervalMs?: number;
  /** Commit on its own once the translog holds this many bytes since the last commit; default 512 MiB (Elasticsearch's flush_threshold_size). */
  readonly translogFlushThresholdBytes?: number;
  /** Which segments merge in the background after each commit; default TieredMergePolicy's defaults, null: never (forceMerge still works). */
  readonly mergePolicy?: TieredMergePolicy | null;
  /** How a merge builds its graph from its inputs' graphs (default: join sets; SegmentMergeTask). */
  readonly graphMerge?: GraphMerge;
}

/** When a write is durable: `request`, before it is acknowledged (the caller awaits sync()); `async`, within the sync interval. */
export type Durability = 'request' | 'async';

/** What the writer needs from the layer above: where segment codes and graphs are built. */
export interface IndexWriterServices {
  readonly buildSegment: SegmentBuilder;
  /** Where merges read, write and build their new segment (SegmentMergeTask: an executor worker). */
  readonly mergeSegments: SegmentMerger;
  /**
   * How a flush gives the thread back between slices of FLUSH_TURN_MS while it writes a segment's
   * documents (default: one turn of the event loop). A server passes one that lets waiting
   * searches go first.
   */
  readonly stepAside?: () => Promise<void>;
  /** Called once when the writer has closed or rolled back (its caller releases what its tasks ran on). */
  readonly closed?: () => Promise<void>;
}

/** What a write did (Elasticsearch's `result`, `_seq_no` and `_version` of a write response). */
export interface WriteResult extends DocVersion {
  /** An index of a new id `created` it, of an existing one `updated` it; a delete `deleted` it or found it `not_found`. */
  readonly result: 'created' | 'updated' | 'deleted' | 'not_found';
}

/** Options of one write. */
export interface WriteOptions {
  /** The document's JSON as the user sent it, kept as its `_source` (default: JSON.stringify of the document). */
  readonly source?: Uint8Array;
  /** `create`: fail with VersionConflictError when the id exists (Elasticsearch's op_type=create / `_create`). Default `index`. */
  readonly opType?: 'index' | 'create';
  /** Optimistic concurrency: the write happens only if the doc's current `_seq_no` is this (else VersionConflictError). */
  readonly ifSeqNo?: number;
  /** With ifSeqNo: the doc's primary term, always 1 here (one copy, no failover). */
  readonly ifPrimaryTerm?: number;
}

/** A document read back by id, realtime (buffered and uncommitted writes included). */
export interface CurrentDocument extends StoredDoc {
  readonly id: string;
}

/** Elasticsearch's `version_conflict_engine_exception` (HTTP 409): the doc's state is not what the write expected. */
export class VersionConflictError extends Error {
  constructor(
    readonly id: string,
    reason: string,
  ) {
    super(`[${id}]: version conflict, ${reason}`);
    this.name = 'VersionConflictError';
  }
}

/** The primary term of every write: one copy of the index, never failed over. */
export const PRIMARY_TERM = 1;

export const DEFAULT_RAM_BUFFER_BYTES = 64 * 1024 * 1024;
/** How long a deleted id's version is remembered (Elasticsearch's `index.gc_deletes`, 60 s). */
export const GC_DELETES_MS = 60_000;
/** Writes wait once the segments exceed the merge policy's budget by this many merges' worth (Lucene's merge scheduler stalls at 5 pending merges, maxMergeCount). */
export const MAX_MERGE_DEBT_MERGES = 5;
export const DEFAULT_SYNC_INTERVAL_MS = 5_000;
export const DEFAULT_TRANSLOG_FLUSH_THRESHOLD_BYTES = 512 * 1024 * 1024;
/** Commit user-data keys that tie a commit to its translog (Elasticsearch's names). */
export const TRANSLOG_UUID_KEY = 'translog_uuid';
export const TRANSLOG_GENERATION_KEY = 'translog_generation';
/** The highest sequence number whose op every later commit or replay includes (ops after it are in the translog). */
export const LOCAL_CHECKPOINT_KEY = 'local_checkpoint';
export const MAX_SEQ_NO_KEY = 'max_seq_no';
/** What a buffered doc costs beyond its vector and source (maps, arrays, its id), for the RAM accounting. */
const BUFFERED_DOC_OVERHEAD = 200;
/** What a doc takes on disk besides its fp32 vector and codes (graph links, ids, stored source, doc values), for the merge policy's sizes. */
const MERGE_BYTES_PER_DOC_BEYOND_VECTORS = 200;
/** forceMerge merges at most this many segments at once (Lucene's maxMergeAtOnceExplicit). */
const FORCE_MERGE_AT_ONCE = 30;
/**
 * A flush writes its documents in slices of this many milliseconds, giving the thread back
 * between them: a segment of ~5,000 768-dim documents took 250-400 ms of the server's thread in
 * one piece (measured in bench:ingest), which every search arriving meanwhile waited out.
 */
export const FLUSH_TURN_MS = 2;
/** Graph seeds: the segment number past this (reproducible, different per segment). */
const SEGMENT_SEED = 42;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface BufferedDoc extends StoredDoc {
  readonly doc: IndexedDocument;
  readonly bytes: number;
}

/** A doc parsed and checked, before it has a place in the write history. */
type ParsedDoc = Omit<BufferedDoc, keyof DocVersion>;

/** Buffered docs taken for a flush: deletes of their ids while it runs apply to the new segment once it is there. */
interface Flushing {
  readonly docs: ReadonlyMap<string, BufferedDoc>;
  readonly bytes: number;
  /** Ids deleted while it is written, with the seqNo of the deleting op. */
  readonly deleted: Map<string, number>;
  /** Set when its segment starts being written (by its own flush, or by a commit that cannot wait for it). */
  started: boolean;
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
  /** Versions of recently deleted ids and when they were deleted, oldest first (Elasticsearch's delete tombstones). */
  private readonly tombstones = new Map<string, { readonly version: number; readonly at: number }>();
  private bufferBytes = 0;
  /** Buffers taken for flushes that have not finished, oldest first. */
  private readonly flushing: Flushing[] = [];
  private readonly segments: WriterSegment[] = [];
  /** The last serialized flush or commit: the next one runs after it. */
  private tail: Promise<unknown> = Promise.resolve();
  /** A background flush's failure, thrown by the next flush or commit (the documents stay buffered). */
  private failure: unknown = null;
  /** What the last flush, commit or merge swap that ended failed with; null once one succeeds. */
  private lastFailure: unknown = null;
  private closed = false;
  private closing = false;
  private readonly parser: DocumentParser;
  private translog: Translog;
  /** The sequence number of the last write (Elasticsearch's `_seq_no`: one counter per index). */
  private seqNo: number;
  private commitScheduled = false;
  /** The merge running in the background, if any (one at a time). */
  private merging: Promise<void> | null = null;
  private merges = 0;
  private mergedDocs = 0;
  private mergedDocsFromGraph = 0;
  private mergedDocsJoined = 0;
  private mergeFailure: unknown = null;
  /** The files of the running merge's new segment: no commit names them yet, and no commit may delete them. */
  private readonly mergingFiles = new Set<string>();
  /** Files of flushed and merged segments written on this thread and not fsynced yet: the next commit syncs them (DeferredSync). */
  private readonly unsynced = new Set<string>();
  /** Writes since the last commit, for near-real-time readers (pendingDocs). */
  private readonly pending = new PendingChanges();
  private readonly syncTimer: NodeJS.Timeout | null;
  /** What opening replayed from the translog: ops read and bytes of a torn tail cut. */
  recovered: { readonly ops: number; readonly cutBytes: number } = { ops: 0, cutBytes: 0 };

  private constructor(
    readonly dir: string,
    private readonly lock: DirectoryLock,
    private readonly services: IndexWriterServices,
    private reader: DirectoryReader,
    private readonly settings: SegmentSettings,
    private readonly mapping: Mapping,
    private nextSegment: number,
    private readonly options: Required<Omit<IndexWriterOptions, 'create'>>,
  ) {
    this.parser = new DocumentParser(mapping);
    this.adoptCommittedSegments();
    this.seqNo = Number(reader.commit.userData.get(MAX_SEQ_NO_KEY) ?? -1);
    this.translog = null as unknown as Translog; // set by recover(), before the writer is handed out
    this.syncTimer = options.durability === 'async' ? setInterval(() => this.translog.sync().catch(() => {}), options.syncIntervalMs).unref() : null;
  }

  /**
   * Continues the commit's translog: replays the ops after the commit (a torn tail cut), then
   * commits them, so that the log restarts from a commit that holds everything acknowledged. An
   * index whose commit names no translog (a build's) gets a new one, recorded by a commit.
   */
  private async recover(): Promise<void> {
    const userData = this.reader.commit.userData;
    const uuid = userData.get(TRANSLOG_UUID_KEY);
    if (uuid === undefined) {
      const next = (translogGenerations(this.dir).at(-1) ?? 0) + 1;
      this.translog = Translog.create(this.dir, next);
      await this.commitNow({}, true);
      return;
    }
    const { translog, ops, cutBytes } = Translog.open(this.dir, idFromString(uuid), Number(userData.get(TRANSLOG_GENERATION_KEY)));
    this.translog = translog;
    this.recovered = { ops: ops.length, cutBytes };
    const checkpoint = Number(userData.get(LOCAL_CHECKPOINT_KEY) ?? -1);
    for (const op of ops) {
      if (op.seqNo <= checkpoint) continue;
      this.seqNo = Math.max(this.seqNo, op.seqNo);
      if (op.kind === 'delete') {
        this.pending.deleted(op.id, op.seqNo, this.deleteId(op.id, op.seqNo));
        this.bury(op.id, op.version);
      } else this.applyIndex(op.id, { ...this.parseStored(op.source, op.vector), seqNo: op.seqNo, version: op.version });
    }
    if (ops.length > 0 || cutBytes > 0) await this.commitNow({}, true);
  }

  /**
   * Opens a writer on `dir` (taking its write lock), continuing its newest commit; with
   * `options.create`, an empty or missing directory becomes a new index with an empty first commit.
   */
  static async open(dir: string, services: IndexWriterServices, options: IndexWriterOptions = {}): Promise<IndexWriter> {
    const resolved = {
      ramBufferBytes: options.ramBufferBytes ?? DEFAULT_RAM_BUFFER_BYTES,
      durability: options.durability ?? 'request',
      syncIntervalMs: options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS,
      translogFlushThresholdBytes: options.translogFlushThresholdBytes ?? DEFAULT_TRANSLOG_FLUSH_THRESHOLD_BYTES,
      mergePolicy: options.mergePolicy === undefined ? new TieredMergePolicy() : options.mergePolicy,
      graphMerge: options.graphMerge ?? DEFAULT_GRAPH_MERGE,
    };
    for (const key of ['ramBufferBytes', 'syncIntervalMs', 'translogFlushThresholdBytes'] as const)
      if (!(resolved[key] > 0)) throw new RangeError(`${key} must be positive, got ${resolved[key]}`);
    if (resolved.durability !== 'request' && resolved.durability !== 'async') throw new RangeError(`durability must be request or async, got ${resolved.durability}`);
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
        const writer = new IndexWriter(dir, lock, services, reader, settings, mapping, nextSegment, resolved);
        try {
          await writer.recover();
        } catch (e) {
          writer.stopTimer();
          writer.translog?.close().catch(() => {});
          writer.reader.close();
          throw e;
        }
        return writer;
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

  /**
   * The writes since the last commit, for a reader of that commit to add (a near-real-time view
   * without a flush): O(ids written since) to take, the documents shared, not copied. The commit
   * they follow is `generation`; once a newer commit is published, a new view is due.
   */
  pendingDocs(): PendingDocs {
    this.ensureOpen();
    return this.pending.snapshot(this.reader.commit.generation, this.mapping.toJSON());
  }

  /** Ids written since the last commit, and how many of them hide a committed version: the cost a near-real-time view adds to each search. */
  get pendingWrites(): { readonly ids: number; readonly hidden: number } {
    return { ids: this.pending.size, hidden: this.pending.hiddenCount };
  }

  /** Bytes the buffered documents take (vectors, sources, overhead). */
  get ramBytesUsed(): number {
    return this.bufferBytes;
  }

  /** The RAM buffer's size: a flush starts when buffered documents take this much. */
  get ramBufferLimit(): number {
    return this.options.ramBufferBytes;
  }

  /** Bytes of documents written but not yet in a segment: the buffer and the flushes still running. */
  get indexingBytes(): number {
    let n = this.bufferBytes;
    for (const f of this.flushing) n += f.bytes;
    return n;
  }

  /**
   * Why writes should wait, or null. Writes outrun the flushes when documents not yet in segments
   * take more than twice the RAM buffer (a flush is queued each time the buffer fills, and segments
   * are built one at a time); they outrun the merges when the segments exceed the merge policy's
   * budget by more than MAX_MERGE_DEBT_MERGES merges' worth (Lucene's merge scheduler stalls
   * indexing threads then). A server answers 429 (Elasticsearch's indexing pressure) instead of
   * queueing without bound or letting segments pile up, which slows every search.
   */
  get backpressure(): string | null {
    if (this.indexingBytes > 2 * this.options.ramBufferBytes) return `${this.indexingBytes} bytes of documents are waiting for segments (limit ${2 * this.options.ramBufferBytes})`;
    const policy = this.options.mergePolicy;
    if (policy !== null) {
      const debt = this.mergeDebt;
      const limit = MAX_MERGE_DEBT_MERGES * (policy.maxMergeAtOnce - 1);
      if (debt > limit) return `merges are behind: ${this.segments.length} segments, ${debt} beyond the merge policy's budget (limit ${limit})`;
    }
    return null;
  }

  /**
   * The error the last flush, commit or merge swap failed with (background ones included), null
   * once one succeeds: why documents are waiting (a full disk), for a server to say so when it
   * sheds writes.
   */
  get lastWriteFailure(): unknown {
    return this.lastFailure;
  }

  /** Whether writes should wait (`backpressure` says why). */
  get overloaded(): boolean {
    return this.backpressure !== null;
  }

  /** Segments beyond the merge policy's budget (0 without a policy). */
  get mergeDebt(): number {
    const policy = this.options.mergePolicy;
    return policy === null ? 0 : policy.segmentsOverBudget(this.mergeCandidates());
  }

  /**
   * Starts what a writer that sheds writes waits for: a flush when the buffer is full and none is
   * queued (one that failed, on a full disk, put its documents back, and only the next write would
   * start another), and a merge when none runs. A server shedding writes calls this, so it
   * recovers once space returns, or once merges catch up, without waiting for a write.
   */
  catchUp(): void {
    if (this.closed) return;
    if (this.flushing.length === 0 && this.bufferBytes >= this.options.ramBufferBytes) this.flushInBackground();
    this.maybeMerge();
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

  /**
   * Replaces the document `id` by `doc` (adds it when there is none): Lucene's updateDocument on
   * the `_id` term, Elasticsearch's index operation. The write is in the translog at once and
   * durable after the next `sync()`. Throws DocumentError for a document that does not fit,
   * VersionConflictError when `opType: 'create'` finds the id or `ifSeqNo` does not match.
   */
  updateDocument(id: string, doc: object, options: WriteOptions = {}): WriteResult {
    this.ensureOpen();
    checkId(id);
    const parsed = this.parse(doc, options.source);
    const current = this.currentVersion(id);
    checkExpectations(id, current, options);
    const written: BufferedDoc = { ...parsed, seqNo: ++this.seqNo, version: (current?.version ?? this.deletedVersion(id)) + 1 };
    this.tombstones.delete(id);
    this.translog.add({ kind: 'index', seqNo: written.seqNo, version: written.version, id, source: written.source, vector: written.vector });
    this.applyIndex(id, written);
    this.maybeCommit();
    return { result: current === null ? 'created' : 'updated', seqNo: written.seqNo, version: written.version };
  }

  /** Deletes the document `id` (Elasticsearch's delete: `not_found` when there is none, which is no error). */
  deleteDocument(id: string, options: Pick<WriteOptions, 'ifSeqNo' | 'ifPrimaryTerm'> = {}): WriteResult {
    this.ensureOpen();
    checkId(id);
    const current = this.currentVersion(id);
    checkExpectations(id, current, options);
    const seqNo = ++this.seqNo;
    const version = (current?.version ?? this.deletedVersion(id)) + 1;
    this.translog.add({ kind: 'delete', seqNo, version, id });
    this.pending.deleted(id, seqNo, this.deleteId(id, seqNo));
    this.bury(id, version);
    return { result: current === null ? 'not_found' : 'deleted', seqNo, version };
  }

  /** Deletes the documents with these ids; returns how many there were (an absent id is no error). */
  deleteDocuments(...ids: string[]): number {
    let n = 0;
    for (const id of ids) if (this.deleteDocument(id).result === 'deleted') n++;
    return n;
  }

  /** The live document `id`, realtime: buffered, flushed and committed writes alike (Elasticsearch's realtime get); null when there is none. */
  getDocument(id: string): CurrentDocument | null {
    this.ensureOpen();
    const buffered = this.buffer.get(id);
    if (buffered !== undefined) return { id, seqNo: buffered.seqNo, version: buffered.version, source: buffered.source, vector: buffered.vector };
    for (const f of this.flushing) {
      const d = f.docs.get(id);
      if (d !== undefined && !f.deleted.has(id)) return { id, seqNo: d.seqNo, version: d.version, source: d.source, vector: d.vector };
    }
    for (const s of this.segments) {
      const doc = s.docForId(id);
      if (doc >= 0 && s.isLive(doc)) return { id, ...s.read(doc) };
    }
    return null;
  }

  /**
   * Resolves once every write made so far is durable in the translog (one fdatasync shared by all
   * concurrent callers: group commit). A write is acknowledged after this, under `request` durability.
   */
  sync(): Promise<void> {
    this.ensureOpen();
    return this.translog.sync();
  }

  /** When writes are durable: `request` (acknowledge after `sync()`) or `async` (synced on a timer). */
  get durability(): Durability {
    return this.options.durability;
  }

  /** The translog's files and their durable lengths (after `sync()`, everything written so far). */
  get translogDurable(): readonly { readonly file: string; readonly bytes: number }[] {
    return this.translog.durable;
  }

  /** The sequence number of the last write (-1 before any). */
  get maxSeqNo(): number {
    return this.seqNo;
  }

  /** Whether a live document has this id (buffered, flushed or committed). */
  hasDocument(id: string): boolean {
    return this.currentVersion(id) !== null;
  }

  /**
   * The version an id deleted in the last GC_DELETES_MS had (0 for any other absent id): an id
   * indexed again soon after a delete continues from it, as Elasticsearch keeps delete tombstones
   * for `index.gc_deletes` (60 s), so `_version` never goes back while clients may still compare.
   */
  private deletedVersion(id: string): number {
    return this.tombstones.get(id)?.version ?? 0;
  }

  /** Records the tombstone of a delete and drops those past GC_DELETES_MS (the map is in deletion order). */
  private bury(id: string, version: number): void {
    const now = Date.now();
    this.tombstones.delete(id);
    this.tombstones.set(id, { version, at: now });
    for (const [old, t] of this.tombstones) {
      if (now - t.at < GC_DELETES_MS) break;
      this.tombstones.delete(old);
    }
  }

  /** The live doc's seqNo and version, or null. */
  private currentVersion(id: string): DocVersion | null {
    const buffered = this.buffer.get(id);
    if (buffered !== undefined) return buffered;
    for (const f of this.flushing) {
      const d = f.docs.get(id);
      if (d !== undefined && !f.deleted.has(id)) return d;
    }
    for (const s of this.segments) {
      const doc = s.docForId(id);
      if (doc >= 0 && s.isLive(doc)) return s.version(doc);
    }
    return null;
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
    return this.serialized(() => this.commitNow(userData, false));
  }

  /**
   * The commit itself (serialized by the caller). At its start, in one step, the buffer is taken
   * and the translog rolls to a new generation: every op before this point is in the commit, the
   * ops after it are in the new generation, which is what the commit names for replay.
   */
  private async commitNow(userData: Readonly<Record<string, string>>, force: boolean): Promise<number> {
    if (!force && !this.hasChanges(userData)) return this.reader.commit.generation;
    this.takeBuffer();
    const checkpoint = this.seqNo;
    const translogGeneration = this.translog.rollGeneration();
    // Every op up to the checkpoint must be in this commit, including docs that background flushes
    // queued after this commit have taken from the buffer: their segments are written now.
    for (const taken of [...this.flushing]) await this.writeSegment(taken);
    await this.translog.sync();
    // The files this thread wrote unsynced (DeferredSync), before the commit names them: none
    // may be left when commitFlushed (synchronous) runs, including any a merge closed meanwhile.
    while (this.unsynced.size > 0) await syncFiles(this.unsynced);
    const generation = this.commitFlushed(checkpoint, {
      ...userData,
      [TRANSLOG_UUID_KEY]: idToString(this.translog.uuid),
      [TRANSLOG_GENERATION_KEY]: String(translogGeneration),
      [LOCAL_CHECKPOINT_KEY]: String(checkpoint),
      [MAX_SEQ_NO_KEY]: String(checkpoint),
    });
    this.translog.deleteBelow(translogGeneration);
    this.maybeMerge();
    return generation;
  }

  /**
   * Merges segments into fewer, larger ones until at most `maxSegments` remain (a single segment
   * with deletions is rewritten without them): Lucene's forceMerge, Elasticsearch's `_forcemerge`.
   * Commits first, and commits each merge.
   */
  async forceMerge(maxSegments = 1): Promise<void> {
    if (!(Number.isInteger(maxSegments) && maxSegments >= 1)) throw new RangeError(`maxSegments must be a positive integer, got ${maxSegments}`);
    for (;;) {
      await this.merging;
      await this.commit(); // only committed segments merge
      // The commit may have started a background merge of the same segments: it goes first.
      if (this.merging !== null) continue;
      // Only committed segments (a merge reads its inputs from the last commit): a flush may have
      // landed since the commit, and the next turn merges it.
      const committed = new Set(this.reader.commit.segments.map((s) => s.name));
      const segments = this.segments.filter((s) => committed.has(s.info.name));
      const sorted = [...segments].sort((a, b) => a.info.maxDoc - a.delCount - (b.info.maxDoc - b.delCount));
      const count =
        segments.length > maxSegments
          ? Math.min(sorted.length - maxSegments + 1, FORCE_MERGE_AT_ONCE)
          : maxSegments === 1 && segments.length === 1 && segments[0]!.delCount > 0
            ? 1
            : 0;
      if (count === 0) return;
      const merge = this.runMerge(sorted.slice(0, count).map((s) => s.info.name));
      // Its failure is thrown below, to the caller; the tracker only says when it ended.
      this.merging = merge.then(
        () => {},
        () => {},
      );
      void this.merging.finally(() => (this.merging = null));
      await merge; // false: a segment went away meanwhile (every doc deleted); the next turn sees what is left
    }
  }

  /**
   * Segments written by merges since the writer opened, their docs, how many of those docs came
   * with the graph of a merged segment taken over (not inserted again), and how many went in
   * through another input's graph (its join set; SegmentMergeTask).
   */
  get mergeStats(): { readonly merges: number; readonly docs: number; readonly docsFromGraph: number; readonly docsJoined: number; readonly failure: unknown } {
    return { merges: this.merges, docs: this.mergedDocs, docsFromGraph: this.mergedDocsFromGraph, docsJoined: this.mergedDocsJoined, failure: this.mergeFailure };
  }

  /** The segments as the merge policy sees them. */
  private mergeCandidates(): MergeCandidate[] {
    const bytesPerDoc = this.settings.dims * 4 + Math.ceil(this.settings.dims / 8) + 16 + MERGE_BYTES_PER_DOC_BEYOND_VECTORS;
    return this.segments.map((s) => ({ name: s.info.name, maxDoc: s.info.maxDoc, delCount: s.delCount, bytesPerDoc }));
  }

  /** Starts the merge policy's next merge in the background when none runs. */
  private maybeMerge(): void {
    const policy = this.options.mergePolicy;
    if (this.merging !== null || this.closed || this.closing || policy === null) return;
    // Only committed segments merge (a merge reads them through a reader of the last commit).
    const committed = new Set(this.reader.commit.segments.map((s) => s.name));
    const names = policy.findMerge(this.mergeCandidates().filter((s) => committed.has(s.name)));
    if (names === null) return;
    this.merging = this.runMerge(names)
      .then(() => {})
      .catch((e: unknown) => {
        this.mergeFailure = e;
      })
      .finally(() => {
        this.merging = null;
      });
  }

  /**
   * Merges the live docs of the committed segments `names` into one new segment on an executor
   * worker (SegmentMergeTask: it reads, parses and writes them and builds the codes and graph),
   * then, in turn with flushes and commits, swaps it in for them (deletions made while it ran
   * carried over: a segment's doc numbers never change) and commits.
   */
  private async runMerge(names: readonly string[]): Promise<boolean> {
    const reader = DirectoryReader.open(this.dir);
    const name = `_${(this.nextSegment++).toString(36)}`;
    const files = SegmentWriter.fileNames(this.dir, name);
    for (const f of files) this.mergingFiles.add(basename(f));
    const current = (segment: string) => this.segments.find((s) => s.info.name === segment);
    let published = false;
    try {
      const inputs: { name: string; live: Uint32Array | null }[] = [];
      for (const segment of names) {
        const live = current(segment);
        if (!reader.leaves.some((l) => l.reader.name === segment) || live === undefined) return false; // gone meanwhile (every doc deleted)
        inputs.push({ name: segment, live: live.liveDocs() });
      }
      const result = await this.services.mergeSegments({
        dir: this.dir,
        name,
        segments: inputs,
        mapping: JSON.stringify(this.mapping.toJSON()),
        fieldNumbers: this.settings.fieldNumbers.entries(),
        seed: SEGMENT_SEED + this.nextSegment,
        graphMerge: this.options.graphMerge,
      });
      const leaves = names.map((segment) => reader.leaves.find((l) => l.reader.name === segment)!.reader);
      const sources = Array.from(result.ids, (_, i) => ({ segment: leaves[result.from[2 * i]!]!, doc: result.from[2 * i + 1]!, name: names[result.from[2 * i]!]! }));
      await this.serialized(async () => {
        const olds = names.map(current);
        if (this.closed || olds.some((o) => o === undefined)) return;
        const merged = WriterSegment.merged(result.info, result.ids, sources);
        sources.forEach((s, i) => {
          const old = olds[names.indexOf(s.name)]!;
          if (!old.isLive(s.doc)) merged.delete(i, old.deletionSeqNo(s.doc));
        });
        const at = this.segments.indexOf(olds[0]!);
        for (const old of olds) this.segments.splice(this.segments.indexOf(old!), 1);
        this.segments.splice(Math.min(at, this.segments.length), 0, merged);
        published = true;
        this.merges++;
        this.mergedDocs += result.ids.length;
        if (result.graphFrom !== null) this.mergedDocsFromGraph += leaves[names.indexOf(result.graphFrom)]!.maxDoc;
        this.mergedDocsJoined += result.docsJoined;
        await this.commitNow({}, true);
      });
      return published;
    } finally {
      if (!published) for (const f of files) rmSync(f, { force: true });
      for (const f of files) this.mergingFiles.delete(basename(f));
      reader.close();
    }
  }

  /** Commits in the background once the translog outgrows its threshold (a failure is thrown by the next flush or commit). */
  private maybeCommit(): void {
    if (this.commitScheduled || this.translog.sizeInBytes < this.options.translogFlushThresholdBytes) return;
    this.commitScheduled = true;
    this.serialized(() => this.commitNow({}, false))
      .catch((e: unknown) => {
        this.failure ??= e;
      })
      .finally(() => {
        this.commitScheduled = false;
      });
  }

  private stopTimer(): void {
    if (this.syncTimer !== null) clearInterval(this.syncTimer);
  }

  /** Commits what is pending, then releases the write lock and the writer's files (Lucene's close with commitOnClose). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true; // the last commit starts no merge
    try {
      await this.merging;
      await this.commit();
    } finally {
      this.closed = true;
      this.stopTimer();
      await this.tail.catch(() => {});
      try {
        await this.translog.close();
      } finally {
        this.reader.close();
        this.lock.release();
        await this.services.closed?.();
      }
    }
  }

  /**
   * Discards everything since the last commit (buffered documents, flushed segments, deletions),
   * deletes the files that only they used, and releases the write lock.
   */
  async rollback(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing = true;
    this.stopTimer();
    await this.merging;
    await this.tail.catch(() => {});
    this.buffer.clear();
    this.pending.clear();
    try {
      // The ops since the commit go with it: a rolled-back write must not come back on replay.
      await this.translog.close().catch(() => {});
      this.translog.deleteFrom(Number(this.reader.commit.userData.get(TRANSLOG_GENERATION_KEY)));
      deleteUnreferencedFiles(this.dir, { keep: this.mergingFiles });
    } finally {
      this.reader.close();
      this.lock.release();
      await this.services.closed?.();
    }
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error(`the IndexWriter of ${this.dir} is closed`);
  }

  /**
   * Runs `task` after the flushes, commits and merge swaps queued before it. A caller's flush or
   * commit first throws what a background flush failed with (`rethrow`); a background flush does
   * not: it runs, so that a writer whose disk filled up recovers once space returns.
   */
  private serialized<T>(task: () => Promise<T>, rethrow = true): Promise<T> {
    const run = this.tail.then(() => {
      if (rethrow && this.failure !== null) {
        const e = this.failure;
        this.failure = null;
        throw e;
      }
      return task();
    });
    this.tail = run.then(
      () => {
        this.lastFailure = null;
      },
      (e: unknown) => {
        this.lastFailure = e;
      },
    );
    return run;
  }

  private stepAside(): Promise<void> {
    return this.services.stepAside?.() ?? new Promise((resolve) => setImmediate(resolve));
  }

  /** Takes the buffer now (new adds start a new one) and writes it as a segment after the flushes before it. */
  private flushInBackground(): void {
    const taken = this.takeBuffer()!;
    this.serialized(() => this.writeSegment(taken), false).then(
      () => {
        this.failure = null; // written: an earlier failure is no longer news
      },
      (e: unknown) => {
        this.failure ??= e;
      },
    );
  }

  /** Buffers a written document under `id`, replacing any document with that id. */
  private applyIndex(id: string, written: BufferedDoc): void {
    const replaced = this.deleteId(id, written.seqNo);
    this.pending.indexed({ id, seqNo: written.seqNo, version: written.version, vector: written.vector, source: written.source, values: written.doc.values }, replaced);
    this.buffer.set(id, written);
    this.bufferBytes += written.bytes;
    if (this.bufferBytes >= this.options.ramBufferBytes) this.flushInBackground();
  }

  /** A document from the translog: its stored `_source` read again by the mapping, its vector as logged. */
  private parseStored(source: Uint8Array, vector: Float32Array): ParsedDoc {
    const parsed = this.parser.parse(JSON.parse(decoder.decode(source)));
    return { vector, source, doc: { source, values: parsed.values }, bytes: vector.byteLength + source.byteLength + BUFFERED_DOC_OVERHEAD };
  }

  private parse(doc: object, source: Uint8Array | undefined): ParsedDoc {
    const parsed = this.parser.parse(doc);
    const field = this.field;
    if (parsed.vector === null) throw new DocumentError(field.name, 'every document needs the vector field');
    if (parsed.vector.length !== field.dims) throw new DocumentError(field.name, `the vector has ${parsed.vector.length} dims, the index has ${field.dims}`);
    if (field.similarity === VectorSimilarityFunction.COSINE && parsed.vector.every((x) => x === 0))
      throw new DocumentError(field.name, 'the vector is all zeros; cosine similarity is undefined for a zero vector');
    const json = source ?? encoder.encode(JSON.stringify(doc));
    const stored = field.name.includes('.') ? json : withoutTopLevelMember(json, field.name);
    return { vector: parsed.vector, source: stored, doc: { source: stored, values: parsed.values }, bytes: parsed.vector.byteLength + stored.byteLength + BUFFERED_DOC_OVERHEAD };
  }

  /**
   * Removes `id` wherever it lives (by the op `seqNo`); true when a live document had it in a
   * flush or a segment, where a commit may hold it (one only in the buffer is in no commit).
   */
  private deleteId(id: string, seqNo: number): boolean {
    let found = false;
    const buffered = this.buffer.get(id);
    if (buffered !== undefined) {
      this.buffer.delete(id);
      this.bufferBytes -= buffered.bytes;
    }
    for (const f of this.flushing) {
      if (f.docs.has(id) && !f.deleted.has(id)) {
        f.deleted.set(id, seqNo);
        found = true;
      }
    }
    for (const s of this.segments) {
      const doc = s.docForId(id);
      if (doc >= 0 && s.isLive(doc)) {
        s.delete(doc, seqNo);
        found = true;
      }
    }
    return found;
  }

  private takeBuffer(): Flushing | null {
    if (this.buffer.size === 0) return null;
    const taken: Flushing = { docs: this.buffer, bytes: this.bufferBytes, deleted: new Map(), started: false };
    this.buffer = new Map();
    this.bufferBytes = 0;
    this.flushing.push(taken);
    return taken;
  }

  /** Writes taken docs as a new segment; on failure they go back to the buffer (less those deleted meanwhile). */
  private async writeSegment(taken: Flushing): Promise<void> {
    if (taken.started) return;
    taken.started = true;
    const writer = new SegmentWriter(this.settings, `_${(this.nextSegment++).toString(36)}`);
    try {
      let slice = performance.now();
      for (const [id, d] of taken.docs) {
        writer.addDocument(id, d.vector, d.doc, d);
        if (performance.now() - slice >= FLUSH_TURN_MS) {
          await this.stepAside();
          slice = performance.now();
        }
      }
      const { info, build } = deferringSync(this.unsynced, () => writer.finish(this.mapping, SEGMENT_SEED + this.nextSegment, new Int32Array(new SharedArrayBuffer(8))));
      await this.services.buildSegment(build);
      const segment = WriterSegment.flushed(info, [...taken.docs.keys()], [...taken.docs.values()]);
      for (const [id, seqNo] of taken.deleted) segment.delete(segment.docForId(id), seqNo);
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

  /** Whether a commit now would differ from the last one. */
  private hasChanges(userData: Readonly<Record<string, string>>): boolean {
    const previous = this.reader.commit;
    return (
      this.buffer.size > 0 ||
      this.flushing.length > 0 ||
      this.segments.some((s) => s.dirty) ||
      this.segments.length !== previous.segments.length ||
      Object.entries(userData).some(([k, v]) => previous.userData.get(k) !== v) ||
      this.mappingChanged()
    );
  }

  /** Writes the commit of the segments as of `checkpoint`: their deletions by ops up to it, no later ones. */
  private commitFlushed(checkpoint: number, userData: Readonly<Record<string, string>>): number {
    const previous = this.reader.commit;
    const infos: SegmentCommitInfo[] = [];
    for (const s of this.segments) {
      const at = s.liveDocsAt(checkpoint);
      if (at !== null) {
        const delGen = nextFreeDelGen(this.dir, s.info.name, Math.max(1, s.info.delGen + 1));
        writeLiveDocs(this.dir, s.info, delGen, at.live);
        s.info = { ...s.info, delGen, delCount: at.delCount };
        s.written(checkpoint);
      }
      if (s.info.delCount < s.info.maxDoc) infos.push(s.info);
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
    this.pending.committed(checkpoint);
    // Deletions by ops after the checkpoint are not in this commit: they carry over to the
    // segments read back from it, for the next commit.
    const late = new Map(this.segments.map((s) => [s.info.name, s.unwrittenDeletions()]));
    this.segments.length = 0;
    this.adoptCommittedSegments();
    for (const s of this.segments) for (const [doc, seqNo] of late.get(s.info.name) ?? []) s.delete(doc, seqNo);
    deleteUnreferencedFiles(this.dir, { keep: this.mergingFiles });
    return generation;
  }

  private mappingChanged(): boolean {
    return JSON.stringify(this.mapping.toJSON()) !== this.reader.commit.userData.get('mapping');
  }

  /** The segments of the reader's commit, with their live docs, as the writer's starting point. */
  private adoptCommittedSegments(): void {
    for (const leaf of this.reader.leaves) {
      this.segments.push(WriterSegment.committed(this.reader.commit.segments[leaf.ord]!, leaf.reader));
    }
  }
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

/** Elasticsearch's checks before a write: `create` wants no doc, `if_seq_no` wants that one. */
function checkExpectations(id: string, current: DocVersion | null, options: WriteOptions): void {
  if (options.opType === 'create' && current !== null) throw new VersionConflictError(id, `document already exists (current version [${current.version}])`);
  if (options.ifSeqNo !== undefined || options.ifPrimaryTerm !== undefined) {
    const seqNo = current?.seqNo ?? -2; // UNASSIGNED_SEQ_NO when the doc does not exist
    if (current === null || seqNo !== options.ifSeqNo || (options.ifPrimaryTerm ?? PRIMARY_TERM) !== PRIMARY_TERM)
      throw new VersionConflictError(
        id,
        `required seqNo [${options.ifSeqNo}], primary term [${options.ifPrimaryTerm ?? PRIMARY_TERM}]. ${current === null ? 'but no document was found' : `current document has seqNo [${seqNo}] and primary term [${PRIMARY_TERM}]`}`,
      );
  }
}
