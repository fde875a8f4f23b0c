import { join } from 'node:path';
import { appendFooter, writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { IndexOutput } from '../store/IndexOutput.js';
import { writeFileAtomicallyNoReplace } from '../store/files.js';
import type { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import {
  FLAT_DATA_CODEC,
  FLAT_DATA_EXTENSION,
  FLAT_META_CODEC,
  FLAT_META_EXTENSION,
  FLAT_VERSION_CURRENT,
  PRESCORE_VECTOR_DATA_ALIGNMENT,
  VectorEncoding,
  segmentFileName,
} from './FlatVectorsFormat.js';
import { writeDenseOrdToDoc } from './OrdToDoc.js';

export interface FlatFieldSpec {
  readonly fieldNumber: number;
  readonly similarity: VectorSimilarityFunction;
  readonly dims: number;
}

/**
 * Streams one dense float32 field into `.vec` and writes its `.vemf` at finish: vectors arrive
 * in doc order (ord == doc) and are never buffered, so a segment of any size is written in
 * bounded memory.
 */
export class FlatVectorsWriter {
  private readonly data: IndexOutput;
  /** Offset of ord 0 in `.vec` (page-aligned). */
  readonly vectorDataOffset: number;
  private count = 0;
  private finished = false;
  readonly dataPath: string;
  readonly metaPath: string;

  constructor(
    dir: string,
    segmentName: string,
    private readonly segmentId: Uint8Array,
    private readonly suffix: string,
    private readonly field: FlatFieldSpec,
  ) {
    this.dataPath = join(dir, segmentFileName(segmentName, suffix, FLAT_DATA_EXTENSION));
    this.metaPath = join(dir, segmentFileName(segmentName, suffix, FLAT_META_EXTENSION));
    this.data = new IndexOutput(this.dataPath);
    writeIndexHeader(this.data, FLAT_DATA_CODEC, FLAT_VERSION_CURRENT, segmentId, suffix);
    this.vectorDataOffset = this.data.alignTo(PRESCORE_VECTOR_DATA_ALIGNMENT);
  }

  get size(): number {
    return this.count;
  }

  /** Appends `rows` vectors (row-major, dims floats each). */
  addVectors(vectors: Float32Array, rows = vectors.length / this.field.dims): void {
    if (this.finished) throw new Error('writer already finished');
    const n = rows * this.field.dims;
    if (n > vectors.length) throw new RangeError(`expected ${n} floats, got ${vectors.length}`);
    // Little-endian hosts only (x86-64, arm64): the in-memory float layout is the file layout.
    this.data.writeBytes(new Uint8Array(vectors.buffer, vectors.byteOffset, n * 4));
    this.count += rows;
  }

  /** Writes the footer of `.vec` and the whole `.vemf`; both files are fsynced. */
  finish(maxDoc = this.count): { dataLength: number; metaLength: number } {
    if (this.finished) throw new Error('writer already finished');
    this.finished = true;
    const vectorDataLength = this.data.filePointer - this.vectorDataOffset;
    writeFooter(this.data);
    const dataLength = this.data.filePointer;
    this.data.close();

    const meta = new ByteArrayDataOutput(256);
    writeIndexHeader(meta, FLAT_META_CODEC, FLAT_VERSION_CURRENT, this.segmentId, this.suffix);
    meta.writeInt(this.field.fieldNumber);
    meta.writeInt(VectorEncoding.FLOAT32);
    meta.writeInt(this.field.similarity.ordinal);
    meta.writeVLong(this.vectorDataOffset);
    meta.writeVLong(vectorDataLength);
    meta.writeVInt(this.field.dims);
    meta.writeInt(this.count);
    writeDenseOrdToDoc(meta, this.count, maxDoc);
    meta.writeInt(-1);
    appendFooter(meta);
    writeFileAtomicallyNoReplace(this.metaPath, meta.toBytes());
    return { dataLength, metaLength: meta.length };
  }

  /** Closes and leaves the caller to delete the partial files. */
  abort(): void {
    this.finished = true;
    this.data.abort();
  }
}
