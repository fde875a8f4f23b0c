import { DateFormat, DEFAULT_DATE_FORMAT } from './DateFormat.js';

/**
 * One mapped field of an index, as Elasticsearch's mapping types define it, with the parameters
 * prescore honours. What a field becomes on disk:
 *
 * | type | doc values (Lucene type) | value stored as a long |
 * |---|---|---|
 * | `keyword` | SORTED_SET (UTF-8 terms) | - |
 * | `long` `integer` `short` `byte` | SORTED_NUMERIC | the value |
 * | `double` | SORTED_NUMERIC | `doubleToSortableLong` (IEEE bits, negatives flipped so that long order is numeric order) |
 * | `float` | SORTED_NUMERIC | `floatToSortableInt` of the float32 value, sign-extended |
 * | `date` | SORTED_NUMERIC | epoch milliseconds, UTC |
 * | `boolean` | SORTED_NUMERIC | 0 (false) or 1 (true) |
 * | `dense_vector` | - (the index's vector field: fp32, codes, graph) | - |
 * | `text` | - (kept in `_source` only: full-text search is not offered) | - |
 *
 * Every field keeps its value in `_source` as given. `object` fields only group their
 * sub-fields, whose paths are dotted (`metadata.source`).
 */
export type FieldMapping = KeywordMapping | NumberMapping | DateMapping | BooleanMapping | DenseVectorMapping | TextMapping;

export const NUMBER_TYPES = ['long', 'integer', 'short', 'byte', 'double', 'float'] as const;
export type NumberType = (typeof NUMBER_TYPES)[number];

export const INTEGER_BOUNDS: Readonly<Record<'long' | 'integer' | 'short' | 'byte', readonly [bigint, bigint]>> = {
  long: [-(2n ** 63n), 2n ** 63n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  short: [-32768n, 32767n],
  byte: [-128n, 127n],
};

interface Common {
  /** Whether the field has doc values (filterable, `docvalue_fields`); Elasticsearch's `doc_values`, default true. */
  readonly docValues: boolean;
}

export interface KeywordMapping extends Common {
  readonly type: 'keyword';
  /** Strings longer than this (in characters) are not indexed (kept in `_source`); default unlimited. */
  readonly ignoreAbove: number | null;
  /** Indexed in place of an explicit null. */
  readonly nullValue: string | null;
}

export interface NumberMapping extends Common {
  readonly type: NumberType;
  /** Strings are parsed and fractions of integer types truncated (Elasticsearch's default true). */
  readonly coerce: boolean;
  /** A value that does not fit is left unindexed instead of failing the document (default false). */
  readonly ignoreMalformed: boolean;
  readonly nullValue: number | null;
}

export interface DateMapping extends Common {
  readonly type: 'date';
  readonly format: DateFormat;
  readonly ignoreMalformed: boolean;
  readonly nullValue: string | null;
}

export interface BooleanMapping extends Common {
  readonly type: 'boolean';
  readonly nullValue: boolean | null;
}

/** Elasticsearch's names of a dense_vector field's similarity. */
export type DenseVectorSimilarity = 'cosine' | 'dot_product' | 'l2_norm' | 'max_inner_product';

export interface DenseVectorMapping {
  readonly type: 'dense_vector';
  readonly docValues: false;
  /** Undefined until the first vector is seen (dynamic mapping), as Elasticsearch does. */
  readonly dims: number | undefined;
  /** As given; undefined: not given (Elasticsearch's default is cosine). */
  readonly similarity: DenseVectorSimilarity | undefined;
  /** `index_options` as given (type, m, ef_construction, ...), kept for `GET _mapping`. */
  readonly indexOptions: Readonly<Record<string, unknown>> | null;
}

export interface TextMapping {
  readonly type: 'text';
  readonly docValues: false;
}

export function keywordMapping(p: Partial<Omit<KeywordMapping, 'type'>> = {}): KeywordMapping {
  return { type: 'keyword', docValues: p.docValues ?? true, ignoreAbove: p.ignoreAbove ?? null, nullValue: p.nullValue ?? null };
}

export function numberMapping(type: NumberType, p: Partial<Omit<NumberMapping, 'type'>> = {}): NumberMapping {
  return { type, docValues: p.docValues ?? true, coerce: p.coerce ?? true, ignoreMalformed: p.ignoreMalformed ?? false, nullValue: p.nullValue ?? null };
}

export function dateMapping(p: Partial<Omit<DateMapping, 'type'>> = {}): DateMapping {
  return {
    type: 'date',
    docValues: p.docValues ?? true,
    format: p.format ?? DateFormat.of(DEFAULT_DATE_FORMAT),
    ignoreMalformed: p.ignoreMalformed ?? false,
    nullValue: p.nullValue ?? null,
  };
}

export function booleanMapping(p: Partial<Omit<BooleanMapping, 'type'>> = {}): BooleanMapping {
  return { type: 'boolean', docValues: p.docValues ?? true, nullValue: p.nullValue ?? null };
}

/** Whether a field is filterable and returned by `docvalue_fields`. */
export function hasDocValues(f: FieldMapping): boolean {
  return f.docValues;
}

/** Whether a number type holds integers (stored as the value itself). */
export function isIntegerType(t: NumberType): t is 'long' | 'integer' | 'short' | 'byte' {
  return t !== 'double' && t !== 'float';
}
