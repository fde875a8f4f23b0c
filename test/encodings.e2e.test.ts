import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Executor } from '../src/executor/Executor.js';
import { buildIndex } from '../src/api/buildIndex.js';
import { openIndex } from '../src/api/openIndex.js';
import { READ_PATHS } from '../src/api/types.js';
import { writeFvecs } from '../segments/input/index.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { generateVectors } from '../src/gen/generateDataset.js';
import type { QuantizationOptions } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';

/**
 * Indexes built with every doc encoding, rotated or not, searched end to end on the executor:
 * exact self-matches, the same hits on every read path, and the encoding and rotation recorded
 * in each segment's meta. One segment has a graph (above the flat threshold), one is scanned.
 */
let root: string;
const dims = 48;
const n = 700;
const sim = VectorSimilarityFunction.COSINE;
const base = generateVectors({ seed: '21', dim: dims, similarity: 'cosine' }, 'base', n);
const row = (i: number) => base.slice(i * dims, (i + 1) * dims);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'prescore-enc-'));
  await writeFvecs(join(root, 'v.fvecs'), base, dims);
});

afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await Executor.shutdown();
});

const variants: [string, QuantizationOptions][] = [
  ['1-bit, Lucene', { bits: 1, rotation: false, centroid: 'lucene' }],
  ['1-bit, rotated, plain mean', { bits: 1, rotation: true, centroid: 'mean' }],
  ['2-bit, rotated', { bits: 2, rotation: true }],
  ['4-bit', { bits: 4, rotation: false }],
  ['7-bit, rotated', { bits: 7, rotation: 12345n }],
  ['8-bit', { bits: 8, rotation: false }],
];

describe.each(variants)('an index of %s codes', (name, quantization) => {
  it('finds every probed doc as its own nearest neighbour, identically on every read path', async () => {
    const out = join(root, name.replace(/[^a-z0-9]+/gi, '-'));
    await buildIndex({ input: join(root, 'v.fvecs'), out, similarity: sim, segmentDocs: 400, flatThreshold: 350, progress: false, quantization });
    const reader = DirectoryReader.open(out);
    for (const leaf of reader.leaves) {
      const q = leaf.reader.handle.quantized!;
      expect(q.bits).toBe(quantization.bits);
      expect(q.rotationSeed === null).toBe(quantization.rotation === false);
    }
    expect(reader.leaves.map((l) => l.reader.handle.graph !== null)).toEqual([true, false]);
    const index = await openIndex(out);
    try {
      for (const probe of [0, 123, 399, 400, 555, 699]) {
        const results = [];
        for (const readPath of READ_PATHS) results.push(await index.search(row(probe), { k: 5, oversample: 4, readPath }));
        expect(results[0].hits[0].id).toBe(String(probe));
        for (const r of results.slice(1)) expect(r.hits).toEqual(results[0].hits);
      }
    } finally {
      await index.close();
    }
  });
});
