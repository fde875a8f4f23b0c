import { join } from 'node:path';
import { SegmentDocuments } from '../index/SegmentDocuments.js';
import { liveDocBits, softDeletedDocs } from './SoftDeletes.js';
import type { Mapping } from '../document/Mapping.js';
import { idToString } from '../codec/CodecUtil.js';
import type { VectorFieldInfo } from '../index/CommitPoint.js';
import type { IndexReader, LeafReaderContext, SegmentReader } from '../index/IndexReader.js';
import { shared, type GraphHandle, type SegmentHandle } from '../index/SegmentHandle.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION, HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import type { SegmentBuilder } from '../index/SegmentBuildTask.js';
import { newIndexId } from '../index/releaseBoard.js';
import { DEFAULT_GRAPH_BEAM_WIDTH } from '../index/graphBuildPolicy.js';
import { LuceneIndex, vectorFormatFileName, type LuceneIndexOptions, type LuceneSegment, type VectorFieldView } from './LuceneIndex.js';
import { checkServableField, describeVectorFields, listVectorFields, openLuceneFlatField, type LuceneFlatField } from './LuceneFlatVectors.js';
import {
  defaultSidecarDir,
  ensureSidecarSegment,
  prepareSidecarRoot,
  pruneSidecarRoot,
  sidecarSegmentDirName,
  type SidecarBuildParams,
  type SidecarEvent,
  type SidecarSegment,
  type SidecarSource,
} from './LuceneSidecar.js';

/** Defaults of the sidecar build (the same as `prescore build`'s). */
export const LUCENE_SIDECAR_DEFAULTS: SidecarBuildParams = { flatThreshold: 10_000, m: 16, beamWidth: DEFAULT_GRAPH_BEAM_WIDTH };

/** Options of {@link LuceneIndexReader.open}: the field to serve and how its sidecar is built. */
export interface LuceneIndexReaderOptions extends Partial<SidecarBuildParams> {
  /** The FLOAT32 vector field to serve; may be omitted when the index has exactly one vector field. */
  readonly field?: string;
  /**
   * Where the 1-bit codes and graphs are kept (never inside the Lucene directory). Default
   * `defaultSidecarDir(realpath(dir), field)`: `$XDG_CACHE_HOME/prescore/lucene-sidecars/<hash>`,
   * XDG_CACHE_HOME defaulting to `~/.cache`.
   */
  readonly sidecarDir?: string;
  /** Runs the sidecar builds (task `index.buildSegment`). */
  /** Builds a sidecar segment (the service runs it on an executor worker). */
  readonly buildSegment: SegmentBuilder;
  /** Which commit to open, extra codec names (see LuceneIndex.open). */
  readonly lucene?: LuceneIndexOptions;
  /** Delete sidecar segments of segments no longer in this commit (default false: another process may serve an older commit). */
  readonly pruneSidecars?: boolean;
  /** Sidecar progress: building / built / reused / rebuilt, per segment. */
  readonly onSidecar?: (event: SidecarEvent) => void;
  /**
   * 'codes' (default): the first phase runs over 1-bit codes and graphs built into the sidecar.
   * 'graph': the first phase searches Lucene's own HNSW graph (`.vem`/`.vex`) and fp32 vectors in
   * place; no sidecar is built, read or even created.
   */
  readonly firstPhase?: 'codes' | 'graph';
}

/**
 * A Lucene index directory (9.9+ / 10.x, read-only) as prescore's IndexReader, for one FLOAT32
 * vector field. Leaves are ALL the commit's segments in `segments_N` order; docBase is the sum of
 * the earlier segments' maxDoc (deleted docs included), so global doc numbers are Lucene's.
 * Segments without the field are leaves with no vectors. Per segment the raw fp32 vectors are
 * read in place (the `.vec`, or its range inside the `.cfs`); the first phase's 1-bit codes and
 * graph come from the sidecar (see LuceneSidecar.ts); deleted docs are excluded through the
 * live-ords bitset built from `.liv`.
 *
 * Lucene docs have no prescore ids: `id(doc)` is the global doc number as a string.
 */
export class LuceneIndexReader implements IndexReader {
  /** What the index's fields are, when the caller knows (Lucene's files do not say). */
  mapping: Mapping | null = null;

  private constructor(
    readonly id: number,
    readonly dir: string,
    readonly index: LuceneIndex,
    readonly field: VectorFieldInfo,
    readonly leaves: readonly LeafReaderContext[],
    /** null when the first phase reads Lucene's own graph (no sidecar). */
    readonly sidecarDir: string | null,
  ) {}

  /** Opens a Lucene 9.9+/10.x index directory read-only, building (or reusing) the field's 1-bit sidecar. */
  static async open(dir: string, options: LuceneIndexReaderOptions): Promise<LuceneIndexReader> {
    const index = LuceneIndex.open(dir, options.lucene);
    const realDir = index.directory.path;
    const view = resolveField(index, options.field);
    const params: SidecarBuildParams = {
      flatThreshold: options.flatThreshold ?? LUCENE_SIDECAR_DEFAULTS.flatThreshold,
      m: options.m ?? LUCENE_SIDECAR_DEFAULTS.m,
      beamWidth: options.beamWidth ?? LUCENE_SIDECAR_DEFAULTS.beamWidth,
    };
    if (!(Number.isInteger(params.flatThreshold) && params.flatThreshold >= 0)) throw new RangeError(`flatThreshold must be a non-negative integer, got ${params.flatThreshold}`);
    if (!(Number.isInteger(params.m) && params.m >= 2 && params.m <= 512)) throw new RangeError(`m must be an integer in [2, 512], got ${params.m}`);
    if (!(Number.isInteger(params.beamWidth) && params.beamWidth >= 1 && params.beamWidth <= 3200))
      throw new RangeError(`beamWidth must be an integer in [1, 3200], got ${params.beamWidth}`);

    // Open every segment's raw vectors first (cheap, and every error surfaces before any build).
    const flats = view.segments.map((e) => {
      if (!e.present) return null;
      checkServableField(e, view.name);
      return openLuceneFlatField(e);
    });
    const similarity = VectorSimilarityFunction.fromOrdinal(view.similarityOrdinal);
    const firstPresent = view.segments.find((e) => e.present);
    const field: VectorFieldInfo = { name: view.name, number: firstPresent?.present ? firstPresent.fieldNumber : -1, similarity, dims: view.dimension };

    if (options.firstPhase === 'graph') {
      const graphs = flats.map((f) => (f && f.entry.size > 0 ? luceneGraph(f) : null));
      const id = newIndexId();
      const leaves: LeafReaderContext[] = index.segments.map((seg, ord) => ({
        ord,
        docBase: seg.docBase,
        reader: LuceneSegmentReader.create(id, index, seg, field, flats[ord], null, realDir, graphs[ord]),
      }));
      return new LuceneIndexReader(id, realDir, index, field, leaves, null);
    }

    const root = prepareSidecarRoot(options.sidecarDir ?? defaultSidecarDir(realDir, view.name), realDir, view.name);
    const sources = flats.map((f) => (f && f.entry.size > 0 ? sidecarSource(f, view.name) : null));
    const sidecars = await Promise.all(sources.map((s) => (s ? ensureSidecarSegment(root, s, params, options.buildSegment, options.onSidecar) : null)));
    if (options.pruneSidecars) {
      pruneSidecarRoot(root, new Set(sources.filter((s): s is SidecarSource => s !== null).map((s) => sidecarSegmentDirName(s, params))));
    }

    const id = newIndexId();
    const leaves: LeafReaderContext[] = index.segments.map((seg, ord) => ({
      ord,
      docBase: seg.docBase,
      reader: LuceneSegmentReader.create(id, index, seg, field, flats[ord], sidecars[ord], realDir),
    }));
    return new LuceneIndexReader(id, realDir, index, field, leaves, root);
  }

  get maxDoc(): number {
    return this.index.maxDoc;
  }

  /** Live docs (maxDoc minus deletions), with or without a vector. */
  get numDocs(): number {
    return this.index.numDocs;
  }

  /** How each segment's sidecar was obtained at open. */
  get sidecarStatus(): readonly { segment: string; status: SidecarSegment['status'] | 'none'; dir: string | null }[] {
    return this.leaves.map((l) => {
      const s = (l.reader as LuceneSegmentReader).sidecar;
      return { segment: l.reader.name, status: s ? s.status : 'none', dir: s ? s.dir : null };
    });
  }

  /** Every byte of the commit (segments_N, .si, .cfe, each .cfs sub-file, .liv) and of the sidecar. */
  checkIntegrity(): void {
    this.index.checkIntegrity();
    for (const leaf of this.leaves) (leaf.reader as LuceneSegmentReader).sidecar?.checkIntegrity();
  }

  /** Nothing to release: the segments are closed with the searcher. */
  close(): void {
    for (const leaf of this.leaves) leaf.reader.documents?.close();
  }
}

function resolveField(index: LuceneIndex, name: string | undefined): VectorFieldView {
  const fields = listVectorFields(index);
  const where = index.directory.path;
  if (name === undefined) {
    if (fields.length !== 1) {
      throw new Error(`${where}: name the vector field to serve (--field / field): ${describeVectorFields(fields)}`);
    }
    name = fields[0].name;
  }
  const view = index.findVectorField(name);
  if (!view) {
    const fi = index.segments.map((s) => s.fieldInfos.fieldInfo(name!)).find((f) => f !== undefined);
    const what = fi ? `field "${name}" of ${where} is not a vector field` : `unknown vector field "${name}" in ${where}`;
    throw new Error(`${what}: ${describeVectorFields(fields)}`);
  }
  if (view.encoding !== 'FLOAT32') {
    throw new Error(`vector field "${name}" of ${where} has ${view.encoding} vectors: prescore serves FLOAT32 vector fields only (${describeVectorFields(fields)})`);
  }
  return view;
}

/**
 * The segment's own HNSW files for the field (`.vem`/`.vex` of its per-field format, inside the
 * `.cfs` when compound), verified at open: `.vem` completely, `.vex` structurally, and the
 * field's entry against the flat vectors (same size, dims and similarity). null when Lucene wrote
 * no graph for the field (a tiny segment: it is scanned exhaustively).
 */
function luceneGraph(f: LuceneFlatField): GraphHandle | null {
  const seg = f.field.segment;
  const vem = seg.directory.openSlice(vectorFormatFileName(f.field, HNSW_META_EXTENSION));
  const vex = seg.directory.openSlice(vectorFormatFileName(f.field, HNSW_INDEX_EXTENSION));
  const reader = HnswVectorsReader.open(vem, vex, seg.id, f.field.segmentSuffix);
  const entry = reader.field(f.field.fieldNumber);
  if (!entry) throw new CorruptIndexException(`field ${f.field.fieldNumber} has vectors but no graph entry`, vem.name);
  if (entry.size !== f.entry.size || entry.dimension !== f.entry.dims || entry.similarity !== f.entry.similarity) {
    throw new CorruptIndexException(
      `graph entry of field ${f.field.fieldNumber} (${entry.size} x ${entry.dimension}d, ${entry.similarity.name}) disagrees with its vectors (${f.entry.size} x ${f.entry.dims}d, ${f.entry.similarity.name})`,
      vem.name,
    );
  }
  if (entry.numLevels === 0 || entry.offsetsMeta === null) return null;
  return { vem, vex, segmentId: seg.id, suffix: f.field.segmentSuffix, fieldNumber: f.field.fieldNumber };
}

function sidecarSource(f: LuceneFlatField, fieldName: string): SidecarSource {
  const seg = f.field.segment;
  return {
    segmentName: seg.name,
    segmentId: seg.id,
    maxDoc: seg.maxDoc,
    fieldName,
    fieldNumber: f.field.fieldNumber,
    similarity: f.entry.similarity.ordinal,
    dims: f.entry.dims,
    size: f.entry.size,
    vecSlice: f.dataSlice,
    vecChecksum: f.dataChecksum,
    vectorDataOffset: f.entry.vectorDataOffset,
  };
}

class LuceneSegmentReader implements SegmentReader {
  private constructor(
    private readonly index: LuceneIndex,
    readonly segment: LuceneSegment,
    readonly handle: SegmentHandle,
    readonly numVectors: number,
    readonly flat: LuceneFlatField | null,
    readonly sidecar: SidecarSegment | null,
    readonly bytes: { vectors: number; codes: number; graph: number },
    readonly documents: SegmentDocuments | null,
    /** Live docs: not deleted, not soft-deleted (SoftDeletesDirectoryReaderWrapper); null when every doc is live. */
    readonly liveDocs: Uint32Array | null,
  ) {}

  static create(
    indexId: number,
    index: LuceneIndex,
    seg: LuceneSegment,
    field: VectorFieldInfo,
    flat: LuceneFlatField | null,
    sidecar: SidecarSegment | null,
    realDir: string,
    /** Lucene's own graph files, when the first phase searches them in place (no sidecar). */
    luceneGraph: GraphHandle | null = null,
  ): LuceneSegmentReader {
    const size = flat ? flat.entry.size : 0;
    const ordToDoc = flat?.ordToDoc ? shared(flat.ordToDoc) : null;
    const documents = openLuceneDocuments(index, seg);
    const softDeleted = softDeletedDocs(seg, documents);
    const isLive = (doc: number) => (seg.liveDocs === null || seg.liveDocs.isLive(doc)) && (softDeleted === null || ((softDeleted[doc >>> 5]! >>> (doc & 31)) & 1) === 0);
    let liveOrds: Uint32Array | null = null;
    let numVectors = size;
    if ((seg.liveDocs || softDeleted) && size > 0) {
      const bits = new Uint32Array(Math.ceil(size / 32));
      for (let ord = 0; ord < size; ord++) {
        if (isLive(ordToDoc ? ordToDoc[ord] : ord)) bits[ord >>> 5] |= 1 << (ord & 31);
        else numVectors--;
      }
      // Every ord live (the deleted docs had no vector): no filter needed.
      if (numVectors < size) liveOrds = shared(bits);
    }
    const q = sidecar?.entry;
    // The sidecar's checksum is part of the segment's identity: a rebuilt sidecar is other codes.
    const core = `lucene:${realDir}#${field.name}#${seg.name}#${idToString(seg.id)}#${sidecar ? sidecar.checksum.toString(16) : luceneGraph ? 'in-place' : 'none'}`;
    const handle: SegmentHandle = {
      key: `${indexId}#${core}`,
      indexId,
      name: seg.name,
      maxDoc: seg.maxDoc,
      dims: field.dims,
      similarity: field.similarity.ordinal,
      vectors: flat
        ? { path: flat.dataSlice.path, offset: flat.dataSlice.offset + flat.entry.vectorDataOffset, byteSize: field.dims * 4, size, ordToDoc }
        : // No vectors: nothing ever reads this file (no ords); it names the segment in diagnostics.
          { path: join(realDir, `${seg.name}.si`), offset: 0, byteSize: field.dims * 4, size: 0, ordToDoc: null },
      quantized:
        sidecar && q
          ? {
              file: sidecar.quantized.dataSlice,
              path: sidecar.quantized.dataSlice.path,
              offset: sidecar.quantized.dataSlice.offset + q.vectorDataOffset,
              count: q.count,
              codeBytes: q.codeBytes,
              recordBytes: q.recordBytes,
              centroid: shared(q.centroid),
              centroidDP: q.centroidDP,
              bits: q.scalarEncoding.docBits,
              rotationSeed: q.rotationSeed,
            }
          : null,
      graph: sidecar?.graph ? { vem: sidecar.graph.vem, vex: sidecar.graph.vex, segmentId: sidecar.id, suffix: sidecar.suffix, fieldNumber: flat!.field.fieldNumber } : luceneGraph,
      liveOrds,
      resident: null,
      coreKey: core,
    };
    return new LuceneSegmentReader(
      index,
      seg,
      handle,
      numVectors,
      flat,
      sidecar,
      {
        vectors: flat ? flat.entry.vectorDataLength : 0,
        codes: q ? q.vectorDataLength : 0,
        graph: sidecar?.graph ? sidecar.graph.vex.length : luceneGraph ? luceneGraph.vex.length : 0,
      },
      documents,
      liveDocBits(seg, softDeleted),
    );
  }

  get name(): string {
    return this.segment.name;
  }

  get maxDoc(): number {
    return this.segment.maxDoc;
  }

  /** Lucene docs have no prescore ids: the global doc number, as a string. */
  id(doc: number): string {
    return String(this.segment.docBase + doc);
  }

  checkIntegrity(): void {
    this.index.checkSegmentIntegrity(this.segment);
    this.sidecar?.checkIntegrity();
  }
}

/** A Lucene segment's stored fields and doc values; null when it has no stored fields files. */
function openLuceneDocuments(index: LuceneIndex, seg: LuceneSegment): SegmentDocuments | null {
  if (!seg.directory.exists(`${seg.name}.fdt`)) return null;
  return SegmentDocuments.openLucene(index.directory, seg);
}
