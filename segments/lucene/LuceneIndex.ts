import { checksumEntireFile } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { CompoundDirectory } from './CompoundDirectory.js';
import type { FieldInfos, VectorEncodingName, VectorSimilarityName } from './FieldInfos.js';
import { FIELD_INFOS_EXTENSION, KNN_FORMAT_KEY, KNN_SUFFIX_KEY, readFieldInfos } from './FieldInfos.js';
import { generationToString, segmentFileName } from './IndexFileNames.js';
import { type LiveDocs, liveDocsFileName, readLiveDocs } from './LiveDocs.js';
import type { SegmentDirectory } from './LuceneDirectory.js';
import { IndexDirectory, PlainSegmentDirectory } from './LuceneDirectory.js';
import { codecTraits } from './LuceneFormat.js';
import type { SegmentInfo } from './SegmentInfo.js';
import { readSegmentInfo, SEGMENT_INFO_EXTENSION } from './SegmentInfo.js';
import type { SegmentCommitInfo, SegmentInfosCommit } from './SegmentInfos.js';
import { checkSegmentAgainstCommit, readSegmentInfos } from './SegmentInfos.js';
import { COMPOUND_ENTRIES_EXTENSION } from './CompoundDirectory.js';

/** One segment of a Lucene commit, ready for the vector readers. */
export interface LuceneSegment {
  readonly name: string;
  readonly id: Uint8Array;
  readonly codec: string;
  readonly maxDoc: number;
  /** Global doc id of this segment's doc 0: the sum of maxDoc over the earlier segments. */
  readonly docBase: number;
  /** maxDoc - delCount (soft deletes are not applied: a plain Lucene reader does not either). */
  readonly numDocs: number;
  readonly delCount: number;
  readonly softDelCount: number;
  /** null when the segment has no hard deletions. */
  readonly liveDocs: LiveDocs | null;
  readonly fieldInfos: FieldInfos;
  /** Logical files of the segment, compound or not. */
  readonly directory: SegmentDirectory;
  readonly info: SegmentInfo;
  readonly commitInfo: SegmentCommitInfo;
}

/** A vector field as one segment stores it. */
export type SegmentVectorField =
  | {
      readonly segment: LuceneSegment;
      readonly present: true;
      readonly fieldNumber: number;
      readonly dimension: number;
      readonly encoding: VectorEncodingName;
      readonly similarity: VectorSimilarityName;
      readonly similarityOrdinal: number;
      /** PerFieldKnnVectorsFormat.format, e.g. "Lucene99HnswVectorsFormat". */
      readonly formatName: string;
      /** PerFieldKnnVectorsFormat.suffix, e.g. "0". */
      readonly formatSuffix: string;
      /** `<format>_<suffix>`: the header suffix and file-name infix of the format's files. */
      readonly segmentSuffix: string;
    }
  | {
      readonly segment: LuceneSegment;
      readonly present: false;
      /** 'no-field': no doc of the segment has the field; 'not-a-vector-field': it exists without vectors. */
      readonly reason: 'no-field' | 'not-a-vector-field';
    };

export interface VectorFieldView {
  readonly name: string;
  readonly dimension: number;
  readonly encoding: VectorEncodingName;
  readonly similarity: VectorSimilarityName;
  readonly similarityOrdinal: number;
  /** One entry per segment, in docBase order. */
  readonly segments: readonly SegmentVectorField[];
}

export interface LuceneIndexOptions {
  /** Open this commit instead of the newest `segments_N`. */
  readonly segmentsFileName?: string;
  /** Custom codec names known to use the Lucene99+ segment formats. */
  readonly extraCodecs?: readonly string[];
}

/** The file a vector format keeps for a segment: `<segment>_<format>_<suffix>.<ext>`. */
export function vectorFormatFileName(field: SegmentVectorField & { present: true }, ext: string): string {
  return segmentFileName(field.segment.name, field.segmentSuffix, ext);
}

/**
 * A read-only view of a Lucene 9.9+ / 10.x index directory: the newest commit, its segments in
 * docBase order with their deletions, field infos and files. Metadata files are CRC-verified on
 * open; big data files are checked structurally, fully by checkIntegrity().
 */
export class LuceneIndex {
  private constructor(
    readonly directory: IndexDirectory,
    readonly commit: SegmentInfosCommit,
    readonly segments: readonly LuceneSegment[],
  ) {}

  static open(path: string, options: LuceneIndexOptions = {}): LuceneIndex {
    const dir = new IndexDirectory(path);
    const commit = options.segmentsFileName ? readSegmentInfos(dir, options.segmentsFileName) : readSegmentInfos(dir);
    const segments: LuceneSegment[] = [];
    let docBase = 0;
    for (const ci of commit.segments) {
      codecTraits(ci.codec, `${commit.fileName} (segment ${ci.name})`, options.extraCodecs);
      const info = readSegmentInfo(dir, ci.name, ci.id);
      checkSegmentAgainstCommit(commit, ci, info.maxDoc, info.version, info.minVersion);
      const directory: SegmentDirectory = info.isCompoundFile ? CompoundDirectory.open(dir, ci.name, ci.id) : new PlainSegmentDirectory(dir, ci.name, info.files);
      const fieldInfos = readFieldInfos(dir, directory, ci.name, ci.id, ci.fieldInfosGen);
      const liveDocs = ci.delGen === -1 ? null : readLiveDocs(dir, ci.name, ci.id, info.maxDoc, ci.delGen, ci.delCount);
      segments.push({
        name: ci.name,
        id: ci.id,
        codec: ci.codec,
        maxDoc: info.maxDoc,
        docBase,
        numDocs: info.maxDoc - ci.delCount,
        delCount: ci.delCount,
        softDelCount: ci.softDelCount,
        liveDocs,
        fieldInfos,
        directory,
        info,
        commitInfo: ci,
      });
      docBase += info.maxDoc;
      if (docBase > 2147483519) throw new CorruptIndexException(`too many documents: total maxDoc ${docBase} exceeds Lucene's limit`, commit.fileName);
    }
    return new LuceneIndex(dir, commit, segments);
  }

  get maxDoc(): number {
    const last = this.segments[this.segments.length - 1];
    return last ? last.docBase + last.maxDoc : 0;
  }

  get numDocs(): number {
    return this.segments.reduce((s, seg) => s + seg.numDocs, 0);
  }

  /** The segment holding a global doc id and the doc's id within it. */
  segmentForDoc(globalDoc: number): { segment: LuceneSegment; doc: number } {
    if (!Number.isInteger(globalDoc) || globalDoc < 0 || globalDoc >= this.maxDoc) throw new RangeError(`doc ${globalDoc} out of [0, ${this.maxDoc})`);
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.segments[mid].docBase <= globalDoc) lo = mid;
      else hi = mid - 1;
    }
    // Empty segments share a docBase with the next one; the search above lands on the last of them.
    const segment = this.segments[lo];
    return { segment, doc: globalDoc - segment.docBase };
  }

  /**
   * Where each segment keeps the vector field `name`, or null when no segment has it as a vector
   * field. Dimension, encoding and similarity must agree across segments (Lucene enforces one
   * schema per index).
   */
  findVectorField(name: string): VectorFieldView | null {
    const perSegment: SegmentVectorField[] = [];
    let first: (SegmentVectorField & { present: true }) | undefined;
    for (const segment of this.segments) {
      const fi = segment.fieldInfos.fieldInfo(name);
      if (!fi) {
        perSegment.push({ segment, present: false, reason: 'no-field' });
        continue;
      }
      if (fi.vectorDimension === 0) {
        perSegment.push({ segment, present: false, reason: 'not-a-vector-field' });
        continue;
      }
      const formatName = fi.attributes.get(KNN_FORMAT_KEY);
      const formatSuffix = fi.attributes.get(KNN_SUFFIX_KEY);
      if (formatName === undefined || formatSuffix === undefined) {
        throw new CorruptIndexException(`vector field ${name} lacks the ${KNN_FORMAT_KEY} / ${KNN_SUFFIX_KEY} attributes`, segment.fieldInfos.resource);
      }
      const entry = {
        segment,
        present: true as const,
        fieldNumber: fi.number,
        dimension: fi.vectorDimension,
        encoding: fi.vectorEncoding,
        similarity: fi.vectorSimilarity,
        similarityOrdinal: fi.vectorSimilarityOrdinal,
        formatName,
        formatSuffix,
        segmentSuffix: `${formatName}_${formatSuffix}`,
      };
      if (!first) first = entry;
      else if (entry.dimension !== first.dimension || entry.encoding !== first.encoding || entry.similarity !== first.similarity) {
        throw new Error(
          `vector field ${name} is ${entry.dimension}d ${entry.encoding} ${entry.similarity} in segment ${segment.name} ` +
            `but ${first.dimension}d ${first.encoding} ${first.similarity} in segment ${first.segment.name}`,
        );
      }
      perSegment.push(entry);
    }
    if (!first) return null;
    return {
      name,
      dimension: first.dimension,
      encoding: first.encoding,
      similarity: first.similarity,
      similarityOrdinal: first.similarityOrdinal,
      segments: perSegment,
    };
  }

  /**
   * Full CRC32 verification of every file of the commit: `segments_N`, and per segment the `.si`,
   * `.cfe`, every sub-file of the `.cfs` (errors name it, e.g. `_0.cfs[_0.fnm]`) and the `.cfs`
   * itself (or the plain files), `.liv` and field-infos update files.
   */
  checkIntegrity(): void {
    checksumEntireFile(this.directory.openSlice(this.commit.fileName));
    for (const seg of this.segments) this.checkSegmentIntegrity(seg);
  }

  /** Full CRC32 verification of one segment's files (`.si`, `.cfe`, every `.cfs` sub-file and the `.cfs`, `.liv`, updates). */
  checkSegmentIntegrity(seg: LuceneSegment): void {
    const dir = this.directory;
    const ci = seg.commitInfo;
    const outer = new Set<string>([segmentFileName(seg.name, '', SEGMENT_INFO_EXTENSION)]);
    if (seg.directory.isCompound) outer.add(segmentFileName(seg.name, '', COMPOUND_ENTRIES_EXTENSION));
    if (ci.delGen !== -1) outer.add(liveDocsFileName(seg.name, ci.delGen));
    if (ci.fieldInfosGen !== -1) outer.add(segmentFileName(seg.name, generationToString(ci.fieldInfosGen), FIELD_INFOS_EXTENSION));
    for (const f of ci.fieldInfosFiles) outer.add(f);
    for (const files of ci.docValuesUpdatesFiles.values()) for (const f of files) outer.add(f);
    for (const f of outer) checksumEntireFile(dir.openSlice(f));
    seg.directory.checkIntegrity();
  }
}
