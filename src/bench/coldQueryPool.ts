/**
 * The queries of a load run against a cold index. A run that cycles through the dataset's 200
 * queries is cold only for its first two seconds: at k=10 oversample 5 their rescoring reads
 * 200 x 50 fp32 vectors (40 MiB at 1024 dims), which the benchmark's 256 MiB page cache keeps, so
 * from then on it measures a warm server. This pool holds the dataset's own queries first (the
 * ones with exact ground truth, so recall is still measured on them) and then more rows of the
 * generator's query stream (the same distribution, not copies), as many as make one pass through
 * the pool read `PASSES_PER_CACHE` times the page cache: a cyclic scan over more pages than the
 * cache holds finds none of them again, so every request pays its reads as a cold single stream
 * does. Pages shared by neighbouring queries (the same cluster) may still be hits, as in a real
 * workload.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateVectors, type DatasetInfo } from '../gen/index.js';
import { queriesFromFvecs, type QuerySet } from '../../load/queries.js';
import type { BenchDataset } from './benchData.js';

const PASSES_PER_CACHE = 8;

/**
 * The pool for a run whose server keeps `cacheBytes` of page cache and reads `vectorsPerQuery`
 * fp32 vectors per search. Throws when the generator no longer reproduces the dataset's own
 * query file (another generator version): recall on the first rows would be meaningless.
 */
export function coldQueryPool(ds: BenchDataset, cacheBytes: number, vectorsPerQuery: number): QuerySet {
  const own = queriesFromFvecs(join(ds.dir, 'query.fvecs'));
  const bytesPerQuery = vectorsPerQuery * Math.max(4096, ds.dim * 4);
  const count = Math.max(own.count, Math.ceil((PASSES_PER_CACHE * cacheBytes) / bytesPerQuery));
  if (count === own.count) return own;
  const info = JSON.parse(readFileSync(join(ds.dir, 'dataset.json'), 'utf8')) as DatasetInfo;
  const data = generateVectors({ seed: info.seed, dim: info.dim, similarity: info.similarity }, 'query', count);
  const head = new Uint32Array(data.buffer, data.byteOffset, own.data.length);
  const ownBits = new Uint32Array(own.data.buffer, own.data.byteOffset, own.data.length);
  for (let i = 0; i < ownBits.length; i++) {
    if (head[i] !== ownBits[i]) {
      throw new Error(
        `${ds.dir}: the generator (query stream, seed ${info.seed}) no longer reproduces query.fvecs (generator version ${info.generatorVersion}); delete the directory to regenerate it`,
      );
    }
  }
  return { dim: info.dim, count, data, source: `${own.source} + ${count - own.count} more rows of the generator's query stream` };
}
