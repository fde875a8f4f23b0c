import { Lucene90DocValuesConsumer, type Long } from '../docvalues/Lucene90DocValuesConsumer.js';
import { DV_FORMAT_KEY, DV_SUFFIX_KEY, LUCENE90_DOC_VALUES_FORMAT } from '../docvalues/Lucene90DocValuesFormat.js';
import type { FieldValues } from '../document/DocumentParser.js';
import { isIntegerType, type FieldMapping } from '../document/FieldMapping.js';
import type { Mapping } from '../document/Mapping.js';
import { doubleToSortableLong, floatToSortableInt } from '../document/SortableNumbers.js';
import type { IndexedDocument } from '../input/DocumentSource.js';
import type { VectorSimilarityName } from '../lucene/FieldInfos.js';
import { KNN_FORMAT_KEY, KNN_SUFFIX_KEY } from '../lucene/FieldInfos.js';
import { writeFieldInfos, type WrittenFieldInfo } from '../lucene/FieldInfosWriter.js';
import { BEST_SPEED, type StoredFieldsModeParams } from '../storedfields/Lucene90StoredFieldsFormat.js';
import { StoredFieldsWriter } from '../storedfields/StoredFieldsWriter.js';

/**
 * The fields every prescore segment has, by number: the vector field (0, the number its
 * `.vec/.veq/.vex` files carry), `_id` (1: stored, and SORTED doc values so a segment can find a
 * doc by id and filter on ids) and `_source` (2: stored, the document's JSON as given less its
 * vector). Mapped fields with doc values follow from 3, numbered in the order the build first
 * meets them (FieldNumbers), the same number in every segment of the build.
 */
export const VECTOR_FIELD_NUMBER = 0;
export const ID_FIELD = '_id';
export const ID_FIELD_NUMBER = 1;
export const SOURCE_FIELD = '_source';
export const SOURCE_FIELD_NUMBER = 2;
/**
 * Elasticsearch's `_seq_no` and `_version` of each doc an IndexWriter writes, NUMERIC doc values
 * (numbered among the mapped fields); a build's segments have neither (their docs are version 1).
 */
export const SEQ_NO_FIELD = '_seq_no';
export const VERSION_FIELD = '_version';
const FIRST_MAPPED_FIELD_NUMBER = 3;

/**
 * How prescore segments chunk their stored fields: Lucene's BEST_SPEED (LZ4 with a preset
 * dictionary) in chunks of at most 14 KiB or 128 docs, the chunking of Elasticsearch's default
 * (Zstd814 BEST_SPEED), instead of Lucene's 80 KiB or 1,024 docs. Reading one doc decompresses its
 * chunk's dictionary and the tenth of the chunk that holds it and decodes the chunk's per-doc
 * lengths, so the cost follows the chunk, not the doc: on gen's ~73-byte sources (125k docs) a
 * random doc took 63-82 us in 80 KiB chunks and 10-15 us in 16 KiB / 128-doc ones, for 14% more
 * bytes (40.4 -> 46.0 per doc). A hit's `_source` is such a random read. Lucene reads the files as
 * any BEST_SPEED segment (the chunk size is in `.fdm`); they are just not the bytes Lucene's writer
 * would have chosen.
 */
export const SOURCE_STORED_FIELDS: StoredFieldsModeParams = { ...BEST_SPEED, chunkSize: 14 * 1024, maxDocsPerChunk: 128 };

/** The suffix of a segment's doc-values files: `PerFieldDocValuesFormat` format Lucene90, suffix 0. */
export const DOC_VALUES_SUFFIX = `${LUCENE90_DOC_VALUES_FORMAT}_0`;

/** A build's field numbers (Lucene's FieldInfos.FieldNumbers): the first time a field is met fixes its number. */
export class FieldNumbers {
  private readonly numbers = new Map<string, number>();
  private next = FIRST_MAPPED_FIELD_NUMBER;

  numberOf(path: string): number {
    let n = this.numbers.get(path);
    if (n === undefined) this.numbers.set(path, (n = this.next++));
    return n;
  }

  /** Every path numbered so far, with its number (to number another thread's segments the same way: `from`). */
  entries(): [string, number][] {
    return [...this.numbers];
  }

  /** Numbers as `entries` gave them. */
  static from(entries: readonly (readonly [string, number])[]): FieldNumbers {
    const numbers = new FieldNumbers();
    for (const [path, number] of entries) numbers.assign(path, number);
    return numbers;
  }

  /** Takes over a number an existing segment gave `path` (a writer continuing an index); new fields number past it. */
  assign(path: string, number: number): void {
    if (number < FIRST_MAPPED_FIELD_NUMBER || this.numbers.has(path)) return;
    this.numbers.set(path, number);
    this.next = Math.max(this.next, number + 1);
  }
}

export interface SegmentVectorField {
  readonly name: string;
  readonly dims: number;
  readonly similarity: VectorSimilarityName;
  /** `PerFieldKnnVectorsFormat` format and suffix of the segment's vector files (`Lucene104HnswScalarQuantizedVectorsFormat`, `0`). */
  readonly format: string;
  readonly formatSuffix: string;
}

/**
 * A segment's documents as the build writes them, beside its vectors: each document's `_id` and
 * `_source` streamed into Lucene90 stored fields (`.fdt/.fdx/.fdm`) as it comes, its doc-values
 * fields gathered in memory as columns and written at the end (`_N_Lucene90_0.dvd/.dvm`: keyword
 * fields SORTED_SET, numbers, dates and booleans SORTED_NUMERIC, as Elasticsearch indexes them),
 * then `_N.fnm` naming every field with its number, doc-values type and per-field format.
 */
export class SegmentDocumentsWriter {
  private readonly stored: StoredFieldsWriter;
  private readonly ids: string[] = [];
  private readonly columns = new Map<string, (FieldValues | undefined)[]>();
  private readonly seqNos: number[] = [];
  private readonly versions: number[] = [];
  private docs = 0;
  private readonly files: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly segment: { readonly name: string; readonly id: Uint8Array },
    private readonly numbers: FieldNumbers,
    private readonly vector: SegmentVectorField,
  ) {
    this.stored = StoredFieldsWriter.create(dir, segment.name, segment.id, { format: SOURCE_STORED_FIELDS });
  }

  /** Adds a doc; `written` (its seqNo and version) is given by an IndexWriter for every doc of its segments, never by a build. */
  add(id: string, doc: IndexedDocument, written?: { readonly seqNo: number; readonly version: number }): void {
    const d = this.docs++;
    if (written !== undefined) {
      this.seqNos[d] = written.seqNo;
      this.versions[d] = written.version;
    }
    this.stored.startDocument();
    this.stored.writeString(ID_FIELD_NUMBER, id);
    this.stored.writeBytes(SOURCE_FIELD_NUMBER, doc.source);
    this.stored.finishDocument();
    this.ids.push(id);
    for (const [path, values] of doc.values) {
      let column = this.columns.get(path);
      if (column === undefined) this.columns.set(path, (column = []));
      column[d] = values;
    }
  }

  /** Writes the stored fields' end, the doc values and `.fnm`; `mapping` types the columns. Returns the files written. */
  finish(mapping: Mapping): string[] {
    const maxDoc = this.docs;
    this.stored.finish(maxDoc);
    this.stored.close();
    this.files.push(...storedFieldsFiles(this.dir, this.segment.name));
    const dv = new Lucene90DocValuesConsumer(this.dir, { name: this.segment.name, id: this.segment.id, maxDoc }, DOC_VALUES_SUFFIX);
    const dvAttributes = new Map([
      [DV_FORMAT_KEY, LUCENE90_DOC_VALUES_FORMAT],
      [DV_SUFFIX_KEY, '0'],
    ]);
    const fields: WrittenFieldInfo[] = [
      {
        name: this.vector.name,
        number: VECTOR_FIELD_NUMBER,
        docValuesType: 'NONE',
        attributes: new Map([
          [KNN_FORMAT_KEY, this.vector.format],
          [KNN_SUFFIX_KEY, this.vector.formatSuffix],
        ]),
        vectorDimension: this.vector.dims,
        vectorSimilarity: this.vector.similarity,
      },
      { name: ID_FIELD, number: ID_FIELD_NUMBER, docValuesType: 'SORTED', attributes: dvAttributes, vectorDimension: 0, vectorSimilarity: 'EUCLIDEAN' },
      { name: SOURCE_FIELD, number: SOURCE_FIELD_NUMBER, docValuesType: 'NONE', attributes: new Map(), vectorDimension: 0, vectorSimilarity: 'EUCLIDEAN' },
    ];
    try {
      dv.addSortedField({ number: ID_FIELD_NUMBER, name: ID_FIELD }, this.ids);
      // Every column in field-number order (the doc-values entries are written in that order).
      const columns: { readonly name: string; readonly number: number; readonly write: (number: number) => WrittenFieldInfo }[] = [];
      const info = (name: string, number: number, docValuesType: WrittenFieldInfo['docValuesType']): WrittenFieldInfo => ({
        name,
        number,
        docValuesType,
        attributes: dvAttributes,
        vectorDimension: 0,
        vectorSimilarity: 'EUCLIDEAN',
      });
      if (this.seqNos.length > 0) {
        for (const [name, values] of [
          [SEQ_NO_FIELD, this.seqNos],
          [VERSION_FIELD, this.versions],
        ] as const) {
          values.length = maxDoc;
          columns.push({ name, number: this.numbers.numberOf(name), write: (number) => (dv.addNumericField({ number, name }, values), info(name, number, 'NUMERIC')) });
        }
      }
      for (const [path, column] of this.columns) {
        const field = mapping.field(path);
        if (field === undefined) throw new Error(`segment ${this.segment.name}: field [${path}] has values but no mapping`);
        column.length = maxDoc;
        columns.push({
          name: path,
          number: this.numbers.numberOf(path),
          write: (number) => {
            if (field.type === 'keyword') {
              dv.addSortedSetField({ number, name: path }, column as (string[] | undefined)[]);
              return info(path, number, 'SORTED_SET');
            }
            const longs = Array.from(column, (values) => (values === undefined ? undefined : (values as (number | bigint)[]).map((v) => toLong(field, v))));
            dv.addSortedNumericField({ number, name: path }, longs);
            return info(path, number, 'SORTED_NUMERIC');
          },
        });
      }
      for (const c of columns.sort((a, b) => a.number - b.number)) fields.push(c.write(c.number));
      dv.close();
    } catch (e) {
      dv.abort();
      throw e;
    }
    this.files.push(dv.dataPath, dv.metaPath);
    this.files.push(writeFieldInfos(this.dir, this.segment.name, this.segment.id, fields));
    return this.files;
  }

  /** Deletes what was written (a failed build). */
  abort(): void {
    this.stored.close();
  }
}

/** A field value as the long its doc values hold (FieldMapping's table). */
function toLong(field: FieldMapping, v: number | bigint): Long {
  if (field.type === 'double') return doubleToSortableLong(v as number);
  if (field.type === 'float') return floatToSortableInt(v as number);
  if (typeof v === 'bigint' || Number.isSafeInteger(v)) return v;
  if (field.type === 'date' || field.type === 'boolean' || isIntegerType(field.type as never)) return Math.trunc(v);
  throw new Error(`field type ${field.type} has no doc values`);
}

function storedFieldsFiles(dir: string, segment: string): string[] {
  return ['fdt', 'fdx', 'fdm'].map((ext) => `${dir}/${segment}.${ext}`);
}
