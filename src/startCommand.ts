import { existsSync, mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { DirectoryLock } from '../segments/store/DirectoryLock.js';
import { join, resolve } from 'node:path';
import { Executor } from './executor/Executor.js';
import { generateDataset, DATASET_FILES } from './gen/generateDataset.js';
import { buildIndex } from './api/buildIndex.js';
import { calibrateIndex, calibrationSummary } from './calibrateCommand.js';
import { listCommitGenerations } from '../segments/index/CommitPoint.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { serveCommand } from './http/index.js';
import { openIndex } from './api/openIndex.js';
import { indexOpener } from './indexOpener.js';
import { Mapping } from '../segments/document/Mapping.js';
import { readLatestCommit } from '../segments/index/CommitPoint.js';
import { demoMapping, writeDemoFields } from './gen/DemoDocuments.js';

export const START_USAGE = `Usage: prescore start [--data DIR] [serve options]

The demo: with no index under DIR (default ./data/demo) it generates an embedding-like
dataset (100,000 x 384, cosine, deterministic) and a document per vector (a title, and
a category, year and in_stock flag to filter on), builds an index from them, then serves
the HTTP API on 127.0.0.1:8080 and prints a ready-to-paste query. Later starts reuse the
index.
Serve options (--port, --host, --read-path, ...) are passed to \`prescore serve\`, whose
--help shows a filtered search of the demo returning _source, over HTTP and from the library.
`;

export const DEMO = { n: 100_000, dim: 384, queries: 100, segmentDocs: 50_000, seed: '42' } as const;

/** The demo's documents beside its vectors (src/gen/DemoDocuments.ts): the build's --fields and --mapping. */
export const DEMO_FILES = { fields: 'demo-fields.jsonl', mapping: 'demo-mapping.json' } as const;

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

  const built = () => existsSync(indexDir) && listCommitGenerations(indexDir).length > 0;
  if (!built()) {
    let lock: DirectoryLock;
    try {
      // One demo build per data directory: a second `npm start` fails at once instead of
      // generating and building over the first one's files.
      mkdirSync(dataDir, { recursive: true });
      lock = await DirectoryLock.obtain(dataDir, 'demo build');
    } catch (e) {
      process.stderr.write(`prescore start: ${(e as Error).message}\n`);
      return 1;
    }
    try {
      if (!built()) await buildDemo(sourceDir, indexDir);
    } catch (e) {
      process.stderr.write(`prescore start: building the demo failed: ${(e as Error).message}\n`);
      await Executor.shutdown();
      return 1;
    } finally {
      lock.release();
    }
  } else if (!hasDemoFields(indexDir)) {
    process.stderr.write(
      `prescore start: ${indexDir} was built by an earlier version, without the demo's documents: ` +
        `filters on category, year or in_stock will be refused. Delete ${indexDir} to rebuild it with them.\n`,
    );
  }
  return serveCommand(['--index', indexDir, '--name', 'demo', ...passThrough], indexOpener(openIndex));
}

async function buildDemo(sourceDir: string, indexDir: string): Promise<void> {
  process.stderr.write(`prescore start: no index under ${indexDir} yet; building the demo (${DEMO.n.toLocaleString()} x ${DEMO.dim}, cosine)\n`);
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
  // The documents' fields: a hash of the row number, written afresh in milliseconds.
  const fields = join(sourceDir, DEMO_FILES.fields);
  await writeDemoFields(fields, DEMO.n);
  await writeFile(join(sourceDir, DEMO_FILES.mapping), `${JSON.stringify(demoMapping(), null, 2)}\n`);
  await buildIndex({
    input: join(sourceDir, DATASET_FILES.base),
    fields,
    mapping: Mapping.parse(demoMapping()),
    out: indexDir,
    similarity: VectorSimilarityFunction.COSINE,
    segmentDocs: DEMO.segmentDocs,
  });
  // As `prescore build` does: the default search then aims for recall@10 0.95 from the first request.
  const { calibration, ms } = await calibrateIndex(indexDir, {});
  process.stdout.write(calibrationSummary(calibration, ms));
}

/** Whether the demo index has the demo's fields (an index built before they existed has not). */
function hasDemoFields(indexDir: string): boolean {
  try {
    const json = readLatestCommit(indexDir).userData.get('mapping');
    return json !== undefined && Mapping.parse(JSON.parse(json)).field('category') !== undefined;
  } catch {
    return true; // unreadable: let serve report it
  }
}
