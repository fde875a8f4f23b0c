import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Executor } from './executor/Executor.js';
import { generateDataset, DATASET_FILES } from './gen/generateDataset.js';
import { buildIndex } from './api/buildIndex.js';
import { listCommitGenerations } from '../segments/index/CommitPoint.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { serveCommand } from './http/index.js';
import { openIndex } from './api/openIndex.js';
import { indexOpener } from './indexOpener.js';

export const START_USAGE = `Usage: prescore start [--data DIR] [serve options]

The demo: with no index under DIR (default ./data/demo) it generates an embedding-like
dataset (100,000 x 384, cosine, deterministic), builds an index from it, then serves the
HTTP API on 127.0.0.1:8080 and prints a ready-to-paste query. Later starts reuse the index.
Serve options (--port, --host, --read-path, ...) are passed to \`prescore serve\`.
`;

export const DEMO = { n: 100_000, dim: 384, queries: 100, segmentDocs: 50_000, seed: '42' } as const;

export async function startCommand(argv: string[]): Promise<number> {
  // `--data DIR` is ours; everything else goes to `prescore serve` unchanged.
  const passThrough: string[] = [];
  let data: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      process.stdout.write(START_USAGE);
      return 0;
    }
    if (a === '--data') data = argv[++i];
    else if (a.startsWith('--data=')) data = a.slice('--data='.length);
    else passThrough.push(a);
  }
  const dataDir = resolve(data ?? join('data', 'demo'));
  const indexDir = join(dataDir, 'index');
  const sourceDir = join(dataDir, 'source');

  if (!existsSync(indexDir) || listCommitGenerations(indexDir).length === 0) {
    process.stderr.write(`prescore start: no index under ${indexDir} yet; building the demo (${DEMO.n.toLocaleString()} x ${DEMO.dim}, cosine)\n`);
    try {
      if (!existsSync(join(sourceDir, DATASET_FILES.base))) {
        await generateDataset({
          n: DEMO.n,
          dim: DEMO.dim,
          queries: DEMO.queries,
          out: sourceDir,
          similarity: 'cosine',
          seed: DEMO.seed,
          k: 100,
          progress: true,
        });
      }
      await buildIndex({
        input: join(sourceDir, DATASET_FILES.base),
        out: indexDir,
        similarity: VectorSimilarityFunction.COSINE,
        segmentDocs: DEMO.segmentDocs,
      });
    } catch (e) {
      process.stderr.write(`prescore start: building the demo failed: ${(e as Error).message}\n`);
      await Executor.shutdown();
      return 1;
    }
  }
  return serveCommand(['--index', indexDir, '--name', 'demo', ...passThrough], indexOpener(openIndex));
}
