import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readIvecs } from '../segments/input/XvecsReader.js';
import { readAllVectors } from '../segments/input/openVectorSource.js';
import { Executor } from '../src/executor/Executor.js';
import { GENERATOR_VERSION } from '../src/gen/DatasetSpec.js';
import { genCommand } from '../src/gen/genCommand.js';
import { computeGroundTruth, generateDataset, generateVectors } from '../src/gen/generateDataset.js';
import { groundTruth } from '../src/gen/GroundTruth.js';

// These run tasks on the executor, i.e. the compiled dist/ (npm test builds first).

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prescore-gen-'));
});
afterAll(async () => {
  await Executor.shutdown();
  await rm(dir, { recursive: true, force: true });
});

const FILES = ['base.fvecs', 'query.fvecs', 'groundtruth.ivecs', 'dataset.json'];

describe('generateDataset on the executor', () => {
  it('writes byte-identical files on 1 and 2 threads, equal to in-process generation and ground truth', async () => {
    const spec = { seed: '7', dim: 40, similarity: 'euclidean' as const, n: 2500, queries: 30, k: 25 };
    await Executor.shutdown();
    const one = await generateDataset({ ...spec, out: join(dir, 't1'), threads: 1, progress: false });
    await Executor.shutdown();
    const two = await generateDataset({ ...spec, out: join(dir, 't2'), threads: 2, progress: false });
    expect(Executor.get().threads).toBe(2);
    for (const f of FILES) {
      const a = await readFile(join(one.dir, f));
      const b = await readFile(join(two.dir, f));
      expect(a.equals(b), f).toBe(true);
    }
    const base = await readAllVectors(join(one.dir, 'base.fvecs'));
    const queries = await readAllVectors(join(one.dir, 'query.fvecs'));
    expect(base.count).toBe(2500);
    expect(base.vectors).toEqual(generateVectors(spec, 'base', 2500));
    expect(queries.vectors).toEqual(generateVectors(spec, 'query', 30));
    const truth = await readIvecs(join(one.dir, 'groundtruth.ivecs'));
    expect(truth.dims).toBe(25);
    expect(truth.count).toBe(30);
    expect(truth.data).toEqual(groundTruth(base.vectors, queries.vectors, 40, 25, 'euclidean').ids);
    const info = JSON.parse(await readFile(join(one.dir, 'dataset.json'), 'utf8'));
    expect(info).toMatchObject({ ...spec, generatorVersion: GENERATOR_VERSION, files: { base: 'base.fvecs' } });
  });

  it('computes identical ground truth with the wasm prefilter and in pure JS, for every similarity', async () => {
    for (const similarity of ['cosine', 'dot_product', 'euclidean', 'max_inner_product'] as const) {
      const out = join(dir, `sim-${similarity}`);
      const spec = { seed: '11', dim: 96, similarity, n: 3000, queries: 12, k: 40 };
      await generateDataset({ ...spec, out, progress: false });
      const queries = (await readAllVectors(join(out, 'query.fvecs'))).vectors;
      const executor = Executor.get();
      const wasm = await computeGroundTruth(executor, join(out, 'base.fvecs'), spec, queries, undefined, 'wasm');
      const js = await computeGroundTruth(executor, join(out, 'base.fvecs'), spec, queries, undefined, 'js');
      expect(wasm.kernel).toBe('wasm');
      expect(js.kernel).toBe('js');
      expect(wasm.ids).toEqual(js.ids);
      expect(wasm.scores).toEqual(js.scores);
      // The prefilter re-scores a small share of the 36,000 pairs.
      expect(wasm.rescored).toBeLessThan(0.5 * 3000 * 12);
      const base = (await readAllVectors(join(out, 'base.fvecs'))).vectors;
      expect(wasm.ids).toEqual(groundTruth(base, queries, 96, 40, similarity).ids);
    }
  });
});

describe('prescore gen', () => {
  it('prints help and rejects bad arguments with exit code 2', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await genCommand(['--help'])).toBe(0);
      expect(String(out.mock.calls[0][0])).toMatch(/^Usage: prescore gen --n N --dim D --queries Q --out DIR/);
      const base = ['--n', '100', '--dim', '8', '--queries', '5', '--out', join(dir, 'bad')];
      const bad: [string[], RegExp][] = [
        [['--dim', '8', '--queries', '5', '--out', 'x'], /--n is required/],
        [[...base, '--similarity', 'hamming'], /--similarity must be one of cosine, dot_product, euclidean, max_inner_product/],
        [[...base, '--k', '101'], /--k \(101\) must not exceed --n \(100\)/],
        [[...base, '--seed', '-3'], /--seed/],
        [['--n', 'lots', '--dim', '8', '--queries', '5', '--out', 'x'], /--n must be a positive integer, got "lots"/],
        [[...base, '--bogus'], /Unknown option '--bogus'/],
        [['--n', '10', '--dim', '8', '--queries', '5'], /--out is required/],
      ];
      for (const [args, pattern] of bad) {
        err.mockClear();
        expect(await genCommand(args), args.join(' ')).toBe(2);
        expect(err.mock.calls.map((c) => String(c[0])).join(''), args.join(' ')).toMatch(pattern);
      }
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  });

  it('generates a dataset and reports it', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const target = join(dir, 'cli');
      const code = await genCommand(['--n', '1k', '--dim', '16', '--queries', '10', '--k', '10', '--similarity', 'dot_product', '--seed', '5', '--out', target, '--quiet']);
      expect(code).toBe(0);
      expect(String(out.mock.calls[0][0])).toMatch(/generated .*cli: 1000 x 16 base, 10 queries, top-10 dot_product ground truth/);
      const info = JSON.parse(await readFile(join(target, 'dataset.json'), 'utf8'));
      expect(info).toMatchObject({ n: 1000, dim: 16, queries: 10, k: 10, similarity: 'dot_product', seed: '5' });
    } finally {
      out.mockRestore();
    }
  });
});
