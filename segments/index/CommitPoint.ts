import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { appendFooter, checkIndexHeader, ID_LENGTH, openChecksummed, writeIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { publishAtomically } from '../store/files.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';

/**
 * `commit_<generation base 36>`: prescore's commit point, the one file that says what an index
 * directory holds (Lucene's segments_N plays this role; prescore's is simpler: one vector field).
 * Every other file of the index is reached from it. Little-endian
 * (primitives: segments/store/DataOutput.ts):
 *
 * | field              | type                | meaning / check                                            |
 * |--------------------|---------------------|------------------------------------------------------------|
 * | index header       |                     | codec `PrescoreCommit`, version 0 or 1, a fresh random 16-byte id, suffix = the generation in base 36 (must match the file name) |
 * | field name         | string              | the vector field's name                                    |
 * | field number       | vint                | the number the segment files use for the field             |
 * | similarity         | int32               | 0 EUCLIDEAN, 1 DOT_PRODUCT, 2 COSINE, 3 MAXIMUM_INNER_PRODUCT |
 * | dims               | vint                |                                                            |
 * | segment count      | vint                |                                                            |
 * | per segment, in docBase order: |         |                                                            |
 * | name               | string              | `_0`, `_1`, ... (`_` + base-36 counter)                     |
 * | segment id         | 16 bytes            | every file of the segment carries it in its header          |
 * | maxDoc             | vint                | docs (= vectors: prescore segments are dense)              |
 * | suffix             | string              | the format suffix of the segment's files (PRESCORE_FORMAT_SUFFIX) |
 * | flags              | byte                | 1 = the segment has `.vem/.vex` (a graph), 0 = it is scanned; anything else is corrupt |
 * | delGen             | int64               | version 1 only: the generation of the segment's `_N_<delGen base 36>.liv`, -1 = no deletions (version 0: -1) |
 * | delCount           | vint                | version 1 only: deleted docs, in [0, maxDoc); must match the `.liv` (version 0: 0) |
 * | user data          | map of strings      | build facts (the builder writes source, createdAt, segmentDocs, flatThreshold) |
 * | footer             |                     | CRC32 of the whole file, verified at open; trailing bytes before it are corrupt |
 *
 * Per segment `_N` with suffix S the commit implies `_N_S.vemf` + `_N_S.vec` (fp32,
 * segments/flat/FlatVectorsFormat.ts), `_N_S.vemq` + `_N_S.veq` (1-bit codes,
 * segments/quantized/ScalarQuantizedVectorsFormat.ts), `_N_S.vem` + `_N_S.vex` when flags = 1
 * (segments/hnsw/HnswVectorsFormat.ts), `_N.ids` (DocIds.ts) and, with delGen >= 1, the live docs
 * `_N_<delGen>.liv` in Lucene's Lucene90LiveDocsFormat (segments/lucene/LiveDocs.ts). Deleting docs
 * never rewrites a segment: the next commit names a new `.liv` generation. A segment whose every
 * doc is deleted is dropped from the commit. The newest generation wins; commits are published
 * atomically (writeCommit).
 */
export const COMMIT_CODEC = 'PrescoreCommit';
export const COMMIT_VERSION_START = 0;
/** Version 1 added deletions (delGen, delCount per segment). */
export const COMMIT_VERSION_DELETES = 1;
export const COMMIT_VERSION_CURRENT = COMMIT_VERSION_DELETES;
export const COMMIT_PREFIX = 'commit_';
/** The per-field format suffix of every prescore segment file (Lucene's `<format>_<n>` convention). */
export const PRESCORE_FORMAT_SUFFIX = 'Lucene104HnswScalarQuantizedVectorsFormat_0';

export interface VectorFieldInfo {
  readonly name: string;
  readonly number: number;
  readonly similarity: VectorSimilarityFunction;
  readonly dims: number;
}

export interface SegmentCommitInfo {
  /** `_0`, `_1`, ... (Lucene's naming: `_` + base-36 counter). */
  readonly name: string;
  /** 16 random bytes; every file of the segment carries it in its header. */
  readonly id: Uint8Array;
  readonly maxDoc: number;
  readonly suffix: string;
  readonly hasGraph: boolean;
  /** The generation of the segment's `.liv`; -1: no doc is deleted. */
  readonly delGen: number;
  /** Deleted docs (0 when delGen is -1). */
  readonly delCount: number;
}

export interface CommitPoint {
  readonly generation: number;
  readonly field: VectorFieldInfo;
  /** In docBase order. */
  readonly segments: readonly SegmentCommitInfo[];
  readonly userData: ReadonlyMap<string, string>;
}

export function commitFileName(generation: number): string {
  return COMMIT_PREFIX + generation.toString(36);
}

/** Generations of every commit file in `dir`, ascending. */
export function listCommitGenerations(dir: string): number[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith(COMMIT_PREFIX) && /^[0-9a-z]+$/.test(f.slice(COMMIT_PREFIX.length)))
    .map((f) => parseInt(f.slice(COMMIT_PREFIX.length), 36))
    .sort((a, b) => a - b);
}

export function newSegmentId(): Uint8Array {
  return new Uint8Array(randomBytes(ID_LENGTH));
}

/**
 * Publishes a commit atomically (temp file, fsync, rename, fsync dir). A reader opening the
 * directory sees either the previous commit or this one, never a partial index.
 */
export function writeCommit(dir: string, commit: CommitPoint): string {
  const name = commitFileName(commit.generation);
  const out = new ByteArrayDataOutput(512);
  writeIndexHeader(out, COMMIT_CODEC, COMMIT_VERSION_CURRENT, newSegmentId(), commit.generation.toString(36));
  out.writeString(commit.field.name);
  out.writeVInt(commit.field.number);
  out.writeInt(commit.field.similarity.ordinal);
  out.writeVInt(commit.field.dims);
  out.writeVInt(commit.segments.length);
  for (const s of commit.segments) {
    out.writeString(s.name);
    out.writeBytes(s.id);
    out.writeVInt(s.maxDoc);
    out.writeString(s.suffix);
    out.writeByte(s.hasGraph ? 1 : 0);
    out.writeLong(s.delGen);
    out.writeVInt(s.delCount);
  }
  out.writeMapOfStrings(commit.userData);
  appendFooter(out);
  publishAtomically(dir, name, out.toBytes());
  return name;
}

export function readCommit(dir: string, generation: number): CommitPoint {
  const name = commitFileName(generation);
  const input = openChecksummed(new Uint8Array(readFileSync(join(dir, name))), name);
  const { version } = checkIndexHeader(input, COMMIT_CODEC, COMMIT_VERSION_START, COMMIT_VERSION_CURRENT, undefined, generation.toString(36));
  const fieldName = input.readString();
  const number = input.readVInt();
  const similarity = VectorSimilarityFunction.fromOrdinal(input.readInt());
  const dims = input.readVInt();
  const count = input.readVInt();
  const segments: SegmentCommitInfo[] = [];
  for (let i = 0; i < count; i++) {
    const segName = input.readString();
    const id = input.readBytes(ID_LENGTH).slice();
    const maxDoc = input.readVInt();
    const suffix = input.readString();
    const flags = input.readByte();
    if (flags > 1) throw new CorruptIndexException(`invalid segment flags ${flags}`, name);
    let delGen = -1;
    let delCount = 0;
    if (version >= COMMIT_VERSION_DELETES) {
      delGen = Number(input.readLong());
      delCount = input.readVInt();
      if (!(delGen === -1 || (Number.isSafeInteger(delGen) && delGen >= 1)) || delCount < 0 || delCount >= Math.max(1, maxDoc) || (delGen === -1) !== (delCount === 0))
        throw new CorruptIndexException(`segment ${segName}: invalid deletions (delGen ${delGen}, delCount ${delCount}, maxDoc ${maxDoc})`, name);
    }
    segments.push({ name: segName, id, maxDoc, suffix, hasGraph: flags === 1, delGen, delCount });
  }
  const userData = input.readMapOfStrings();
  if (!input.eof()) throw new CorruptIndexException(`${input.remaining} trailing bytes`, name);
  return { generation, field: { name: fieldName, number, similarity, dims }, segments, userData };
}

/** The newest commit in `dir`; a clear error when the directory holds no prescore index. */
export function readLatestCommit(dir: string): CommitPoint {
  const gens = listCommitGenerations(dir);
  if (gens.length === 0) throw new Error(`no prescore index in ${dir} (no ${COMMIT_PREFIX}N file); build one with \`prescore build\``);
  return readCommit(dir, gens[gens.length - 1]);
}
