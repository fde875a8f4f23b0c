import { checkIndexHeader, ID_LENGTH } from '../codec/CodecUtil.js';
import { CorruptIndexException, IndexFormatTooNewOrOldException } from '../codec/CorruptIndexException.js';
import { CODEC_MAGIC } from '../codec/CodecUtil.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { generationFromSegmentsFileName, generationToString, lastCommitSegmentsFileName } from './IndexFileNames.js';
import type { IndexDirectory } from './LuceneDirectory.js';
import { LuceneFileNotFoundError } from './LuceneDirectory.js';
import type { LuceneVersion } from './LuceneFormat.js';
import { checkVersion, compareVersions, expectEnd, versionToString } from './LuceneFormat.js';

/**
 * `segments_N` (org.apache.lucene.index.SegmentInfos): a Lucene commit point, the newest being the
 * largest N (base 36; plain `segments` is generation 0). Read only, fully CRC-verified. Unlike the
 * per-segment files, most fixed-width numbers here are big-endian:
 *
 * | field                    | type              | meaning / check                                  |
 * |--------------------------|-------------------|--------------------------------------------------|
 * | index header             |                   | codec `segments`, version 9 (8.0-8.5) or 10 (8.6+, every 9.x/10.x), a random commit id, suffix = N in base 36; a file without the magic is reported as pre-4.0 |
 * | Lucene version           | 3 vints           | major, minor, bugfix of the writer; >= 0         |
 * | indexCreatedVersionMajor | vint              | <= the writer's major                            |
 * | version                  | BE int64          | counts changes to the index                      |
 * | counter                  | vlong             | the segment-name counter                         |
 * | segment count            | BE int32          | >= 0                                             |
 * | minSegmentLuceneVersion  | 3 vints           | only when count > 0                              |
 * | per segment, in docBase order: |             |                                                  |
 * | name                     | string            | `_0`, `_1`, ...; no duplicates                   |
 * | segment id               | 16 bytes          | every file of the segment carries it             |
 * | codec                    | string            | e.g. `Lucene99`, `Lucene912`, `Lucene101` (LuceneFormat.codecTraits) |
 * | delGen                   | BE int64          | generation of the `.liv` file; -1 = no deletions (then delCount must be 0) |
 * | delCount                 | BE int32          | deleted docs, >= 0 (<= maxDoc, checked once the `.si` is read) |
 * | fieldInfosGen            | BE int64          | -1 = the segment's own `.fnm`; else `_N_<gen>.fnm` |
 * | dvGen                    | BE int64          | doc-values updates generation (-1 none)          |
 * | softDelCount             | BE int32          | >= 0                                             |
 * | commit-id marker         | byte (version 10) | 1: a 16-byte per-commit id follows; 0: none      |
 * | field-infos files        | set of strings    |                                                  |
 * | doc-values update count  | BE int32          | then per entry BE int32 field number + set of strings |
 * | user data                | map of strings    |                                                  |
 * | footer                   |                   | CRC32; nothing may remain before it              |
 *
 * maxDoc lives in each segment's `.si` (SegmentInfo.ts); the docBase of a segment is the sum of
 * the earlier segments' maxDoc, deleted docs included.
 */
export const SEGMENTS_CODEC = 'segments';
/** Lucene 8.0 .. 8.5: no per-commit segment id. */
export const SEGMENTS_VERSION_74 = 9;
/** Lucene 8.6+ (every 9.x and 10.x release): a marker byte, then an optional 16-byte commit id per segment. */
export const SEGMENTS_VERSION_86 = 10;

/** One segment as the commit records it (SegmentCommitInfo). */
export interface SegmentCommitInfo {
  readonly name: string;
  /** The segment id: every per-segment file header must carry it. */
  readonly id: Uint8Array;
  /** Codec name, e.g. "Lucene912" or "Lucene100". */
  readonly codec: string;
  /** Generation of the `.liv` file; -1 = no deletions. */
  readonly delGen: number;
  readonly delCount: number;
  /** Generation of the field-infos update file; -1 = the segment's own `.fnm`. */
  readonly fieldInfosGen: number;
  readonly dvGen: number;
  readonly softDelCount: number;
  /** Per-commit id (format >= 10 with the marker byte set), else null. */
  readonly commitId: Uint8Array | null;
  readonly fieldInfosFiles: ReadonlySet<string>;
  readonly docValuesUpdatesFiles: ReadonlyMap<number, ReadonlySet<string>>;
}

export interface SegmentInfosCommit {
  readonly fileName: string;
  readonly generation: number;
  /** Header version (9 or 10). */
  readonly format: number;
  readonly id: Uint8Array;
  /** The Lucene version that wrote this commit. */
  readonly luceneVersion: LuceneVersion;
  readonly indexCreatedVersionMajor: number;
  /** Counts changes to the index. */
  readonly version: number;
  readonly counter: number;
  readonly minSegmentLuceneVersion: LuceneVersion | null;
  /** In docBase order. */
  readonly segments: readonly SegmentCommitInfo[];
  readonly userData: ReadonlyMap<string, string>;
}

/** The newest `segments_N` of the directory (largest N, base 36). */
export function findLatestSegmentsFile(dir: IndexDirectory): string {
  const name = lastCommitSegmentsFileName(dir.listAll());
  if (name === undefined) throw new LuceneFileNotFoundError('segments_N', `${dir.path} (no Lucene commit: not an index directory?)`);
  return name;
}

/** Reads and fully CRC-verifies a commit point. */
export function readSegmentInfos(dir: IndexDirectory, fileName = findLatestSegmentsFile(dir)): SegmentInfosCommit {
  const generation = generationFromSegmentsFileName(fileName);
  if (generation < 0) throw new Error(`${fileName} is not a segments_N file name`);
  const input = dir.openChecksummed(fileName);
  return parseSegmentInfos(input, fileName, generation);
}

export function parseSegmentInfos(input: ByteArrayDataInput, fileName: string, generation: number): SegmentInfosCommit {
  // Lucene reads the magic itself to report pre-4.0 files as too old; same here.
  const start = input.position;
  const magic = input.readBEInt() >>> 0;
  if (magic !== CODEC_MAGIC) {
    throw new IndexFormatTooNewOrOldException(fileName, `no codec header (magic 0x${magic.toString(16)}): index written before Lucene 4.0?`);
  }
  input.position = start;
  const header = checkIndexHeader(input, SEGMENTS_CODEC, SEGMENTS_VERSION_74, SEGMENTS_VERSION_86, undefined, generationToString(generation));
  const format = header.version;

  const luceneVersion = checkVersion(readVIntVersion(input), fileName);
  const indexCreatedVersionMajor = input.readVInt();
  if (luceneVersion.major < indexCreatedVersionMajor) {
    throw new CorruptIndexException(
      `creation version [${indexCreatedVersionMajor}.x] can't be greater than the version that wrote the segment infos: [${versionToString(luceneVersion)}]`,
      fileName,
    );
  }
  const version = input.readBELong();
  const counter = input.readVLong();
  const numSegments = input.readBEInt();
  if (numSegments < 0) throw new CorruptIndexException(`invalid segment count: ${numSegments}`, fileName);
  const minSegmentLuceneVersion = numSegments > 0 ? checkVersion(readVIntVersion(input), fileName) : null;

  const segments: SegmentCommitInfo[] = [];
  const names = new Set<string>();
  for (let s = 0; s < numSegments; s++) {
    const name = input.readString();
    if (names.has(name)) throw new CorruptIndexException(`duplicate segment ${name}`, fileName);
    names.add(name);
    const id = input.readBytes(ID_LENGTH).slice();
    const codec = input.readString();
    const delGen = input.readBELong();
    const delCount = input.readBEInt();
    const fieldInfosGen = input.readBELong();
    const dvGen = input.readBELong();
    const softDelCount = input.readBEInt();
    // maxDoc lives in the .si; the range checks against it happen when the segment is opened.
    if (delCount < 0) throw new CorruptIndexException(`invalid deletion count: ${delCount} (segment ${name})`, fileName);
    if (softDelCount < 0) throw new CorruptIndexException(`invalid soft deletion count: ${softDelCount} (segment ${name})`, fileName);
    if (delGen === -1 && delCount !== 0) throw new CorruptIndexException(`segment ${name} has delCount ${delCount} but no deletions file (delGen -1)`, fileName);
    if (delGen < -1 || fieldInfosGen < -1 || dvGen < -1) {
      throw new CorruptIndexException(`segment ${name}: invalid generation (delGen ${delGen}, fieldInfosGen ${fieldInfosGen}, dvGen ${dvGen})`, fileName);
    }
    let commitId: Uint8Array | null = null;
    if (format > SEGMENTS_VERSION_74) {
      const marker = input.readByte();
      if (marker === 1) commitId = input.readBytes(ID_LENGTH).slice();
      else if (marker !== 0) throw new CorruptIndexException(`invalid SegmentCommitInfo ID marker: ${marker}`, fileName);
    }
    const fieldInfosFiles = input.readSetOfStrings();
    const numDVFields = input.readBEInt();
    if (numDVFields < 0) throw new CorruptIndexException(`invalid doc-values update field count ${numDVFields}`, fileName);
    const docValuesUpdatesFiles = new Map<number, ReadonlySet<string>>();
    for (let i = 0; i < numDVFields; i++) {
      const field = input.readBEInt();
      docValuesUpdatesFiles.set(field, input.readSetOfStrings());
    }
    segments.push({ name, id, codec, delGen, delCount, fieldInfosGen, dvGen, softDelCount, commitId, fieldInfosFiles, docValuesUpdatesFiles });
  }
  const userData = input.readMapOfStrings();
  expectEnd(input);
  return {
    fileName,
    generation,
    format,
    id: header.id,
    luceneVersion,
    indexCreatedVersionMajor,
    version,
    counter,
    minSegmentLuceneVersion,
    segments,
    userData,
  };
}

/** The per-segment checks SegmentInfos.readCommit makes once the `.si` is known. */
export function checkSegmentAgainstCommit(
  commit: SegmentInfosCommit,
  seg: SegmentCommitInfo,
  maxDoc: number,
  segVersion: LuceneVersion,
  segMinVersion: LuceneVersion | null,
): void {
  const r = commit.fileName;
  if (seg.delCount > maxDoc) throw new CorruptIndexException(`invalid deletion count: ${seg.delCount} vs maxDoc=${maxDoc} (segment ${seg.name})`, r);
  if (seg.softDelCount > maxDoc) throw new CorruptIndexException(`invalid deletion count: ${seg.softDelCount} vs maxDoc=${maxDoc} (segment ${seg.name})`, r);
  if (seg.delCount + seg.softDelCount > maxDoc) {
    throw new CorruptIndexException(`invalid deletion count: ${seg.delCount + seg.softDelCount} vs maxDoc=${maxDoc} (segment ${seg.name})`, r);
  }
  if (commit.minSegmentLuceneVersion && compareVersions(segVersion, commit.minSegmentLuceneVersion) < 0) {
    throw new CorruptIndexException(
      `segments file recorded minSegmentLuceneVersion=${versionToString(commit.minSegmentLuceneVersion)} but segment=${seg.name} has older version=${versionToString(segVersion)}`,
      r,
    );
  }
  if (commit.indexCreatedVersionMajor >= 7 && segVersion.major < commit.indexCreatedVersionMajor) {
    throw new CorruptIndexException(
      `segments file recorded indexCreatedVersionMajor=${commit.indexCreatedVersionMajor} but segment=${seg.name} has older version=${versionToString(segVersion)}`,
      r,
    );
  }
  if (commit.indexCreatedVersionMajor >= 7 && segMinVersion === null) {
    throw new CorruptIndexException(`segments infos must record minVersion with indexCreatedVersionMajor=${commit.indexCreatedVersionMajor}`, r);
  }
}

function readVIntVersion(input: ByteArrayDataInput): LuceneVersion {
  const major = input.readVInt();
  const minor = input.readVInt();
  const bugfix = input.readVInt();
  return { major, minor, bugfix };
}
