import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DocumentParser } from '../segments/document/DocumentParser.js';
import { Mapping } from '../segments/document/Mapping.js';
import { withoutTopLevelMember } from '../segments/document/SourceBytes.js';
import { openDocuments, pairDocuments, vectorDocuments, type DocumentBatch } from '../segments/input/DocumentSource.js';
import { InputError } from '../segments/input/InputError.js';
import { openVectorSource, writeFvecs } from '../segments/input/index.js';

const dir = mkdtempSync(join(tmpdir(), 'prescore-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function all(source: AsyncIterable<DocumentBatch>): Promise<DocumentBatch[]> {
  const out: DocumentBatch[] = [];
  for await (const b of source) out.push(b);
  return out;
}

describe('withoutTopLevelMember', () => {
  const cut = (json: string, key = 'vector') => text(withoutTopLevelMember(new TextEncoder().encode(json), key));

  it('removes the member and the comma that joined it, keeping everything else byte for byte', () => {
    expect(cut('{"id":1,"vector":[1.50,2e0],"price":1.0}')).toBe('{"id":1,"price":1.0}');
    expect(cut('{"vector": [1, 2], "big": 9007199254740993}')).toBe('{"big": 9007199254740993}');
    expect(cut('{"a": "x",  "vector" : [ [1] ] }')).toBe('{"a": "x"}');
    expect(cut('{"vector":[1]}')).toBe('{}');
    expect(cut('{ "a": {"vector": [1]}, "b": "vector" }')).toBe('{ "a": {"vector": [1]}, "b": "vector" }');
    expect(cut('{"v\\u0065ctor":[1],"s":"a,\\"b}"}')).toBe('{"s":"a,\\"b}"}');
    expect(cut('[1,2]')).toBe('[1,2]');
    // Arrays holding strings or arrays are scanned, not cut at their first `]`.
    expect(cut('{"tags": ["a]", {"b": [2]}], "vector":[1,-2.5e-3], "z": [3]}')).toBe('{"tags": ["a]", {"b": [2]}], "z": [3]}');
    expect(cut('{"vector": [1, "]", 2], "x": 1}')).toBe('{"x": 1}');
  });
});

describe('DocumentSource', () => {
  it('reads JSON Lines documents: ids, vectors, indexed values and the source without the vector', async () => {
    const path = file('docs.jsonl', ['{"id":"a","vector":[1,0],"tag":"x","n":1}', '', '{"id":7,"n":2.0,"vector":[0,1]}'].join('\n'));
    const mapping = Mapping.parse({ properties: { vector: { type: 'dense_vector' }, n: { type: 'long' } } });
    const source = await openDocuments(path, new DocumentParser(mapping), 'vector');
    expect(source.dims).toBe(2);
    const [batch] = await all(source.batches(10));
    expect(batch!.ids).toEqual(['a', '7']);
    expect(batch!.vectors).toEqual(Float32Array.of(1, 0, 0, 1));
    expect(batch!.docs.map((d) => text(d.source))).toEqual(['{"id":"a","tag":"x","n":1}', '{"id":7,"n":2.0}']);
    expect(batch!.docs.map((d) => Object.fromEntries(d.values))).toEqual([
      { id: ['a'], tag: ['x'], n: [1] },
      { id: ['7'], n: [2] },
    ]);
    expect(mapping.field('tag')?.type).toBe('keyword');
    expect(mapping.vectorField()?.mapping.dims).toBe(2);
  });

  it('reads an Elasticsearch _bulk body, generating the ids it lacks', async () => {
    const path = file('bulk.ndjson', ['{"index":{"_index":"x","_id":"d1"}}', '{"vector":[1,2],"t":"a"}', '{"create":{}}', '{"vector":[3,4]}', ''].join('\n'));
    const source = await openDocuments(path, new DocumentParser(Mapping.empty()), 'vector');
    const [batch] = await all(source.batches(10));
    expect(batch!.ids[0]).toBe('d1');
    expect(batch!.ids[1]).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(text(batch!.docs[1]!.source)).toBe('{}');
  });

  it('fails naming the file, row, line and field, for bad documents and bad bulk bodies', async () => {
    const cases: [string, string][] = [
      ['{"id":"a","vector":[1,0]}\n{"id":"b","vector":[1]}', 'row 1 (line 2): field [vector]: the vector has 1 dims, the mapping says 2'],
      ['{"id":"a","vector":[1,0],"n":1}\n{"id":"b","vector":[1,0],"n":"x"}', 'row 1 (line 2): field [n]: failed to parse field of type [long]'],
      ['{"id":"a","vector":[1,0]}\n{"id":"a","vector":[1,0]}', 'row 1 (line 2): duplicate id "a" (first used by row 0)'],
      ['{"id":"a","vector":[1,0]}\n{"vector":[1,0]}', 'row 1 (line 2): missing "id"'],
      ['{"id":"a","vector":[1,0]}\n{"id":"b"}', 'row 1 (line 2): missing "vector" (the vector field)'],
      ['{"index":{}}\n{"vector":[1]}\n{"delete":{"_id":"x"}}', 'row 1 (line 3): a build takes index and create actions only, got [delete]'],
      ['{"index":{}}\n{"vector":[1]}\n{"index":{}}', 'row 1 (line 3): the last bulk action has no document line'],
      ['{"id":"a","vector":[1,0]}\nnot json', 'row 1 (line 2): invalid JSON'],
    ];
    for (const [i, [body, message]] of cases.entries()) {
      const path = file(`bad${i}.jsonl`, body);
      const run = async () => all((await openDocuments(path, new DocumentParser(Mapping.empty()), 'vector')).batches(10));
      await expect(run(), message).rejects.toThrow(InputError);
      await expect(run()).rejects.toThrow(`${path}: ${message}`);
    }
  });

  it('pairs a vector file with a row-aligned fields file, and checks their row counts', async () => {
    const vecs = join(dir, 'v.fvecs');
    await writeFvecs(vecs, Float32Array.of(1, 0, 0, 1, 1, 1), 2);
    const fields = file('f.jsonl', '{"cat":"a"}\n{"id":"named","cat":"b"}\n{"cat":"c"}\n');
    const source = pairDocuments(await openVectorSource(vecs), fields, new DocumentParser(Mapping.empty()), 'vector');
    const [batch] = await all(source.batches(10));
    expect(batch!.ids).toEqual(['0', 'named', '2']);
    expect(batch!.docs.map((d) => Object.fromEntries(d.values).cat)).toEqual([['a'], ['b'], ['c']]);
    const short = file('short.jsonl', '{"cat":"a"}\n');
    await expect(all(pairDocuments(await openVectorSource(vecs), short, new DocumentParser(Mapping.empty()), 'vector').batches(10))).rejects.toThrow('has 1 rows, the vectors');
    const long = file('long.jsonl', '{}\n{}\n{}\n{}\n');
    await expect(all(pairDocuments(await openVectorSource(vecs), long, new DocumentParser(Mapping.empty()), 'vector').batches(10))).rejects.toThrow(
      'has more rows than the vectors',
    );
  });

  it('gives vector-only input empty sources and row-number ids', async () => {
    const vecs = join(dir, 'only.fvecs');
    await writeFvecs(vecs, Float32Array.of(1, 0, 0, 1), 2);
    const [batch] = await all(vectorDocuments(await openVectorSource(vecs)).batches(10));
    expect(batch!.ids).toEqual(['0', '1']);
    expect(batch!.docs.map((d) => text(d.source))).toEqual(['{}', '{}']);
  });
});
