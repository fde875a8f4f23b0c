import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/api/buildIndex.js';
import { Executor } from '../src/executor/Executor.js';
import { Mapping } from '../segments/document/Mapping.js';
import { sortableLongToDouble } from '../segments/document/SortableNumbers.js';
import { readLatestCommit } from '../segments/index/CommitPoint.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { ID_FIELD_NUMBER, SOURCE_FIELD_NUMBER, SOURCE_STORED_FIELDS } from '../segments/index/SegmentDocumentsWriter.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { InputError, writeFvecs } from '../segments/input/index.js';

const root = mkdtempSync(join(tmpdir(), 'prescore-docs-build-'));
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await Executor.shutdown();
});

const decoder = new TextDecoder();
const DIMS = 8;
const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.fround(Math.sin(i * 7 + j) + 0.01 * j));

/** 300 documents: a keyword with some misses, a multi-valued keyword, a double, a date, a nested object. */
function docs(): Record<string, unknown>[] {
  return Array.from({ length: 300 }, (_, i) => ({
    id: `d${i}`,
    vector: vector(i),
    ...(i % 7 === 0 ? {} : { category: `c${i % 5}` }),
    tags: i % 3 === 0 ? ['red', 'blue'] : ['green'],
    price: i / 4 - 20,
    released: `2024-01-${String((i % 28) + 1).padStart(2, '0')}`,
    meta: { source: i % 2 ? 'web' : 'app', rank: i },
  }));
}

const mapping = {
  properties: {
    vector: { type: 'dense_vector', dims: DIMS, similarity: 'cosine' },
    category: { type: 'keyword' },
    tags: { type: 'keyword' },
    price: { type: 'double' },
    released: { type: 'date' },
  },
};

describe('prescore build with documents', () => {
  it('stores each document (_id, _source less the vector) and its fields as doc values, in Lucene formats, with the mapping in the commit', async () => {
    const input = join(root, 'docs.jsonl');
    const lines = docs().map((d) => JSON.stringify(d));
    writeFileSync(input, `${lines.join('\n')}\n`);
    const out = join(root, 'idx');
    const report = await buildIndex({ input, out, mapping: Mapping.parse(mapping), segmentDocs: 120, flatThreshold: 50, progress: false });
    expect(report.docs).toBe(300);
    expect(report.segments).toBe(3);
    const names = readdirSync(out);
    for (const seg of ['_0', '_1', '_2']) {
      for (const f of [`${seg}.fdt`, `${seg}.fdx`, `${seg}.fdm`, `${seg}.fnm`, `${seg}_Lucene90_0.dvd`, `${seg}_Lucene90_0.dvm`]) expect(names).toContain(f);
    }
    // The mapping as Elasticsearch shows it, dynamic fields included.
    const stored = JSON.parse(readLatestCommit(out).userData.get('mapping')!);
    expect(stored.properties.meta).toEqual({ properties: { rank: { type: 'long' }, source: { type: 'keyword', ignore_above: 256 } } });
    expect(stored.properties.price).toEqual({ type: 'double' });

    const reader = DirectoryReader.open(out);
    try {
      for (const leaf of reader.leaves) {
        const d = leaf.reader.documents!;
        expect(d.fieldInfos.fieldInfo('vector')).toMatchObject({ number: 0, vectorDimension: DIMS, vectorSimilarity: 'COSINE' });
        expect(d.fieldInfos.fieldInfo('_id')).toMatchObject({ number: ID_FIELD_NUMBER, docValuesType: 'SORTED' });
        expect(d.fieldInfos.fieldInfo('_source')).toMatchObject({ number: SOURCE_FIELD_NUMBER, docValuesType: 'NONE' });
        expect(d.fieldInfos.fieldInfo('tags')?.docValuesType).toBe('SORTED_SET');
        expect(d.fieldInfos.fieldInfo('price')?.docValuesType).toBe('SORTED_NUMERIC');
        const prices = d.docValues.producer('price')!.sortedNumericColumn('price');
        const categories = d.docValues.producer('category')!.sortedSetColumn('category');
        const terms = d.docValues.producer('category')!.termsDict('category');
        for (let doc = 0; doc < leaf.reader.maxDoc; doc++) {
          const i = leaf.docBase + doc;
          const fields = d.storedFields.documentFields(doc);
          expect(fields.find((f) => f.fieldNumber === ID_FIELD_NUMBER)?.value).toBe(`d${i}`);
          const source = fields.find((f) => f.fieldNumber === SOURCE_FIELD_NUMBER)!.value as Uint8Array;
          const { vector: _v, ...rest } = docs()[i]!;
          expect(decoder.decode(source)).toBe(JSON.stringify(rest));
          expect(leaf.reader.id(doc)).toBe(`d${i}`);
          const priceAt = prices.offsets[doc]!;
          expect(sortableLongToDouble(BigInt(prices.values[priceAt]!))).toBe(i / 4 - 20);
          const n = categories.offsets[doc + 1]! - categories.offsets[doc]!;
          if (i % 7 === 0) expect(n).toBe(0);
          else expect(decoder.decode(terms.lookupOrd(categories.ords[categories.offsets[doc]!]!))).toBe(`c${i % 5}`);
        }
      }
      reader.checkIntegrity();
    } finally {
      reader.close();
    }
  });

  it('pairs a vector file with a fields file, row by row', async () => {
    const vecs = join(root, 'v.fvecs');
    await writeFvecs(vecs, Float32Array.from(docs().flatMap((d) => d.vector as number[])), DIMS);
    const fields = join(root, 'fields.jsonl');
    writeFileSync(
      fields,
      docs()
        .map(({ vector: _v, id: _id, ...rest }) => JSON.stringify(rest))
        .join('\n'),
    );
    const out = join(root, 'paired');
    await buildIndex({ input: vecs, fields, out, similarity: VectorSimilarityFunction.COSINE, progress: false });
    const reader = DirectoryReader.open(out);
    try {
      const leaf = reader.leaves[0]!;
      expect(leaf.reader.id(5)).toBe('5');
      const source = leaf.reader.documents!.storedFields.documentFields(5).find((f) => f.fieldNumber === SOURCE_FIELD_NUMBER)!.value as Uint8Array;
      expect(JSON.parse(decoder.decode(source))).toMatchObject({ category: 'c0', tags: ['green'] });
      expect(leaf.reader.documents!.fieldInfos.fieldInfo('tags')?.docValuesType).toBe('SORTED_SET');
      // Stored fields in small chunks (SOURCE_STORED_FIELDS), recorded in .fdm, so a hit's source reads little.
      const stored = leaf.reader.documents!.storedFields;
      expect(stored.chunkSize).toBe(SOURCE_STORED_FIELDS.chunkSize);
      expect(stored.numChunks).toBeGreaterThanOrEqual(Math.ceil(leaf.reader.maxDoc / SOURCE_STORED_FIELDS.maxDocsPerChunk));
    } finally {
      reader.close();
    }
  });

  it('fails a document that does not fit the mapping, naming the row and the field, and publishes nothing', async () => {
    const input = join(root, 'bad.jsonl');
    const rows = docs()
      .slice(0, 50)
      .map((d) => JSON.stringify(d));
    rows[37] = JSON.stringify({ ...docs()[37], price: 'cheap' });
    writeFileSync(input, rows.join('\n'));
    const out = join(root, 'bad-idx');
    const run = buildIndex({ input, out, mapping: Mapping.parse(mapping), progress: false });
    await expect(run).rejects.toThrow(InputError);
    await expect(buildIndex({ input, out, mapping: Mapping.parse(mapping), progress: false })).rejects.toThrow(
      /row 37 \(line 38\): field \[price\]: failed to parse field of type \[double\]/,
    );
    expect(readdirSync(out).filter((f) => f !== 'write.lock')).toEqual([]);
  });

  it("refuses a similarity that disagrees with the mapping, and takes the mapping's when none is given", async () => {
    const input = join(root, 'docs-sim.jsonl');
    writeFileSync(
      input,
      docs()
        .slice(0, 20)
        .map((d) => JSON.stringify(d))
        .join('\n'),
    );
    await expect(buildIndex({ input, out: join(root, 'sim-a'), mapping: Mapping.parse(mapping), similarity: VectorSimilarityFunction.EUCLIDEAN, progress: false })).rejects.toThrow(
      /--similarity euclidean disagrees with the mapping's dense_vector similarity cosine/,
    );
    await buildIndex({ input, out: join(root, 'sim-b'), mapping: Mapping.parse(mapping), progress: false });
    expect(readLatestCommit(join(root, 'sim-b')).field.similarity).toBe(VectorSimilarityFunction.COSINE);
  });
});
