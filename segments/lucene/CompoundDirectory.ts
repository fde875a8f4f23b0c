import { checkIndexHeader, checksumEntireFile, FOOTER_LENGTH, indexHeaderLength, openChecksummed, retrieveChecksum } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { ByteArrayDataInput as Input } from '../store/DataInput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';
import { expectEnd } from './LuceneFormat.js';
import { segmentFileName, stripSegmentName } from './IndexFileNames.js';
import type { IndexDirectory, SegmentDirectory } from './LuceneDirectory.js';
import { LuceneFileNotFoundError } from './LuceneDirectory.js';

/**
 * Lucene90CompoundFormat: a segment's files packed into `_N.cfs`, listed by `_N.cfe`. Read only.
 * Little-endian.
 *
 * `_N.cfe` (entries; read whole, CRC-verified):
 *
 * | field        | type   | meaning / check                                                       |
 * |--------------|--------|-----------------------------------------------------------------------|
 * | index header |        | codec `Lucene90CompoundEntries`, version 0, the segment id, empty suffix |
 * | count        | vint   | >= 0                                                                  |
 * | per entry:   |        |                                                                       |
 * | id           | string | the file name without the segment name (`.fnm`, `_Lucene99HnswVectorsFormat_0.vec`); no duplicates |
 * | offset       | int64  | where the sub-file starts in `_N.cfs`, >= 0                            |
 * | length       | int64  | its length, >= 0                                                      |
 * | footer       |        | CRC32                                                                 |
 *
 * `_N.cfs` (data): index header (codec `Lucene90CompoundData`, the `.cfe` version, the segment id,
 * empty suffix), then the sub-files, each a complete file with its own header and footer, at
 * the entries' offsets (Lucene aligns them to 8 bytes, padding with zeros), then the container's
 * footer. Checked at open: header, footer structure, length = end of the last entry + 16, no
 * entry overlapping the header or another entry, and every sub-file's footer structure; full
 * CRC32s (each sub-file's, then the container's) in checkIntegrity(). Offsets inside a sub-file
 * are relative to its own start, so format readers see the same bytes as for a plain file.
 */
export const COMPOUND_DATA_CODEC = 'Lucene90CompoundData';
export const COMPOUND_ENTRIES_CODEC = 'Lucene90CompoundEntries';
export const COMPOUND_VERSION_START = 0;
export const COMPOUND_VERSION_CURRENT = 0;
export const COMPOUND_DATA_EXTENSION = 'cfs';
export const COMPOUND_ENTRIES_EXTENSION = 'cfe';

export interface CompoundEntry {
  /** The entry id as stored: the file name with the segment name stripped (`.fnm`, `_Lucene99HnswVectorsFormat_0.vec`). */
  readonly id: string;
  /** Full logical name (`_0.fnm`). */
  readonly name: string;
  readonly offset: number;
  readonly length: number;
}

/**
 * A compound segment: `_N.cfe` lists the sub-files (fully CRC-checked on open) and `_N.cfs` holds
 * them back to back between its own header and footer (structurally checked on open: header,
 * footer, exact length, every entry inside the data area, no overlaps, every sub-file's footer).
 * Slices are named `_N.cfs[<logical name>]` so errors point at the sub-file.
 */
export class CompoundDirectory implements SegmentDirectory {
  readonly isCompound = true;
  readonly entries: ReadonlyMap<string, CompoundEntry>;
  readonly version: number;
  private readonly cfs: FileSlice;

  private constructor(
    readonly segmentName: string,
    cfs: FileSlice,
    entries: Map<string, CompoundEntry>,
    version: number,
  ) {
    this.cfs = cfs;
    this.entries = entries;
    this.version = version;
  }

  static open(dir: IndexDirectory, segmentName: string, segmentId: Uint8Array): CompoundDirectory {
    const cfeName = segmentFileName(segmentName, '', COMPOUND_ENTRIES_EXTENSION);
    const cfsName = segmentFileName(segmentName, '', COMPOUND_DATA_EXTENSION);
    const cfe = dir.openChecksummed(cfeName);
    const { version } = checkIndexHeader(cfe, COMPOUND_ENTRIES_CODEC, COMPOUND_VERSION_START, COMPOUND_VERSION_CURRENT, segmentId, '');
    const count = cfe.readVInt();
    if (count < 0) throw new CorruptIndexException(`invalid entry count ${count}`, cfeName);
    const entries = new Map<string, CompoundEntry>();
    for (let i = 0; i < count; i++) {
      const id = cfe.readString();
      const offset = cfe.readLong();
      const length = cfe.readLong();
      if (entries.has(id)) throw new CorruptIndexException(`duplicate cfs entry id=${id}`, cfeName);
      if (offset < 0 || length < 0) throw new CorruptIndexException(`entry ${id}: negative offset ${offset} or length ${length}`, cfeName);
      entries.set(id, { id, name: segmentName + id, offset, length });
    }
    expectEnd(cfe);

    const cfs = dir.openSlice(cfsName);
    const headerLen = indexHeaderLength(COMPOUND_DATA_CODEC, '');
    checkIndexHeader(new Input(readSliceBytes(cfs, 0, Math.min(headerLen, cfs.length)), cfsName), COMPOUND_DATA_CODEC, version, version, segmentId, '');
    retrieveChecksum(cfs);
    let end = headerLen;
    for (const e of entries.values()) end = Math.max(end, e.offset + e.length);
    const expectedLength = end + FOOTER_LENGTH;
    if (cfs.length !== expectedLength) {
      throw new CorruptIndexException(`length should be ${expectedLength} bytes, but is ${cfs.length} instead`, cfsName);
    }
    const sorted = [...entries.values()].sort((a, b) => a.offset - b.offset);
    let prevEnd = headerLen;
    for (const e of sorted) {
      if (e.offset < prevEnd) {
        throw new CorruptIndexException(`sub-file ${e.name} at [${e.offset}, ${e.offset + e.length}) overlaps the header or the previous sub-file (ends at ${prevEnd})`, cfsName);
      }
      prevEnd = e.offset + e.length;
    }
    const cd = new CompoundDirectory(segmentName, cfs, entries, version);
    // Cheap per-sub-file structural check (16 bytes each): catches truncated or misplaced entries.
    for (const e of sorted) retrieveChecksum(cd.openSlice(e.name));
    return cd;
  }

  get cfsSlice(): FileSlice {
    return this.cfs;
  }

  listAll(): string[] {
    return [...this.entries.values()].map((e) => e.name).sort();
  }

  exists(name: string): boolean {
    return this.entryFor(name) !== undefined;
  }

  openSlice(name: string): FileSlice {
    const e = this.entryFor(name);
    if (!e) throw new LuceneFileNotFoundError(name, `compound file ${this.cfs.name}`);
    return { path: this.cfs.path, name: `${this.cfs.name}[${e.name}]`, offset: this.cfs.offset + e.offset, length: e.length };
  }

  openChecksummed(name: string): ByteArrayDataInput {
    const slice = this.openSlice(name);
    return openChecksummed(readSliceBytes(slice), slice.name);
  }

  /** Verifies every sub-file's own CRC (errors name the sub-file), then the container's. */
  checkIntegrity(): void {
    for (const name of this.listAll()) checksumEntireFile(this.openSlice(name));
    checksumEntireFile(this.cfs);
  }

  private entryFor(name: string): CompoundEntry | undefined {
    if (!name.startsWith(this.segmentName)) return undefined;
    const e = this.entries.get(stripSegmentName(name));
    return e && e.name === name ? e : undefined;
  }
}
