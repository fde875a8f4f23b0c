import type { SegmentDocuments } from '../index/SegmentDocuments.js';
import type { LuceneSegment } from './LuceneIndex.js';

/**
 * The docs a soft-deletes field marks deleted, as Lucene's SoftDeletesDirectoryReaderWrapper and
 * Elasticsearch (its `__soft_deletes` doc-values field marks superseded versions) treat them: a
 * doc with a value in the field is deleted. Null when the segment has no such field.
 */
export function softDeletedDocs(seg: Pick<LuceneSegment, 'fieldInfos' | 'maxDoc'>, documents: Pick<SegmentDocuments, 'docValues'> | null): Uint32Array | null {
  const field = seg.fieldInfos.fields.find((f) => f.isSoftDeletesField && f.docValuesType !== 'NONE');
  if (!field || documents === null) return null;
  const producer = documents.docValues.producer(field.name);
  if (producer === null) return null;
  const docs = producer.docsWithField(field.name);
  // null: every doc has a value, so every doc is soft-deleted.
  if (docs === null) {
    const all = new Uint32Array(Math.ceil(seg.maxDoc / 32)).fill(0xffffffff);
    return all;
  }
  return docs;
}

/** Live docs as a bitset over the segment's docs: hard deletions (`.liv`) and soft deletes removed; null: all live. */
export function liveDocBits(seg: Pick<LuceneSegment, 'liveDocs' | 'maxDoc'>, softDeleted: Uint32Array | null): Uint32Array | null {
  if (seg.liveDocs === null && softDeleted === null) return null;
  const bits = new Uint32Array(Math.ceil(seg.maxDoc / 32));
  for (let d = 0; d < seg.maxDoc; d++) {
    const soft = softDeleted !== null && ((softDeleted[d >>> 5]! >>> (d & 31)) & 1) === 1;
    if (!soft && (seg.liveDocs === null || seg.liveDocs.isLive(d))) bits[d >>> 5]! |= 1 << (d & 31);
  }
  return bits;
}
