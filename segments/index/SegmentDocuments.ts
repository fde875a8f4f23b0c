import { openChecksummed } from '../codec/CodecUtil.js';
import { Lucene90DocValuesProducer } from '../docvalues/Lucene90DocValuesProducer.js';
import { SegmentDocValues } from '../docvalues/SegmentDocValues.js';
import type { FieldInfos } from '../lucene/FieldInfos.js';
import type { IndexDirectory } from '../lucene/LuceneDirectory.js';
import type { LuceneSegment } from '../lucene/LuceneIndex.js';
import { readSliceBytes, type FileSlice } from '../store/FileSlice.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { StoredFieldsReader } from '../storedfields/StoredFieldsReader.js';
import { DOC_VALUES_SUFFIX } from './SegmentDocumentsWriter.js';

/** What doc-values readers a segment has: per field, the producer that holds it. */
export interface DocValuesSource {
  /** The producer for a field with doc values, or null when the segment has none for it. */
  producer(field: string): Lucene90DocValuesProducer | null;
  checkIntegrity(): void;
  close(): void;
}

/**
 * A segment's documents (Lucene's LeafReader beyond the vectors): its field infos, its stored
 * fields (the `_source` and `_id` of a prescore segment; any stored fields of a Lucene one) and its
 * doc values, all read in place: `.fdt` and `.dvd` are mapped, never copied onto the heap, so the
 * index's resident memory does not grow with what documents hold. Opened once on the main thread
 * with the segment (meta files CRC-checked then); not thread-safe (readers keep cursors and a
 * decompressed chunk).
 */
export class SegmentDocuments {
  private constructor(
    readonly fieldInfos: FieldInfos,
    readonly storedFields: StoredFieldsReader,
    readonly docValues: DocValuesSource,
  ) {}

  /** A prescore segment's documents, from its `_N.fnm`, `_N.fd*` and `_N_Lucene90_0.dv*` (files given as held slices). */
  static openPrescore(
    files: { openSlice(name: string): FileSlice },
    segment: { readonly name: string; readonly id: Uint8Array; readonly maxDoc: number },
    fieldInfos: FieldInfos,
  ): SegmentDocuments {
    const checksummed = (name: string): ByteArrayDataInput => {
      const slice = files.openSlice(name);
      return openChecksummed(readSliceBytes(slice), slice.name);
    };
    const stored = StoredFieldsReader.open(files, segment.name, segment.id, { maxDoc: segment.maxDoc });
    try {
      const hasDocValues = fieldInfos.fields.some((f) => f.docValuesType !== 'NONE');
      const producer = hasDocValues ? Lucene90DocValuesProducer.open({ openSlice: files.openSlice, openChecksummed: checksummed }, segment, fieldInfos, DOC_VALUES_SUFFIX) : null;
      return new SegmentDocuments(fieldInfos, stored, {
        producer: (field) => (producer?.hasField(field) ? producer : null),
        checkIntegrity: () => producer?.checkIntegrity(),
        close: () => producer?.close(),
      });
    } catch (e) {
      stored.close();
      throw e;
    }
  }

  /** A Lucene segment's documents: its stored fields in the mode its `.si` names, doc values across per-field formats. */
  static openLucene(directory: IndexDirectory, segment: LuceneSegment): SegmentDocuments {
    const mode = segment.info.attributes.get('Lucene90StoredFieldsFormat.mode');
    const stored = StoredFieldsReader.open(segment.directory, segment.name, segment.id, {
      maxDoc: segment.maxDoc,
      ...(mode === 'BEST_SPEED' || mode === 'BEST_COMPRESSION' ? { mode } : {}),
    });
    try {
      const dv = SegmentDocValues.open(directory, segment);
      return new SegmentDocuments(segment.fieldInfos, stored, {
        producer: (field) => {
          const info = segment.fieldInfos.fieldInfo(field);
          return info === undefined || info.docValuesType === 'NONE' ? null : dv.producer(info);
        },
        checkIntegrity: () => dv.checkIntegrity(),
        close: () => dv.close(),
      });
    } catch (e) {
      stored.close();
      throw e;
    }
  }

  checkIntegrity(): void {
    this.storedFields.checkIntegrity();
    this.docValues.checkIntegrity();
  }

  close(): void {
    this.storedFields.close();
    this.docValues.close();
  }
}
