import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FlatVectorsWriter } from '../flat/FlatVectorsWriter.js';
import { FLAT_DATA_EXTENSION, FLAT_META_EXTENSION, segmentFileName } from '../flat/FlatVectorsFormat.js';
import { SQ_DATA_EXTENSION, SQ_META_EXTENSION } from '../quantized/ScalarQuantizedVectorsFormat.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION } from '../hnsw/HnswVectorsReader.js';
import { DV_DATA_EXTENSION, DV_META_EXTENSION } from '../docvalues/Lucene90DocValuesFormat.js';
import { FIELD_INFOS_EXTENSION } from '../lucene/FieldInfos.js';
import { quantizationSettings, type IntervalRule, type QuantizationOptions } from '../quantized/ScalarQuantizedVectorsWriter.js';
import type { DocBits } from '../quantized/ScalarEncodings.js';
import type { CentroidRule } from '../quantized/ScalarQuantizedVectorsFormat.js';
import type { Mapping } from '../document/Mapping.js';
import type { IndexedDocument } from '../input/DocumentSource.js';
import { newSegmentId, PRESCORE_FORMAT_SUFFIX, type SegmentCommitInfo } from './CommitPoint.js';
import { DocIds } from './DocIds.js';
import { DOC_VALUES_SUFFIX, type FieldNumbers, SegmentDocumentsWriter } from './SegmentDocumentsWriter.js';
import type { SegmentBuildArgs } from './SegmentBuildTask.js';
import type { VectorSimilarityFunction } from './VectorSimilarityFunction.js';

/** How every segment of an index is written: its vector field, and how codes and graphs are built. */
export interface SegmentSettings {
  readonly dir: string;
  readonly fieldName: string;
  readonly similarity: VectorSimilarityFunction;
  readonly dims: number;
  /** The index's field numbers (the same in every segment it writes). */
  readonly fieldNumbers: FieldNumbers;
  /** Segments with more docs than this get an HNSW graph; smaller ones are scanned. */
  readonly flatThreshold: number;
  readonly m: number;
  readonly beamWidth: number;
  readonly minConnections: number;
  readonly quantization?: QuantizationOptions;
}

/** A written segment: what the commit records of it, and what a worker needs to quantize it and build its graph. */
export interface WrittenSegment {
  readonly info: SegmentCommitInfo;
  readonly build: SegmentBuildArgs;
}

/**
 * One new segment being written on the main thread (Lucene's per-segment flush): each document's
 * vector streamed into `.vec`, its `_id` and `_source` into stored fields and its doc values
 * gathered; `finish` closes them and writes `_N.ids`, leaving the codes and the graph to the
 * `SegmentBuildArgs` it returns (a worker's job). `files` names every file the segment may ever
 * write, up front, so a failed build or flush can delete them whether or not they were written.
 * The build and the IndexWriter's flush both write segments through this.
 */
export class SegmentWriter {
  readonly id = newSegmentId();
  readonly files: string[] = [];
  private readonly vectors: FlatVectorsWriter;
  private readonly documents: SegmentDocumentsWriter;
  private readonly ids: string[] = [];

  constructor(
    private readonly settings: SegmentSettings,
    /** `_` + base-36 counter; never reused in a directory. */
    readonly name: string,
    /** The input row of the segment's first doc: ids equal to row numbers are stored compactly. */
    private readonly firstRow = 0,
  ) {
    const { dir, dims, similarity, fieldName } = settings;
    this.vectors = new FlatVectorsWriter(dir, name, this.id, PRESCORE_FORMAT_SUFFIX, { fieldNumber: 0, similarity, dims });
    this.files.push(...SegmentWriter.fileNames(dir, name));
    const suffix = PRESCORE_FORMAT_SUFFIX;
    this.documents = new SegmentDocumentsWriter(dir, { name, id: this.id }, settings.fieldNumbers, {
      name: fieldName,
      dims,
      similarity: similarity.name,
      format: suffix.slice(0, suffix.lastIndexOf('_')),
      formatSuffix: suffix.slice(suffix.lastIndexOf('_') + 1),
    });
  }

  /** Every file a segment named `name` may write in `dir`, known before it is written. */
  static fileNames(dir: string, name: string): string[] {
    const files = [join(dir, segmentFileName(name, PRESCORE_FORMAT_SUFFIX, FLAT_DATA_EXTENSION)), join(dir, segmentFileName(name, PRESCORE_FORMAT_SUFFIX, FLAT_META_EXTENSION))];
    for (const ext of ['fdt', 'fdx', 'fdm', FIELD_INFOS_EXTENSION]) files.push(join(dir, `${name}.${ext}`));
    for (const ext of [DV_DATA_EXTENSION, DV_META_EXTENSION]) files.push(join(dir, segmentFileName(name, DOC_VALUES_SUFFIX, ext)));
    for (const ext of [SQ_DATA_EXTENSION, SQ_META_EXTENSION, HNSW_META_EXTENSION, HNSW_INDEX_EXTENSION]) files.push(join(dir, segmentFileName(name, PRESCORE_FORMAT_SUFFIX, ext)));
    files.push(join(dir, `${name}.ids`));
    return files;
  }

  /** Docs added so far. */
  get size(): number {
    return this.vectors.size;
  }

  /** Adds one document; an IndexWriter gives its seqNo and version (kept as `_seq_no` and `_version` doc values). */
  addDocument(id: string, vector: Float32Array, doc: IndexedDocument, written?: { readonly seqNo: number; readonly version: number }): void {
    this.vectors.addVectors(vector, 1);
    this.ids.push(id);
    this.documents.add(id, doc, written);
  }

  /** Adds `ids.length` documents whose vectors are `vectors` (rows of dims floats, in order). */
  add(vectors: Float32Array, ids: readonly string[], docs: readonly IndexedDocument[]): void {
    this.vectors.addVectors(vectors, ids.length);
    for (let i = 0; i < ids.length; i++) {
      this.ids.push(ids[i]!);
      this.documents.add(ids[i]!, docs[i]!);
    }
  }

  /**
   * Closes `.vec/.vemf` and the documents' files (`mapping` types the doc-values columns), writes
   * `_N.ids`, and returns the commit's record of the segment with the build a worker must run
   * before it may be committed.
   */
  finish(mapping: Mapping, seed: number, progress: Int32Array): WrittenSegment {
    const count = this.vectors.size;
    this.vectors.finish();
    this.documents.finish(mapping);
    DocIds.write(this.settings.dir, this.name, this.id, sequentialIds(this.ids, this.firstRow) ? DocIds.sequential(this.firstRow, count) : DocIds.explicit(this.ids));
    const s = this.settings;
    const hasGraph = count > s.flatThreshold;
    return {
      info: { name: this.name, id: this.id, maxDoc: count, suffix: PRESCORE_FORMAT_SUFFIX, hasGraph, delGen: -1, delCount: 0 },
      build: {
        dir: s.dir,
        name: this.name,
        id: this.id,
        suffix: PRESCORE_FORMAT_SUFFIX,
        fieldNumber: 0,
        similarity: s.similarity.ordinal,
        dims: s.dims,
        count,
        vecPath: this.vectors.dataPath,
        vecOffset: this.vectors.vectorDataOffset,
        buildGraph: hasGraph,
        m: s.m,
        beamWidth: s.beamWidth,
        minConnections: s.minConnections,
        seed,
        quantization: s.quantization,
        progress,
      },
    };
  }

  /** Stops writing (a failed build or flush); the caller deletes `files`. */
  abort(): void {
    this.vectors.abort();
    this.documents.abort();
  }
}

/** Whether ids are the row numbers from `firstRow` on (the compact DocIds form). */
function sequentialIds(ids: readonly string[], firstRow: number): boolean {
  for (let i = 0; i < ids.length; i++) if (ids[i] !== String(firstRow + i)) return false;
  return true;
}

/**
 * The commit user-data key under which a build records how it made its segments (graph and code
 * parameters), so that segments an IndexWriter flushes later are made the same way. JSON:
 * `{"flatThreshold", "m", "beamWidth", "minConnections", "bits", "centroid", "rotationSeed"
 * (decimal string or null), "intervals"}`.
 */
export const SEGMENT_SETTINGS_KEY = 'segmentSettings';

/** How segments get their graphs and codes (what SEGMENT_SETTINGS_KEY holds). */
export interface SegmentBuildParameters {
  /** Segments with more docs than this get an HNSW graph; smaller ones are scanned. */
  readonly flatThreshold: number;
  /** HNSW max connections per node (M). */
  readonly m: number;
  /** HNSW construction beam. */
  readonly beamWidth: number;
  /** Level-0 lists shorter than this are filled with the best pruned candidates. */
  readonly minConnections: number;
  /** Doc bits, centroid rule, rotation and intervals of the codes. */
  readonly quantization: QuantizationOptions;
}

export function encodeSegmentSettings(s: SegmentSettings): string {
  const q = quantizationSettings(s.quantization);
  return JSON.stringify({
    flatThreshold: s.flatThreshold,
    m: s.m,
    beamWidth: s.beamWidth,
    minConnections: s.minConnections,
    bits: q.encoding.docBits,
    centroid: q.centroidRule,
    rotationSeed: q.rotationSeed === null ? null : q.rotationSeed.toString(),
    intervals: q.intervals,
  });
}

/** The parameters a commit's user data records; null for an index built before they were kept. */
export function decodeSegmentSettings(userData: ReadonlyMap<string, string>): SegmentBuildParameters | null {
  const json = userData.get(SEGMENT_SETTINGS_KEY);
  if (json === undefined) return null;
  const o = JSON.parse(json) as Record<string, unknown>;
  return {
    flatThreshold: o.flatThreshold as number,
    m: o.m as number,
    beamWidth: o.beamWidth as number,
    minConnections: o.minConnections as number,
    quantization: {
      bits: o.bits as DocBits,
      centroid: o.centroid as CentroidRule,
      rotation: o.rotationSeed === null ? false : BigInt(o.rotationSeed as string),
      intervals: o.intervals as IntervalRule,
    },
  };
}

/** The number of the next segment of `dir`: names are never reused, so it continues after the largest `_N` present, orphans included. */
export function nextSegmentNumber(dir: string): number {
  let max = -1;
  for (const f of readdirSync(dir)) {
    const m = /^_([0-9a-z]+)[._]/.exec(f);
    if (m) max = Math.max(max, parseInt(m[1]!, 36));
  }
  return max + 1;
}
