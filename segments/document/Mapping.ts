import { DateFormat, DEFAULT_DATE_FORMAT, DEFAULT_DYNAMIC_DATE_FORMATS } from './DateFormat.js';
import { DynamicTemplate, type JsonKind } from './DynamicTemplate.js';
import { MappingError } from './MappingError.js';
import {
  booleanMapping,
  dateMapping,
  keywordMapping,
  NUMBER_TYPES,
  numberMapping,
  type DenseVectorMapping,
  type DenseVectorSimilarity,
  type FieldMapping,
  type NumberType,
} from './FieldMapping.js';

export { MappingError };

/**
 * Dynamically mapped strings are keywords that index strings up to this many characters, as the
 * `keyword` sub-field Elasticsearch adds to a dynamic string field does; longer ones stay in
 * `_source` only.
 */
export const DYNAMIC_KEYWORD_IGNORE_ABOVE = 256;

/** What happens to a field no mapping names (Elasticsearch's `dynamic`). */
export type Dynamic = 'true' | 'false' | 'strict';

const VECTOR_SIMILARITIES: readonly DenseVectorSimilarity[] = ['cosine', 'dot_product', 'l2_norm', 'max_inner_product'];

/** Parameters accepted and ignored: they concern full-text search, storage or scripting that prescore does not offer. */
const IGNORED = new Set([
  'index',
  'store',
  'meta',
  'copy_to',
  'analyzer',
  'search_analyzer',
  'search_quote_analyzer',
  'norms',
  'index_options',
  'similarity',
  'eager_global_ordinals',
  'split_queries_on_whitespace',
  'term_vector',
  'position_increment_gap',
  'locale',
  'script',
  'on_script_error',
  'time_series_dimension',
  'time_series_metric',
  'fielddata',
  'fielddata_frequency_filter',
  'index_prefixes',
  'index_phrases',
]);

/**
 * An index's mapping, as Elasticsearch's `mappings` object gives it: typed fields by dotted path
 * (`metadata.source`), the `dynamic` setting (of the root and of each object), date and numeric
 * detection, and `dynamic_templates`. Read with `Mapping.parse`, written back with `toJSON` (what
 * `GET /:index/_mapping` shows), grown by dynamic mapping as documents bring new fields
 * (`mapDynamic`). Strings are mapped as `keyword` where Elasticsearch would map `text` with a
 * `keyword` sub-field: prescore filters on exact values and offers no full-text search.
 */
export class Mapping {
  private readonly fields = new Map<string, FieldMapping>();
  /** Object paths ('' = root) and their own `dynamic` (undefined: inherited). */
  private readonly objects = new Map<string, Dynamic | undefined>([['', undefined]]);
  /** Multi-fields: a field's sub-fields indexed from the same value (`title.keyword`), by parent path. */
  private readonly subFields = new Map<string, string[]>();
  /** Objects with `enabled: false`: not parsed, kept in `_source` only. */
  private readonly disabled = new Set<string>();

  private constructor(
    readonly dynamic: Dynamic,
    readonly dateDetection: boolean,
    readonly numericDetection: boolean,
    readonly dynamicDateFormats: readonly DateFormat[],
    readonly templates: readonly DynamicTemplate[],
  ) {}

  /** A mapping with no fields and Elasticsearch's defaults (dynamic: true, date detection on). */
  static empty(): Mapping {
    return new Mapping(
      'true',
      true,
      false,
      DEFAULT_DYNAMIC_DATE_FORMATS.map((f) => DateFormat.of(f)),
      [],
    );
  }

  /** Reads Elasticsearch's `mappings` object (`{"properties": {...}, "dynamic": ..., "dynamic_templates": [...]}`). */
  static parse(json: unknown): Mapping {
    const root = asObject(json, '');
    // `{"mappings": {...}}` (a whole index-creation body) is accepted too.
    const body = 'mappings' in root && Object.keys(root).length === 1 ? asObject(root.mappings, 'mappings') : root;
    for (const key of Object.keys(body)) {
      if (!['properties', 'dynamic', 'date_detection', 'numeric_detection', 'dynamic_date_formats', 'dynamic_templates', '_source', '_meta', '_routing'].includes(key)) {
        throw new MappingError(key, `unknown root mapping parameter [${key}]`);
      }
    }
    const formats =
      body.dynamic_date_formats === undefined
        ? DEFAULT_DYNAMIC_DATE_FORMATS.map((f) => DateFormat.of(f))
        : asArray(body.dynamic_date_formats, 'dynamic_date_formats').map((f, i) => dateFormat(f, `dynamic_date_formats.${i}`));
    const templates =
      body.dynamic_templates === undefined ? [] : asArray(body.dynamic_templates, 'dynamic_templates').map((t, i) => DynamicTemplate.parse(t, `dynamic_templates.${i}`));
    const m = new Mapping(
      parseDynamic(body.dynamic, 'dynamic') ?? 'true',
      body.date_detection === undefined ? true : asBoolean(body.date_detection, 'date_detection'),
      body.numeric_detection === undefined ? false : asBoolean(body.numeric_detection, 'numeric_detection'),
      formats,
      templates,
    );
    if (body.properties !== undefined) m.addProperties('', asObject(body.properties, 'properties'));
    return m;
  }

  /** The field at a dotted path, if mapped. */
  field(path: string): FieldMapping | undefined {
    return this.fields.get(path);
  }

  /** Every mapped field (not objects), by dotted path, in sorted order. */
  get fieldPaths(): string[] {
    return [...this.fields.keys()].sort();
  }

  /** Whether `path` is a mapped object (it holds fields rather than values). */
  isObject(path: string): boolean {
    return this.objects.has(path);
  }

  /** Whether the object at `path` is mapped with `enabled: false` (its content is kept in `_source` only). */
  isDisabled(path: string): boolean {
    return this.disabled.has(path);
  }

  /** Sub-fields (`title.keyword`) indexed from the value of the field at `path`. */
  subFieldsOf(path: string): readonly string[] {
    return this.subFields.get(path) ?? [];
  }

  /** The one `dense_vector` field, or null; several are refused (an index has one vector field). */
  vectorField(): { readonly path: string; readonly mapping: DenseVectorMapping } | null {
    let found: { path: string; mapping: DenseVectorMapping } | null = null;
    for (const [path, f] of this.fields) {
      if (f.type !== 'dense_vector') continue;
      if (found) throw new MappingError(path, `an index holds one dense_vector field; [${found.path}] is one already`);
      found = { path, mapping: f };
    }
    return found;
  }

  /** The `dynamic` setting that applies inside the object at `objectPath` (its own, else its parent's). */
  dynamicAt(objectPath: string): Dynamic {
    for (let p: string | null = objectPath; p !== null; p = parentOf(p)) {
      const d = this.objects.get(p);
      if (d !== undefined) return d;
    }
    return this.dynamic;
  }

  /** Sets a field's mapping (the vector field's dims once its first vector is seen). */
  put(path: string, mapping: FieldMapping): void {
    for (let p = parentOf(path); p !== null && p !== ''; p = parentOf(p)) {
      if (this.fields.has(p)) throw new MappingError(path, `cannot add a field under [${p}], which is a ${this.fields.get(p)!.type} field, not an object`);
      if (!this.objects.has(p)) this.objects.set(p, undefined);
    }
    if (this.objects.has(path)) throw new MappingError(path, 'is an object; it cannot also be a field');
    this.fields.set(path, mapping);
  }

  /** Declares an object (dynamic mapping met a JSON object at `path`). */
  putObject(path: string): void {
    if (this.fields.has(path)) throw new MappingError(path, `is a ${this.fields.get(path)!.type} field; it cannot hold an object`);
    for (let p: string | null = path; p !== null && p !== ''; p = parentOf(p)) if (!this.objects.has(p)) this.objects.set(p, undefined);
  }

  /**
   * Dynamic mapping of a field a document brings (the mapping has no field at `path`): the first
   * dynamic template that matches, else Elasticsearch's default rule (strings: date when one of
   * the dynamic date formats parses them, number when numeric detection is on, else keyword
   * with `ignore_above: 256`;
   * integers long; other numbers float; booleans boolean). Returns null when dynamic mapping is
   * off here (the value stays in `_source` only); throws for `dynamic: strict`.
   */
  mapDynamic(path: string, value: unknown): FieldMapping | null {
    const parent = parentOf(path) ?? '';
    const dynamic = this.dynamicAt(parent);
    if (dynamic === 'strict')
      throw new MappingError(path, `mapping set to strict, dynamic introduction of [${leafName(path)}] within [${parent === '' ? '_doc' : parent}] is not allowed`);
    if (dynamic === 'false') return null;
    const kind = this.jsonKind(value);
    if (kind === null) return null;
    for (const t of this.templates) {
      if (!t.matches(path, kind.kind)) continue;
      const mapping = this.fieldFromJson(t.render(leafName(path), kind.kind), path);
      this.put(path, mapping);
      return mapping;
    }
    const mapping =
      kind.kind === 'string'
        ? keywordMapping({ ignoreAbove: DYNAMIC_KEYWORD_IGNORE_ABOVE })
        : kind.kind === 'long'
          ? numberMapping('long')
          : kind.kind === 'double'
            ? numberMapping('float')
            : kind.kind === 'boolean'
              ? booleanMapping()
              : dateMapping({ format: kind.format ?? DateFormat.of(DEFAULT_DATE_FORMAT) });
    this.put(path, mapping);
    return mapping;
  }

  /** The JSON kind dynamic templates match on (`string`, `long`, `double`, `boolean`, `date`), null for null. */
  private jsonKind(value: unknown): { kind: JsonKind; format?: DateFormat } | null {
    if (value === null || value === undefined) return null;
    if (typeof value === 'boolean') return { kind: 'boolean' };
    if (typeof value === 'number') return { kind: Number.isInteger(value) ? 'long' : 'double' };
    if (typeof value === 'string') {
      if (this.dateDetection) {
        const f = this.dynamicDateFormats.find((d) => d.matches(value));
        if (f) return { kind: 'date', format: f === this.dynamicDateFormats[0] ? undefined : f };
      }
      if (this.numericDetection && value.trim() !== '' && Number.isFinite(Number(value))) return { kind: /^-?\d+$/.test(value.trim()) ? 'long' : 'double' };
      return { kind: 'string' };
    }
    return { kind: 'object' };
  }

  /** Elasticsearch's `mappings` object for this mapping (`GET /:index/_mapping`). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.dynamic !== 'true') out.dynamic = this.dynamic;
    if (!this.dateDetection) out.date_detection = false;
    if (this.numericDetection) out.numeric_detection = true;
    if (this.templates.length > 0) out.dynamic_templates = this.templates.map((t) => t.toJSON());
    const properties: Record<string, Record<string, unknown>> = {};
    const objectNode = (path: string): Record<string, unknown> => {
      if (path === '') return properties;
      const parent = objectNode(parentOf(path)!);
      const name = leafName(path);
      let node = parent[name] as Record<string, unknown> | undefined;
      if (!node) {
        node = {};
        const dyn = this.objects.get(path);
        if (dyn !== undefined) node.dynamic = dyn;
        if (this.disabled.has(path)) node.enabled = false;
        node.properties = {};
        parent[name] = node;
      }
      return node.properties as Record<string, unknown>;
    };
    for (const path of [...this.objects.keys()].sort()) objectNode(path);
    const isSub = new Set([...this.subFields.values()].flat());
    for (const path of this.fieldPaths) {
      if (isSub.has(path)) continue;
      const json = fieldJson(this.fields.get(path)!);
      const subs = this.subFields.get(path);
      if (subs) json.fields = Object.fromEntries(subs.map((s) => [s.slice(path.length + 1), fieldJson(this.fields.get(s)!)]));
      objectNode(parentOf(path) ?? '')[leafName(path)] = json;
    }
    out.properties = properties;
    return out;
  }

  private addProperties(prefix: string, properties: Record<string, unknown>): void {
    for (const [name, def] of Object.entries(properties)) {
      if (name === '') throw new MappingError(prefix, 'field name cannot be empty');
      const path = prefix === '' ? name : `${prefix}.${name}`;
      const d = asObject(def, path);
      const type = d.type === undefined ? (d.properties !== undefined || d.dynamic !== undefined || d.enabled !== undefined ? 'object' : undefined) : d.type;
      if (type === undefined) throw new MappingError(path, 'no type specified');
      if (type === 'object') {
        checkParams(d, ['type', 'properties', 'dynamic', 'enabled', 'subobjects'], path, 'object');
        this.putObject(path);
        const dyn = parseDynamic(d.dynamic, `${path}.dynamic`);
        this.objects.set(path, dyn);
        if (d.enabled !== undefined && !asBoolean(d.enabled, `${path}.enabled`)) this.disabled.add(path);
        if (d.properties !== undefined) this.addProperties(path, asObject(d.properties, `${path}.properties`));
        continue;
      }
      this.put(path, this.fieldFromJson(d, path));
      if (d.fields !== undefined) {
        const subs: string[] = [];
        for (const [subName, subDef] of Object.entries(asObject(d.fields, `${path}.fields`))) {
          const subPath = `${path}.${subName}`;
          const sub = this.fieldFromJson(asObject(subDef, subPath), subPath);
          if (sub.type === 'dense_vector') throw new MappingError(subPath, 'a dense_vector cannot be a multi-field');
          this.fields.set(subPath, sub);
          subs.push(subPath);
        }
        this.subFields.set(path, subs);
      }
    }
  }

  /** One field's definition (`{"type": "keyword", ...}`), its parameters checked as Elasticsearch checks them. */
  private fieldFromJson(d: Record<string, unknown>, path: string): FieldMapping {
    const type = d.type;
    if (typeof type !== 'string') throw new MappingError(path, 'no type specified');
    const docValues = d.doc_values === undefined ? true : asBoolean(d.doc_values, `${path}.doc_values`);
    switch (type) {
      case 'keyword':
        checkParams(d, ['type', 'doc_values', 'ignore_above', 'null_value', 'fields'], path, type);
        return keywordMapping({
          docValues,
          ignoreAbove: d.ignore_above === undefined ? null : asNonNegativeInt(d.ignore_above, `${path}.ignore_above`),
          nullValue: d.null_value === undefined || d.null_value === null ? null : asString(d.null_value, `${path}.null_value`),
        });
      case 'text':
      case 'match_only_text':
        checkParams(d, ['type', 'fields'], path, type);
        return { type: 'text', docValues: false };
      case 'date':
        checkParams(d, ['type', 'doc_values', 'format', 'ignore_malformed', 'null_value'], path, type);
        return dateMapping({
          docValues,
          format: d.format === undefined ? undefined : dateFormat(d.format, `${path}.format`),
          ignoreMalformed: d.ignore_malformed === undefined ? false : asBoolean(d.ignore_malformed, `${path}.ignore_malformed`),
          nullValue: d.null_value === undefined || d.null_value === null ? null : asString(d.null_value, `${path}.null_value`),
        });
      case 'boolean':
        checkParams(d, ['type', 'doc_values', 'null_value'], path, type);
        return booleanMapping({ docValues, nullValue: d.null_value === undefined || d.null_value === null ? null : asBoolean(d.null_value, `${path}.null_value`) });
      case 'dense_vector': {
        checkParams(d, ['type', 'dims', 'similarity', 'index_options', 'element_type'], path, type);
        if (d.element_type !== undefined && d.element_type !== 'float')
          throw new MappingError(`${path}.element_type`, `element_type [${String(d.element_type)}] is not supported (prescore indexes float vectors)`);
        const dims = d.dims === undefined ? undefined : asNonNegativeInt(d.dims, `${path}.dims`);
        if (dims !== undefined && (dims < 1 || dims > 4096)) throw new MappingError(`${path}.dims`, `dims must be in [1, 4096], got ${dims}`);
        const similarity = d.similarity === undefined ? undefined : asString(d.similarity, `${path}.similarity`);
        if (similarity !== undefined && !(VECTOR_SIMILARITIES as readonly string[]).includes(similarity))
          throw new MappingError(`${path}.similarity`, `unknown similarity [${similarity}] (expected one of ${VECTOR_SIMILARITIES.join(', ')})`);
        return {
          type: 'dense_vector',
          docValues: false,
          dims,
          similarity: similarity as DenseVectorSimilarity | undefined,
          indexOptions: d.index_options === undefined ? null : asObject(d.index_options, `${path}.index_options`),
        };
      }
      default:
        if ((NUMBER_TYPES as readonly string[]).includes(type)) {
          checkParams(d, ['type', 'doc_values', 'coerce', 'ignore_malformed', 'null_value'], path, type);
          const nullValue = d.null_value === undefined || d.null_value === null ? null : d.null_value;
          if (nullValue !== null && typeof nullValue !== 'number') throw new MappingError(`${path}.null_value`, `must be a number, got ${JSON.stringify(nullValue)}`);
          return numberMapping(type as NumberType, {
            docValues,
            coerce: d.coerce === undefined ? true : asBoolean(d.coerce, `${path}.coerce`),
            ignoreMalformed: d.ignore_malformed === undefined ? false : asBoolean(d.ignore_malformed, `${path}.ignore_malformed`),
            nullValue,
          });
        }
        if (type === 'nested') throw new MappingError(path, 'the nested type is not supported (map it as object: its fields are then filtered as flat arrays)');
        throw new MappingError(
          path,
          `no handler for type [${type}] declared on field [${leafName(path)}] (prescore supports keyword, text, long, integer, short, byte, double, float, date, boolean, dense_vector and object)`,
        );
    }
  }
}

function fieldJson(f: FieldMapping): Record<string, unknown> {
  const out: Record<string, unknown> = { type: f.type };
  switch (f.type) {
    case 'keyword':
      if (f.ignoreAbove !== null) out.ignore_above = f.ignoreAbove;
      if (f.nullValue !== null) out.null_value = f.nullValue;
      break;
    case 'date':
      if (f.format.pattern !== DEFAULT_DATE_FORMAT) out.format = f.format.pattern;
      if (f.ignoreMalformed) out.ignore_malformed = true;
      if (f.nullValue !== null) out.null_value = f.nullValue;
      break;
    case 'boolean':
      if (f.nullValue !== null) out.null_value = f.nullValue;
      break;
    case 'dense_vector':
      if (f.dims !== undefined) out.dims = f.dims;
      if (f.similarity !== undefined) out.similarity = f.similarity;
      if (f.indexOptions) out.index_options = f.indexOptions;
      break;
    case 'text':
      break;
    default:
      if (!f.coerce) out.coerce = false;
      if (f.ignoreMalformed) out.ignore_malformed = true;
      if (f.nullValue !== null) out.null_value = f.nullValue;
  }
  if (f.type !== 'dense_vector' && f.type !== 'text' && !f.docValues) out.doc_values = false;
  return out;
}

function checkParams(d: Record<string, unknown>, known: readonly string[], path: string, type: string): void {
  for (const key of Object.keys(d)) {
    if (!known.includes(key) && !IGNORED.has(key)) throw new MappingError(`${path}.${key}`, `unknown parameter [${key}] on mapper [${path}] of type [${type}]`);
  }
}

function parseDynamic(v: unknown, path: string): Dynamic | undefined {
  if (v === undefined) return undefined;
  if (v === true || v === 'true') return 'true';
  if (v === false || v === 'false') return 'false';
  if (v === 'strict') return 'strict';
  if (v === 'runtime') throw new MappingError(path, 'dynamic [runtime] is not supported (runtime fields are not offered)');
  throw new MappingError(path, `unknown value [${String(v)}] (expected true, false or strict)`);
}

function dateFormat(v: unknown, path: string): DateFormat {
  try {
    return DateFormat.of(asString(v, path));
  } catch (e) {
    throw new MappingError(path, (e as Error).message);
  }
}

function asObject(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new MappingError(path, `expected an object, got ${JSON.stringify(v)}`);
  return v as Record<string, unknown>;
}

function asArray(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new MappingError(path, `expected an array, got ${JSON.stringify(v)}`);
  return v;
}

function asString(v: unknown, path: string): string {
  if (typeof v !== 'string') throw new MappingError(path, `expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function asBoolean(v: unknown, path: string): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new MappingError(path, `expected a boolean, got ${JSON.stringify(v)}`);
}

function asNonNegativeInt(v: unknown, path: string): number {
  if (!(typeof v === 'number' && Number.isInteger(v) && v >= 0)) throw new MappingError(path, `expected a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

/** `a.b.c` -> `a.b`; `a` -> ''; '' -> null. */
export function parentOf(path: string): string | null {
  if (path === '') return null;
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(0, dot);
}

export function leafName(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}
