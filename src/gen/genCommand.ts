import { parseArgs } from 'node:util';
import { Executor } from '../executor/Executor.js';
import { formatDuration } from '../progress/Progress.js';
import { GEN_SIMILARITIES, normalizeSimilarity } from './DatasetSpec.js';
import { DATASET_FILES, generateDataset } from './generateDataset.js';
import { latentDims } from './EmbeddingModel.js';
import { parseSeed } from './Rng.js';
import { integerFlag, requiredIntegerFlag, UsageError } from '../cliFlags.js';

export const GEN_USAGE = `Usage: prescore gen --n N --dim D --queries Q --out DIR [options]

Generates an embedding-like dataset with exact ground truth:
  DIR/${DATASET_FILES.base}         N base vectors (float32)
  DIR/${DATASET_FILES.query}        Q query vectors, from the same distribution (not copies)
  DIR/${DATASET_FILES.groundtruth}  exact top-k base row ids (0-based) per query
  DIR/${DATASET_FILES.info}        the arguments and generator version

The vectors come from clusters of varying size and spread in a low-dimensional latent space
(32-64 dims) with a power-law spectrum, mapped to D dims by a fixed random basis, plus a
non-zero mean and small isotropic noise; unit length for cosine and dot_product. The same
arguments and seed give byte-identical files on any number of threads.

Options:
  --n N                base vectors (required)
  --dim D              dimensions (required)
  --queries Q          query vectors (required)
  --out DIR            output directory, created if missing (required)
  --similarity S       cosine | dot_product | euclidean | max_inner_product (default cosine)
  --seed S             integer in [0, 2^64) (default 42)
  --k K                ground-truth neighbours per query (default 100, at most N)
  --threads T          executor threads (default PRESCORE_THREADS or all cores)
  --quiet              no progress output
  -h, --help           this text
`;

/**
 * `prescore gen`: parses argv (the arguments after "gen"), generates the dataset and prints a
 * summary on stdout. Returns the exit code: 0 done, 2 bad arguments, 1 failure.
 */
export async function genCommand(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        n: { type: 'string' },
        dim: { type: 'string' },
        queries: { type: 'string' },
        out: { type: 'string' },
        similarity: { type: 'string' },
        seed: { type: 'string' },
        k: { type: 'string' },
        threads: { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    process.stderr.write(`prescore gen: ${(err as Error).message}\n\n${GEN_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(GEN_USAGE);
    return 0;
  }
  let options: Parameters<typeof generateDataset>[0];
  try {
    const n = requiredIntegerFlag('n', values.n as string | undefined);
    const dim = requiredIntegerFlag('dim', values.dim as string | undefined);
    const queries = requiredIntegerFlag('queries', values.queries as string | undefined);
    const k = integerFlag('k', values.k as string | undefined) ?? 100;
    const threads = integerFlag('threads', values.threads as string | undefined);
    if (!values.out || typeof values.out !== 'string') throw new UsageError('--out is required');
    if (dim > 1 << 16) throw new UsageError(`--dim must be at most ${1 << 16}, got ${dim}`);
    if (n >= 2 ** 31) throw new UsageError(`--n must be below 2^31, got ${n}`);
    if (k > n) throw new UsageError(`--k (${k}) must not exceed --n (${n})`);
    let similarity;
    try {
      similarity = normalizeSimilarity((values.similarity as string | undefined) ?? 'cosine');
    } catch {
      throw new UsageError(`--similarity must be one of ${GEN_SIMILARITIES.join(', ')}, got "${String(values.similarity)}"`);
    }
    let seed: string;
    try {
      seed = parseSeed((values.seed as string | undefined) ?? '42').toString();
    } catch (err) {
      throw new UsageError(`--seed: ${(err as Error).message}`);
    }
    options = { n, dim, queries, k, similarity, seed, out: values.out, ...(threads ? { threads } : {}), progress: !values.quiet };
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`prescore gen: ${err.message}\n(see prescore gen --help)\n`);
      return 2;
    }
    throw err;
  }
  try {
    const { info, dir, timings, groundTruthKernel } = await generateDataset(options);
    const gib = ((info.n + info.queries) * (info.dim + 1) * 4) / 2 ** 30;
    process.stdout.write(
      `generated ${dir}: ${info.n} x ${info.dim} base, ${info.queries} queries, top-${info.k} ${info.similarity} ground truth ` +
        `(seed ${info.seed}, latent ${latentDims(info.dim)} dims, ${gib.toFixed(2)} GiB)\n` +
        `  base ${formatDuration(timings.base)}, queries ${formatDuration(timings.queries)}, ` +
        `ground truth ${formatDuration(timings.groundTruth)} (${groundTruthKernel}), total ${formatDuration(timings.total)}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`prescore gen: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await Executor.shutdown();
  }
}
