/**
 * One segment as a filter reads it: its size, its live docs, its ids and the doc-values columns of
 * its fields, decoded once per segment into typed arrays (the reader side builds them from the
 * segment's Lucene90 doc values and keeps them while the segment is open). A filter turns a leaf
 * into a bitset of the docs that match (FixedBitSet), word by word over these arrays.
 *
 * Columns hold each field's values in segment doc order:
 * - `keyword`: per-segment ords into the field's sorted terms (UTF-8 byte order, as Lucene's
 *   SORTED_SET); a term query looks its term up once (`ord`), then compares ints.
 * - `numeric`: every number type, dates (epoch ms) and booleans (0/1) as float64 values, decoded
 *   from Lucene's longs by the field's type (sortable doubles and floats decoded back). Integer
 *   fields holding values beyond ±2^53 also carry `exactLongs`, which comparisons then use.
 * Single-valued columns index by doc (`offsets` null); multi-valued ones by `offsets` (a doc's
 * values are `[offsets[doc], offsets[doc + 1])`, sorted as Lucene keeps them).
 */

export interface FilterLeaf {
  /** Identity of this open segment, stable while it is open: the key of cached bitsets. */
  readonly key: string;
  readonly maxDoc: number;
  /** Live docs (bit d of word d >>> 5), or null when every doc is live. Filters never match deleted docs. */
  readonly liveDocs: Uint32Array | null;
  /** The column of a field in this segment, or null when no doc of the segment has the field (or it has no doc values). */
  column(field: string): DocValuesColumn | null;
  /** The segment doc holding the user-facing `_id`, or -1 (the `ids` query). */
  docForId(id: string): number;
}

export type DocValuesColumn = KeywordColumn | NumericColumn;

export interface KeywordColumn {
  readonly kind: 'keyword';
  /** Distinct terms in this segment. */
  readonly termCount: number;
  /** The ord of `term`, or -1 when no doc of this segment has it. */
  ord(term: string): number;
  /**
   * The first ord whose term is >= `term` (termCount when none): range queries on keyword fields
   * (Elasticsearch compares keywords by their UTF-8 bytes).
   */
  ceilingOrd(term: string): number;
  /** The term of an ord (`docvalue_fields`). */
  term(ord: number): string;
  /** Multi-valued: value ranges per doc (maxDoc + 1 entries); null: single-valued, `ords[doc]` (-1: no value). */
  readonly offsets: Int32Array | null;
  readonly ords: Int32Array;
}

export interface NumericColumn {
  readonly kind: 'numeric';
  /** Multi-valued: value ranges per doc (maxDoc + 1 entries); null: single-valued, `values[doc]`, present when `present` says so. */
  readonly offsets: Int32Array | null;
  readonly values: Float64Array;
  /** Single-valued only: docs with a value (bit d of word d >>> 5), or null when every doc has one. */
  readonly present: Uint32Array | null;
  /** The exact longs beside `values` when an integer field holds values beyond ±2^53; else null. */
  readonly exactLongs: BigInt64Array | null;
}
