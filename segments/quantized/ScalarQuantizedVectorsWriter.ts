import { join } from 'node:path';
import { appendFooter, writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { segmentFileName } from '../flat/FlatVectorsFormat.js';
import { writeDenseOrdToDoc } from '../flat/OrdToDoc.js';
import { binaryCodeBytes, discretize, packAsBinary, transposeHalfByte } from '../quantization/BitPacking.js';
import { OptimizedScalarQuantizer } from '../quantization/OptimizedScalarQuantizer.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { IndexOutput } from '../store/IndexOutput.js';
import { writeFileAtomicallyNoReplace } from '../store/files.js';
import { dotProduct, l2normalize } from '../util/VectorUtil.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import { VectorEncoding } from '../flat/FlatVectorsFormat.js';
import {
  CORRECTIONS_BYTES,
  DOC_BITS,
  QUERY_BITS,
  SQ_DATA_CODEC,
  SQ_DATA_EXTENSION,
  SQ_META_CODEC,
  SQ_META_EXTENSION,
  SQ_VERSION_CURRENT,
  ScalarEncoding,
} from './ScalarQuantizedVectorsFormat.js';

/** Random access to a segment's raw vectors in ord order; the returned array may be reused by the next call. */
export interface FloatVectorSource {
  readonly size: number;
  readonly dims: number;
  vector(ord: number): Float32Array;
}

export interface QuantizedField {
  readonly centroid: Float32Array;
  readonly centroidDP: number;
  /** All 1-bit records (code + corrections), ord order: the `.veq` payload. */
  readonly records: Uint8Array;
  /**
   * Each doc quantized to 4 bits and transposed, with its corrections, in the same record shape
   * (4 x codeBytes planes + 16 bytes): the query side of doc-vs-doc scoring while building the
   * graph (Lucene's asymmetric 1-bit path). Only computed when requested.
   */
  readonly queryRecords?: Uint8Array;
}

/**
 * Lucene's flush-time centroid: the mean of the vectors (for COSINE, of the vectors divided by
 * their magnitude) in float, then l2-normalized for COSINE.
 */
export function computeCentroid(source: FloatVectorSource, similarity: VectorSimilarityFunction): Float32Array {
  const dims = source.dims;
  const sums = new Float32Array(dims);
  const cosine = similarity === VectorSimilarityFunction.COSINE;
  for (let ord = 0; ord < source.size; ord++) {
    const v = source.vector(ord);
    if (cosine) {
      const divisor = Math.fround(Math.sqrt(dotProduct(v, 0, v, 0, dims)));
      for (let i = 0; i < dims; i++) sums[i] = sums[i] + Math.fround(v[i] / divisor);
    } else {
      for (let i = 0; i < dims; i++) sums[i] = sums[i] + v[i];
    }
  }
  const centroid = new Float32Array(dims);
  if (source.size > 0) {
    for (let i = 0; i < dims; i++) centroid[i] = sums[i] / source.size;
    if (cosine) l2normalize(centroid);
  }
  return centroid;
}

/**
 * Quantizes every vector of a segment to 1 bit against the segment centroid (and optionally to
 * 4 bits for graph building). COSINE vectors are divided by their magnitude first, exactly as
 * Lucene's flush does (no "already unit" shortcut).
 */
export function quantizeField(
  source: FloatVectorSource,
  similarity: VectorSimilarityFunction,
  options: { withQueryRecords?: boolean; onProgress?: (done: number) => void } = {},
): QuantizedField {
  const dims = source.dims;
  const centroid = computeCentroid(source, similarity);
  const centroidDP = source.size > 0 ? dotProduct(centroid, 0, centroid, 0, dims) : 0;
  const codeBytes = binaryCodeBytes(dims);
  const recordBytes = codeBytes + CORRECTIONS_BYTES;
  const records = new Uint8Array(source.size * recordBytes);
  const recordView = new DataView(records.buffer);
  const queryRecordBytes = 4 * codeBytes + CORRECTIONS_BYTES;
  const queryRecords = options.withQueryRecords ? new Uint8Array(source.size * queryRecordBytes) : undefined;
  const queryView = queryRecords ? new DataView(queryRecords.buffer) : undefined;

  const quantizer = new OptimizedScalarQuantizer(similarity);
  const scratch = new Float32Array(dims);
  const codes = new Uint8Array(discretize(dims, 8));
  const nibbles = new Uint8Array(discretize(dims, 8));
  const planes = new Uint8Array(4 * codeBytes);
  const queryScratch = new Float32Array(dims);
  const cosine = similarity === VectorSimilarityFunction.COSINE;
  for (let ord = 0; ord < source.size; ord++) {
    const v = source.vector(ord);
    if (cosine) {
      const magnitude = Math.fround(Math.sqrt(dotProduct(v, 0, v, 0, dims)));
      for (let i = 0; i < dims; i++) scratch[i] = v[i] / magnitude;
    } else {
      scratch.set(v.subarray(0, dims));
    }
    if (queryRecords) queryScratch.set(scratch); // scalarQuantize centres its input in place
    const r = quantizer.scalarQuantize(scratch, codes, DOC_BITS, centroid);
    const base = ord * recordBytes;
    packAsBinary(codes, records, base);
    writeCorrections(recordView, base + codeBytes, r);
    if (queryRecords && queryView) {
      const q = quantizer.scalarQuantize(queryScratch, nibbles, QUERY_BITS, centroid);
      transposeHalfByte(nibbles, planes);
      const qBase = ord * queryRecordBytes;
      queryRecords.set(planes, qBase);
      writeCorrections(queryView, qBase + 4 * codeBytes, q);
    }
    if (options.onProgress && (ord & 1023) === 1023) options.onProgress(ord + 1);
  }
  options.onProgress?.(source.size);
  return { centroid, centroidDP, records, queryRecords };
}

function writeCorrections(
  view: DataView,
  offset: number,
  r: { lowerInterval: number; upperInterval: number; additionalCorrection: number; quantizedComponentSum: number },
): void {
  view.setFloat32(offset, r.lowerInterval, true);
  view.setFloat32(offset + 4, r.upperInterval, true);
  view.setFloat32(offset + 8, r.additionalCorrection, true);
  view.setInt32(offset + 12, r.quantizedComponentSum, true);
}

/** Writes `.veq` + `.vemq` for one dense field (Lucene104ScalarQuantizedVectorsFormat, SINGLE_BIT_QUERY_NIBBLE). */
export function writeQuantizedField(
  dir: string,
  segmentName: string,
  segmentId: Uint8Array,
  suffix: string,
  field: { fieldNumber: number; similarity: VectorSimilarityFunction; dims: number; count: number; maxDoc: number },
  q: QuantizedField,
): { dataPath: string; metaPath: string; dataLength: number } {
  const dataPath = join(dir, segmentFileName(segmentName, suffix, SQ_DATA_EXTENSION));
  const metaPath = join(dir, segmentFileName(segmentName, suffix, SQ_META_EXTENSION));
  const data = new IndexOutput(dataPath);
  let vectorDataOffset: number;
  try {
    writeIndexHeader(data, SQ_DATA_CODEC, SQ_VERSION_CURRENT, segmentId, suffix);
    vectorDataOffset = data.alignTo(4);
    data.writeBytes(q.records);
    writeFooter(data);
    data.close();
  } catch (e) {
    data.abort();
    throw e;
  }
  const meta = new ByteArrayDataOutput(256 + field.dims * 4);
  writeIndexHeader(meta, SQ_META_CODEC, SQ_VERSION_CURRENT, segmentId, suffix);
  meta.writeInt(field.fieldNumber);
  meta.writeInt(VectorEncoding.FLOAT32);
  meta.writeInt(field.similarity.ordinal);
  meta.writeVInt(field.dims);
  meta.writeVLong(vectorDataOffset);
  meta.writeVLong(q.records.length);
  meta.writeVInt(field.count);
  if (field.count > 0) {
    meta.writeVInt(ScalarEncoding.SINGLE_BIT_QUERY_NIBBLE);
    for (let i = 0; i < field.dims; i++) meta.writeFloat(q.centroid[i]);
    meta.writeFloat(q.centroidDP);
  }
  writeDenseOrdToDoc(meta, field.count, field.maxDoc);
  meta.writeInt(-1);
  appendFooter(meta);
  writeFileAtomicallyNoReplace(metaPath, meta.toBytes());
  return { dataPath, metaPath, dataLength: data.filePointer };
}
