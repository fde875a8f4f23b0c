import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';

/**
 * A logical file: a byte range of a physical file. A plain index file is the whole physical file;
 * a Lucene compound-file (.cfs) sub-file is a range inside it. Offsets handed to readers are
 * always relative to the slice start, so every format reader works on both.
 */
export interface FileSlice {
  /** Absolute path of the physical file that holds the bytes. */
  readonly path: string;
  /** The logical file name, used in error messages (e.g. `_0.cfs[_0_Lucene99HnswVectorsFormat_0.vec]`). */
  readonly name: string;
  /** Byte offset of the slice inside the physical file. */
  readonly offset: number;
  readonly length: number;
}

export function wholeFile(path: string, name = path): FileSlice {
  const fd = openSync(path, 'r');
  try {
    return { path, name, offset: 0, length: fstatSync(fd).size };
  } finally {
    closeSync(fd);
  }
}

/** Reads `length` bytes at `relOffset` within the slice (positioned reads; no caching). */
export function readSliceBytes(slice: FileSlice, relOffset = 0, length = slice.length - relOffset, into?: Uint8Array): Uint8Array {
  if (relOffset < 0 || length < 0 || relOffset + length > slice.length) {
    throw new CorruptIndexException(`read [${relOffset}, ${relOffset + length}) outside file of length ${slice.length}`, slice.name);
  }
  const out = into ?? new Uint8Array(length);
  const fd = openSync(slice.path, 'r');
  try {
    let done = 0;
    while (done < length) {
      const n = readSync(fd, out, done, Math.min(length - done, 1 << 30), slice.offset + relOffset + done);
      if (n <= 0) throw new CorruptIndexException(`unexpected EOF at ${relOffset + done}`, slice.name);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}
