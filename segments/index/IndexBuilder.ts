import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { RECALL_CALIBRATION_FILE } from './RecallCalibrationFormat.js';
import { join } from 'node:path';
import { DEFAULT_GRAPH_BEAM_WIDTH, defaultMinConnections } from './graphBuildPolicy.js';
import { DEFAULT_MAX_CONN } from '../hnsw/HnswGraphBuilder.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';
import { assertNoZeroRows, detectFormat, openVectorSource, type VectorFormat } from '../input/index.js';
import { listCommitGenerations, writeCommit, type SegmentCommitInfo } from './CommitPoint.js';
import { deleteUnreferencedFiles } from './IndexFileDeleter.js';
import { DirectoryLock } from '../store/DirectoryLock.js';
import { SILENT_PROGRESS, type ProgressListener } from './ProgressListener.js';
import type { SegmentBuilder, SegmentBuildResult } from './SegmentBuildTask.js';
import { defaultSegmentDocs, maxSegmentDocs, DEFAULT_SEGMENT_DOCS } from './segmentSizePolicy.js';
import { quantizationSettings, type QuantizationOptions } from '../quantized/ScalarQuantizedVectorsWriter.js';
import { DocumentParser } from '../document/DocumentParser.js';
import { Mapping } from '../document/Mapping.js';
import type { DenseVectorSimilarity } from '../document/FieldMapping.js';
import { openDocuments, pairDocuments, vectorDocuments, type DocumentSource } from '../input/DocumentSource.js';
import { InputError } from '../input/InputError.js';
import { FieldNumbers } from './SegmentDocumentsWriter.js';
import { encodeSegmentSettings, nextSegmentNumber, SEGMENT_SETTINGS_KEY, SegmentWriter, type SegmentSettings } from './SegmentWriter.js';

export interface BuildOptions {
  /** The documents (JSON Lines or an Elasticsearch _bulk body) or the vectors (fvecs, npy) to index. */
  readonly input: string;
  readonly out: string;
  /** Required unless the mapping's dense_vector field names one (they must agree when both do). */
  readonly similarity?: VectorSimilarityFunction;
  /**
   * The index's mapping (Elasticsearch's `mappings` object, read by Mapping.parse); default an
   * empty one: every field mapped dynamically. Kept with the index (commit user data `mapping`).
   */
  readonly mapping?: Mapping;
  /** With a vector file as input: a JSON Lines file of the same rows' other fields (row i: doc i's fields). */
  readonly fields?: string;
  /** Docs per segment (the last one takes the rest). Default: defaultSegmentDocs(input count, dims). */
  readonly segmentDocs?: number;
  /** Vector field name. Default `vector`. */
  readonly field?: string;
  readonly format?: VectorFormat;
  /** Segments with more docs than this get an HNSW graph; smaller ones are scanned exhaustively. Default 10000. */
  readonly flatThreshold?: number;
  readonly m?: number;
  /** HNSW construction beam; default DEFAULT_GRAPH_BEAM_WIDTH (200: graphBuildPolicy.ts). */
  readonly beamWidth?: number;
  /** Level-0 lists shorter than this are filled with the best pruned candidates; default M / 2 (defaultMinConnections), 0: Lucene's graph. */
  readonly minConnections?: number;
  readonly seed?: number;
  /** Doc bits, centroid rule and rotation of the codes (default: quantizationSettings' defaults). */
  readonly quantization?: QuantizationOptions;
}

/** What the builder needs from the layer above: where segments are built and where progress goes. */
export interface BuildServices {
  /** Quantizes a written segment and builds its graph (the service runs it on an executor worker). */
  readonly buildSegment: SegmentBuilder;
  /** Default: silent. */
  readonly progress?: ProgressListener;
}

/** What a build wrote. */
export interface BuildReport {
  readonly dir: string;
  readonly commit: string;
  readonly docs: number;
  readonly dims: number;
  readonly segments: number;
  readonly graphs: number;
  readonly elapsedMs: number;
  readonly bytes: number;
}

export { DEFAULT_SEGMENT_DOCS, DEFAULT_GRAPH_BEAM_WIDTH };
export const DEFAULT_FLAT_THRESHOLD = 10_000;
export const DEFAULT_FIELD = 'vector';

/**
 * `prescore build`: streams the input once, writing each segment's fp32 `.vec` in doc order on
 * the main thread; as soon as a segment's vectors are on disk, a worker quantizes it and builds
 * its graph while the main thread streams the next one. The commit point is published only after
 * every segment is complete, so bad input or a crash never leaves a partial index visible: all
 * files of a failed build are deleted, and a previous commit stays intact.
 *
 * The build holds the directory's write lock (`write.lock`) throughout: a second builder fails at
 * once naming this one's pid and touches nothing. Once the lock is held, files of an earlier
 * build that was killed (segments no commit references, commit temp files) are deleted first.
 */
export async function buildIndex(options: BuildOptions, services: BuildServices): Promise<BuildReport> {
  const started = performance.now();
  if (options.segmentDocs !== undefined && !(Number.isInteger(options.segmentDocs) && options.segmentDocs >= 1)) {
    throw new RangeError(`--segment-docs must be a positive integer, got ${options.segmentDocs}`);
  }
  const m = options.m ?? DEFAULT_MAX_CONN;
  if (options.minConnections !== undefined && !(Number.isInteger(options.minConnections) && options.minConnections >= 0 && options.minConnections <= 2 * m)) {
    throw new RangeError(`--min-connections must be an integer in [0, 2 x M = ${2 * m}], got ${options.minConnections}`);
  }
  const mapping = options.mapping ?? Mapping.empty();
  const mapped = mapping.vectorField();
  const fieldName = mapped?.path ?? options.field ?? DEFAULT_FIELD;
  if (mapped && options.field !== undefined && options.field !== mapped.path)
    throw new RangeError(`--field ${options.field}: the mapping's dense_vector field is [${mapped.path}]`);
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(fieldName)) throw new RangeError(`invalid field name "${fieldName}" (letters, digits, _ . - only)`);
  if (options.similarity === undefined && !mapped) throw new RangeError('--similarity is required (or a dense_vector field in the mapping)');
  const similarity = resolveSimilarity(options.similarity, mapped?.mapping.similarity);
  if (!mapped) mapping.put(fieldName, { type: 'dense_vector', docValues: false, dims: undefined, similarity: similarity.esName, indexOptions: null });
  const parser = new DocumentParser(mapping);
  const source = await openBuildInput(options, parser, fieldName);
  const dense = mapping.field(fieldName);
  if (dense?.type === 'dense_vector' && dense.dims !== undefined && dense.dims !== source.dims)
    throw new InputError(options.input, `field [${fieldName}]: the vectors have ${source.dims} dims, the mapping says ${dense.dims}`);
  if (dense?.type === 'dense_vector' && dense.dims === undefined) mapping.put(fieldName, { ...dense, dims: source.dims });
  const encoding = quantizationSettings(options.quantization).encoding;
  const segmentDocs = options.segmentDocs ?? defaultSegmentDocs(source.count, source.dims, encoding);
  const maxDocs = maxSegmentDocs(source.dims, encoding);
  if (Math.min(segmentDocs, source.count ?? segmentDocs) > maxDocs) {
    throw new RangeError(
      `--segment-docs ${segmentDocs}: a segment of ${source.dims}-dim vectors at ${encoding.docBits} bits can hold at most ${maxDocs} docs (its graph is built in one worker's 4 GiB wasm memory)`,
    );
  }
  mkdirSync(options.out, { recursive: true });
  const lock = await DirectoryLock.obtain(options.out, 'build');
  try {
    // Names continue after every segment present, orphans included: a name is never reused.
    const firstSegment = nextSegmentNumber(options.out);
    deleteUnreferencedFiles(options.out);
    return await buildLocked({ ...options, similarity }, services, source, segmentDocs, started, firstSegment, mapping);
  } finally {
    lock.release();
  }
}

async function buildLocked(
  options: BuildOptions & { readonly similarity: VectorSimilarityFunction },
  services: BuildServices,
  source: DocumentSource,
  segmentDocs: number,
  started: number,
  firstSegment: number,
  mapping: Mapping,
): Promise<BuildReport> {
  const fieldName = options.field ?? DEFAULT_FIELD;
  const flatThreshold = options.flatThreshold ?? DEFAULT_FLAT_THRESHOLD;
  const progress = services.progress ?? SILENT_PROGRESS;
  const dims = source.dims;
  let nextSegment = firstSegment;
  const created: string[] = [];
  const segments: SegmentCommitInfo[] = [];
  const builds: Promise<SegmentBuildResult>[] = [];
  const counters = new Int32Array(new SharedArrayBuffer(8));
  const writing = progress.stage('write vectors', source.count, 'vectors');

  const settings: SegmentSettings = {
    dir: options.out,
    fieldName,
    similarity: options.similarity,
    dims,
    fieldNumbers: new FieldNumbers(),
    flatThreshold,
    m: options.m ?? DEFAULT_MAX_CONN,
    beamWidth: options.beamWidth ?? DEFAULT_GRAPH_BEAM_WIDTH,
    minConnections: options.minConnections ?? defaultMinConnections(options.m ?? DEFAULT_MAX_CONN),
    quantization: options.quantization,
  };
  let open: SegmentWriter | null = null;
  let rows = 0;

  const startSegment = (firstRow: number): SegmentWriter => {
    const writer = new SegmentWriter(settings, `_${(nextSegment++).toString(36)}`, firstRow);
    created.push(...writer.files);
    return writer;
  };

  /** Closes the segment's files on this thread and hands quantization + graph to a worker. */
  const finishSegment = (seg: SegmentWriter): void => {
    // Segment i's graph seed is seed + i + 1 (as builds before SegmentWriter had it: indexes stay reproducible).
    const { info, build } = seg.finish(mapping, (options.seed ?? 42) + segments.length + 1, counters);
    segments.push(info);
    const built = services.buildSegment(build);
    built.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
    builds.push(built);
  };

  try {
    const cosine = options.similarity === VectorSimilarityFunction.COSINE;
    for await (const batch of source.batches(Math.min(segmentDocs, 8192))) {
      if (cosine) assertNoZeroRows(source.path, batch.vectors, dims, batch.rows, batch.firstRow);
      for (let offset = 0; offset < batch.rows; ) {
        const seg: SegmentWriter = (open ??= startSegment(batch.firstRow + offset));
        const take = Math.min(batch.rows - offset, segmentDocs - seg.size);
        seg.add(batch.vectors.subarray(offset * dims, (offset + take) * dims), batch.ids.slice(offset, offset + take), batch.docs.slice(offset, offset + take));
        offset += take;
        rows += take;
        if (seg.size === segmentDocs) {
          finishSegment(seg);
          open = null;
        }
      }
      writing.update(rows);
    }
    if (open) finishSegment(open);
    open = null;
    writing.finish();
    if (rows === 0) throw new Error(`${options.input}: no vectors to index`);

    const building = progress.stage('quantize + graph', rows, 'vectors');
    const poll = setInterval(() => {
      const graphTotal = segments.filter((s) => s.hasGraph).reduce((a, s) => a + s.maxDoc, 0);
      // One bar over both stages: quantizing counts half, graph insertion the other half.
      building.update(graphTotal > 0 ? Math.round((Atomics.load(counters, 0) + (Atomics.load(counters, 1) * rows) / graphTotal) / 2) : Atomics.load(counters, 0));
    }, 200);
    try {
      await Promise.all(builds);
    } finally {
      clearInterval(poll);
    }
    building.update(rows);
    building.finish();

    const generation = (listCommitGenerations(options.out).at(-1) ?? 0) + 1;
    const commitName = writeCommit(options.out, {
      generation,
      field: { name: fieldName, number: 0, similarity: options.similarity, dims },
      segments,
      userData: new Map([
        ['mapping', JSON.stringify(mapping.toJSON())],
        ['source', options.input],
        ['createdAt', new Date().toISOString()],
        ['segmentDocs', String(segmentDocs)],
        ['flatThreshold', String(flatThreshold)],
        [SEGMENT_SETTINGS_KEY, encodeSegmentSettings(settings)],
      ]),
    });
    deleteUnreferencedFiles(options.out);
    // A build replaces every doc: a calibration of what was there before describes other data.
    rmSync(join(options.out, RECALL_CALIBRATION_FILE), { force: true });
    const bytes = readdirSync(options.out).reduce((a, f) => a + statSync(join(options.out, f)).size, 0);
    return {
      dir: options.out,
      commit: commitName,
      docs: rows,
      dims,
      segments: segments.length,
      graphs: segments.filter((s) => s.hasGraph).length,
      elapsedMs: performance.now() - started,
      bytes,
    };
  } catch (e) {
    writing.stop();
    (open as SegmentWriter | null)?.abort();
    await Promise.allSettled(builds);
    for (const f of created) rmSync(f, { force: true });
    throw e;
  }
}

/**
 * The build's input as documents: JSON Lines or an Elasticsearch _bulk body (`.jsonl`, `.ndjson`),
 * or a vector file alone or paired with a row-aligned fields file (`fields`).
 */
async function openBuildInput(options: BuildOptions, parser: DocumentParser, field: string): Promise<DocumentSource> {
  const format = options.format ?? detectFormat(options.input);
  if (format === 'jsonl') {
    if (options.fields !== undefined) throw new RangeError(`--fields pairs a vector file with a fields file; ${options.input} holds whole documents already`);
    return openDocuments(options.input, parser, field);
  }
  const vectors = await openVectorSource(options.input, { format });
  return options.fields === undefined ? vectorDocuments(vectors) : pairDocuments(vectors, options.fields, parser, field);
}

/**
 * The similarity of the build: --similarity or the mapping's dense_vector similarity, which must
 * agree when both are given; a mapping's dense_vector without one means cosine, as in
 * Elasticsearch. Without either, --similarity is required.
 */
function resolveSimilarity(given: VectorSimilarityFunction | undefined, mapped: DenseVectorSimilarity | undefined): VectorSimilarityFunction {
  const fromMapping = mapped === undefined ? undefined : VectorSimilarityFunction.fromName(mapped);
  if (given && fromMapping && given !== fromMapping) throw new RangeError(`--similarity ${given.userName} disagrees with the mapping's dense_vector similarity ${mapped}`);
  return given ?? fromMapping ?? VectorSimilarityFunction.COSINE;
}
