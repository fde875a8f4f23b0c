import type { FieldInfo } from '../lucene/FieldInfos.js';
import { generationToString } from '../lucene/IndexFileNames.js';
import type { IndexDirectory } from '../lucene/LuceneDirectory.js';
import type { LuceneSegment } from '../lucene/LuceneIndex.js';
import { type DocValuesProducerOptions, Lucene90DocValuesProducer } from './Lucene90DocValuesProducer.js';
import { DV_FORMAT_KEY, DV_SUFFIX_KEY, LUCENE90_DOC_VALUES_FORMAT } from './Lucene90DocValuesFormat.js';

/**
 * The doc values of one segment of a Lucene index, across per-field formats and updates (Lucene's
 * PerFieldDocValuesFormat + SegmentDocValuesProducer): each field's `PerFieldDocValuesFormat.format`
 * and `.suffix` attributes name its files' suffix `<format>_<suffix>`; a field whose values were
 * updated (dvGen != -1) reads `_N_<dvGen base 36>_<format>_<suffix>.*` from the index directory
 * instead. One Lucene90DocValuesProducer per suffix, opened up front (their `.dvm` are small and
 * checked); a field in another format (e.g. Elasticsearch's ES87TSDB) fails when asked for, naming
 * the format.
 */
export class SegmentDocValues {
  private constructor(
    readonly segment: LuceneSegment,
    private readonly producers: ReadonlyMap<string, Lucene90DocValuesProducer>,
    private readonly suffixOf: ReadonlyMap<number, string>,
    private readonly unsupported: ReadonlyMap<number, string>,
  ) {}

  static open(indexDirectory: IndexDirectory, segment: LuceneSegment, options: DocValuesProducerOptions = {}): SegmentDocValues {
    const suffixOf = new Map<number, string>();
    const unsupported = new Map<number, string>();
    const groups = new Map<string, number>(); // suffix -> dvGen
    for (const fi of segment.fieldInfos.fields) {
      if (fi.docValuesType === 'NONE') continue;
      const format = fi.attributes.get(DV_FORMAT_KEY);
      const n = fi.attributes.get(DV_SUFFIX_KEY);
      if (format === undefined || n === undefined) {
        unsupported.set(fi.number, `no ${DV_FORMAT_KEY} / ${DV_SUFFIX_KEY} attributes`);
        continue;
      }
      if (format !== LUCENE90_DOC_VALUES_FORMAT) {
        unsupported.set(fi.number, `per-field doc-values format ${format} (prescore reads ${LUCENE90_DOC_VALUES_FORMAT})`);
        continue;
      }
      const suffix = fi.dvGen === -1 ? `${format}_${n}` : `${generationToString(fi.dvGen)}_${format}_${n}`;
      suffixOf.set(fi.number, suffix);
      groups.set(suffix, fi.dvGen);
    }
    const producers = new Map<string, Lucene90DocValuesProducer>();
    try {
      for (const [suffix, dvGen] of groups) {
        const files = dvGen === -1 ? segment.directory : indexDirectory;
        producers.set(suffix, Lucene90DocValuesProducer.open(files, segment, segment.fieldInfos, suffix, options));
      }
    } catch (e) {
      for (const p of producers.values()) p.close();
      throw e;
    }
    return new SegmentDocValues(segment, producers, suffixOf, unsupported);
  }

  /** The producer holding a field's current values. */
  producer(field: string | FieldInfo): Lucene90DocValuesProducer {
    const info = typeof field === 'string' ? this.segment.fieldInfos.fieldInfo(field) : field;
    if (info === undefined) throw new Error(`segment ${this.segment.name} has no field "${field}"`);
    if (info.docValuesType === 'NONE') throw new Error(`field "${info.name}" has no doc values in segment ${this.segment.name}`);
    const why = this.unsupported.get(info.number);
    if (why !== undefined) throw new Error(`field "${info.name}" of segment ${this.segment.name}: ${why}`);
    return this.producers.get(this.suffixOf.get(info.number)!)!;
  }

  /** Fields with doc values this segment can read, by name. */
  get fieldNames(): string[] {
    return this.segment.fieldInfos.fields.filter((f) => this.suffixOf.has(f.number)).map((f) => f.name);
  }

  checkIntegrity(): void {
    for (const p of this.producers.values()) p.checkIntegrity();
  }

  close(): void {
    for (const p of this.producers.values()) p.close();
  }
}
