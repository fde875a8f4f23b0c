import { open, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { InputError, ioError } from './InputError.js';

/** The readers view file bytes through typed arrays, which use the host's byte order. */
export function assertLittleEndianHost(): void {
  if (endianness() !== 'LE') throw new Error('prescore vector readers require a little-endian host');
}

/** Opens a regular file for reading; missing/unreadable/directory -> InputError naming the file. */
export async function openForRead(path: string): Promise<{ fh: FileHandle; size: number }> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    throw ioError(path, err, 'cannot open');
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new InputError(path, 'not a regular file');
    return { fh, size: st.size };
  } catch (err) {
    await fh.close().catch(() => {});
    throw err instanceof InputError ? err : ioError(path, err);
  }
}

/**
 * Reads up to `length` bytes at `position`, looping over short reads; returns the bytes read
 * (less than `length` only at end of file).
 */
export async function readAt(fh: FileHandle, path: string, target: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    let n: number;
    try {
      ({ bytesRead: n } = await fh.read(target, offset + done, length - done, position + done));
    } catch (err) {
      throw ioError(path, err);
    }
    if (n === 0) break;
    done += n;
  }
  return done;
}
