import { checksumEntireFile, openMetaAndData, type FormatPair } from '../codec/CodecUtil.js';
import { CorruptIndexException, IndexFormatTooNewOrOldException } from '../codec/CorruptIndexException.js';
import { readOrdToDocConfig, type OrdToDocConfig } from '../flat/OrdToDoc.js';
import { encodingForWire, type ScalarEncodingInfo } from './ScalarEncodings.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import {
  CENTROID_LUCENE,
  CENTROID_PLAIN_MEAN,
  SQ_VERSION_PRESCORE_EXTENSIONS,
  TRANSFORM_NONE,
  TRANSFORM_RANDOMIZED_HADAMARD,
  type CentroidRule,
  CORRECTIONS_BYTES,
  SQ_DATA_CODEC,
  SQ_META_CODEC,
  SQ_VERSION_CURRENT,
  SQ_VERSION_START,
  ScalarEncoding,
} from './ScalarQuantizedVectorsFormat.js';

const SQ_FORMAT: FormatPair = { metaCodec: SQ_META_CODEC, dataCodec: SQ_DATA_CODEC, minVersion: SQ_VERSION_START, maxVersion: SQ_VERSION_CURRENT };

export interface QuantizedFieldEntry {
  readonly fieldNumber: number;
  readonly similarity: VectorSimilarityFunction;
  readonly dims: number;
  readonly vectorDataOffset: number;
  readonly vectorDataLength: number;
  readonly count: number;
  readonly encoding: number;
  /** The encoding's description (bits, code sizes). */
  readonly scalarEncoding: ScalarEncodingInfo;
  /** prescore's extensions (meta version 1); Lucene's rule and no rotation in version 0. */
  readonly centroidRule: CentroidRule;
  readonly rotationSeed: bigint | null;
  readonly centroid: Float32Array;
  readonly centroidDP: number;
  readonly ordToDoc: OrdToDocConfig;
  readonly codeBytes: number;
  readonly recordBytes: number;
}

/**
 * Opens a Lucene104ScalarQuantizedVectorsFormat pair (`.vemq` + `.veq`), any ScalarEncoding,
 * with prescore's extensions when the meta is version 1 (layout: ScalarQuantizedVectorsFormat.ts). The meta file is CRC-verified; the data file structurally.
 * `readRecords` loads a field's records with one positioned read (O(files) I/O at open, not
 * O(vectors)).
 */
export class ScalarQuantizedVectorsReader {
  private constructor(
    readonly metaSlice: FileSlice,
    readonly dataSlice: FileSlice,
    readonly fields: ReadonlyMap<number, QuantizedFieldEntry>,
  ) {}

  static open(metaSlice: FileSlice, dataSlice: FileSlice, segmentId: Uint8Array, suffix: string): ScalarQuantizedVectorsReader {
    const { meta, version: metaVersion } = openMetaAndData(metaSlice, dataSlice, SQ_FORMAT, segmentId, suffix);
    const fields = new Map<number, QuantizedFieldEntry>();
    for (let fieldNumber = meta.readInt(); fieldNumber !== -1; fieldNumber = meta.readInt()) {
      meta.readInt(); // the field's vector encoding (FLOAT32): the raw delegate checks it
      const similarityOrdinal = meta.readInt();
      if (similarityOrdinal < 0 || similarityOrdinal > 3) {
        throw new CorruptIndexException(`invalid similarity ordinal ${similarityOrdinal}`, metaSlice.name);
      }
      const dims = meta.readVInt();
      const vectorDataOffset = meta.readVLong();
      const vectorDataLength = meta.readVLong();
      const count = meta.readVInt();
      if (dims <= 0 || count < 0) throw new CorruptIndexException(`invalid dims ${dims} or count ${count}`, metaSlice.name);
      let encoding: number = ScalarEncoding.SINGLE_BIT_QUERY_NIBBLE;
      const centroid = new Float32Array(dims);
      let centroidDP = 0;
      let centroidRule: CentroidRule = 'lucene';
      let rotationSeed: bigint | null = null;
      if (count > 0) {
        encoding = meta.readVInt();
        if (!encodingForWire(encoding)) {
          throw new IndexFormatTooNewOrOldException(metaSlice.name, `scalar encoding ${encoding} (prescore knows wire numbers 0..4)`);
        }
        for (let i = 0; i < dims; i++) centroid[i] = meta.readFloat();
        centroidDP = meta.readFloat();
        if (metaVersion >= SQ_VERSION_PRESCORE_EXTENSIONS) {
          const rule = meta.readByte();
          if (rule !== CENTROID_LUCENE && rule !== CENTROID_PLAIN_MEAN) throw new CorruptIndexException(`invalid centroid rule ${rule}`, metaSlice.name);
          centroidRule = rule === CENTROID_PLAIN_MEAN ? 'mean' : 'lucene';
          const transform = meta.readByte();
          if (transform === TRANSFORM_RANDOMIZED_HADAMARD) {
            const lo = BigInt.asUintN(32, BigInt(meta.readInt()));
            const hi = BigInt(meta.readInt());
            rotationSeed = BigInt.asIntN(64, (hi << 32n) | lo);
          } else if (transform !== TRANSFORM_NONE) {
            throw new CorruptIndexException(`invalid vector transform ${transform}`, metaSlice.name);
          }
        }
      }
      const scalarEncoding = encodingForWire(encoding)!;
      const ordToDoc = readOrdToDocConfig(meta, count);
      const codeBytes = scalarEncoding.docCodeBytes(dims);
      const recordBytes = codeBytes + CORRECTIONS_BYTES;
      if (vectorDataLength !== count * recordBytes) {
        throw new CorruptIndexException(`quantized data length ${vectorDataLength} != count ${count} x record ${recordBytes}`, dataSlice.name);
      }
      if (vectorDataOffset + vectorDataLength > dataSlice.length - 16) {
        throw new CorruptIndexException(`quantized data [${vectorDataOffset}, +${vectorDataLength}) lies outside the file`, dataSlice.name);
      }
      fields.set(fieldNumber, {
        fieldNumber,
        similarity: VectorSimilarityFunction.fromOrdinal(similarityOrdinal),
        dims,
        vectorDataOffset,
        vectorDataLength,
        count,
        encoding,
        scalarEncoding,
        centroidRule,
        rotationSeed,
        centroid,
        centroidDP,
        ordToDoc,
        codeBytes,
        recordBytes,
      });
    }
    if (!meta.eof()) throw new CorruptIndexException(`${meta.remaining} unexpected bytes after the field list`, metaSlice.name);
    return new ScalarQuantizedVectorsReader(metaSlice, dataSlice, fields);
  }

  field(fieldNumber: number): QuantizedFieldEntry {
    const e = this.fields.get(fieldNumber);
    if (!e) throw new Error(`field number ${fieldNumber} has no quantized vectors in ${this.metaSlice.name}`);
    return e;
  }

  /** All records of a field, with one read, into `into` (e.g. a view of wasm memory) or a new array. */
  readRecords(fieldNumber: number, into?: Uint8Array): Uint8Array {
    const e = this.field(fieldNumber);
    return readSliceBytes(this.dataSlice, e.vectorDataOffset, e.vectorDataLength, into);
  }

  checkIntegrity(): void {
    checksumEntireFile(this.metaSlice);
    checksumEntireFile(this.dataSlice);
  }
}
