import { DateParseError } from './DateFormat.js';
import { INTEGER_BOUNDS, isIntegerType, type DenseVectorMapping, type FieldMapping, type NumberMapping } from './FieldMapping.js';
import { leafName, type Mapping } from './Mapping.js';
import { MappingError } from './MappingError.js';

/** A document that does not fit its mapping (Elasticsearch's `document_parsing_exception`): names the field. */
export class DocumentError extends Error {
  constructor(
    /** Dotted path of the field at fault. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`field [${field}]: ${reason}`);
    this.name = 'DocumentError';
  }
}

/**
 * A field's indexed values in one document. Keyword: the strings. Integer types: the value (a
 * bigint beyond ±2^53, else a number). double / float: the number (float32-rounded for float).
 * date: epoch milliseconds. boolean: 0 or 1.
 */
export type FieldValues = (number | bigint)[] | string[];

export interface ParsedDocument {
  /** The vector of the mapping's dense_vector field, or null when the document has none. */
  readonly vector: Float32Array | null;
  /** Indexed values by field path (fields with doc values only), in the order met. */
  readonly values: ReadonlyMap<string, FieldValues>;
}

/**
 * Reads a document (a parsed JSON object) by a mapping, as Elasticsearch's document parser does:
 * arrays are flattened (every element is a value of the field), `null` is skipped unless the field
 * has a `null_value`, objects become dotted paths, new fields are mapped dynamically (the mapping
 * grows: a field's type is fixed by the first document that brings it), and each value is
 * converted by its field's type (numbers coerced from strings and integer fractions truncated when
 * `coerce` is on, ranges checked, dates parsed by the field's format, floats rounded to float32).
 * A value that does not fit fails the document with a DocumentError naming the field, unless
 * the field has `ignore_malformed` (the value is then left unindexed, as in Elasticsearch).
 */
export class DocumentParser {
  constructor(readonly mapping: Mapping) {}

  parse(doc: unknown): ParsedDocument {
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new DocumentError('_source', `a document is a JSON object, got ${describe(doc)}`);
    const values = new Map<string, FieldValues>();
    const state = { vector: null as Float32Array | null };
    this.object(doc as Record<string, unknown>, '', values, state);
    return { vector: state.vector, values };
  }

  private object(obj: Record<string, unknown>, prefix: string, values: Map<string, FieldValues>, state: { vector: Float32Array | null }): void {
    for (const [key, value] of Object.entries(obj)) {
      if (key === '' || key.startsWith('.') || key.endsWith('.') || key.includes('..'))
        throw new DocumentError(prefix === '' ? key : `${prefix}.${key}`, 'field names must not be empty or have empty dotted parts');
      const path = prefix === '' ? key : `${prefix}.${key}`;
      if (prefix === '' && key.startsWith('_') && METADATA_FIELDS.has(key))
        throw new DocumentError(path, `field [${key}] is a metadata field and cannot be added inside a document`);
      this.value(path, value, values, state);
    }
  }

  private value(path: string, value: unknown, values: Map<string, FieldValues>, state: { vector: Float32Array | null }): void {
    if (this.mapping.isDisabled(path)) return;
    let field = this.mapping.field(path);
    if (field?.type === 'dense_vector') {
      state.vector = this.vector(path, field, value);
      return;
    }
    if (Array.isArray(value)) {
      for (const v of value) this.value(path, v, values, state);
      return;
    }
    if (typeof value === 'object' && value !== null) {
      if (field !== undefined) throw new DocumentError(path, `tried to parse field [${leafName(path)}] as object, but found a concrete value mapping of type [${field.type}]`);
      if (!this.mapping.isObject(path)) {
        const dynamic = this.mapping.dynamicAt(parentPath(path));
        if (dynamic === 'strict') throw new DocumentError(path, `mapping set to strict, dynamic introduction of [${leafName(path)}] is not allowed`);
        if (dynamic === 'false') return;
        this.mapping.putObject(path);
      }
      this.object(value as Record<string, unknown>, path, values, state);
      return;
    }
    if (this.mapping.isObject(path)) throw new DocumentError(path, `object mapping for [${path}] tried to parse field [${leafName(path)}] as object, but found a concrete value`);
    if (field === undefined) {
      if (value === null) return;
      try {
        field = this.mapping.mapDynamic(path, value) ?? undefined;
      } catch (e) {
        if (e instanceof MappingError) throw new DocumentError(path, e.reason);
        throw e;
      }
      if (field === undefined) return; // dynamic: false
      if (field.type === 'dense_vector') throw new DocumentError(path, 'a dense_vector field takes an array of numbers');
    }
    this.scalar(path, field, value, values);
    for (const sub of this.mapping.subFieldsOf(path)) this.scalar(sub, this.mapping.field(sub)!, value, values);
  }

  private scalar(path: string, field: FieldMapping, value: unknown, values: Map<string, FieldValues>): void {
    if (value === null) {
      if (!('nullValue' in field) || field.nullValue === null) return;
      value = field.nullValue;
    }
    if (field.type === 'text') {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
        throw new DocumentError(path, `failed to parse field of type [text]: ${describe(value)}`);
      return;
    }
    if (field.type === 'dense_vector' || !field.docValues) {
      // Checked for its type, kept in _source, not indexed.
      this.convert(path, field, value);
      return;
    }
    const v = this.convert(path, field, value);
    if (v === null) return;
    let list = values.get(path);
    if (list === undefined) values.set(path, (list = []));
    (list as (string | number | bigint)[]).push(v);
  }

  /** The indexed form of one value, or null when it is not indexed (ignore_above, ignore_malformed). */
  private convert(path: string, field: FieldMapping, value: unknown): string | number | bigint | null {
    switch (field.type) {
      case 'keyword': {
        if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
          throw new DocumentError(path, `failed to parse field of type [keyword]: expected a string, got ${describe(value)}`);
        const s = String(value);
        return field.ignoreAbove !== null && s.length > field.ignoreAbove ? null : s;
      }
      case 'boolean':
        if (value === true || value === 'true') return 1;
        if (value === false || value === 'false' || value === '') return 0;
        throw new DocumentError(path, `failed to parse field of type [boolean]: only [true] or [false] are allowed, got ${describe(value)}`);
      case 'date':
        try {
          return field.format.parse(value);
        } catch (e) {
          if (!(e instanceof DateParseError)) throw e;
          if (field.ignoreMalformed) return null;
          throw new DocumentError(path, `failed to parse field of type [date]: ${e.message}`);
        }
      case 'text':
      case 'dense_vector':
        return null;
      default:
        try {
          return number(field, value);
        } catch (e) {
          if (!(e instanceof NumberError)) throw e;
          if (field.ignoreMalformed) return null;
          throw new DocumentError(path, `failed to parse field of type [${field.type}]: ${e.message}`);
        }
    }
  }

  private vector(path: string, field: DenseVectorMapping, given: unknown): Float32Array {
    // A library caller may hand a typed array (a Float32Array from an embedding model) instead of a JSON array.
    const value: ArrayLike<unknown> | null = Array.isArray(given)
      ? given
      : ArrayBuffer.isView(given) && !(given instanceof DataView)
        ? (given as unknown as ArrayLike<number>)
        : null;
    if (value === null) throw new DocumentError(path, `a dense_vector field takes an array of numbers, got ${describe(given)}`);
    if (field.dims !== undefined && value.length !== field.dims) throw new DocumentError(path, `the vector has ${value.length} dims, the mapping says ${field.dims}`);
    if (value.length === 0) throw new DocumentError(path, 'the vector is empty');
    const out = new Float32Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const x = value[i];
      if (typeof x !== 'number') throw new DocumentError(path, `vector component ${i} is not a number (got ${describe(x)})`);
      out[i] = x;
      if (!Number.isFinite(out[i]!)) throw new DocumentError(path, `vector component ${i} = ${x} is not finite as float32`);
    }
    if (field.dims === undefined) this.mapping.put(path, { ...field, dims: value.length });
    return out;
  }
}

/** Fields Elasticsearch reserves; a document may not set them. */
const METADATA_FIELDS = new Set([
  '_id',
  '_index',
  '_source',
  '_routing',
  '_version',
  '_seq_no',
  '_primary_term',
  '_field_names',
  '_ignored',
  '_doc_count',
  '_tier',
  '_data_stream_timestamp',
  '_score',
]);

class NumberError extends Error {}

/** A JSON value as a number field's value (see FieldValues). */
function number(field: NumberMapping, value: unknown): number | bigint {
  if (typeof value !== 'number' && !(typeof value === 'string' && field.coerce)) {
    throw new NumberError(typeof value === 'string' ? `[${value}] is a string and coerce is false` : `expected a number, got ${describe(value)}`);
  }
  if (isIntegerType(field.type)) {
    const [min, max] = INTEGER_BOUNDS[field.type];
    let v: bigint;
    if (typeof value === 'string') {
      const s = value.trim();
      if (/^[+-]?\d+$/.test(s)) v = BigInt(s);
      else if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) && Number.isFinite(Number(s))) v = BigInt(Math.trunc(Number(s)));
      else throw new NumberError(`[${value}] is not a number`);
    } else {
      if (!Number.isFinite(value)) throw new NumberError(`[${value}] is not a finite number`);
      if (!Number.isInteger(value) && !field.coerce) throw new NumberError(`[${value}] has a fraction and coerce is false`);
      v = BigInt(Math.trunc(value));
    }
    if (v < min || v > max) throw new NumberError(`value [${value}] is out of range for ${field.type === 'integer' ? 'an' : 'a'} ${field.type} [${min}, ${max}]`);
    return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
  }
  const x = typeof value === 'number' ? value : value.trim() === '' ? NaN : Number(value);
  const v = field.type === 'float' ? Math.fround(x) : x;
  if (!Number.isFinite(v)) throw new NumberError(`[${field.type}] supports only finite values, but got [${value}]`);
  return v;
}

function parentPath(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(0, dot);
}

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 60)}...` : s;
}
