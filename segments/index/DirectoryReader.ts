import { closeSync, fstatSync, openSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { idToString } from '../codec/CodecUtil.js';
import { FLAT_DATA_EXTENSION, FLAT_META_EXTENSION, segmentFileName } from '../flat/FlatVectorsFormat.js';
import { FlatVectorsReader } from '../flat/FlatVectorsReader.js';
import { ScalarQuantizedVectorsReader } from '../quantized/ScalarQuantizedVectorsReader.js';
import { SQ_DATA_EXTENSION, SQ_META_EXTENSION } from '../quantized/ScalarQuantizedVectorsFormat.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION, HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import type { FileSlice } from '../store/FileSlice.js';
import { DirectoryLock, CLEANUP_PURPOSE } from '../store/DirectoryLock.js';
import { listCommitGenerations, readLatestCommit, type CommitPoint, type SegmentCommitInfo, type VectorFieldInfo } from './CommitPoint.js';
import { deleteUnreferencedFiles } from './IndexFileDeleter.js';
import { DocIds } from './DocIds.js';
import type { IndexReader, LeafReaderContext, SegmentReader } from './IndexReader.js';
import { shared, type SegmentHandle } from './SegmentHandle.js';
import { newIndexId } from './releaseBoard.js';
import { SegmentDocuments } from './SegmentDocuments.js';
import { Mapping } from '../document/Mapping.js';
import { FIELD_INFOS_EXTENSION, parseFieldInfos } from '../lucene/FieldInfos.js';
import { openChecksummed } from '../codec/CodecUtil.js';
import { readSliceBytes } from '../store/FileSlice.js';
import { existsSync } from 'node:fs';
import { liveDocsFileName, parseLiveDocs } from '../lucene/LiveDocs.js';

/** Attempts to open a commit whose files a concurrent build deletes under us (Lucene's FindSegmentsFile retries too). */
const OPEN_ATTEMPTS = 5;

/**
 * Opens prescore's own index directory at its newest commit. Every meta file is CRC-verified and
 * every data file structurally checked here, once, on the main thread; workers later open the
 * same files from the segments' handles without re-verifying.
 *
 * The reader holds an open descriptor on every data file until close(), and workers open the
 * files through those descriptors (SegmentHandle's HeldFile): a rebuild in place that deletes
 * this commit's files never breaks the searches or the description of an open reader. A new
 * commit is seen only by a new reader (`isCurrent()` tells when one is due).
 *
 * Opening also deletes what a killed build left behind (segment files no commit references,
 * commit temp files), but only when it can take the write lock at once: a live build's files are
 * never touched, and an index on a read-only file system opens as usual.
 */
export class DirectoryReader implements IndexReader {
  private closed = false;

  private constructor(
    readonly id: number,
    readonly dir: string,
    readonly commit: CommitPoint,
    readonly leaves: readonly LeafReaderContext[],
    private readonly files: HeldFiles,
  ) {}

  /**
   * Opens the newest commit of a `prescore build` directory (Lucene's DirectoryReader.open).
   *
   * @example
   * ```ts
   * const searcher = new IndexSearcher(DirectoryReader.open('data/demo/index'));
   * ```
   */
  static open(dir: string): DirectoryReader {
    const real = realpathSync(dir);
    deleteOrphans(real);
    for (let attempt = 1; ; attempt++) {
      try {
        return DirectoryReader.openCommit(real);
      } catch (e) {
        // The commit we read was replaced, and its files deleted, while we opened them.
        const gone = (e as NodeJS.ErrnoException).code === 'ENOENT';
        if (!gone || attempt >= OPEN_ATTEMPTS) throw e;
      }
    }
  }

  /**
   * A reader of the directory's newest commit when it is newer than `reader`'s, else null
   * (Lucene's DirectoryReader.openIfChanged). The old reader stays open and usable: close it once
   * the searches that hold it are done.
   */
  static openIfChanged(reader: DirectoryReader): DirectoryReader | null {
    if (reader.isCurrent()) return null;
    return DirectoryReader.open(reader.dir);
  }

  private static openCommit(real: string): DirectoryReader {
    const commit = readLatestCommit(real);
    const id = newIndexId();
    const files = new HeldFiles(real);
    try {
      const leaves: LeafReaderContext[] = [];
      let docBase = 0;
      for (const info of commit.segments) {
        const reader = PrescoreSegmentReader.open(id, real, commit, info, files);
        leaves.push({ ord: leaves.length, docBase, reader });
        docBase += info.maxDoc;
      }
      return new DirectoryReader(id, real, commit, leaves, files);
    } catch (e) {
      files.close();
      throw e;
    }
  }

  get field(): VectorFieldInfo {
    return this.commit.field;
  }

  private parsedMapping: Mapping | null | undefined;

  /** The mapping the build kept in the commit's user data (null for an index built before documents). */
  get mapping(): Mapping | null {
    if (this.parsedMapping === undefined) {
      const json = this.commit.userData.get('mapping');
      this.parsedMapping = json === undefined ? null : Mapping.parse(JSON.parse(json));
    }
    return this.parsedMapping;
  }

  get maxDoc(): number {
    const last = this.leaves[this.leaves.length - 1];
    return last ? last.docBase + last.reader.maxDoc : 0;
  }

  /** False once a newer commit is in the directory (Lucene's DirectoryReader.isCurrent). */
  isCurrent(): boolean {
    return listCommitGenerations(this.dir).at(-1) === this.commit.generation;
  }

  /** Verifies the CRC32 of every file of every segment (reads every byte). */
  checkIntegrity(): void {
    for (const leaf of this.leaves) leaf.reader.checkIntegrity();
  }

  /** Closes the held descriptors; call it only when no search of this reader can still run. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const leaf of this.leaves) leaf.reader.documents?.close();
    this.files.close();
  }
}

/** Deletes a killed build's leftovers when no writer holds the directory. Best effort. */
function deleteOrphans(dir: string): void {
  let lock: DirectoryLock | null;
  try {
    lock = DirectoryLock.tryObtain(dir, CLEANUP_PURPOSE);
  } catch {
    return; // read-only directory or file system: nothing to clean, nothing we may write
  }
  if (lock === null) return; // a writer is at work; its files are not orphans
  try {
    deleteUnreferencedFiles(dir, { onlyWithCommit: true });
  } catch {
    // Cleaning is an optimisation; a failure must not stop the index from opening.
  } finally {
    lock.release();
  }
}

/** The descriptors a reader holds on its files (see HeldFile in SegmentHandle). */
class HeldFiles {
  private readonly fds: number[] = [];

  constructor(private readonly dir: string) {}

  /** Opens `name` and returns a slice over the held descriptor (its name stays the file's, for errors). */
  open(name: string): FileSlice & { readonly fd: number; readonly realPath: string } {
    const realPath = join(this.dir, name);
    const fd = openSync(realPath, 'r');
    this.fds.push(fd);
    return { path: `/proc/self/fd/${fd}`, name, offset: 0, length: fstatSync(fd).size, fd, realPath };
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }
}

class PrescoreSegmentReader implements SegmentReader {
  private constructor(
    readonly name: string,
    readonly maxDoc: number,
    readonly handle: SegmentHandle,
    private readonly ids: DocIds,
    private readonly flat: FlatVectorsReader,
    private readonly quantized: ScalarQuantizedVectorsReader,
    private readonly graph: HnswVectorsReader | null,
    readonly bytes: { vectors: number; codes: number; graph: number },
    readonly documents: SegmentDocuments | null,
    readonly liveDocs: Uint32Array | null,
    private readonly delCount: number,
  ) {}

  static open(indexId: number, dir: string, commit: CommitPoint, info: SegmentCommitInfo, files: HeldFiles): PrescoreSegmentReader {
    const file = (ext: string) => files.open(segmentFileName(info.name, info.suffix, ext));
    const fieldNumber = commit.field.number;
    const vec = file(FLAT_DATA_EXTENSION);
    const veq = file(SQ_DATA_EXTENSION);
    const flat = FlatVectorsReader.open(file(FLAT_META_EXTENSION), vec, info.id, info.suffix);
    const quantized = ScalarQuantizedVectorsReader.open(file(SQ_META_EXTENSION), veq, info.id, info.suffix);
    const f = flat.field(fieldNumber);
    const q = quantized.field(fieldNumber);
    if (f.dims !== commit.field.dims || q.dims !== commit.field.dims) {
      throw new Error(`segment ${info.name}: dims ${f.dims}/${q.dims} differ from the commit's ${commit.field.dims}`);
    }
    if (f.size !== info.maxDoc || q.count !== info.maxDoc || (f.ordToDoc.kind !== 'dense' && info.maxDoc > 0)) {
      throw new Error(`segment ${info.name}: expected a dense field of ${info.maxDoc} vectors, found ${f.size} raw and ${q.count} quantized`);
    }
    let graph: HnswVectorsReader | null = null;
    const vem = info.hasGraph ? file(HNSW_META_EXTENSION) : null;
    const vex = info.hasGraph ? file(HNSW_INDEX_EXTENSION) : null;
    if (vem && vex) graph = HnswVectorsReader.openMeta(vem, vex, info.id, info.suffix);
    const ids = DocIds.read(dir, info.name, info.id, info.maxDoc);
    const documents = openDocuments(dir, info, files);
    // Prescore segments are dense (ord = doc), so the live docs are the live ords too.
    const liveDocs = info.delGen === -1 ? null : shared(readLiveWords(info, files));
    const core = `${dir}#${info.name}#${idToString(info.id)}`;
    const handle: SegmentHandle = {
      key: `${indexId}#${core}`,
      indexId,
      name: info.name,
      maxDoc: info.maxDoc,
      dims: f.dims,
      similarity: f.similarity.ordinal,
      vectors: { path: vec.realPath, fd: vec.fd, offset: f.vectorDataOffset, byteSize: f.byteSize, size: f.size, ordToDoc: null },
      quantized: {
        file: veq,
        path: veq.realPath,
        fd: veq.fd,
        offset: veq.offset + q.vectorDataOffset,
        count: q.count,
        codeBytes: q.codeBytes,
        recordBytes: q.recordBytes,
        centroid: shared(q.centroid),
        centroidDP: q.centroidDP,
        bits: q.scalarEncoding.docBits,
        rotationSeed: q.rotationSeed,
      },
      graph: vem && vex ? { vem, vex, segmentId: info.id, suffix: info.suffix, fieldNumber } : null,
      liveOrds: liveDocs,
      resident: null,
      coreKey: core,
    };
    return new PrescoreSegmentReader(
      info.name,
      info.maxDoc,
      handle,
      ids,
      flat,
      quantized,
      graph,
      {
        vectors: f.vectorDataLength,
        codes: q.vectorDataLength,
        graph: vex ? vex.length : 0,
      },
      documents,
      liveDocs,
      info.delCount,
    );
  }

  get numVectors(): number {
    return this.handle.vectors.size - this.delCount;
  }

  id(doc: number): string {
    return this.ids.get(doc);
  }

  checkIntegrity(): void {
    this.flat.checkIntegrity();
    this.quantized.checkIntegrity();
    this.graph?.checkIntegrity();
    this.documents?.checkIntegrity();
  }
}

/** The segment's `.liv` (CRC-checked, its deleted count checked against the commit's) as live-doc words. */
function readLiveWords(info: SegmentCommitInfo, files: HeldFiles): Uint32Array {
  const slice = files.open(liveDocsFileName(info.name, info.delGen));
  return parseLiveDocs(openChecksummed(readSliceBytes(slice), slice.name), info.id, info.maxDoc, info.delGen, info.delCount).words();
}

/** A segment's documents when the build wrote them (`_N.fnm`); null for an index built before documents. */
function openDocuments(dir: string, info: SegmentCommitInfo, files: HeldFiles): SegmentDocuments | null {
  const fnm = `${info.name}.${FIELD_INFOS_EXTENSION}`;
  if (!existsSync(join(dir, fnm))) return null;
  const slice = files.open(fnm);
  const fieldInfos = parseFieldInfos(openChecksummed(readSliceBytes(slice), slice.name), info.id, '');
  return SegmentDocuments.openPrescore({ openSlice: (name) => files.open(name) }, info, fieldInfos);
}
