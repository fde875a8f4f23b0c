import { join } from 'node:path';
import { writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { IndexOutput } from '../store/IndexOutput.js';
import {
  DOC_VALUES_SKIP_INDEX_TYPES,
  DOC_VALUES_TYPES,
  FIELD_INFOS_CODEC,
  FIELD_INFOS_EXTENSION,
  FIELD_INFOS_FORMAT_CURRENT,
  INDEX_OPTIONS,
  VECTOR_ENCODINGS,
  VECTOR_SIMILARITIES,
  type DocValuesType,
  type VectorSimilarityName,
} from './FieldInfos.js';
import { segmentFileName } from './IndexFileNames.js';

/** A field as prescore writes it into a segment's `.fnm` (no postings, points or norms). */
export interface WrittenFieldInfo {
  readonly name: string;
  readonly number: number;
  readonly docValuesType: DocValuesType;
  /** Per-field format attributes (`PerFieldDocValuesFormat.format`/`.suffix`, `PerFieldKnnVectorsFormat.format`/`.suffix`). */
  readonly attributes: ReadonlyMap<string, string>;
  /** 0 unless this is the vector field. */
  readonly vectorDimension: number;
  readonly vectorSimilarity: VectorSimilarityName;
}

/**
 * Writes `_N.fnm` in Lucene94FieldInfosFormat at its current format (2), the layout
 * `FieldInfos.ts` documents and reads: the same bytes Lucene writes for fields that have only
 * stored values, doc values or a float vector (flags 0, index options NONE, no skip index,
 * dvGen -1, no points). Returns the file's path.
 */
export function writeFieldInfos(dir: string, segmentName: string, segmentId: Uint8Array, fields: readonly WrittenFieldInfo[]): string {
  const path = join(dir, segmentFileName(segmentName, '', FIELD_INFOS_EXTENSION));
  const out = new IndexOutput(path);
  try {
    writeIndexHeader(out, FIELD_INFOS_CODEC, FIELD_INFOS_FORMAT_CURRENT, segmentId, '');
    out.writeVInt(fields.length);
    for (const f of [...fields].sort((a, b) => a.number - b.number)) {
      out.writeString(f.name);
      out.writeVInt(f.number);
      out.writeByte(0); // flags: no term vectors, norms or payloads (Lucene writes 0 for fields not indexed for search)
      out.writeByte(INDEX_OPTIONS.indexOf('NONE'));
      out.writeByte(DOC_VALUES_TYPES.indexOf(f.docValuesType));
      out.writeByte(DOC_VALUES_SKIP_INDEX_TYPES.indexOf('NONE'));
      out.writeLong(-1);
      out.writeMapOfStrings(f.attributes);
      out.writeVInt(0); // point dimensions
      out.writeVInt(f.vectorDimension);
      out.writeByte(VECTOR_ENCODINGS.indexOf('FLOAT32'));
      out.writeByte(VECTOR_SIMILARITIES.indexOf(f.vectorSimilarity));
    }
    writeFooter(out);
    out.close();
    return path;
  } catch (e) {
    out.abort();
    throw e;
  }
}
