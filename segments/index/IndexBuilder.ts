import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_GRAPH_BEAM_WIDTH, defaultMinConnections } from './graphBuildPolicy.js';
import { DEFAULT_MAX_CONN } from '../hnsw/HnswGraphBuilder.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';
import { assertNoZeroRows, detectFormat, openVectorSource, type VectorFormat } from '../input/index.js';
import { FlatVectorsWriter } from '../flat/FlatVectorsWriter.js';
import { segmentFileName } from '../flat/FlatVectorsFormat.js';
import { SQ_DATA_EXTENSION, SQ_META_EXTENSION } from '../quantized/ScalarQuantizedVectorsFormat.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION } from '../hnsw/HnswVectorsReader.js';
import { listCommitGenerations, newSegmentId, PRESCORE_FORMAT_SUFFIX, writeCommit, type SegmentCommitInfo } from './CommitPoint.js';
import { DocIds } from './DocIds.js';
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
import { FieldNumbers, SegmentDocumentsWriter } from './SegmentDocumentsWriter.js';
import { DOC_VALUES_SUFFIX } from './SegmentDocumentsWriter.js';
import { DV_DATA_EXTENSION, DV_META_EXTENSION } from '../docvalues/Lucene90DocValuesFormat.js';
import { FIELD_INFOS_EXTENSION } from '../lucene/FieldInfos.js';

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
  if (!mapped) mapping.put(fieldName, { type: 'dense_vector', docValues: false, dims: undefined, similarity: esSimilarity(similarity), indexOptions: null });
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

  const fieldNumbers = new FieldNumbers();
  const vectorField = {
    name: fieldName,
    dims,
    similarity: options.similarity.name,
    format: PRESCORE_FORMAT_SUFFIX.slice(0, PRESCORE_FORMAT_SUFFIX.lastIndexOf('_')),
    formatSuffix: PRESCORE_FORMAT_SUFFIX.slice(PRESCORE_FORMAT_SUFFIX.lastIndexOf('_') + 1),
  };

  /** The segment being written: its fp32 writer, its documents and the ids of its docs. */
  interface OpenSegment {
    readonly name: string;
    readonly id: Uint8Array;
    readonly writer: FlatVectorsWriter;
    readonly docs: SegmentDocumentsWriter;
    readonly ids: string[];
    readonly firstRow: number;
  }
  let open: OpenSegment | null = null;
  let rows = 0;

  const startSegment = (firstRow: number): OpenSegment => {
    const name = `_${(nextSegment++).toString(36)}`;
    const id = newSegmentId();
    const writer = new FlatVectorsWriter(options.out, name, id, PRESCORE_FORMAT_SUFFIX, { fieldNumber: 0, similarity: options.similarity, dims });
    created.push(writer.dataPath, writer.metaPath);
    // Named up front: a failed build deletes them whether or not they were written.
    for (const ext of ['fdt', 'fdx', 'fdm', FIELD_INFOS_EXTENSION]) created.push(join(options.out, `${name}.${ext}`));
    for (const ext of [DV_DATA_EXTENSION, DV_META_EXTENSION]) created.push(join(options.out, segmentFileName(name, DOC_VALUES_SUFFIX, ext)));
    const docs = new SegmentDocumentsWriter(options.out, { name, id }, fieldNumbers, vectorField);
    return { name, id, writer, docs, ids: [], firstRow };
  };

  /** Closes the segment's `.vec/.vemf`, writes its ids, and hands quantization + graph to a worker. */
  const finishSegment = (seg: OpenSegment): void => {
    const count = seg.writer.size;
    seg.writer.finish();
    seg.docs.finish(mapping);
    const ids = sequentialIds(seg.ids, seg.firstRow) ? DocIds.sequential(seg.firstRow, count) : DocIds.explicit(seg.ids);
    created.push(DocIds.write(options.out, seg.name, seg.id, ids));
    for (const ext of [SQ_DATA_EXTENSION, SQ_META_EXTENSION, HNSW_META_EXTENSION, HNSW_INDEX_EXTENSION]) {
      created.push(join(options.out, segmentFileName(seg.name, PRESCORE_FORMAT_SUFFIX, ext)));
    }
    const buildGraph = count > flatThreshold;
    segments.push({ name: seg.name, id: seg.id, maxDoc: count, suffix: PRESCORE_FORMAT_SUFFIX, hasGraph: buildGraph });
    const build = services.buildSegment({
      dir: options.out,
      name: seg.name,
      id: seg.id,
      suffix: PRESCORE_FORMAT_SUFFIX,
      fieldNumber: 0,
      similarity: options.similarity.ordinal,
      dims,
      count,
      vecPath: seg.writer.dataPath,
      vecOffset: seg.writer.vectorDataOffset,
      buildGraph,
      m: options.m ?? DEFAULT_MAX_CONN,
      beamWidth: options.beamWidth ?? DEFAULT_GRAPH_BEAM_WIDTH,
      minConnections: options.minConnections ?? defaultMinConnections(options.m ?? DEFAULT_MAX_CONN),
      seed: (options.seed ?? 42) + segments.length,
      quantization: options.quantization,
      progress: counters,
    });
    build.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
    builds.push(build);
  };

  try {
    const cosine = options.similarity === VectorSimilarityFunction.COSINE;
    for await (const batch of source.batches(Math.min(segmentDocs, 8192))) {
      if (cosine) assertNoZeroRows(source.path, batch.vectors, dims, batch.rows, batch.firstRow);
      for (let offset = 0; offset < batch.rows; ) {
        const seg: OpenSegment = (open ??= startSegment(batch.firstRow + offset));
        const take = Math.min(batch.rows - offset, segmentDocs - seg.writer.size);
        seg.writer.addVectors(batch.vectors.subarray(offset * dims, (offset + take) * dims), take);
        for (let i = 0; i < take; i++) {
          seg.ids.push(batch.ids[offset + i]!);
          seg.docs.add(batch.ids[offset + i]!, batch.docs[offset + i]!);
        }
        offset += take;
        rows += take;
        if (seg.writer.size === segmentDocs) {
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
      ]),
    });
    deleteUnreferencedFiles(options.out);
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
    (open as OpenSegment | null)?.writer.abort();
    (open as OpenSegment | null)?.docs.abort();
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

/** Elasticsearch's name of a similarity (`l2_norm` for EUCLIDEAN). */
function esSimilarity(sim: VectorSimilarityFunction): DenseVectorSimilarity {
  return sim === VectorSimilarityFunction.EUCLIDEAN ? 'l2_norm' : (sim.userName as DenseVectorSimilarity);
}

/** Whether ids are the row numbers from `firstRow` on (the compact DocIds form). */
function sequentialIds(ids: readonly string[], firstRow: number): boolean {
  for (let i = 0; i < ids.length; i++) if (ids[i] !== String(firstRow + i)) return false;
  return true;
}

/** Segment names must never be reused: continue after the largest `_N` present. */
function nextSegmentNumber(dir: string): number {
  let max = -1;
  for (const f of readdirSync(dir)) {
    const m = /^_([0-9a-z]+)[._]/.exec(f);
    if (m) max = Math.max(max, parseInt(m[1], 36));
  }
  return max + 1;
}
