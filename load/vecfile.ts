/**
 * `.fvecs` / `.ivecs` readers (TEXMEX format: per row an int32 little-endian dimension, then that
 * many float32 / int32 values). Only the first `limit` rows are read, so a query file can be
 * large without the load tester loading all of it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Rows of an `.fvecs` / `.ivecs` file. */
export interface VecRows<T extends Float32Array | Int32Array> {
  readonly dim: number;
  readonly count: number;
  /** Row-major, `count * dim` values. */
  readonly data: T;
  /** Rows in the file (may exceed `count` when a limit applied). */
  readonly rowsInFile: number;
}

const MAX_DIM = 1 << 20;

/** Reads an `.fvecs` file (each row: int32 dims, then dims float32). */
export function readFvecs(path: string, limit = Infinity): VecRows<Float32Array> {
  return readVecs(path, limit, 'fvecs', (bytes, n) => new Float32Array(bytes.buffer, bytes.byteOffset, n));
}

/** Reads an `.ivecs` file (each row: int32 count, then count int32), e.g. ground truth. */
export function readIvecs(path: string, limit = Infinity): VecRows<Int32Array> {
  return readVecs(path, limit, 'ivecs', (bytes, n) => new Int32Array(bytes.buffer, bytes.byteOffset, n));
}

function readVecs<T extends Float32Array | Int32Array>(path: string, limit: number, kind: string, view: (bytes: Uint8Array, n: number) => T): VecRows<T> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new Error(`${kind} ${path}: cannot open (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size < 4) throw new Error(`${kind} ${path}: file is empty or shorter than one header`);
    const head = Buffer.alloc(4);
    readFully(fd, head, 0, path, kind);
    const dim = head.readInt32LE(0);
    if (dim <= 0 || dim > MAX_DIM) {
      throw new Error(`${kind} ${path}: row 0 declares dimension ${dim} (expected 1..${MAX_DIM})`);
    }
    const rowBytes = 4 + 4 * dim;
    if (size % rowBytes !== 0) {
      throw new Error(`${kind} ${path}: size ${size} is not a multiple of the row size ${rowBytes} (dim ${dim}); truncated or mixed dimensions`);
    }
    const rowsInFile = size / rowBytes;
    const count = Math.min(rowsInFile, Math.max(0, Math.floor(limit)));
    // Aligned copy: the payload of each row lands contiguously in `out` for a typed view.
    const out = new Uint8Array(count * dim * 4);
    const chunkRows = Math.max(1, Math.floor((4 << 20) / rowBytes));
    const chunk = Buffer.alloc(Math.min(count, chunkRows) * rowBytes);
    for (let row = 0; row < count; row += chunkRows) {
      const rows = Math.min(chunkRows, count - row);
      const buf = chunk.subarray(0, rows * rowBytes);
      readFully(fd, buf, row * rowBytes, path, kind);
      for (let r = 0; r < rows; r++) {
        const off = r * rowBytes;
        const d = buf.readInt32LE(off);
        if (d !== dim) {
          throw new Error(`${kind} ${path}: row ${row + r} declares dimension ${d}, expected ${dim}`);
        }
        out.set(buf.subarray(off + 4, off + rowBytes), (row + r) * dim * 4);
      }
    }
    return { dim, count, data: view(out, count * dim), rowsInFile };
  } finally {
    closeSync(fd);
  }
}

function readFully(fd: number, buf: Uint8Array, position: number, path: string, kind: string): void {
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, position + done);
    if (n === 0) throw new Error(`${kind} ${path}: unexpected end of file at byte ${position + done}`);
    done += n;
  }
}
