import { parseArgs } from 'node:util';
import { basename } from 'node:path';
import { describeReader } from './api/openIndex.js';
import { DEFAULT_READ_PATH } from '../query/IndexSearcher.js';
import { defaultExecutorThreads } from './executor/Executor.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { readRecallCalibration } from '../segments/index/RecallCalibrationFormat.js';

const INFO_USAGE =
  'Usage: prescore info --index DIR\n\nPrints the index description as JSON: field, dims, similarity, segments, bytes, page-cache residency,\nand the RAM serving it takes (memory: codes and graphs once per process, scratch per worker for\nPRESCORE_THREADS workers), and its recall calibration (what oversample and beam reach what recall@10; null: none).\n';
const CHECK_USAGE = 'Usage: prescore check --index DIR\n\nVerifies the CRC32 footer of every file of every segment (reads every byte).\n';

function indexArg(argv: string[], usage: string): string | number {
  try {
    const { values } = parseArgs({ args: argv, options: { index: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
    if (values.help) {
      process.stdout.write(usage);
      return 0;
    }
    if (!values.index) throw new Error('--index is required');
    return values.index;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${usage}`);
    return 2;
  }
}

export async function infoCommand(argv: string[]): Promise<number> {
  const dir = indexArg(argv, INFO_USAGE);
  if (typeof dir === 'number') return dir;
  try {
    const reader = DirectoryReader.open(dir);
    const described = describeReader(reader, basename(reader.dir), DEFAULT_READ_PATH, { threads: defaultExecutorThreads() });
    process.stdout.write(`${JSON.stringify({ ...described, calibration: readRecallCalibration(reader.dir) }, null, 2)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`prescore info: ${(e as Error).message}\n`);
    return 1;
  }
}

export async function checkCommand(argv: string[]): Promise<number> {
  const dir = indexArg(argv, CHECK_USAGE);
  if (typeof dir === 'number') return dir;
  try {
    const reader = DirectoryReader.open(dir);
    const started = performance.now();
    for (const leaf of reader.leaves) {
      leaf.reader.checkIntegrity();
      process.stdout.write(`ok  segment ${leaf.reader.name}: ${leaf.reader.maxDoc} docs\n`);
    }
    process.stdout.write(`index ${reader.dir} is intact (${reader.leaves.length} segments, ${Math.round(performance.now() - started)} ms)\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`prescore check: ${(e as Error).message}\n`);
    return 1;
  }
}
