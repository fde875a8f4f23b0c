import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { idToString } from '../codec/CodecUtil.js';
import { FLAT_DATA_EXTENSION, FLAT_META_EXTENSION, segmentFileName } from '../flat/FlatVectorsFormat.js';
import { FlatVectorsReader } from '../flat/FlatVectorsReader.js';
import { ScalarQuantizedVectorsReader } from '../quantized/ScalarQuantizedVectorsReader.js';
import { SQ_DATA_EXTENSION, SQ_META_EXTENSION } from '../quantized/ScalarQuantizedVectorsFormat.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION, HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import { wholeFile } from '../store/FileSlice.js';
import { readLatestCommit, type CommitPoint, type SegmentCommitInfo, type VectorFieldInfo } from './CommitPoint.js';
import { DocIds } from './DocIds.js';
import type { IndexReader, LeafReaderContext, SegmentReader } from './IndexReader.js';
import { shared, type SegmentHandle } from './SegmentHandle.js';
import { newIndexId } from './releaseBoard.js';

/**
 * Opens prescore's own index directory at its newest commit. Every meta file is CRC-verified and
 * every data file structurally checked here, once, on the main thread; workers later open the
 * same files from the segments' handles without re-verifying.
 */
export class DirectoryReader implements IndexReader {
  private constructor(
    readonly id: number,
    readonly dir: string,
    readonly commit: CommitPoint,
    readonly leaves: readonly LeafReaderContext[],
  ) {}

  static open(dir: string): DirectoryReader {
    const real = realpathSync(dir);
    const commit = readLatestCommit(real);
    const id = newIndexId();
    const leaves: LeafReaderContext[] = [];
    let docBase = 0;
    for (const info of commit.segments) {
      const reader = PrescoreSegmentReader.open(id, real, commit, info);
      leaves.push({ ord: leaves.length, docBase, reader });
      docBase += info.maxDoc;
    }
    return new DirectoryReader(id, real, commit, leaves);
  }

  get field(): VectorFieldInfo {
    return this.commit.field;
  }

  get maxDoc(): number {
    const last = this.leaves[this.leaves.length - 1];
    return last ? last.docBase + last.reader.maxDoc : 0;
  }

  checkIntegrity(): void {
    for (const leaf of this.leaves) leaf.reader.checkIntegrity();
  }

  close(): void {}
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
  ) {}

  static open(indexId: number, dir: string, commit: CommitPoint, info: SegmentCommitInfo): PrescoreSegmentReader {
    const file = (ext: string) => {
      const name = segmentFileName(info.name, info.suffix, ext);
      return wholeFile(join(dir, name), name);
    };
    const fieldNumber = commit.field.number;
    const flat = FlatVectorsReader.open(file(FLAT_META_EXTENSION), file(FLAT_DATA_EXTENSION), info.id, info.suffix);
    const quantized = ScalarQuantizedVectorsReader.open(file(SQ_META_EXTENSION), file(SQ_DATA_EXTENSION), info.id, info.suffix);
    const f = flat.field(fieldNumber);
    const q = quantized.field(fieldNumber);
    if (f.dims !== commit.field.dims || q.dims !== commit.field.dims) {
      throw new Error(`segment ${info.name}: dims ${f.dims}/${q.dims} differ from the commit's ${commit.field.dims}`);
    }
    if (f.size !== info.maxDoc || q.count !== info.maxDoc || f.ordToDoc.kind !== 'dense' && info.maxDoc > 0) {
      throw new Error(`segment ${info.name}: expected a dense field of ${info.maxDoc} vectors, found ${f.size} raw and ${q.count} quantized`);
    }
    let graph: HnswVectorsReader | null = null;
    const vem = info.hasGraph ? file(HNSW_META_EXTENSION) : null;
    const vex = info.hasGraph ? file(HNSW_INDEX_EXTENSION) : null;
    if (vem && vex) graph = HnswVectorsReader.openMeta(vem, vex, info.id, info.suffix);
    const ids = DocIds.read(dir, info.name, info.id, info.maxDoc);
    const handle: SegmentHandle = {
      key: `${indexId}#${dir}#${info.name}#${idToString(info.id)}`,
      indexId,
      name: info.name,
      maxDoc: info.maxDoc,
      dims: f.dims,
      similarity: f.similarity.ordinal,
      vectors: { path: flat.dataSlice.path, offset: flat.dataSlice.offset + f.vectorDataOffset, byteSize: f.byteSize, size: f.size, ordToDoc: null },
      quantized: {
        path: quantized.dataSlice.path,
        offset: quantized.dataSlice.offset + q.vectorDataOffset,
        count: q.count,
        codeBytes: q.codeBytes,
        recordBytes: q.recordBytes,
        centroid: shared(q.centroid),
        centroidDP: q.centroidDP,
        bits: q.scalarEncoding.docBits,
        rotationSeed: q.rotationSeed,
      },
      graph: vem && vex ? { vem, vex, segmentId: info.id, suffix: info.suffix, fieldNumber } : null,
      liveOrds: null,
    };
    return new PrescoreSegmentReader(info.name, info.maxDoc, handle, ids, flat, quantized, graph, {
      vectors: f.vectorDataLength,
      codes: q.vectorDataLength,
      graph: vex ? vex.length : 0,
    });
  }

  get numVectors(): number {
    return this.handle.vectors.size;
  }

  id(doc: number): string {
    return this.ids.get(doc);
  }

  checkIntegrity(): void {
    this.flat.checkIntegrity();
    this.quantized.checkIntegrity();
    this.graph?.checkIntegrity();
  }
}
