import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocValuesSkipIndexType, DocValuesType, FieldInfo } from '../../segments/lucene/FieldInfos.js';
import { FieldInfos } from '../../segments/lucene/FieldInfos.js';
import { IndexDirectory } from '../../segments/lucene/LuceneDirectory.js';
import { Lucene90DocValuesConsumer, type DocValuesConsumerOptions } from '../../segments/docvalues/Lucene90DocValuesConsumer.js';
import { Lucene90DocValuesProducer, type DocValuesProducerOptions } from '../../segments/docvalues/Lucene90DocValuesProducer.js';

/** A FieldInfo as `.fnm` would describe a doc-values field (attributes of the Lucene90 format, suffix 0). */
export function docValuesFieldInfo(name: string, number: number, docValuesType: DocValuesType, skipIndex: DocValuesSkipIndexType = 'NONE'): FieldInfo {
  return {
    name,
    number,
    flags: 0,
    storeTermVector: false,
    omitNorms: false,
    storePayloads: false,
    isSoftDeletesField: false,
    isParentField: false,
    indexOptions: 'NONE',
    docValuesType,
    docValuesSkipIndexType: skipIndex,
    dvGen: -1,
    attributes: new Map([
      ['PerFieldDocValuesFormat.format', 'Lucene90'],
      ['PerFieldDocValuesFormat.suffix', '0'],
    ]),
    pointDimensionCount: 0,
    pointIndexDimensionCount: 0,
    pointNumBytes: 0,
    vectorDimension: 0,
    vectorEncoding: 'FLOAT32',
    vectorSimilarity: 'EUCLIDEAN',
    vectorSimilarityOrdinal: 0,
  };
}

export const SEGMENT_ID = Uint8Array.from({ length: 16 }, (_, i) => (i * 37 + 11) & 0xff);

/** A segment `_0` of `maxDoc` docs written by `write` into a new temp directory, and a producer over it. */
export function writeSegment(
  maxDoc: number,
  fields: readonly FieldInfo[],
  write: (w: Lucene90DocValuesConsumer) => void,
  options: DocValuesConsumerOptions = {},
): { dir: string; infos: FieldInfos; open: (o?: DocValuesProducerOptions) => Lucene90DocValuesProducer } {
  const dir = mkdtempSync(join(tmpdir(), 'prescore-dv-'));
  const segment = { name: '_0', id: SEGMENT_ID, maxDoc };
  const w = new Lucene90DocValuesConsumer(dir, segment, 'Lucene90_0', options);
  try {
    write(w);
    w.close();
  } catch (e) {
    w.abort();
    throw e;
  }
  const infos = new FieldInfos(fields, 2, 'test');
  return { dir, infos, open: (o = {}) => Lucene90DocValuesProducer.open(new IndexDirectory(dir), segment, infos, 'Lucene90_0', o) };
}
