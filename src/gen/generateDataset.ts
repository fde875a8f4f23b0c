import { mkdir, open, rename, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FvecsWriter, IvecsWriter } from '../../segments/input/XvecsWriter.js';
import { Executor } from '../executor/Executor.js';
import { GEN_CHUNK, GEN_GROUND_TRUTH } from '../executor/tasks.js';
import { Progress, type ProgressStream } from '../progress/Progress.js';
import { CHUNK_ROWS, type DatasetInfo, type DatasetSpec, type FiltersInfo, GENERATOR_VERSION, type ModelSpec, STREAM_BASE, STREAM_QUERY } from './DatasetSpec.js';
import { esMapping, fieldLines, type FieldColumns, sharedFieldColumns } from './DocFields.js';
import { EmbeddingModel } from './EmbeddingModel.js';
import { chunkPlan, computeFilteredGroundTruth, raggedIvecs } from './FilteredGroundTruth.js';
import { buildFilterSet, CORRELATIONS, FILTER_KINDS, FILTER_ORDER, FILTERS_VERSION, filtersJson, PER_QUERY, SELECTIVITIES } from './FilterSet.js';
import { generateRows } from './genChunkTask.js';
import { finalizeScores, prepareQueries, TopK, type TopKResult } from './GroundTruth.js';

export const DATASET_FILES = {
  base: 'base.fvecs',
  query: 'query.fvecs',
  groundtruth: 'groundtruth.ivecs',
  info: 'dataset.json',
} as const;

/** The files `--filters` adds (layouts: DocFields.ts, FilterSet.ts, FilteredGroundTruth.ts). */
export const FILTER_FILES = {
  fields: 'fields.jsonl',
  mapping: 'mapping.json',
  filters: 'filters.json',
  groundtruth: 'filtered_groundtruth.ivecs',
} as const;

/** Bytes of vectors per generation task (whole chunks, at least one). */
const TASK_BYTES = 4 << 20;

export interface GenerateOptions extends DatasetSpec {
  readonly out: string;
  /** Executor threads (only if this call creates the executor); default: see Executor. */
  readonly threads?: number;
  /** Progress output: true (stderr, the default), false, or a stream. */
  readonly progress?: boolean | ProgressStream;
  /**
   * Also write documents' metadata, Elasticsearch filters of known selectivity and their exact
   * filtered ground truth (FILTER_FILES). The other files are the same bytes either way.
   */
  readonly filters?: boolean;
}

/** What `filters` produced. */
export interface FiltersResult {
  /** (query, filter) entries: queries x PER_QUERY. */
  readonly entries: number;
  /** Entries no doc passes (their ground-truth rows are empty). */
  readonly empty: number;
  /** Passes over the base the filtered ground truth made (one per chunk of queries). */
  readonly passes: number;
  readonly kernel: 'wasm' | 'js' | 'mixed';
}

export interface GenerateResult {
  readonly info: DatasetInfo;
  readonly dir: string;
  /** Wall-clock milliseconds per phase. */
  readonly timings: {
    readonly base: number;
    readonly queries: number;
    readonly groundTruth: number;
    /** `filters`: building the filters and their ground truth (the fields are written with the base). */
    readonly filters?: number;
    readonly total: number;
  };
  /** How ground truth was scored. */
  readonly groundTruthKernel: GroundTruthResult['kernel'];
  readonly filters?: FiltersResult;
}

export function validateSpec(spec: DatasetSpec): void {
  const int = (name: string, v: number, min: number, max: number) => {
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${v}`);
  };
  int('n', spec.n, 1, 2 ** 31 - 1);
  int('dim', spec.dim, 1, 1 << 16);
  int('queries', spec.queries, 1, 1 << 24);
  int('k', spec.k, 1, spec.n);
}

/**
 * Generates DIR/base.fvecs, DIR/query.fvecs, DIR/groundtruth.ivecs and DIR/dataset.json on the
 * executor: vector chunks are generated in parallel and written in order (a bounded window of
 * tasks in flight, so memory does not grow with n); ground truth splits the base rows into ranges
 * that workers read from base.fvecs themselves, and merges their top-k here. dataset.json is
 * written last: a directory with it is complete.
 */
export async function generateDataset(options: GenerateOptions): Promise<GenerateResult> {
  const spec: DatasetSpec = {
    seed: options.seed,
    dim: options.dim,
    similarity: options.similarity,
    n: options.n,
    queries: options.queries,
    k: options.k,
  };
  validateSpec(spec);
  const dir = options.out;
  const withFilters = options.filters === true;
  await mkdir(dir, { recursive: true });
  await rm(join(dir, DATASET_FILES.info), { force: true });
  // A previous --filters run's files would not match the new base.
  for (const f of Object.values(FILTER_FILES)) await rm(join(dir, f), { force: true });
  await checkFreeSpace(dir, spec, withFilters);
  const executor = Executor.get(options.threads ? { threads: options.threads } : {});
  const progress = (label: string, total: number, unit: string) =>
    new Progress({
      label,
      total,
      unit,
      ...(typeof options.progress === 'object' ? { stream: options.progress } : {}),
      ...(options.progress === false ? { enabled: false } : {}),
    });
  const modelSpec: ModelSpec = { seed: spec.seed, dim: spec.dim, similarity: spec.similarity };
  const t0 = performance.now();

  const basePath = join(dir, DATASET_FILES.base);
  const fields = withFilters ? { columns: sharedFieldColumns(spec.n), path: join(dir, FILTER_FILES.fields) } : undefined;
  await writeStream(executor, modelSpec, STREAM_BASE, spec.n, `${basePath}.tmp`, progress('gen base', spec.n, 'vectors'), undefined, fields);
  await rename(`${basePath}.tmp`, basePath);
  const t1 = performance.now();

  // Queries are kept (shared memory) for ground truth, and written.
  const queries = new Float32Array(new SharedArrayBuffer(spec.queries * spec.dim * 4));
  await writeStream(executor, modelSpec, STREAM_QUERY, spec.queries, join(dir, DATASET_FILES.query), progress('gen queries', spec.queries, 'vectors'), queries);
  const t2 = performance.now();

  const truth = await computeGroundTruth(executor, basePath, spec, queries, progress('ground truth', spec.n, 'base rows'));
  const gtPath = join(dir, DATASET_FILES.groundtruth);
  const writer = await IvecsWriter.open(`${gtPath}.tmp`, truth.k);
  try {
    await writer.write(truth.ids);
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
  await rename(`${gtPath}.tmp`, gtPath);
  const t3 = performance.now();

  let filters: FiltersResult | undefined;
  if (fields) filters = await writeFilters(executor, dir, spec, basePath, queries, fields.columns, progress);
  const t4 = performance.now();

  const info = datasetInfo(spec, withFilters);
  await writeFile(join(dir, DATASET_FILES.info), `${JSON.stringify(info, null, 2)}\n`);
  return {
    info,
    dir,
    timings: { base: t1 - t0, queries: t2 - t1, groundTruth: t3 - t2, ...(filters ? { filters: t4 - t3 } : {}), total: performance.now() - t0 },
    groundTruthKernel: truth.kernel,
    ...(filters ? { filters } : {}),
  };
}

/**
 * mapping.json, filters.json and filtered_groundtruth.ivecs (fields.jsonl is written with the
 * base). The filters are built here from the columns; their ground truth runs on the executor.
 */
async function writeFilters(
  executor: Executor,
  dir: string,
  spec: DatasetSpec,
  basePath: string,
  queries: Float32Array,
  columns: FieldColumns,
  progress: (label: string, total: number, unit: string) => Progress,
): Promise<FiltersResult> {
  await writeFile(join(dir, FILTER_FILES.mapping), `${JSON.stringify(esMapping(spec.dim, spec.similarity), null, 2)}\n`);
  const entries = buildFilterSet({ ...spec, queries, columns, model: EmbeddingModel.for(spec) });
  const { chunks } = chunkPlan(spec.n, spec.queries, spec.k, spec.dim, executor.threads);
  const truth = await computeFilteredGroundTruth({
    executor,
    basePath,
    spec,
    queries,
    entries,
    columns,
    progress: progress('filtered truth', spec.n * chunks, 'base rows'),
  });
  const filtersPath = join(dir, FILTER_FILES.filters);
  await writeFile(`${filtersPath}.tmp`, filtersJson(entries, spec));
  await rename(`${filtersPath}.tmp`, filtersPath);
  const gtPath = join(dir, FILTER_FILES.groundtruth);
  await writeFile(`${gtPath}.tmp`, raggedIvecs(truth.rows));
  await rename(`${gtPath}.tmp`, gtPath);
  return {
    entries: entries.length,
    empty: entries.reduce((s, e) => s + (e.cardinality === 0 ? 1 : 0), 0),
    passes: truth.passes,
    kernel: truth.kernel,
  };
}

export function datasetInfo(spec: DatasetSpec, filters = false): DatasetInfo {
  const info: DatasetInfo = {
    generator: 'prescore-gen',
    generatorVersion: GENERATOR_VERSION,
    n: spec.n,
    dim: spec.dim,
    queries: spec.queries,
    similarity: spec.similarity,
    seed: spec.seed,
    k: spec.k,
    files: { base: DATASET_FILES.base, query: DATASET_FILES.query, groundtruth: DATASET_FILES.groundtruth },
    groundTruth: `exact top-${spec.k} by ${spec.similarity} (float64 from the float32 vectors), ties to the lower id; ids are 0-based rows of ${DATASET_FILES.base}`,
  };
  return filters ? { ...info, filters: filtersInfo(spec) } : info;
}

/** dataset.json's `filters` block (only with --filters). */
export function filtersInfo(spec: DatasetSpec): FiltersInfo {
  return {
    version: FILTERS_VERSION,
    files: { ...FILTER_FILES },
    selectivities: SELECTIVITIES,
    correlations: CORRELATIONS,
    perQuery: PER_QUERY,
    names: FILTER_KINDS.map((kind) => kind.name),
    k: spec.k,
    order: FILTER_ORDER,
    groundTruth:
      `exact top-${spec.k} of the docs that pass the filter, ranked as ${DATASET_FILES.groundtruth}; ` +
      `each row holds min(k, cardinality) ids (its own ivecs header says how many: fewer than k only when fewer docs pass, 0 when none does)`,
  };
}

async function checkFreeSpace(dir: string, spec: DatasetSpec, filters: boolean): Promise<void> {
  let need = (spec.n + spec.queries) * (spec.dim + 1) * 4 + spec.queries * (spec.k + 1) * 4;
  // fields.jsonl ~80 bytes a row; the filtered ground truth; filters.json (cluster lists) ~10 KB a query.
  if (filters) need += spec.n * 80 + spec.queries * PER_QUERY * (spec.k + 1) * 4 + spec.queries * 10_000;
  try {
    const st = await statfs(dir);
    const free = st.bavail * st.bsize;
    if (free < need) {
      throw new Error(`${dir}: not enough disk space: the dataset needs ${(need / 2 ** 30).toFixed(2)} GiB, ${(free / 2 ** 30).toFixed(2)} GiB free`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code) return; // statfs unsupported: let writes fail if they must
    throw err;
  }
}

/**
 * Generates `rows` rows of a stream on the executor and writes them in order to an .fvecs file;
 * optionally also copies them into `keep`. With `fields` (base rows, --filters) the tasks also
 * fill the rows' metadata columns and the rows' fields.jsonl lines are written in the same order.
 */
async function writeStream(
  executor: Executor,
  spec: ModelSpec,
  stream: number,
  rows: number,
  path: string,
  progress: Progress,
  keep?: Float32Array,
  fields?: { readonly columns: FieldColumns; readonly path: string },
): Promise<void> {
  const chunksPerTask = Math.max(1, Math.floor(TASK_BYTES / (CHUNK_ROWS * spec.dim * 4)));
  const rowsPerTask = chunksPerTask * CHUNK_ROWS;
  const tasks = Math.ceil(rows / rowsPerTask);
  const window = Math.max(2, executor.threads * 2);
  const writer = await FvecsWriter.open(path, spec.dim);
  const fieldsTmp = fields ? `${fields.path}.tmp` : '';
  const fieldsFile = fields ? await open(fieldsTmp, 'w') : undefined;
  const inFlight: Promise<Float32Array>[] = [];
  let next = 0;
  const submit = () => {
    const firstRow = next * rowsPerTask;
    inFlight.push(
      executor.run(GEN_CHUNK, {
        spec,
        stream,
        firstChunk: next * chunksPerTask,
        rows: Math.min(rowsPerTask, rows - firstRow),
        ...(fields ? { fields: fields.columns } : {}),
      }),
    );
    next++;
  };
  try {
    while (next < tasks && inFlight.length < window) submit();
    for (let t = 0; t < tasks; t++) {
      const vectors = await inFlight.shift()!;
      if (next < tasks) submit();
      if (keep) keep.set(vectors, t * rowsPerTask * spec.dim);
      await writer.write(vectors);
      if (fieldsFile) {
        const first = t * rowsPerTask;
        await fieldsFile.write(fieldLines(fields!.columns, first, first + vectors.length / spec.dim));
      }
      progress.tick(vectors.length / spec.dim);
    }
    await writer.close();
    if (fieldsFile) {
      await fieldsFile.close();
      await rename(fieldsTmp, fields!.path);
    }
    progress.finish();
  } catch (err) {
    progress.stop();
    await writer.abort();
    await fieldsFile?.close().catch(() => {});
    await Promise.allSettled(inFlight);
    await rm(path, { force: true });
    if (fieldsFile) await rm(fieldsTmp, { force: true });
    throw err;
  }
}

/**
 * Exact top-k of base.fvecs for every query: the base rows are split into ranges, each scored
 * by a `gen.groundTruth` task that reads its range itself; the partial top-k lists are merged
 * as they arrive.
 */
export async function computeGroundTruth(
  executor: Executor,
  basePath: string,
  spec: Pick<DatasetSpec, 'n' | 'dim' | 'k' | 'similarity'>,
  queries: Float32Array,
  progress?: Progress,
  kernel: 'auto' | 'wasm' | 'js' = 'auto',
): Promise<GroundTruthResult> {
  const { n, dim, k, similarity } = spec;
  const shared = queries.buffer instanceof SharedArrayBuffer ? queries : copyToShared(queries);
  const prepared = prepareQueries(shared, dim);
  const rowsPerTask = Math.max(1024, Math.ceil(n / (executor.threads * 4)));
  const counter = Progress.counter();
  progress?.attach(counter);
  const top = new TopK(prepared.count, Math.min(k, n));
  const tasks: Promise<void>[] = [];
  const kernels = new Set<'wasm' | 'js'>();
  let rescored = 0;
  try {
    for (let first = 0; first < n; first += rowsPerTask) {
      const rows = Math.min(rowsPerTask, n - first);
      tasks.push(
        executor.run(GEN_GROUND_TRUTH, { path: basePath, dim, firstRow: first, rows, queries: shared, k: Math.min(k, n), similarity, counter, kernel }).then((partial) => {
          top.merge(partial);
          kernels.add(partial.kernel);
          rescored += partial.rescored;
        }),
      );
    }
    await Promise.all(tasks);
    progress?.finish();
  } catch (err) {
    progress?.stop();
    await Promise.allSettled(tasks);
    throw err;
  }
  const kernel_ = kernels.size === 1 ? [...kernels][0] : 'mixed';
  return { ...finalizeScores(top.result(), prepared, similarity), kernel: kernel_, rescored };
}

export interface GroundTruthResult extends TopKResult {
  /** 'wasm': SIMD prefilter + exact float64 re-scoring; 'js': float64 throughout (identical results). */
  readonly kernel: 'wasm' | 'js' | 'mixed';
  /** Pairs re-scored in float64 after the wasm prefilter. */
  readonly rescored: number;
}

function copyToShared(a: Float32Array): Float32Array {
  const s = new Float32Array(new SharedArrayBuffer(a.byteLength));
  s.set(a);
  return s;
}

/** Rows [0, count) of a stream, generated in process (tests; the same bytes as the executor's). */
export function generateVectors(spec: ModelSpec, stream: 'base' | 'query', count: number): Float32Array {
  return generateRows({ spec, stream: stream === 'base' ? STREAM_BASE : STREAM_QUERY, firstChunk: 0, rows: count });
}

/** Base rows [0, count) with their metadata columns, in process (tests; the same as --filters writes). */
export function generateBaseWithFields(spec: ModelSpec, count: number): { vectors: Float32Array; columns: FieldColumns } {
  const columns: FieldColumns = {
    cluster: new Uint16Array(count),
    u: new Float64Array(count),
    tags: new Uint8Array(count),
    ts: new Float64Array(count),
  };
  return { vectors: generateRows({ spec, stream: STREAM_BASE, firstChunk: 0, rows: count, fields: columns }), columns };
}
