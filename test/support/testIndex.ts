import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateVectors } from '../../src/gen/generateDataset.js';
import type { GenSimilarity } from '../../src/gen/DatasetSpec.js';
import { writeFvecs } from '../../segments/input/index.js';
import { buildIndex, type BuildOptions } from '../../src/api/buildIndex.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';

export interface TestIndex {
  readonly root: string;
  readonly dir: string;
  readonly input: string;
  readonly base: Float32Array;
  readonly queries: Float32Array;
  readonly n: number;
  readonly dims: number;
  readonly similarity: VectorSimilarityFunction;
  cleanup(): void;
}

/** Builds a small index from the project's generator (embedding-like, deterministic) in a temp dir. */
export async function buildTestIndex(options: {
  n: number;
  dims: number;
  similarity?: GenSimilarity;
  queries?: number;
  segmentDocs: number;
  flatThreshold?: number;
  seed?: string;
  extra?: Partial<BuildOptions>;
}): Promise<TestIndex> {
  const similarityName = options.similarity ?? 'cosine';
  const spec = { seed: options.seed ?? '7', dim: options.dims, similarity: similarityName };
  const base = generateVectors(spec, 'base', options.n);
  const queries = generateVectors(spec, 'query', options.queries ?? 20);
  const root = mkdtempSync(join(tmpdir(), 'prescore-test-'));
  const input = join(root, 'base.fvecs');
  await writeFvecs(input, base, options.dims);
  const dir = join(root, 'index');
  const similarity = VectorSimilarityFunction.fromName(similarityName);
  await buildIndex({
    input,
    out: dir,
    similarity,
    segmentDocs: options.segmentDocs,
    flatThreshold: options.flatThreshold ?? 0,
    progress: false,
    ...options.extra,
  });
  return {
    root,
    dir,
    input,
    base,
    queries,
    n: options.n,
    dims: options.dims,
    similarity,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
