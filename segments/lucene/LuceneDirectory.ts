import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checksumEntireFile, openChecksummed } from '../codec/CodecUtil.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes, wholeFile } from '../store/FileSlice.js';
import { parseSegmentName } from './IndexFileNames.js';

/** A file a Lucene structure refers to does not exist (in the directory or in the compound file). */
export class LuceneFileNotFoundError extends Error {
  constructor(
    readonly fileName: string,
    readonly where: string,
  ) {
    super(`no file ${fileName} in ${where}`);
    this.name = 'LuceneFileNotFoundError';
  }
}

/**
 * The physical index directory, read-only. Every logical per-segment file is reached through a
 * SegmentDirectory instead; this class only serves the files that live outside compound files
 * (`segments_N`, `.si`, `.cfe`/`.cfs`, `.liv`, field-infos updates).
 */
export class IndexDirectory {
  readonly path: string;

  constructor(path: string) {
    this.path = resolve(path);
    if (!existsSync(this.path) || !statSync(this.path).isDirectory()) {
      throw new LuceneFileNotFoundError(this.path, 'the file system (not a directory)');
    }
  }

  listAll(): string[] {
    return readdirSync(this.path).sort();
  }

  exists(name: string): boolean {
    return existsSync(join(this.path, name));
  }

  openSlice(name: string): FileSlice {
    if (name.includes('/') || name.includes('\\') || name === '..' || name === '.') throw new Error(`invalid index file name ${name}`);
    if (!this.exists(name)) throw new LuceneFileNotFoundError(name, this.path);
    return wholeFile(join(this.path, name), name);
  }

  /** Reads a small file whole and verifies its CRC32 footer; the input excludes the footer. */
  openChecksummed(name: string): ByteArrayDataInput {
    const slice = this.openSlice(name);
    return openChecksummed(readSliceBytes(slice), slice.name);
  }
}

/**
 * The files of one segment, whether they are plain files or sub-files of `_N.cfs`. Names are the
 * full logical names (`_0.fnm`, `_0_Lucene99HnswVectorsFormat_0.vec`); slices returned are
 * relative to the logical file, so format readers work on both layouts.
 */
export interface SegmentDirectory {
  readonly segmentName: string;
  readonly isCompound: boolean;
  /** Logical file names, sorted. */
  listAll(): string[];
  exists(name: string): boolean;
  openSlice(name: string): FileSlice;
  /** Reads a small logical file whole and verifies its CRC32; the input excludes the footer. */
  openChecksummed(name: string): ByteArrayDataInput;
  /** Full CRC32 verification of every logical file (and of the compound container). */
  checkIntegrity(): void;
}

/** A non-compound segment: its files are plain files of the index directory. */
export class PlainSegmentDirectory implements SegmentDirectory {
  readonly isCompound = false;
  private readonly files: readonly string[];

  /** `files` is the segment's file set from its `.si`. */
  constructor(
    private readonly dir: IndexDirectory,
    readonly segmentName: string,
    files: Iterable<string>,
  ) {
    this.files = [...files].sort();
  }

  listAll(): string[] {
    return [...this.files];
  }

  exists(name: string): boolean {
    return this.belongs(name) && this.dir.exists(name);
  }

  openSlice(name: string): FileSlice {
    if (!this.belongs(name)) throw new LuceneFileNotFoundError(name, `segment ${this.segmentName} (other segment's file)`);
    return this.dir.openSlice(name);
  }

  openChecksummed(name: string): ByteArrayDataInput {
    const slice = this.openSlice(name);
    return openChecksummed(readSliceBytes(slice), slice.name);
  }

  checkIntegrity(): void {
    for (const f of this.files) checksumEntireFile(this.dir.openSlice(f));
  }

  private belongs(name: string): boolean {
    return parseSegmentName(name) === this.segmentName;
  }
}
