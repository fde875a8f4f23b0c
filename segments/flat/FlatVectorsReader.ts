import { checksumEntireFile, openMetaAndData, type FormatPair } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import { FLAT_DATA_CODEC, FLAT_META_CODEC, FLAT_VERSION_CURRENT, FLAT_VERSION_START, VectorEncoding } from './FlatVectorsFormat.js';

const FLAT_FORMAT: FormatPair = { metaCodec: FLAT_META_CODEC, dataCodec: FLAT_DATA_CODEC, minVersion: FLAT_VERSION_START, maxVersion: FLAT_VERSION_CURRENT };
import { readOrdToDocConfig, type OrdToDocConfig } from './OrdToDoc.js';

export interface FlatFieldEntry {
  readonly fieldNumber: number;
  readonly encoding: VectorEncoding;
  readonly similarity: VectorSimilarityFunction;
  /** Offset of ord 0 relative to the start of the `.vec` slice. */
  readonly vectorDataOffset: number;
  readonly vectorDataLength: number;
  readonly dims: number;
  /** Number of vectors (ords). */
  readonly size: number;
  readonly ordToDoc: OrdToDocConfig;
  /** Bytes per vector: dims x 4 for FLOAT32, dims for BYTE. */
  readonly byteSize: number;
}

/**
 * Opens a Lucene99FlatVectorsFormat pair (`.vemf` + `.vec`): the meta file is verified byte by
 * byte (CRC32), the data file structurally (header, footer, every field's range inside it).
 * Vector bytes are not read here: the read paths map or pread them from `dataSlice`.
 */
export class FlatVectorsReader {
  private constructor(
    readonly metaSlice: FileSlice,
    readonly dataSlice: FileSlice,
    readonly fields: ReadonlyMap<number, FlatFieldEntry>,
  ) {}

  static open(metaSlice: FileSlice, dataSlice: FileSlice, segmentId: Uint8Array, suffix: string): FlatVectorsReader {
    const { meta } = openMetaAndData(metaSlice, dataSlice, FLAT_FORMAT, segmentId, suffix);
    const fields = new Map<number, FlatFieldEntry>();
    const dataEnd = dataSlice.length - 16;
    for (let fieldNumber = meta.readInt(); fieldNumber !== -1; fieldNumber = meta.readInt()) {
      const encoding = meta.readInt();
      if (encoding !== VectorEncoding.FLOAT32 && encoding !== VectorEncoding.BYTE) {
        throw new CorruptIndexException(`invalid vector encoding ${encoding} for field ${fieldNumber}`, metaSlice.name);
      }
      const similarityOrdinal = meta.readInt();
      if (similarityOrdinal < 0 || similarityOrdinal > 3) {
        throw new CorruptIndexException(`invalid similarity ordinal ${similarityOrdinal} for field ${fieldNumber}`, metaSlice.name);
      }
      const vectorDataOffset = meta.readVLong();
      const vectorDataLength = meta.readVLong();
      const dims = meta.readVInt();
      const size = meta.readInt();
      if (dims <= 0 || size < 0) throw new CorruptIndexException(`invalid dims ${dims} or size ${size}`, metaSlice.name);
      const ordToDoc = readOrdToDocConfig(meta, size);
      const byteSize = encoding === VectorEncoding.FLOAT32 ? dims * 4 : dims;
      if (vectorDataLength !== size * byteSize) {
        throw new CorruptIndexException(`vector data length ${vectorDataLength} not matching size=${size} * dim=${dims} * byteSize=${byteSize / dims}`, dataSlice.name);
      }
      if (vectorDataOffset < 0 || vectorDataOffset + vectorDataLength > dataEnd) {
        throw new CorruptIndexException(`vector data [${vectorDataOffset}, +${vectorDataLength}) lies outside the file (length ${dataSlice.length})`, dataSlice.name);
      }
      if (fields.has(fieldNumber)) throw new CorruptIndexException(`duplicate field ${fieldNumber}`, metaSlice.name);
      fields.set(fieldNumber, {
        fieldNumber,
        encoding: encoding as VectorEncoding,
        similarity: VectorSimilarityFunction.fromOrdinal(similarityOrdinal),
        vectorDataOffset,
        vectorDataLength,
        dims,
        size,
        ordToDoc,
        byteSize,
      });
    }
    if (!meta.eof()) throw new CorruptIndexException(`${meta.remaining} unexpected bytes after the field list`, metaSlice.name);
    return new FlatVectorsReader(metaSlice, dataSlice, fields);
  }

  field(fieldNumber: number): FlatFieldEntry {
    const entry = this.fields.get(fieldNumber);
    if (!entry) throw new Error(`field number ${fieldNumber} has no vectors in ${this.metaSlice.name}`);
    return entry;
  }

  /** Verifies the CRC32 of every byte of both files. */
  checkIntegrity(): void {
    checksumEntireFile(this.metaSlice);
    checksumEntireFile(this.dataSlice);
  }

  /** Reads one vector (small reads, tests and tools; serving uses the read paths). */
  readVector(fieldNumber: number, ord: number): Float32Array {
    const e = this.field(fieldNumber);
    if (ord < 0 || ord >= e.size) throw new RangeError(`ord ${ord} out of [0, ${e.size})`);
    const bytes = readSliceBytes(this.dataSlice, e.vectorDataOffset + ord * e.byteSize, e.byteSize);
    return new Float32Array(bytes.buffer, bytes.byteOffset, e.dims);
  }
}
