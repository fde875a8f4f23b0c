import { describe, expect, it } from 'vitest';
import { DateFormat, DateParseError, parseDateMath } from '../segments/document/DateFormat.js';
import { DocumentError, DocumentParser } from '../segments/document/DocumentParser.js';
import { Mapping, MappingError } from '../segments/document/Mapping.js';
import { doubleToSortableLong, floatToSortableInt, sortableIntToFloat, sortableLongToDouble } from '../segments/document/SortableNumbers.js';

const parse = (mapping: Mapping, doc: unknown) => new DocumentParser(mapping).parse(doc);

describe('DateFormat', () => {
  const def = DateFormat.of('strict_date_optional_time||epoch_millis');

  it('reads ISO 8601 dates with optional time, fraction and zone, and epoch millis, as UTC milliseconds', () => {
    expect(def.parse('2024-03-05')).toBe(Date.UTC(2024, 2, 5));
    expect(def.parse('2024-03-05T10:20')).toBe(Date.UTC(2024, 2, 5, 10, 20));
    expect(def.parse('2024-03-05T10:20:30.123456Z')).toBe(Date.UTC(2024, 2, 5, 10, 20, 30, 123));
    expect(def.parse('2024-03-05T10:20:30+02:00')).toBe(Date.UTC(2024, 2, 5, 8, 20, 30));
    expect(def.parse('2024-03-05T10:20:30-0130')).toBe(Date.UTC(2024, 2, 5, 11, 50, 30));
    expect(def.parse(1700000000123)).toBe(1700000000123);
    expect(def.parse('-1000')).toBe(-1000);
  });

  it('refuses impossible dates and other shapes, naming the value and the format', () => {
    for (const bad of ['2024-02-30', '2024-13-01', '2024-1-5', 'yesterday', '2024-03-05T25:00', '']) {
      expect(() => def.parse(bad)).toThrow(DateParseError);
    }
    expect(() => def.parse('2024/03/05')).toThrow('failed to parse date field [2024/03/05] with format [strict_date_optional_time||epoch_millis]');
    expect(DateFormat.of('date_optional_time').parse('2024-3-5')).toBe(Date.UTC(2024, 2, 5));
  });

  it('reads custom patterns and epoch seconds, and refuses a format it does not know', () => {
    expect(DateFormat.of('yyyy/MM/dd HH:mm:ss Z').parse('2024/03/05 10:20:30 +0100')).toBe(Date.UTC(2024, 2, 5, 9, 20, 30));
    expect(DateFormat.of('yyyy/MM/dd').parse('2024/03/05')).toBe(Date.UTC(2024, 2, 5));
    expect(DateFormat.of('epoch_second').parse(1700000000)).toBe(1700000000000);
    expect(() => DateFormat.of('week_date')).toThrow(/unsupported date format \[week_date\]/);
  });

  it('evaluates date math against now and an anchor, rounding down or up', () => {
    const now = Date.UTC(2024, 2, 5, 10, 20, 30, 400);
    expect(parseDateMath('now', def, now)).toBe(now);
    expect(parseDateMath('now-1d', def, now)).toBe(now - 86_400_000);
    expect(parseDateMath('now/d', def, now)).toBe(Date.UTC(2024, 2, 5));
    expect(parseDateMath('now/d', def, now, true)).toBe(Date.UTC(2024, 2, 6) - 1);
    expect(parseDateMath('2024-01-31||+1M', def, now)).toBe(Date.UTC(2024, 2, 2)); // Jan 31 + 1 month, as JS and Joda roll over
    expect(parseDateMath('2024-03-05T10:00:00Z||/M', def, now)).toBe(Date.UTC(2024, 2, 1));
    expect(() => parseDateMath('now+1x', def, now)).toThrow(DateParseError);
  });
});

describe('SortableNumbers', () => {
  it('keep the numeric order in the long order and round-trip', () => {
    const doubles = [-Infinity, -1e300, -2.5, -0.0, 0, 1e-300, 2.5, 1e300, Infinity];
    const longs = doubles.map(doubleToSortableLong);
    for (let i = 1; i < longs.length; i++) expect(longs[i - 1]! < longs[i]!).toBe(true);
    for (const d of doubles) expect(Object.is(sortableLongToDouble(doubleToSortableLong(d)), d)).toBe(true);
    const floats = [-3.5, -1, 0, 0.25, 7];
    const ints = floats.map(floatToSortableInt);
    for (let i = 1; i < ints.length; i++) expect(ints[i - 1]! < ints[i]!).toBe(true);
    for (const f of floats) expect(sortableIntToFloat(floatToSortableInt(f))).toBe(f);
  });
});

describe('Mapping', () => {
  const es = {
    dynamic: 'strict',
    properties: {
      title: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } },
      tags: { type: 'keyword' },
      price: { type: 'double' },
      stock: { type: 'integer', coerce: false },
      released: { type: 'date', format: 'yyyy-MM-dd||epoch_millis' },
      active: { type: 'boolean' },
      metadata: { properties: { source: { type: 'keyword' }, rank: { type: 'short' } } },
      embedding: { type: 'dense_vector', dims: 3, similarity: 'dot_product', index_options: { type: 'bbq_hnsw', m: 16 } },
    },
  };

  it("reads Elasticsearch's mappings object and writes it back", () => {
    const m = Mapping.parse(es);
    expect(m.fieldPaths).toEqual(['active', 'embedding', 'metadata.rank', 'metadata.source', 'price', 'released', 'stock', 'tags', 'title', 'title.keyword']);
    expect(m.field('metadata.source')?.type).toBe('keyword');
    expect(m.vectorField()).toMatchObject({ path: 'embedding', mapping: { dims: 3, similarity: 'dot_product' } });
    expect(m.toJSON()).toEqual({
      dynamic: 'strict',
      properties: {
        active: { type: 'boolean' },
        embedding: { type: 'dense_vector', dims: 3, similarity: 'dot_product', index_options: { type: 'bbq_hnsw', m: 16 } },
        metadata: { properties: { rank: { type: 'short' }, source: { type: 'keyword' } } },
        price: { type: 'double' },
        released: { type: 'date', format: 'yyyy-MM-dd||epoch_millis' },
        stock: { type: 'integer', coerce: false },
        tags: { type: 'keyword' },
        title: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } },
      },
    });
    // A whole index body ({"mappings": ...}) reads the same.
    expect(Mapping.parse({ mappings: es }).toJSON()).toEqual(m.toJSON());
  });

  it('refuses what it cannot honour, naming the path', () => {
    const cases: [unknown, string][] = [
      [{ properties: { a: { type: 'geo_point' } } }, '[a]: no handler for type [geo_point]'],
      [{ properties: { a: { type: 'keyword', foo: 1 } } }, '[a.foo]: unknown parameter [foo] on mapper [a] of type [keyword]'],
      [{ properties: { o: { properties: { n: { type: 'nested' } } } } }, '[o.n]: the nested type is not supported'],
      [{ properties: { v: { type: 'dense_vector', dims: 0 } } }, '[v.dims]: dims must be in [1, 4096]'],
      [{ properties: { v: { type: 'dense_vector', similarity: 'hamming' } } }, '[v.similarity]: unknown similarity [hamming]'],
      [{ properties: { d: { type: 'date', format: 'week_date' } } }, '[d.format]: unsupported date format [week_date]'],
      [{ dynamic: 'runtime' }, '[dynamic]: dynamic [runtime] is not supported'],
      [{ properties: { a: {} } }, '[a]: no type specified'],
      [{ mapping: {} }, '[mapping]: unknown root mapping parameter [mapping]'],
      [{ dynamic_templates: [{ t: { match: '*' } }] }, '[dynamic_templates.0.t.mapping]: a dynamic template needs a mapping object'],
    ];
    for (const [json, message] of cases) {
      expect(() => Mapping.parse(json), message).toThrow(MappingError);
      expect(() => Mapping.parse(json)).toThrow(message);
    }
  });

  it('maps new fields dynamically as Elasticsearch does, with strings as keyword', () => {
    const m = Mapping.empty();
    parse(m, { name: 'x', count: 3, ratio: 0.5, ok: true, when: '2024-01-02', at: '2024/01/02 10:00:00 +0000', obj: { inner: 'y' }, list: [null, 7], none: null });
    expect(m.toJSON()).toEqual({
      properties: {
        at: { type: 'date', format: 'yyyy/MM/dd HH:mm:ss Z||yyyy/MM/dd Z' },
        count: { type: 'long' },
        list: { type: 'long' },
        name: { type: 'keyword', ignore_above: 256 },
        obj: { properties: { inner: { type: 'keyword', ignore_above: 256 } } },
        ok: { type: 'boolean' },
        ratio: { type: 'float' },
        when: { type: 'date' },
      },
    });
  });

  it('applies the first matching dynamic template, with {name} and {dynamic_type}', () => {
    const m = Mapping.parse({
      numeric_detection: true,
      dynamic_templates: [
        { ids: { match_mapping_type: 'string', match: '*_id', unmatch: 'skip_*', mapping: { type: 'keyword', ignore_above: 8 } } },
        { counts: { path_match: 'stats.*', match_mapping_type: ['long', 'double'], mapping: { type: 'integer' } } },
        { regex: { match_pattern: 'regex', match: '^v\\d+$', mapping: { type: '{dynamic_type}' } } },
        { untyped: { match: 'plain_*', mapping: {} } },
      ],
    });
    parse(m, { user_id: 'abc', skip_id: 'q', stats: { n: 5, mean: 2.5 }, v1: true, plain_x: 'p', num: '42' });
    expect(m.field('user_id')).toMatchObject({ type: 'keyword', ignoreAbove: 8 });
    expect(m.field('skip_id')).toMatchObject({ type: 'keyword', ignoreAbove: 256 });
    expect(m.field('stats.n')?.type).toBe('integer');
    expect(m.field('stats.mean')?.type).toBe('integer');
    expect(m.field('v1')?.type).toBe('boolean');
    expect(m.field('plain_x')?.type).toBe('keyword');
    expect(m.field('num')?.type).toBe('long'); // numeric_detection
  });
});

describe('DocumentParser', () => {
  const mapping = () =>
    Mapping.parse({
      properties: {
        tags: { type: 'keyword', ignore_above: 5, null_value: 'NULL' },
        price: { type: 'double' },
        stock: { type: 'integer', coerce: false },
        level: { type: 'byte' },
        big: { type: 'long' },
        ratio: { type: 'float' },
        released: { type: 'date' },
        active: { type: 'boolean' },
        title: { type: 'text', fields: { raw: { type: 'keyword' } } },
        quiet: { type: 'keyword', doc_values: false },
        loose: { type: 'integer', ignore_malformed: true },
        vector: { type: 'dense_vector', dims: 2 },
      },
    });

  it('converts values by their field type, flattening arrays and objects', () => {
    const m = mapping();
    const d = parse(m, {
      vector: [0.5, -1],
      tags: ['a', ['bb', 'toolong'], null, 3],
      price: '12.5',
      stock: 7,
      level: '9.9',
      big: '9007199254740993',
      ratio: 0.1,
      released: '2024-01-02T03:04:05Z',
      active: 'false',
      title: 'Hello',
      quiet: 'q',
      loose: 'not a number',
      meta: { deep: { k: 'v' } },
    });
    expect(d.vector).toEqual(Float32Array.of(0.5, -1));
    expect(Object.fromEntries(d.values)).toEqual({
      tags: ['a', 'bb', 'NULL', '3'],
      price: [12.5],
      stock: [7],
      level: [9],
      big: [9007199254740993n],
      ratio: [Math.fround(0.1)],
      released: [Date.UTC(2024, 0, 2, 3, 4, 5)],
      active: [0],
      'title.raw': ['Hello'],
      'meta.deep.k': ['v'],
    });
    expect(m.field('meta.deep.k')?.type).toBe('keyword');
  });

  it('fails a document that does not fit, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ stock: 1.5 }, 'field [stock]: failed to parse field of type [integer]: [1.5] has a fraction and coerce is false'],
      [{ stock: '3' }, 'field [stock]: failed to parse field of type [integer]: [3] is a string and coerce is false'],
      [{ level: 300 }, 'field [level]: failed to parse field of type [byte]: value [300] is out of range for a byte [-128, 127]'],
      [{ price: 'NaN' }, 'field [price]: failed to parse field of type [double]: [double] supports only finite values, but got [NaN]'],
      [{ ratio: 1e39 }, 'field [ratio]: failed to parse field of type [float]: [float] supports only finite values, but got [1e+39]'],
      [{ released: 'soon' }, 'field [released]: failed to parse field of type [date]: failed to parse date field [soon]'],
      [{ active: 'yes' }, 'field [active]: failed to parse field of type [boolean]'],
      [{ tags: { a: 1 } }, 'field [tags]: tried to parse field [tags] as object, but found a concrete value mapping of type [keyword]'],
      [{ vector: [1, 2, 3] }, 'field [vector]: the vector has 3 dims, the mapping says 2'],
      [{ vector: [1, 'x'] }, 'field [vector]: vector component 1 is not a number'],
      [{ vector: [1, 1e39] }, 'field [vector]: vector component 1 = 1e+39 is not finite as float32'],
      [{ _id: 'x' }, 'field [_id]: field [_id] is a metadata field and cannot be added inside a document'],
      [{ 'a..b': 1 }, 'field [a..b]: field names must not be empty'],
      [[1, 2], 'field [_source]: a document is a JSON object, got [1,2]'],
    ];
    for (const [doc, message] of cases) {
      const run = () => parse(mapping(), doc);
      expect(run, message).toThrow(DocumentError);
      expect(run).toThrow(message);
    }
  });

  it('fixes a dynamic field type at its first value and refuses a later conflicting one', () => {
    const m = Mapping.empty();
    parse(m, { n: 1 });
    expect(() => parse(m, { n: 'abc' })).toThrow('field [n]: failed to parse field of type [long]: [abc] is not a number');
    parse(m, { o: { x: 1 } });
    expect(() => parse(m, { o: 5 })).toThrow('field [o]: object mapping for [o] tried to parse field [o] as object, but found a concrete value');
  });

  it('honours dynamic: false and strict per object, and enabled: false', () => {
    const m = Mapping.parse({
      dynamic: 'false',
      properties: { strictObj: { dynamic: 'strict', properties: { a: { type: 'keyword' } } }, off: { enabled: false }, open: { dynamic: true, properties: {} } },
    });
    const d = parse(m, { unknown: 'x', off: { anything: [1, { b: 2 }] }, open: { n: 1 } });
    expect(Object.fromEntries(d.values)).toEqual({ 'open.n': [1] });
    expect(m.field('unknown')).toBeUndefined();
    expect(() => parse(m, { strictObj: { b: 'x' } })).toThrow('field [strictObj.b]: mapping set to strict, dynamic introduction of [b] within [strictObj] is not allowed');
  });

  it('takes the dims of a dynamically mapped vector field from its first vector', () => {
    const m = Mapping.parse({ properties: { v: { type: 'dense_vector' } } });
    parse(m, { v: [1, 2, 3] });
    expect(m.vectorField()?.mapping.dims).toBe(3);
    expect(() => parse(m, { v: [1, 2] })).toThrow('field [v]: the vector has 2 dims, the mapping says 3');
  });
});
