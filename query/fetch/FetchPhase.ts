import { closeSync, openSync, readSync } from 'node:fs';
import { DateFormat } from '../../segments/document/DateFormat.js';
import type { FieldMapping } from '../../segments/document/FieldMapping.js';
import { filterSource, isIdentity, matchesAny, type SourceFiltering } from '../../segments/document/SourceFilter.js';
import { leafOf, type IndexReader, type LeafReaderContext } from '../../segments/index/IndexReader.js';
import { openablePath } from '../../segments/index/SegmentHandle.js';
import { SOURCE_FIELD } from '../../segments/index/SegmentDocumentsWriter.js';
import type { SegmentDocuments } from '../../segments/index/SegmentDocuments.js';
import { DocValuesFilterLeaf, type FieldTypes } from '../filter/DocValuesFilterLeaf.js';
import type { FilterLeaf } from '../filter/FilterLeaf.js';
import type { PendingDoc } from '../../segments/index/PendingDocs.js';

/** What a hit carries besides its id and score (Elasticsearch's `_source`, `fields`, `docvalue_fields`). */
export interface FetchOptions {
  /** `_source` filtering, or false for no `_source`. */
  readonly source: SourceFiltering | false;
  /**
   * Leave the vector out of `_source` (default true, as Elasticsearch 9.2's `exclude_vectors`):
   * it is not stored there; false puts it back, read from the segment's fp32 vectors.
   */
  readonly excludeVectors: boolean;
  /** Field patterns whose values come from `_source`, by the mapping (Elasticsearch's `fields`). */
  readonly fields: readonly string[];
  /** Fields whose values come from doc values, with an optional date format (`docvalue_fields`). */
  readonly docvalueFields: readonly { readonly field: string; readonly format?: string }[];
}

export const NO_FETCH: FetchOptions = { source: false, excludeVectors: true, fields: [], docvalueFields: [] };

/** A fetched document. */
export interface FetchedDocument {
  readonly id: string;
  /** The `_source` as stored (filtered), or undefined when not asked for or the segment stores none. */
  readonly source?: Record<string, unknown>;
  /** `fields` and `docvalue_fields` values, each an array, by field. */
  readonly fields?: Record<string, unknown[]>;
}

/** What the fetch phase needs of the index: its reader, vector field and mapping. */
export interface FetchContext {
  readonly reader: IndexReader;
  readonly vectorField: string;
  readonly types: FieldTypes;
  readonly fieldPaths: () => readonly string[];
}

const decoder = new TextDecoder();

/**
 * Elasticsearch's fetch phase over a list of global docs: each doc's `_id`, its `_source` (the
 * stored bytes parsed, filtered, the vector put back when asked), `fields` read from the source by
 * the mapping and `docvalue_fields` read from doc values. Stored fields are read in place; the
 * chunks holding the docs are prefetched (madvise) first, all at once, like the fp32 pages of the
 * rescoring, so their reads overlap.
 */
export function fetchDocuments(ctx: FetchContext, docs: readonly number[], options: FetchOptions): FetchedDocument[] {
  const leaves = ctx.reader.leaves;
  const byLeaf = new Map<LeafReaderContext, number[]>();
  for (const doc of docs) {
    const leaf = leafOf(leaves, doc);
    let list = byLeaf.get(leaf);
    if (list === undefined) byLeaf.set(leaf, (list = []));
    list.push(doc - leaf.docBase);
  }
  const needsStored = options.source !== false || options.fields.length > 0;
  if (needsStored) for (const [leaf, local] of byLeaf) leaf.reader.documents?.storedFields.prefetch(local);
  return docs.map((doc) => fetchOne(ctx, leafOf(leaves, doc), doc, options, needsStored));
}

function fetchOne(ctx: FetchContext, leaf: LeafReaderContext, global: number, options: FetchOptions, needsStored: boolean): FetchedDocument {
  const doc = global - leaf.docBase;
  const id = leaf.reader.id(doc);
  const documents = leaf.reader.documents;
  let parsed: Record<string, unknown> | undefined;
  if (needsStored && documents) parsed = storedSource(documents, doc);
  if (needsStored && !documents) parsed = {};
  if (parsed !== undefined && !options.excludeVectors && !ctx.vectorField.includes('.')) {
    const v = readVector(leaf, doc);
    if (v) parsed = { ...parsed, [ctx.vectorField]: Array.from(v, shortestFloat32) };
  }
  return fetched(ctx, id, parsed, () => DocValuesFilterLeaf.of(leaf, ctx.types), doc, options);
}

/**
 * Documents written since the last commit (PendingDocs) fetched as fetchDocuments fetches a
 * segment's: doc `i` is `docs[i]`, its source the stored bytes, its doc values `leaf`'s columns
 * (built from the values the mapping parsed), so a hit reads the same before and after its commit.
 */
export function fetchPendingDocuments(
  ctx: Omit<FetchContext, 'reader'>,
  leaf: FilterLeaf,
  docs: readonly PendingDoc[],
  which: readonly number[],
  options: FetchOptions,
): FetchedDocument[] {
  const needsStored = options.source !== false || options.fields.length > 0;
  return which.map((i) => {
    const d = docs[i]!;
    let parsed = needsStored ? (JSON.parse(decoder.decode(d.source)) as Record<string, unknown>) : undefined;
    if (parsed !== undefined && !options.excludeVectors && !ctx.vectorField.includes('.')) parsed = { ...parsed, [ctx.vectorField]: Array.from(d.vector, shortestFloat32) };
    return fetched(ctx, d.id, parsed, () => leaf, i, options);
  });
}

/** A fetched doc from its parsed source (undefined: not read) and its leaf's doc values. */
function fetched(
  ctx: Omit<FetchContext, 'reader'>,
  id: string,
  parsed: Record<string, unknown> | undefined,
  leaf: () => FilterLeaf | null,
  doc: number,
  options: FetchOptions,
): FetchedDocument {
  const out: { id: string; source?: Record<string, unknown>; fields?: Record<string, unknown[]> } = { id };
  if (options.source !== false && parsed !== undefined) out.source = isIdentity(options.source) ? parsed : filterSource(parsed, options.source);
  const fields: Record<string, unknown[]> = {};
  if (options.fields.length > 0 && parsed !== undefined) sourceFields(ctx, parsed, options.fields, fields);
  if (options.docvalueFields.length > 0) docvalueFields(ctx, leaf(), doc, options.docvalueFields, fields);
  if (Object.keys(fields).length > 0) out.fields = fields;
  return out;
}

/**
 * A doc's source: its `_source` stored field (prescore's, or an Elasticsearch index's JSON
 * source), else (a plain Lucene index) its stored fields as an object, a field stored more than
 * once as an array (bytes as base64, longs beyond 2^53 as strings).
 */
function storedSource(documents: SegmentDocuments, doc: number): Record<string, unknown> {
  const sourceField = documents.fieldInfos.fieldInfo(SOURCE_FIELD)?.number ?? -1;
  const fields = documents.storedFields.documentFields(doc);
  const source = fields.find((f) => f.fieldNumber === sourceField);
  if (source && source.value instanceof Uint8Array) {
    try {
      return JSON.parse(decoder.decode(source.value)) as Record<string, unknown>;
    } catch {
      // Not JSON (an Elasticsearch source sent as SMILE or CBOR): the stored fields instead.
    }
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.fieldNumber === sourceField) continue;
    const name = documents.fieldInfos.fieldInfo(f.fieldNumber)?.name ?? String(f.fieldNumber);
    const v =
      f.value instanceof Uint8Array
        ? Buffer.from(f.value).toString('base64')
        : typeof f.value === 'bigint'
          ? f.value >= -(2n ** 53n) && f.value <= 2n ** 53n
            ? Number(f.value)
            : f.value.toString()
          : f.value;
    if (!(name in out)) out[name] = v;
    else out[name] = Array.isArray(out[name]) ? [...(out[name] as unknown[]), v] : [out[name], v];
  }
  return out;
}

/** `fields`: mapped fields matching the patterns, their values from the source, normalized by type. */
function sourceFields(ctx: Omit<FetchContext, 'reader'>, source: Record<string, unknown>, patterns: readonly string[], out: Record<string, unknown[]>): void {
  const values = new Map<string, unknown[]>();
  collect(source, '', values);
  for (const path of ctx.fieldPaths()) {
    if (!matchesAny(patterns, path)) continue;
    const type = ctx.types(path);
    const raw = values.get(path) ?? (type && 'nullValue' in type && type.nullValue !== null ? [type.nullValue] : undefined);
    if (raw === undefined || raw.length === 0 || type === undefined || type.type === 'dense_vector') continue;
    out[path] = raw.flatMap((v) => normalize(type, v));
  }
}

/** Every leaf value of a source by dotted path (arrays flattened, nulls skipped). */
function collect(value: unknown, path: string, out: Map<string, unknown[]>): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    for (const v of value) collect(v, path, out);
    return;
  }
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collect(v, path === '' ? k : `${path}.${k}`, out);
    return;
  }
  let list = out.get(path);
  if (list === undefined) out.set(path, (list = []));
  list.push(value);
}

/** A source value as Elasticsearch's `fields` returns it for the field's type ([] when it does not parse). */
function normalize(type: FieldMapping, v: unknown): unknown[] {
  try {
    switch (type.type) {
      case 'keyword':
      case 'text':
        return [String(v)];
      case 'boolean':
        return [v === true || v === 'true'];
      case 'date':
        return [DateFormat.formatIso(type.format.parse(v))];
      default: {
        const n = typeof v === 'number' ? v : Number(v);
        return Number.isFinite(n) ? [type.type === 'float' ? Math.fround(n) : n] : [];
      }
    }
  } catch {
    return [];
  }
}

/** `docvalue_fields`: each named field's values from doc values, formatted by type (dates in ISO or the given format). */
function docvalueFields(ctx: Omit<FetchContext, 'reader'>, fl: FilterLeaf | null, doc: number, requested: FetchOptions['docvalueFields'], out: Record<string, unknown[]>): void {
  if (fl === null) return;
  for (const { field, format } of requested) {
    const paths = field.includes('*') ? ctx.fieldPaths().filter((p) => matchesAny([field], p)) : [field];
    for (const path of paths) {
      const column = fl.column(path);
      if (column === null) continue;
      const type = ctx.types(path);
      const values: unknown[] = [];
      if (column.kind === 'keyword') {
        const from = column.offsets ? column.offsets[doc]! : doc;
        const to = column.offsets ? column.offsets[doc + 1]! : column.ords[doc]! >= 0 ? doc + 1 : doc;
        for (let i = from; i < to; i++) values.push(column.term(column.ords[i]!));
      } else {
        const present = column.offsets ? column.offsets[doc + 1]! > column.offsets[doc]! : column.present === null || ((column.present[doc >>> 5]! >>> (doc & 31)) & 1) === 1;
        if (present) {
          const from = column.offsets ? column.offsets[doc]! : doc;
          const to = column.offsets ? column.offsets[doc + 1]! : doc + 1;
          for (let i = from; i < to; i++) values.push(formatNumber(type, column.exactLongs ? column.exactLongs[i]! : column.values[i]!, format));
        }
      }
      if (values.length > 0) out[path] = values;
    }
  }
}

function formatNumber(type: FieldMapping | undefined, v: number | bigint, format: string | undefined): unknown {
  if (type?.type === 'date') {
    const ms = Number(v);
    if (format === 'epoch_millis') return String(ms);
    return DateFormat.formatIso(ms);
  }
  if (type?.type === 'boolean') return Number(v) === 1;
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  return v;
}

/** A segment doc's fp32 vector, read from the segment's vector data (null: the doc has none). */
function readVector(leaf: LeafReaderContext, doc: number): Float32Array | null {
  const v = leaf.reader.handle.vectors;
  const ord = v.ordToDoc ? binarySearch(v.ordToDoc, doc) : doc < v.size ? doc : -1;
  if (ord < 0) return null;
  const out = new Float32Array(v.byteSize / 4);
  const fd = openSync(openablePath(v), 'r');
  try {
    readSync(fd, new Uint8Array(out.buffer), 0, v.byteSize, v.offset + ord * v.byteSize);
  } finally {
    closeSync(fd);
  }
  return out;
}

function binarySearch(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else if (a[mid]! > x) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/** The shortest decimal that reads back as the same float32 (as Java's Float.toString prints it). */
export function shortestFloat32(x: number): number {
  // Binary search over the digits: any p-digit decimal is also a (p + 1)-digit one, so rounding to
  // more digits is never farther from x, and once p digits round-trip every longer spelling does.
  // 9 digits always do. ~3.3 toPrecision calls per value instead of ~8 for typical vector floats.
  let lo = 1;
  let hi = 9;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Math.fround(Number(x.toPrecision(mid))) === x) hi = mid;
    else lo = mid + 1;
  }
  return Number(x.toPrecision(lo));
}
