import { parseArgs } from 'node:util';
import { Executor } from '../executor/Executor.js';
import { formatDuration } from '../progress/Progress.js';
import { GEN_SIMILARITIES, normalizeSimilarity } from './DatasetSpec.js';
import { DATASET_FILES, FILTER_FILES, generateDataset } from './generateDataset.js';
import { PER_QUERY } from './FilterSet.js';
import { latentDims } from './EmbeddingModel.js';
import { parseSeed } from './Rng.js';
import { integerFlag, requiredIntegerFlag, UsageError } from '../cliFlags.js';

export const GEN_USAGE = `Usage: prescore gen --n N --dim D --queries Q --out DIR [options]

Generates an embedding-like dataset with exact ground truth:
  DIR/${DATASET_FILES.base}         N base vectors (float32)
  DIR/${DATASET_FILES.query}        Q query vectors, from the same distribution (not copies)
  DIR/${DATASET_FILES.groundtruth}  exact top-k base row ids (0-based) per query
  DIR/${DATASET_FILES.info}       the arguments and generator version (with --filters, also
                         where the files below are and how to read them)

With --filters, documents' metadata, filters of known selectivity and their ground truth too:
  DIR/${FILTER_FILES.fields}       one JSON object per base row, row i = doc id "i":
                           cluster  keyword, the cluster that generated the vector ("c0".."c1023")
                           u        double, uniform in [0, 1) (written so that it round-trips)
                           tags     keyword, multi-valued: s50, s10, s1, s01, s001, each
                                    independently with probability 0.5, 0.1, 0.01, 0.001, 0.0001
                           ts       date, epoch milliseconds, uniform over 2024 (UTC)
  DIR/${FILTER_FILES.mapping}       the Elasticsearch mappings object: those fields and the vector
                         (dense_vector "vector" with dims and similarity)
  DIR/${FILTER_FILES.filters}       ${PER_QUERY} filters per query in Elasticsearch Query DSL (the content of
                         knn.filter), each with its name, correlation, target selectivity s and
                         exact cardinality; s = 0.5, 0.1, 0.01, 0.001, 0.0001 (P = 100 s):
                           uniform-P     u < s (binomial around s N)
                           correlated-P  the clusters nearest to the query, the last one cut by a
                                         bound on u: exactly round(s N) docs
                           anti-P        the same from the farthest clusters
                           and-4         tags s10 AND u < 0.4 (about 4 %)
  DIR/${FILTER_FILES.groundtruth}
                         exact top-k of the docs passing each filter, one row per
                         ${FILTER_FILES.filters} entry (query-major: row q * ${PER_QUERY} + f); a row holds
                         min(k, cardinality) ids, its ivecs header says how many
  Any N works: at small N a selectivity below one doc matches none (cardinality 0 in
  ${FILTER_FILES.filters}, an empty row). The vectors and ${DATASET_FILES.groundtruth} are the same bytes
  with or without --filters (the metadata has a random stream of its own).

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
  --filters            also write the metadata, filters and filtered ground truth above
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
        filters: { type: 'boolean' },
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
    options = {
      n,
      dim,
      queries,
      k,
      similarity,
      seed,
      out: values.out,
      ...(threads ? { threads } : {}),
      progress: !values.quiet,
      ...(values.filters ? { filters: true } : {}),
    };
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`prescore gen: ${err.message}\n(see prescore gen --help)\n`);
      return 2;
    }
    throw err;
  }
  try {
    const { info, dir, timings, groundTruthKernel, filters } = await generateDataset(options);
    const gib = ((info.n + info.queries) * (info.dim + 1) * 4) / 2 ** 30;
    process.stdout.write(
      `generated ${dir}: ${info.n} x ${info.dim} base, ${info.queries} queries, top-${info.k} ${info.similarity} ground truth ` +
        `(seed ${info.seed}, latent ${latentDims(info.dim)} dims, ${gib.toFixed(2)} GiB)\n` +
        `  base ${formatDuration(timings.base)}, queries ${formatDuration(timings.queries)}, ` +
        `ground truth ${formatDuration(timings.groundTruth)} (${groundTruthKernel}), ` +
        `${filters ? `filters ${formatDuration(timings.filters ?? 0)}, ` : ''}total ${formatDuration(timings.total)}\n` +
        (filters
          ? `  filters: ${filters.entries} (${PER_QUERY} per query), filtered ground truth in ${filters.passes} pass${filters.passes === 1 ? '' : 'es'} over the base (${filters.kernel})` +
            `${filters.empty > 0 ? `; ${filters.empty} match no doc at N = ${info.n} (empty ground-truth rows)` : ''}\n`
          : ''),
    );
    return 0;
  } catch (err) {
    process.stderr.write(`prescore gen: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await Executor.shutdown();
  }
}
