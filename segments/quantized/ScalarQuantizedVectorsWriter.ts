import { join } from 'node:path';
import { appendFooter, writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { segmentFileName } from '../flat/FlatVectorsFormat.js';
import { writeDenseOrdToDoc } from '../flat/OrdToDoc.js';
import { DEFAULT_ROTATION_SEED, RandomizedHadamard } from '../quantization/RandomizedHadamard.js';
import { packDocCode, packQueryCode } from './ScalarCodes.js';
import { encodingForBits, SINGLE_BIT_QUERY_NIBBLE, type DocBits, type ScalarEncodingInfo } from './ScalarEncodings.js';
import { DEFAULT_ITERS, DEFAULT_LAMBDA, OptimizedScalarQuantizer } from '../quantization/OptimizedScalarQuantizer.js';
import type { Kernels } from '../kernels/Kernels.js';
import { KernelOsqPass } from './KernelOsqPass.js';
import { unbiasedInterval } from '../quantization/UnbiasedInterval.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { IndexOutput } from '../store/IndexOutput.js';
import { writeFileAtomicallyNoReplace } from '../store/files.js';
import { dotProduct, l2normalize } from '../util/VectorUtil.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import { VectorEncoding } from '../flat/FlatVectorsFormat.js';
import {
  CENTROID_LUCENE,
  CENTROID_PLAIN_MEAN,
  CORRECTIONS_BYTES,
  SQ_DATA_CODEC,
  SQ_DATA_EXTENSION,
  SQ_META_CODEC,
  SQ_META_EXTENSION,
  SQ_VERSION_PRESCORE_EXTENSIONS,
  SQ_VERSION_START,
  TRANSFORM_NONE,
  TRANSFORM_RANDOMIZED_HADAMARD,
  type CentroidRule,
} from './ScalarQuantizedVectorsFormat.js';

/**
 * The centroid rule of a build that names none: the plain mean (bench:recall, Fashion-MNIST
 * cosine, 1-bit exhaustive, oversample 1: 0.422 -> 0.470 without rotation, 0.695 -> 0.710 with;
 * MiniLM 0.790 -> 0.829). Only COSINE differs between the rules.
 */
export const DEFAULT_CENTROID_RULE: CentroidRule = 'mean';
/**
 * Whether a build that says nothing rotates: yes (bench:recall, Fashion-MNIST cosine, 1-bit,
 * oversample 5: 0.861 -> 0.987 with the plain mean; MiniLM reaches 0.999-1.000 at oversample 5
 * either way). A rotated index is no longer Lucene's exact format:
 * `--rotation off --centroid lucene` builds that.
 */
export const DEFAULT_ROTATION = true;

/**
 * How a doc's interval is chosen: 'lucene', as Lucene's optimizer leaves it; 'unbiased', then
 * rescaled so the dequantized doc has no shrinkage along itself (UnbiasedInterval.ts). Either is
 * Lucene's format (same bytes, same estimator); only the interval values differ.
 *
 * The default (see quantizationSettings): 'unbiased' for multi-bit codes built with an extension
 * (bench:recall, Fashion-MNIST cosine, 2-bit rotated, 200 queries, oversample 3: 0.951 -> 0.994;
 * oversample 1: 0.692 -> 0.823); 'lucene' for 1-bit codes, where it measured neutral (0.963 ->
 * 0.968 at oversample 3, 0.715 -> 0.709 at 1, within the noise of 200 queries), and for Lucene's
 * exact settings, so they stay byte for byte what Lucene writes.
 */
export type IntervalRule = 'lucene' | 'unbiased';

/** Random access to a segment's raw vectors in ord order; the returned array may be reused by the next call. */
export interface FloatVectorSource {
  readonly size: number;
  readonly dims: number;
  vector(ord: number): Float32Array;
}

export interface QuantizedField {
  readonly settings: QuantizationSettings;
  readonly centroid: Float32Array;
  readonly centroidDP: number;
  /** All doc records (code + corrections), ord order: the `.veq` payload. */
  readonly records: Uint8Array;
  /**
   * Each doc quantized as a query (the encoding's query bits, packed as the scorers read a query),
   * with its corrections: queryCodeBytes + 16 bytes per doc. The query side of doc-vs-doc scoring
   * while building the graph (Lucene's asymmetric path). Only computed when requested.
   */
  readonly queryRecords?: Uint8Array;
}

/**
 * How a field is quantized. LUCENE_SETTINGS (1 bit, Lucene's centroid, no rotation) is exactly
 * Lucene104ScalarQuantizedVectorsFormat's SINGLE_BIT_QUERY_NIBBLE; any encoding without the
 * extensions is Lucene's format; a plain-mean centroid (COSINE) or a rotation are prescore
 * extensions, recorded in the meta (see ScalarQuantizedVectorsFormat.ts).
 */
export interface QuantizationSettings {
  readonly encoding: ScalarEncodingInfo;
  readonly centroidRule: CentroidRule;
  /** Seed of the RandomizedHadamard applied before quantizing; null: none. */
  readonly rotationSeed: bigint | null;
  readonly intervals: IntervalRule;
}

/** The build-time choice, as plain cloneable data (task arguments, CLI flags). */
export interface QuantizationOptions {
  /** Doc bits per dimension. Default 1. */
  readonly bits?: DocBits;
  /** Default: see DEFAULT_CENTROID_RULE. */
  readonly centroid?: CentroidRule;
  /** Rotate before quantizing: true (the default seed), a seed, or false. Default: see DEFAULT_ROTATION. */
  readonly rotation?: boolean | bigint;
  /** Default: 'unbiased' for 2 or more bits with rotation or the plain-mean centroid, else 'lucene' (see IntervalRule). */
  readonly intervals?: IntervalRule;
}

/** Resolves build options to settings, filling in the defaults. */
export function quantizationSettings(o: QuantizationOptions = {}): QuantizationSettings {
  const rotation = o.rotation ?? DEFAULT_ROTATION;
  const centroidRule = o.centroid ?? DEFAULT_CENTROID_RULE;
  const encoding = encodingForBits(o.bits ?? 1);
  const extended = rotation !== false || centroidRule === 'mean';
  return {
    encoding,
    centroidRule,
    rotationSeed: rotation === false ? null : rotation === true ? DEFAULT_ROTATION_SEED : BigInt.asIntN(64, rotation),
    intervals: o.intervals ?? (extended && encoding.docBits > 1 ? 'unbiased' : 'lucene'),
  };
}

export const LUCENE_SETTINGS: QuantizationSettings = { encoding: SINGLE_BIT_QUERY_NIBBLE, centroidRule: 'lucene', rotationSeed: null, intervals: 'lucene' };

/** Whether a segment quantized with `s` is byte for byte Lucene's format (readable by Lucene). */
export function isLuceneExact(s: QuantizationSettings, similarity: VectorSimilarityFunction): boolean {
  return s.rotationSeed === null && (s.centroidRule === 'lucene' || similarity !== VectorSimilarityFunction.COSINE);
}

/**
 * Yields each vector as the quantizer sees it: divided by its magnitude for COSINE (exactly as
 * Lucene's flush does: no "already unit" shortcut), then rotated when the settings rotate.
 */
class PreparedVectors {
  private readonly scratch: Float32Array;
  private readonly cosine: boolean;
  constructor(
    private readonly source: FloatVectorSource,
    similarity: VectorSimilarityFunction,
    private readonly rotation: RandomizedHadamard | null,
  ) {
    this.scratch = new Float32Array(source.dims);
    this.cosine = similarity === VectorSimilarityFunction.COSINE;
  }

  /** The prepared vector `ord`, in a scratch array reused by the next call. */
  vector(ord: number): Float32Array {
    const v = this.source.vector(ord);
    const dims = this.source.dims;
    const out = this.scratch;
    if (this.cosine) {
      const magnitude = Math.fround(Math.sqrt(dotProduct(v, 0, v, 0, dims)));
      for (let i = 0; i < dims; i++) out[i] = v[i] / magnitude;
    } else {
      out.set(v.subarray(0, dims));
    }
    if (this.rotation) this.rotation.apply(out, out);
    return out;
  }
}

/**
 * The flush-time centroid: the float mean of the (prepared) vectors. Lucene's rule then
 * l2-normalizes it for COSINE; the 'mean' rule keeps the plain mean (bench:recall, Fashion-MNIST
 * cosine: the mean's norm is 0.77, so Lucene's centroid overshoots it 1.3x and 1-bit codes agree
 * with sign(x - mean) on 72% of bits instead of 89%).
 */
export function computeCentroid(
  source: FloatVectorSource,
  similarity: VectorSimilarityFunction,
  rule: CentroidRule = 'lucene',
  rotation: RandomizedHadamard | null = null,
): Float32Array {
  const dims = source.dims;
  const sums = new Float32Array(dims);
  // The rotation is linear, so the mean of the rotated vectors is the rotated mean: one rotation
  // per segment here instead of one per vector (a third of a 768-dim vector's quantization).
  const prepared = new PreparedVectors(source, similarity, null);
  for (let ord = 0; ord < source.size; ord++) {
    const v = prepared.vector(ord);
    for (let i = 0; i < dims; i++) sums[i] = sums[i] + v[i];
  }
  const centroid = new Float32Array(dims);
  if (source.size > 0) {
    for (let i = 0; i < dims; i++) centroid[i] = sums[i] / source.size;
    if (rotation) rotation.apply(centroid, centroid);
    if (similarity === VectorSimilarityFunction.COSINE && rule === 'lucene') l2normalize(centroid);
  }
  return centroid;
}

/**
 * Quantizes every vector of a segment against the segment centroid with the settings' encoding
 * (and optionally as a query, for graph building).
 */
export function quantizeField(
  source: FloatVectorSource,
  similarity: VectorSimilarityFunction,
  options: { withQueryRecords?: boolean; onProgress?: (done: number) => void; settings?: QuantizationSettings; kernels?: Kernels } = {},
): QuantizedField {
  const settings = options.settings ?? LUCENE_SETTINGS;
  const dims = source.dims;
  const rotation = settings.rotationSeed === null ? null : new RandomizedHadamard(dims, settings.rotationSeed);
  const centroid = computeCentroid(source, similarity, settings.centroidRule, rotation);
  const centroidDP = source.size > 0 ? dotProduct(centroid, 0, centroid, 0, dims) : 0;
  // Codes in prescore's extended format need not be Lucene's to the last bit: their interval
  // search runs in wasm SIMD when kernels are given (4,000 rotated 768-dim vectors with their query
  // records, the two passes alternated six times: 132 -> 82 us per vector, median). Lucene-exact
  // codes always take the scalar pass.
  const pass = options.kernels !== undefined && !isLuceneExact(settings, similarity) ? new KernelOsqPass(options.kernels, dims) : null;
  try {
    return quantizeAll(source, similarity, settings, rotation, centroid, centroidDP, pass, options);
  } finally {
    pass?.release();
  }
}

function quantizeAll(
  source: FloatVectorSource,
  similarity: VectorSimilarityFunction,
  settings: QuantizationSettings,
  rotation: RandomizedHadamard | null,
  centroid: Float32Array,
  centroidDP: number,
  pass: KernelOsqPass | null,
  options: { withQueryRecords?: boolean; onProgress?: (done: number) => void },
): QuantizedField {
  const enc = settings.encoding;
  const dims = source.dims;
  const codeBytes = enc.docCodeBytes(dims);
  const recordBytes = codeBytes + CORRECTIONS_BYTES;
  const records = new Uint8Array(source.size * recordBytes);
  const recordView = new DataView(records.buffer);
  const queryCodeBytes = enc.queryCodeBytes(dims);
  const queryRecordBytes = queryCodeBytes + CORRECTIONS_BYTES;
  const queryRecords = options.withQueryRecords ? new Uint8Array(source.size * queryRecordBytes) : undefined;
  const queryView = queryRecords ? new DataView(queryRecords.buffer) : undefined;
  const quantizer = new OptimizedScalarQuantizer(similarity, DEFAULT_LAMBDA, DEFAULT_ITERS, pass);
  const prepared = new PreparedVectors(source, similarity, rotation);
  const codes = new Uint8Array(enc.discreteDims(dims));
  const queryCodes = new Uint8Array(enc.discreteDims(dims));
  const queryCode = new Uint8Array(queryCodeBytes);
  const queryScratch = new Float32Array(dims);
  const unbiased = settings.intervals === 'unbiased';
  for (let ord = 0; ord < source.size; ord++) {
    let scratch = prepared.vector(ord);
    if (queryRecords) queryScratch.set(scratch); // scalarQuantize centres its input in place
    if (pass !== null) {
      const inKernels = pass.vector();
      inKernels.set(scratch);
      scratch = inKernels;
    }
    let r = quantizer.scalarQuantize(scratch, codes, enc.docBits, centroid);
    if (unbiased) r = unbiasedInterval(scratch, codes, enc.docBits, r);
    const base = ord * recordBytes;
    packDocCode(enc, dims, codes, records, base);
    writeCorrections(recordView, base + codeBytes, r);
    if (queryRecords && queryView) {
      let query: Float32Array = queryScratch;
      if (pass !== null) {
        query = pass.vector();
        query.set(queryScratch);
      }
      const q = quantizer.scalarQuantize(query, queryCodes, enc.queryBits, centroid);
      packQueryCode(enc, dims, queryCodes, queryCode);
      const qBase = ord * queryRecordBytes;
      queryRecords.set(queryCode, qBase);
      writeCorrections(queryView, qBase + queryCodeBytes, q);
    }
    if (options.onProgress && (ord & 1023) === 1023) options.onProgress(ord + 1);
  }
  options.onProgress?.(source.size);
  return { settings, centroid, centroidDP, records, queryRecords };
}

function writeCorrections(view: DataView, offset: number, r: { lowerInterval: number; upperInterval: number; additionalCorrection: number; quantizedComponentSum: number }): void {
  view.setFloat32(offset, r.lowerInterval, true);
  view.setFloat32(offset + 4, r.upperInterval, true);
  view.setFloat32(offset + 8, r.additionalCorrection, true);
  view.setInt32(offset + 12, r.quantizedComponentSum, true);
}

/** Writes `.veq` + `.vemq` for one dense field (Lucene104ScalarQuantizedVectorsFormat; layout in ScalarQuantizedVectorsFormat.ts). */
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
  // Lucene's exact format stays version 0; only a segment using an extension is written as
  // version 1 (meta and data alike), which Lucene refuses instead of scoring rotated codes wrongly.
  const extended = !isLuceneExact(q.settings, field.similarity);
  const version = extended ? SQ_VERSION_PRESCORE_EXTENSIONS : SQ_VERSION_START;
  const data = new IndexOutput(dataPath);
  let vectorDataOffset: number;
  try {
    writeIndexHeader(data, SQ_DATA_CODEC, version, segmentId, suffix);
    vectorDataOffset = data.alignTo(4);
    data.writeBytes(q.records);
    writeFooter(data);
    data.close();
  } catch (e) {
    data.abort();
    throw e;
  }
  const meta = new ByteArrayDataOutput(256 + field.dims * 4);
  writeIndexHeader(meta, SQ_META_CODEC, version, segmentId, suffix);
  meta.writeInt(field.fieldNumber);
  meta.writeInt(VectorEncoding.FLOAT32);
  meta.writeInt(field.similarity.ordinal);
  meta.writeVInt(field.dims);
  meta.writeVLong(vectorDataOffset);
  meta.writeVLong(q.records.length);
  meta.writeVInt(field.count);
  if (field.count > 0) {
    meta.writeVInt(q.settings.encoding.wire);
    for (let i = 0; i < field.dims; i++) meta.writeFloat(q.centroid[i]);
    meta.writeFloat(q.centroidDP);
    if (extended) {
      meta.writeByte(q.settings.centroidRule === 'mean' && field.similarity === VectorSimilarityFunction.COSINE ? CENTROID_PLAIN_MEAN : CENTROID_LUCENE);
      if (q.settings.rotationSeed === null) {
        meta.writeByte(TRANSFORM_NONE);
      } else {
        meta.writeByte(TRANSFORM_RANDOMIZED_HADAMARD);
        // int64 little-endian, as two int32 halves (DataOutput's writeLong takes safe JS integers only)
        meta.writeInt(Number(BigInt.asIntN(32, q.settings.rotationSeed)));
        meta.writeInt(Number(BigInt.asIntN(32, q.settings.rotationSeed >> 32n)));
      }
    }
  }
  writeDenseOrdToDoc(meta, field.count, field.maxDoc);
  meta.writeInt(-1);
  appendFooter(meta);
  writeFileAtomicallyNoReplace(metaPath, meta.toBytes());
  return { dataPath, metaPath, dataLength: data.filePointer };
}
