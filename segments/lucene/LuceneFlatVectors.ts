import { retrieveChecksum } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { FLAT_DATA_EXTENSION, FLAT_META_EXTENSION, VectorEncoding } from '../flat/FlatVectorsFormat.js';
import { FlatVectorsReader, type FlatFieldEntry } from '../flat/FlatVectorsReader.js';
import { DirectMonotonicMeta, DirectMonotonicReader } from '../packed/DirectMonotonicReader.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';
import { IndexedDISI } from './IndexedDISI.js';
import { vectorFormatFileName, type LuceneIndex, type SegmentVectorField } from './LuceneIndex.js';

/**
 * Per-field KNN formats whose raw float vectors prescore reads: both keep them in the
 * Lucene99FlatVectorsFormat delegate (`.vemf` + `.vec`, header suffix `<format>_<n>`), next to
 * their own graph (`.vem/.vex`) and, for the scalar-quantized one, int7/int4 codes (`.vemq/.veq`),
 * which prescore does not use (it builds its own 1-bit codes in a sidecar).
 */
export const SUPPORTED_LUCENE_VECTOR_FORMATS: readonly string[] = ['Lucene99HnswVectorsFormat', 'Lucene99HnswScalarQuantizedVectorsFormat'];

export type PresentVectorField = SegmentVectorField & { readonly present: true };

/** A segment's raw fp32 vectors of one field, located in place (a `.vec` file or a `.cfs` range). */
export interface LuceneFlatField {
  readonly field: PresentVectorField;
  readonly reader: FlatVectorsReader;
  readonly entry: FlatFieldEntry;
  /** The `.vec` (logical file: a plain file or a compound sub-file). */
  readonly dataSlice: FileSlice;
  /** The CRC32 recorded in the `.vec` footer (identifies the vector data cheaply). */
  readonly dataChecksum: number;
  /** ord -> segment doc; null when dense and in doc order (ord == doc). */
  readonly ordToDoc: Int32Array | null;
}

/** A vector field as the index has it, for error messages ("the vector fields are ..."). */
export interface VectorFieldSummary {
  readonly name: string;
  readonly dimension: number;
  readonly encoding: string;
  readonly similarity: string;
  readonly formats: readonly string[];
}

/** Every field that has vectors in at least one segment, by name. */
export function listVectorFields(index: LuceneIndex): VectorFieldSummary[] {
  const byName = new Map<string, { dimension: number; encoding: string; similarity: string; formats: Set<string> }>();
  for (const seg of index.segments) {
    for (const fi of seg.fieldInfos.fields) {
      if (fi.vectorDimension === 0) continue;
      let e = byName.get(fi.name);
      if (!e) byName.set(fi.name, (e = { dimension: fi.vectorDimension, encoding: fi.vectorEncoding, similarity: fi.vectorSimilarity, formats: new Set() }));
      const format = fi.attributes.get('PerFieldKnnVectorsFormat.format');
      if (format) e.formats.add(format);
    }
  }
  return [...byName.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, e]) => ({ name, dimension: e.dimension, encoding: e.encoding, similarity: e.similarity, formats: [...e.formats] }));
}

export function describeVectorFields(fields: readonly VectorFieldSummary[]): string {
  if (fields.length === 0) return 'the index has no vector fields';
  return `the vector fields are: ${fields.map((f) => `${f.name} (${f.dimension}d ${f.encoding} ${f.similarity}, ${f.formats.join('/') || 'no format attribute'})`).join(', ')}`;
}

/** Refuses what prescore cannot serve, naming the field, the segment and what is supported. */
export function checkServableField(field: PresentVectorField, fieldName: string): void {
  if (!SUPPORTED_LUCENE_VECTOR_FORMATS.includes(field.formatName)) {
    throw new Error(
      `vector field "${fieldName}" uses the per-field format ${field.formatName} in segment ${field.segment.name}: ` +
        `prescore reads the raw vectors of ${SUPPORTED_LUCENE_VECTOR_FORMATS.join(' and ')} only`,
    );
  }
  if (field.encoding !== 'FLOAT32') {
    throw new Error(`vector field "${fieldName}" has ${field.encoding} vectors (segment ${field.segment.name}): prescore serves FLOAT32 vector fields only`);
  }
}

/**
 * Opens the flat delegate of one segment's field: `.vemf` CRC-verified, `.vec` structurally
 * (header with the segment id and suffix, footer, the field's range inside it), ord -> doc
 * decoded once for sparse fields (IndexedDISI, cross-checked against the DirectMonotonic table)
 * and validated against maxDoc.
 */
export function openLuceneFlatField(field: PresentVectorField): LuceneFlatField {
  const seg = field.segment;
  const metaSlice = seg.directory.openSlice(vectorFormatFileName(field, FLAT_META_EXTENSION));
  const dataSlice = seg.directory.openSlice(vectorFormatFileName(field, FLAT_DATA_EXTENSION));
  const reader = FlatVectorsReader.open(metaSlice, dataSlice, seg.id, field.segmentSuffix);
  const entry = reader.fields.get(field.fieldNumber);
  if (!entry) throw new CorruptIndexException(`field ${field.fieldNumber} is a vector field in .fnm but has no entry`, metaSlice.name);
  if (entry.encoding !== VectorEncoding.FLOAT32) {
    throw new CorruptIndexException(`field ${field.fieldNumber} is FLOAT32 in .fnm but encoding ${entry.encoding} here`, metaSlice.name);
  }
  if (entry.dims !== field.dimension || entry.similarity.ordinal !== field.similarityOrdinal) {
    throw new CorruptIndexException(
      `field ${field.fieldNumber} is ${entry.dims}d similarity ${entry.similarity.ordinal} here but ${field.dimension}d similarity ${field.similarityOrdinal} in .fnm`,
      metaSlice.name,
    );
  }
  if (entry.size > seg.maxDoc) throw new CorruptIndexException(`${entry.size} vectors for ${seg.maxDoc} docs`, metaSlice.name);
  return { field, reader, entry, dataSlice, dataChecksum: retrieveChecksum(dataSlice), ordToDoc: decodeOrdToDoc(entry, dataSlice, seg.maxDoc) };
}

function decodeOrdToDoc(entry: FlatFieldEntry, data: FileSlice, maxDoc: number): Int32Array | null {
  const c = entry.ordToDoc;
  const size = entry.size;
  const corrupt = (msg: string) => new CorruptIndexException(msg, data.name);
  switch (c.kind) {
    case 'empty':
      if (size !== 0) throw corrupt(`an empty field with ${size} vectors`);
      return null;
    case 'dense':
      if (size !== maxDoc) throw corrupt(`a dense field with ${size} vectors in a segment of ${maxDoc} docs`);
      return null;
    case 'denseReordered':
      throw reordered(data);
    case 'sparse': {
      const disi = IndexedDISI.read(data, c.docsWithFieldOffset, c.docsWithFieldLength, c.jumpTableEntryCount, c.denseRankPower, size, maxDoc);
      if (c.blockShift === 0) throw reordered(data);
      // Doc-ordered: ord i is the i-th doc of the set; the DirectMonotonic table must say the same.
      const bytes = readSliceBytes(data, c.addressesOffset, c.addressesLength);
      const meta = new DirectMonotonicMeta(size, c.blockShift, c.monotonicBlocks);
      const table = new DirectMonotonicReader(meta, bytes, 0, bytes.length, `${data.name} (ord-to-doc)`);
      for (let ord = 0; ord < size; ord++) {
        if (table.get(ord) !== disi.docs[ord]) throw corrupt(`ord-to-doc table says doc ${table.get(ord)} for ord ${ord}, the docs-with-field set says ${disi.docs[ord]}`);
      }
      return Int32Array.from(disi.docs);
    }
  }
}

/**
 * Graph-reordered ords (Lucene 10.x BpVectorReorderer: docsWithFieldOffset -3, or a sparse field
 * with blockShift 0) are refused: prescore's SegmentHandle maps doc -> ord by binary search over
 * ordToDoc, which needs ords in doc order. No fixture has such a segment either.
 */
function reordered(data: FileSlice): Error {
  return new Error(`${data.name}: the vector ordinals are reordered (not in doc order), which prescore does not support yet`);
}
