import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync, truncateSync, statSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Executor } from '../src/executor/Executor.js';
import { buildIndex } from '../src/api/buildIndex.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { listCommitGenerations } from '../segments/index/CommitPoint.js';
import { writeFvecs, writeNpy, InputError } from '../segments/input/index.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { generateVectors } from '../src/gen/generateDataset.js';

let root: string;
const sim = VectorSimilarityFunction.EUCLIDEAN;
const base = generateVectors({ seed: '3', dim: 16, similarity: 'euclidean' }, 'base', 700);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'prescore-build-'));
});

afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await Executor.shutdown();
});

function fresh(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('prescore build', () => {
  it('indexes .fvecs, .npy and .jsonl into segments of --segment-docs, with the right ids', async () => {
    const fvecs = join(root, 'v.fvecs');
    await writeFvecs(fvecs, base, 16);
    const npy = join(root, 'v.npy');
    await writeNpy(npy, base, 16);
    const jsonl = join(root, 'v.jsonl');
    writeFileSync(jsonl, Array.from({ length: 700 }, (_, i) => JSON.stringify({ id: `doc-${i}`, vector: [...base.subarray(i * 16, (i + 1) * 16)] })).join('\n') + '\n');
    for (const [input, firstId] of [
      [fvecs, '0'],
      [npy, '0'],
      [jsonl, 'doc-0'],
    ] as const) {
      const out = fresh(`ok-${input.split('.').pop()}`);
      const report = await buildIndex({ input, out, similarity: sim, segmentDocs: 300, flatThreshold: 250, progress: false });
      expect(report).toMatchObject({ docs: 700, dims: 16, segments: 3, graphs: 2 });
      const reader = DirectoryReader.open(out);
      expect(reader.leaves.map((l) => [l.docBase, l.reader.maxDoc])).toEqual([
        [0, 300],
        [300, 300],
        [600, 100],
      ]);
      expect(reader.leaves[0].reader.id(0)).toBe(firstId);
      expect(reader.leaves[2].reader.id(99)).toBe(firstId === '0' ? '699' : 'doc-699');
    }
  });

  it('rejects bad input naming the file and row, and publishes nothing', async () => {
    const cases: [string, string | Buffer, RegExp][] = [
      ['ragged.jsonl', '{"id":"a","vector":[1,2]}\n{"id":"b","vector":[1,2,3]}\n', /ragged\.jsonl: row 1/],
      ['nan.jsonl', '{"id":"a","vector":[1,2]}\n{"id":"b","vector":[1,"x"]}\n', /nan\.jsonl: row 1/],
      ['dup.jsonl', '{"id":"a","vector":[1,2]}\n{"id":"a","vector":[1,2]}\n', /dup\.jsonl: row 1/],
      ['bad.jsonl', '{"id":"a","vector":[1,2]}\n{oops\n', /bad\.jsonl: row 1/],
    ];
    for (const [name, content, message] of cases) {
      const input = join(root, name);
      writeFileSync(input, content);
      const out = fresh(`bad-${name}`);
      await expect(buildIndex({ input, out, similarity: sim, progress: false })).rejects.toThrow(message);
      expect(readdirSync(out)).toEqual([]);
    }
  });

  it('rejects a NaN deep inside a large fvecs file without leaving any segment behind', async () => {
    const withNaN = base.slice();
    withNaN[650 * 16 + 3] = NaN;
    const input = join(root, 'nan.fvecs');
    await writeFvecs(input, withNaN, 16);
    const out = fresh('bad-nan-fvecs');
    const err = await buildIndex({ input, out, similarity: sim, segmentDocs: 200, progress: false }).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(String(err.message)).toMatch(/nan\.fvecs: row 650/);
    expect(readdirSync(out)).toEqual([]);
  });

  it('detects a truncated fvecs file, and an unreadable one', async () => {
    const input = join(root, 'trunc.fvecs');
    await writeFvecs(input, base, 16);
    truncateSync(input, statSync(input).size - 10);
    const out = fresh('bad-trunc');
    await expect(buildIndex({ input, out, similarity: sim, progress: false })).rejects.toThrow(/trunc\.fvecs.*(truncated|row 699)/);
    expect(readdirSync(out)).toEqual([]);
    await expect(buildIndex({ input: join(root, 'missing.fvecs'), out, similarity: sim, progress: false })).rejects.toThrow(/missing\.fvecs/);
  });

  it('rejects filled lists longer than a level-0 list holds before reading anything', async () => {
    const out = fresh('bad-min-connections');
    await expect(buildIndex({ input: join(root, 'missing.fvecs'), out, similarity: sim, m: 8, minConnections: 17, progress: false })).rejects.toThrow(
      /--min-connections must be an integer in \[0, 2 x M = 16\], got 17/,
    );
  });

  it('keeps the previous index intact when a rebuild fails, and replaces it when a rebuild succeeds', async () => {
    const good = join(root, 'good.fvecs');
    await writeFvecs(good, base, 16);
    const out = fresh('rebuild');
    await buildIndex({ input: good, out, similarity: sim, segmentDocs: 400, progress: false });
    const before = readdirSync(out).sort();
    const bad = join(root, 'bad-rebuild.jsonl');
    writeFileSync(bad, '{"id":"a","vector":[1,2]}\n{"id":"b"}\n');
    await expect(buildIndex({ input: bad, out, similarity: sim, progress: false })).rejects.toThrow(/bad-rebuild\.jsonl/);
    expect(readdirSync(out).sort()).toEqual(before);
    expect(DirectoryReader.open(out).maxDoc).toBe(700);

    await buildIndex({ input: good, out, similarity: sim, segmentDocs: 700, progress: false });
    expect(listCommitGenerations(out)).toEqual([2]);
    const reader = DirectoryReader.open(out);
    expect(reader.leaves.map((l) => l.reader.name)).toEqual(['_2']);
    expect(readdirSync(out).some((f) => f.startsWith('_0'))).toBe(false);
    expect(existsSync(join(out, 'commit_1'))).toBe(false);
  });
});
