import { readSync } from 'node:fs';
import type { SegmentCommitInfo } from './CommitPoint.js';
import type { SegmentReader } from './IndexReader.js';
import { SegmentIdLookup } from './SegmentIdLookup.js';
import { SEQ_NO_FIELD, SOURCE_FIELD, VERSION_FIELD } from './SegmentDocumentsWriter.js';

/** A document's place in the write history (Elasticsearch's `_seq_no` and `_version`). */
export interface DocVersion {
  /** The sequence number of the write that made this version (0 for a doc written by a build). */
  readonly seqNo: number;
  /** 1 for the first write of an id, +1 for each replacement (1 for a doc written by a build). */
  readonly version: number;
}

/** A written document as the writer can read it back: what an `_update` merges into, and a realtime get. */
export interface StoredDoc extends DocVersion {
  readonly source: Uint8Array;
  readonly vector: Float32Array;
}

const BUILT: DocVersion = { seqNo: 0, version: 1 };
/** The source of a doc stored without one (a segment built before documents): `{}`. */
const EMPTY_SOURCE = new TextEncoder().encode('{}');

/**
 * A segment as the IndexWriter sees it: how to find a doc by id, read it back, and which of its
 * docs are deleted (the commit's deletions plus those since, to be written as a new `.liv`).
 */
export class WriterSegment {
  /** Live docs (bit d of word d >>> 5); null: every doc live. */
  private live: Uint32Array | null;

  private constructor(
    public info: SegmentCommitInfo,
    live: Uint32Array | null,
    /** Deleted docs, the commit's plus those since. */
    public delCount: number,
    private readonly source: SegmentSource,
  ) {
    this.live = live;
  }

  /**
   * Deletions not yet in a `.liv`, each with the seqNo of the op that made it. A commit holds the
   * ops up to its checkpoint only: deletions by later ops (an update arriving while the commit
   * syncs) wait for the next commit, else a crash before their op is durable would keep the
   * deletion and lose the document.
   */
  private readonly unwritten = new Map<number, number>();

  /** Whether deletions since the last commit need a new `.liv`. */
  get dirty(): boolean {
    return this.unwritten.size > 0;
  }

  /** A committed segment, read through its open reader. */
  static committed(info: SegmentCommitInfo, reader: SegmentReader): WriterSegment {
    return new WriterSegment(info, reader.liveDocs ? reader.liveDocs.slice() : null, info.delCount, new ReaderSource(reader));
  }

  /** A segment this writer just flushed (not yet committed): its docs are still in memory. */
  static flushed(info: SegmentCommitInfo, ids: readonly string[], docs: readonly StoredDoc[]): WriterSegment {
    return new WriterSegment(info, null, 0, new MemorySource(ids, docs));
  }

  /**
   * A segment a merge just wrote (not yet committed): its doc d is `sources[d]`, read through the
   * merge's own reader of the merged segments until the commit that follows the merge.
   */
  static merged(info: SegmentCommitInfo, ids: readonly string[], sources: readonly { readonly segment: SegmentReader; readonly doc: number }[]): WriterSegment {
    return new WriterSegment(info, null, 0, new MergedSource(ids, sources));
  }

  /** The user-facing id of a doc. */
  id(doc: number): string {
    return this.source.id(doc);
  }

  /**
   * The live docs a commit with this checkpoint writes (deletions by later ops left live) and
   * their deleted count; null when no deletion up to the checkpoint awaits a `.liv`.
   */
  liveDocsAt(checkpoint: number): { readonly live: Uint32Array; readonly delCount: number } | null {
    let due = false;
    for (const seqNo of this.unwritten.values()) if (seqNo <= checkpoint) due = true;
    if (!due) return null;
    const live = this.live!.slice();
    let late = 0;
    for (const [doc, seqNo] of this.unwritten) {
      if (seqNo <= checkpoint) continue;
      live[doc >>> 5]! |= 1 << (doc & 31);
      late++;
    }
    return { live, delCount: this.delCount - late };
  }

  /** The deletions up to `checkpoint` are in a `.liv` now; the later ones still wait. */
  written(checkpoint: number): void {
    for (const [doc, seqNo] of this.unwritten) if (seqNo <= checkpoint) this.unwritten.delete(doc);
  }

  /** The deletions that wait for a `.liv`: doc and the seqNo of the op that made it. */
  unwrittenDeletions(): readonly (readonly [doc: number, seqNo: number])[] {
    return [...this.unwritten];
  }

  /** The seqNo of the op that deleted `doc` if that deletion awaits a `.liv`, else -1 (a committed deletion). */
  deletionSeqNo(doc: number): number {
    return this.unwritten.get(doc) ?? -1;
  }

  docForId(id: string): number {
    return this.source.docForId(id);
  }

  /** A copy of the live docs as of now (null: every doc live). */
  liveDocs(): Uint32Array | null {
    return this.live === null ? null : this.live.slice();
  }

  isLive(doc: number): boolean {
    return this.live === null || ((this.live[doc >>> 5]! >>> (doc & 31)) & 1) === 1;
  }

  /** Deletes `doc`, deleted by the op `seqNo` (-1: a deletion some commit already holds). */
  delete(doc: number, seqNo: number): void {
    if (this.live === null) {
      this.live = new Uint32Array(Math.ceil(this.info.maxDoc / 32)).fill(0xffffffff);
      const tail = this.info.maxDoc & 31;
      if (tail !== 0) this.live[this.live.length - 1] = (1 << tail) - 1;
    }
    this.live[doc >>> 5]! &= ~(1 << (doc & 31));
    this.delCount++;
    this.unwritten.set(doc, seqNo);
  }

  version(doc: number): DocVersion {
    return this.source.version(doc);
  }

  read(doc: number): StoredDoc {
    return this.source.read(doc);
  }
}

interface SegmentSource {
  id(doc: number): string;
  docForId(id: string): number;
  version(doc: number): DocVersion;
  read(doc: number): StoredDoc;
}

/** A segment written by this writer: its ids in doc order, held in memory until its commit. */
abstract class InMemoryIds {
  private readonly byId: Map<string, number>;

  constructor(private readonly ids: readonly string[]) {
    this.byId = new Map(ids.map((id, doc) => [id, doc]));
  }

  id(doc: number): string {
    return this.ids[doc]!;
  }

  docForId(id: string): number {
    return this.byId.get(id) ?? -1;
  }
}

class MemorySource extends InMemoryIds implements SegmentSource {
  constructor(
    ids: readonly string[],
    private readonly docs: readonly StoredDoc[],
  ) {
    super(ids);
  }

  version(doc: number): DocVersion {
    return this.docs[doc]!;
  }

  read(doc: number): StoredDoc {
    return this.docs[doc]!;
  }
}

/** A committed segment: ids through SegmentIdLookup, versions from its `_seq_no`/`_version` doc values (decoded at the first lookup), sources from stored fields, vectors from `.vec`. */
class ReaderSource implements SegmentSource {
  private versions: { readonly seqNo: ArrayLike<number>; readonly version: ArrayLike<number> } | null | undefined;

  constructor(private readonly reader: SegmentReader) {}

  id(doc: number): string {
    return this.reader.id(doc);
  }

  docForId(id: string): number {
    return SegmentIdLookup.of(this.reader).docForId(id);
  }

  version(doc: number): DocVersion {
    if (this.versions === undefined) {
      const documents = this.reader.documents;
      const seqNo = documents?.docValues.producer(SEQ_NO_FIELD);
      const version = documents?.docValues.producer(VERSION_FIELD);
      this.versions =
        seqNo && version
          ? { seqNo: seqNo.numericColumn(SEQ_NO_FIELD).values as ArrayLike<number>, version: version.numericColumn(VERSION_FIELD).values as ArrayLike<number> }
          : null;
    }
    if (this.versions === null) return BUILT;
    return { seqNo: this.versions.seqNo[doc]!, version: this.versions.version[doc]! };
  }

  read(doc: number): StoredDoc {
    const documents = this.reader.documents;
    const number = documents?.fieldInfos.fieldInfo(SOURCE_FIELD)?.number;
    const stored = number === undefined ? undefined : documents!.storedFields.documentFields(doc).find((f) => f.fieldNumber === number)?.value;
    const source = stored instanceof Uint8Array ? stored : EMPTY_SOURCE;
    const v = this.reader.handle.vectors;
    const bytes = new Uint8Array(v.byteSize);
    const fd = v.fd;
    if (fd === undefined) throw new Error(`segment ${this.reader.name}: its vectors are not held open`);
    readSync(fd, bytes, 0, v.byteSize, v.offset + doc * v.byteSize);
    return { ...this.version(doc), source, vector: new Float32Array(bytes.buffer) };
  }
}

class MergedSource extends InMemoryIds implements SegmentSource {
  private readonly readers = new Map<SegmentReader, ReaderSource>();

  constructor(
    ids: readonly string[],
    private readonly sources: readonly { readonly segment: SegmentReader; readonly doc: number }[],
  ) {
    super(ids);
  }

  version(doc: number): DocVersion {
    const { segment, doc: from } = this.sources[doc]!;
    return this.of(segment).version(from);
  }

  read(doc: number): StoredDoc {
    const { segment, doc: from } = this.sources[doc]!;
    return this.of(segment).read(from);
  }

  private of(segment: SegmentReader): ReaderSource {
    let r = this.readers.get(segment);
    if (r === undefined) this.readers.set(segment, (r = new ReaderSource(segment)));
    return r;
  }
}
