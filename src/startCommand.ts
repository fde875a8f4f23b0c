import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Executor } from './executor/Executor.js';
import { generateDataset, DATASET_FILES } from './gen/generateDataset.js';
import { buildIndex } from '../segments/index/IndexBuilder.js';
import { listCommitGenerations } from '../segments/index/CommitPoint.js';
import { VectorSimilarityFunction } from '../query/VectorSimilarityFunction.js';
import { serveCommand } from './http/index.js';
import { openIndex } from './api/openIndex.js';
import { indexOpener } from './indexOpener.js';

export const START_USAGE = `Usage: prescore start [--data DIR] [serve options]

The demo: with no index under DIR (default ./data/demo) it generates an embedding-like
dataset (100,000 x 384, cosine, deterministic), builds an index from it, then serves the
HTTP API on 127.0.0.1:8080 and prints a ready-to-paste query. Later starts reuse the index.
Serve options (--port, --host, --read-path, ...) are passed to \`prescore serve\`.
`;

export const DEMO = { n: 100_000, dim: 384, queries: 100, segmentDocs: 50_000, seed: "42" } as const;

export async function startCommand(argv: string[]): Promise<number> {
  const { values, tokens } = parseArgs({ args: argv, options: { data: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: false, tokens: true });
  if (values.help) {
    process.stdout.write(START_USAGE);
    return 0;
  }
  const dataDir = resolve(typeof values.data === 'string' ? values.data : join('data', 'demo'));
  const indexDir = join(dataDir, 'index');
  const sourceDir = join(dataDir, 'source');
  const passThrough = argv.filter((_, i) => !tokens?.some((t) => t.kind === 'option' && t.name === 'data' && (t.index === i || t.index + 1 === i && t.inlineValue === false)));

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
