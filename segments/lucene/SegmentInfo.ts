import { checkIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { parseSegmentName, segmentFileName } from './IndexFileNames.js';
import type { IndexDirectory } from './LuceneDirectory.js';
import type { LuceneVersion } from './LuceneFormat.js';
import { checkVersion } from './LuceneFormat.js';

/**
 * `_N.si`, Lucene99SegmentInfoFormat. Its codec name is still "Lucene90SegmentInfo", version 0;
 * what tells it apart from the older Lucene90SegmentInfoFormat (same name and version, no
 * hasBlocks byte) is the segment's codec (Lucene99 and later), checked by the caller.
 *
 * Read only, always a plain file (never inside the compound file), fully CRC-verified.
 * Little-endian:
 *
 * | field            | type            | meaning / check                                             |
 * |------------------|-----------------|-------------------------------------------------------------|
 * | index header     |                 | codec `Lucene90SegmentInfo`, version 0, the segment id from segments_N, empty suffix |
 * | version          | 3 x int32       | major, minor, bugfix of the Lucene that wrote the segment    |
 * | has min version  | byte            | 1: 3 x int32 minVersion follow; 0: none; else corrupt        |
 * | maxDoc           | int32           | docs in the segment, deleted ones included; >= 0             |
 * | isCompoundFile   | byte            | 1 yes (files in `_N.cfs`), -1 no; else corrupt               |
 * | hasBlocks        | byte            | 1 / -1, as above                                            |
 * | diagnostics      | map of strings  |                                                             |
 * | files            | set of strings  | the segment's files; each must belong to this segment        |
 * | attributes       | map of strings  |                                                             |
 * | index sort count | vint            | >= 0; each sort field starts with its provider name (string), the rest is provider-specific and skipped (the CRC covered it) |
 * | footer           |                 | CRC32                                                       |
 */
export const SEGMENT_INFO_CODEC = 'Lucene90SegmentInfo';
export const SEGMENT_INFO_VERSION_START = 0;
export const SEGMENT_INFO_VERSION_CURRENT = 0;
export const SEGMENT_INFO_EXTENSION = 'si';

/** SegmentInfo.YES / NO as written in the boolean bytes. */
const YES = 1;
const NO = -1;

export interface SegmentInfo {
  readonly name: string;
  readonly id: Uint8Array;
  /** The Lucene version that wrote the segment. */
  readonly version: LuceneVersion;
  /** The oldest Lucene version that contributed docs to the segment. */
  readonly minVersion: LuceneVersion | null;
  readonly maxDoc: number;
  readonly isCompoundFile: boolean;
  readonly hasBlocks: boolean;
  readonly diagnostics: ReadonlyMap<string, string>;
  readonly files: ReadonlySet<string>;
  readonly attributes: ReadonlyMap<string, string>;
  /** Number of index-sort fields (0 = unsorted). The sort itself is not decoded. */
  readonly indexSortFieldCount: number;
  /** The provider names of the index-sort fields (the first string of each field's encoding). */
  readonly indexSortProviders: readonly string[];
}

export function readSegmentInfo(dir: IndexDirectory, segmentName: string, segmentId: Uint8Array): SegmentInfo {
  const fileName = segmentFileName(segmentName, '', SEGMENT_INFO_EXTENSION);
  const input = dir.openChecksummed(fileName);
  checkIndexHeader(input, SEGMENT_INFO_CODEC, SEGMENT_INFO_VERSION_START, SEGMENT_INFO_VERSION_CURRENT, segmentId, '');
  return parseSegmentInfo(input, segmentName, segmentId);
}

export function parseSegmentInfo(input: ByteArrayDataInput, segmentName: string, segmentId: Uint8Array): SegmentInfo {
  const r = input.resource;
  const version = checkVersion({ major: input.readInt(), minor: input.readInt(), bugfix: input.readInt() }, r);
  const hasMinVersion = input.readSignedByte();
  let minVersion: LuceneVersion | null;
  if (hasMinVersion === 0) minVersion = null;
  else if (hasMinVersion === 1) minVersion = checkVersion({ major: input.readInt(), minor: input.readInt(), bugfix: input.readInt() }, r);
  else throw new CorruptIndexException(`illegal boolean value ${hasMinVersion} (has min version)`, r);
  const maxDoc = input.readInt();
  if (maxDoc < 0) throw new CorruptIndexException(`invalid docCount: ${maxDoc}`, r);
  const isCompoundFile = readBoolean(input, 'isCompoundFile');
  const hasBlocks = readBoolean(input, 'hasBlocks');
  const diagnostics = input.readMapOfStrings();
  const files = input.readSetOfStrings();
  for (const f of files) {
    if (parseSegmentName(f) !== segmentName) throw new CorruptIndexException(`invalid files: expected segment=${segmentName}, got ${f}`, r);
  }
  const attributes = input.readMapOfStrings();
  const indexSortFieldCount = input.readVInt();
  if (indexSortFieldCount < 0) throw new CorruptIndexException(`invalid index sort field count: ${indexSortFieldCount}`, r);
  // Each sort field is a provider name followed by a provider-specific encoding we do not need
  // (docs are already stored in sorted order, so vector ords are unaffected). The footer CRC has
  // covered these bytes; read the first provider name for diagnostics and skip the rest.
  const indexSortProviders: string[] = [];
  if (indexSortFieldCount > 0) {
    indexSortProviders.push(input.readString());
    input.skipBytes(input.remaining);
  }
  return {
    name: segmentName,
    id: segmentId,
    version,
    minVersion,
    maxDoc,
    isCompoundFile,
    hasBlocks,
    diagnostics,
    files,
    attributes,
    indexSortFieldCount,
    indexSortProviders,
  };
}

function readBoolean(input: ByteArrayDataInput, what: string): boolean {
  const b = input.readSignedByte();
  if (b === YES) return true;
  if (b === NO) return false;
  // Lucene itself treats anything but YES as false; be strict, a stray value means misparsing.
  throw new CorruptIndexException(`illegal ${what} byte ${b} (expected 1 or -1)`, input.resource);
}
