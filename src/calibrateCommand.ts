import { parseArgs } from 'node:util';
import { readAllVectors } from '../segments/input/index.js';
import type { RecallCalibration } from '../segments/index/RecallCalibration.js';
import { MAX_RECALL_TARGET, MIN_RECALL_TARGET, settingFor } from '../segments/index/RecallCalibration.js';
import { openIndex } from './api/openIndex.js';
import { integerFlag, UsageError } from './cliFlags.js';
import { Executor } from './executor/Executor.js';
import { formatDuration } from './progress/Progress.js';

export const CALIBRATE_USAGE = `Usage: prescore calibrate --index DIR [options]

Measures what oversample and beam reach what recall@10 on the index: a sample of its own documents
(each left out of its own neighbours) or held-out query vectors is searched at oversample 1 to
100 (with the default beam, and half and a quarter of it once the recall passes 0.8) against
exact fp32 neighbours computed on the worker pool, and each setting's mean recall, a 99% lower
confidence bound and its mean time are stored in DIR/recall.cal. A search with
\`recall_target\` then runs the cheapest setting whose lower bound reaches the target: the
smallest oversample that reaches it, at its smallest beam that does. \`prescore build\` does this
at the end of every build, and an index opened without one measures it in the background.

Options:
  --index DIR           a prescore index directory (required)
  --queries FILE        held-out query vectors (.fvecs or .npy) instead of the index's own docs
  --sample N            docs sampled as queries (default 200)
  --recall-target T     store T as the index's default (else the one stored before, else
                        0.95): searches that name no oversample, num_candidates or
                        recall_target aim for it
  --threads T           executor threads (default PRESCORE_THREADS or all cores)
  --quiet               no progress output
  -h, --help            this text
`;

/** `--recall-target`'s value as a recall@10 a calibration can measure. */
export function recallTargetFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const v = Number(value);
  if (!(v >= MIN_RECALL_TARGET && v <= MAX_RECALL_TARGET)) throw new UsageError(`--recall-target must be a recall in [${MIN_RECALL_TARGET}, ${MAX_RECALL_TARGET}], got "${value}"`);
  return v;
}

/** Opens the index, measures its calibration, stores it, and returns it with the time taken. */
export async function calibrateIndex(
  dir: string,
  options: { readonly queries?: string; readonly sample?: number; readonly defaultTarget?: number; readonly quiet?: boolean },
): Promise<{ calibration: RecallCalibration; ms: number }> {
  const held = options.queries === undefined ? undefined : await readAllVectors(options.queries);
  const index = await openIndex(dir, { calibrate: 'never', calibrationProgress: options.quiet !== true });
  try {
    if (held !== undefined && held.dims !== index.dims) throw new UsageError(`--queries ${options.queries} has ${held.dims}-dim vectors; index ${dir} has ${index.dims} dims`);
    const queries = held?.vectors;
    if (index.calibrate === undefined) throw new Error(`index ${dir} cannot be calibrated`);
    const t0 = performance.now();
    const calibration = await index.calibrate({ queries, sample: options.sample, ...(options.defaultTarget !== undefined ? { defaultTarget: options.defaultTarget } : {}) });
    return { calibration, ms: performance.now() - t0 };
  } finally {
    await index.close();
  }
}

/** One line per measured setting, and what reaches 0.90 / 0.95 / 0.99. */
export function calibrationSummary(c: RecallCalibration, ms: number): string {
  const reach = (t: number) => {
    const p = settingFor(c, t);
    return p === null ? 'none measured' : `oversample ${p.oversample} beam ${p.numCandidates}`;
  };
  const lines = c.points.map(
    (p) =>
      `  oversample ${String(p.oversample).padStart(5)} beam ${String(p.numCandidates).padStart(4)}: recall@${c.k} ${p.recall.toFixed(4)} (>= ${p.lowerBound.toFixed(4)}), ${p.meanMs.toFixed(2)} ms`,
  );
  return (
    `calibrated on ${c.queries} ${c.source === 'documents' ? 'of its docs' : 'held-out queries'} in ${formatDuration(ms)}:\n${lines.join('\n')}\n` +
    `  recall_target 0.90 -> ${reach(0.9)}; 0.95 -> ${reach(0.95)}; 0.99 -> ${reach(0.99)}` +
    `${c.defaultTarget !== null ? `; default target ${c.defaultTarget}` : ''}\n`
  );
}

export async function calibrateCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        index: { type: 'string' },
        queries: { type: 'string' },
        sample: { type: 'string' },
        'recall-target': { type: 'string' },
        threads: { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`prescore calibrate: ${(e as Error).message}\n\n${CALIBRATE_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(CALIBRATE_USAGE);
    return 0;
  }
  try {
    if (!values.index) throw new UsageError('--index is required');
    Executor.get({ threads: integerFlag('threads', values.threads) });
    const { calibration, ms } = await calibrateIndex(values.index, {
      queries: values.queries,
      sample: integerFlag('sample', values.sample, 2),
      defaultTarget: recallTargetFlag(values['recall-target']),
      quiet: values.quiet,
    });
    process.stdout.write(calibrationSummary(calibration, ms));
    return 0;
  } catch (e) {
    process.stderr.write(`prescore calibrate: ${(e as Error).message}\n`);
    if (e instanceof UsageError) process.stderr.write(`\n${CALIBRATE_USAGE}`);
    return e instanceof UsageError || e instanceof RangeError ? 2 : 1;
  } finally {
    await Executor.shutdown();
  }
}
