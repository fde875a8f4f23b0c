/**
 * `npm run bench:defaults`: recall@10 of the search defaults on the demo dataset (the one
 * `npm start` builds: 100,000 x 384 cosine, 2 segments, 100 queries with exact ground truth), and
 * of the neighbouring oversample values, so the documented defaults are measured, not guessed.
 * The demo is generated and built under .bench/demo on first run (or give its directory).
 */
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../executor/packageRoot.js';
import { openIndex, DEFAULT_EF_PER_CANDIDATE, DEFAULT_NUM_CANDIDATES } from '../api/openIndex.js';
import { DEFAULT_OVERSAMPLE } from '../api/types.js';
import { DEMO } from '../startCommand.js';
import { listCommitGenerations } from '../../segments/index/CommitPoint.js';
import { loadQueries, recallAt, type BenchDataset } from './benchData.js';

const root = process.argv[2] ?? join(packageRoot(), '.bench', 'demo');
const ds: BenchDataset = { name: 'demo', n: DEMO.n, dim: DEMO.dim, queries: DEMO.queries, dir: join(root, 'source'), indexDir: join(root, 'index'), segmentDocs: DEMO.segmentDocs };

function cli(args: string[]): void {
  const r = spawnSync(process.execPath, [join(packageRoot(), 'bin', 'prescore.js'), ...args], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`prescore ${args.join(' ')} failed (exit ${r.status})`);
}

if (!existsSync(join(ds.dir, 'groundtruth.ivecs'))) {
  cli(['gen', '--n', String(ds.n), '--dim', String(ds.dim), '--queries', String(ds.queries), '--similarity', 'cosine', '--seed', DEMO.seed, '--out', ds.dir]);
}
if (!existsSync(ds.indexDir) || listCommitGenerations(ds.indexDir).length === 0) {
  cli(['build', '--input', join(ds.dir, 'base.fvecs'), '--out', ds.indexDir, '--similarity', 'cosine', '--segment-docs', String(ds.segmentDocs)]);
}

const { vectors, truth } = await loadQueries(ds);
const index = await openIndex(ds.indexDir, { calibrate: 'first-use' });
try {
  const oversamples = [1, 2, 3, 4, 5, 6, 8];
  const sums = new Map(oversamples.map((o) => [o, 0]));
  // Interleaved query by query, so every setting sees the same machine state.
  for (let q = 0; q < vectors.length; q++) {
    for (const o of oversamples) {
      const { hits } = await index.search(vectors[q]!, { k: 10, oversample: o });
      sums.set(o, sums.get(o)! + recallAt(10, hits, truth[q]!));
    }
  }
  console.log(`demo (${ds.n} x ${ds.dim} cosine, ${vectors.length} queries), k=10, default beam max(${DEFAULT_NUM_CANDIDATES}, ${DEFAULT_EF_PER_CANDIDATE} x k x oversample):`);
  for (const o of oversamples) {
    console.log(`  oversample ${o}${o === DEFAULT_OVERSAMPLE ? ' (default)' : ''}: recall@10 ${(sums.get(o)! / vectors.length).toFixed(3)}`);
  }
} finally {
  await index.close();
}
