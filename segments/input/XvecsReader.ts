import type { FileHandle } from 'node:fs/promises';
import { assertFiniteRows } from './finite.js';
import { assertLittleEndianHost, openForRead, readAt } from './fileIo.js';
import { InputError } from './InputError.js';
import type { VectorBatch, VectorSource } from './VectorSource.js';

/** Larger headers are certainly not a dimension (and would make a row bigger than 1 GiB). */
export const MAX_XVECS_DIMS = 1 << 28;
/** The largest integer magnitude an ivecs value may have to convert to float32 exactly. */
const MAX_EXACT_INT_F32 = 1 << 24;

/**
 * `.fvecs` / `.ivecs` (the TEXMEX format): every row is an int32 LE dimension followed by that
 * many float32 (fvecs) or int32 (ivecs) LE values. All rows must have the same dimension.
 * ivecs values are returned as float32 and must be exactly representable (|x| <= 2^24).
 */
export async function openXvecs(path: string, format: 'fvecs' | 'ivecs'): Promise<VectorSource & { readonly count: number }> {
  assertLittleEndianHost();
  const { fh, size } = await openForRead(path);
  let dims: number;
  let count: number;
  try {
    if (size === 0) throw new InputError(path, `empty file (no vectors)`);
    const head = new Uint8Array(4);
    if (size < 4 || (await readAt(fh, path, head, 0, 4, 0)) < 4) {
      throw new InputError(path, `truncated: the file has ${size} bytes, less than one dimension header`, { row: 0 });
    }
    dims = new DataView(head.buffer).getInt32(0, true);
    if (dims <= 0 || dims > MAX_XVECS_DIMS) {
      throw new InputError(path, `invalid dimension header ${dims} (not a .${format} file?)`, { row: 0 });
    }
    const rowBytes = 4 + 4 * dims;
    if (size > rowBytes) await checkFirstRowLength(fh, path, size, dims);
    if (size % rowBytes !== 0) await locateIrregularRow(fh, path, size, dims);
    count = size / rowBytes;
  } finally {
    await fh.close().catch(() => {});
  }
  return new XvecsSource(path, format, dims, count);
}

class XvecsSource implements VectorSource {
  readonly hasIds = false;

  constructor(
    readonly path: string,
    readonly format: 'fvecs' | 'ivecs',
    readonly dims: number,
    readonly count: number,
  ) {}

  async *batches(maxRows: number): AsyncGenerator<VectorBatch> {
    const { path, dims, count } = this;
    const rowInts = dims + 1;
    const rowBytes = 4 * rowInts;
    const batchRows = Math.max(1, Math.min(Math.floor(maxRows), count));
    const { fh } = await openForRead(path);
    // Each batch reads into its own uninitialized buffer and strips the row headers in place, so
    // the vectors are returned without a second copy or a zero-filled allocation. The next batch's
    // read is issued before this one is processed and yielded (one batch of read-ahead).
    const readBatch = async (firstRow: number): Promise<Buffer> => {
      const rows = Math.min(batchRows, count - firstRow);
      const raw = Buffer.allocUnsafeSlow(rows * rowBytes);
      const got = await readAt(fh, path, raw, 0, raw.length, firstRow * rowBytes);
      if (got < raw.length) {
        const row = firstRow + Math.floor(got / rowBytes);
        throw new InputError(path, `truncated: the file ended while reading (it shrank after it was opened?)`, { row });
      }
      return raw;
    };
    const readAhead = (firstRow: number): Promise<Buffer> => {
      const p = readBatch(firstRow);
      // Its failure is reported when awaited; until then it must not count as unhandled.
      p.catch(() => {});
      return p;
    };
    let pending: Promise<Buffer> | undefined;
    try {
      pending = readAhead(0);
      for (let firstRow = 0; firstRow < count; firstRow += batchRows) {
        const rows = Math.min(batchRows, count - firstRow);
        const raw: Buffer = await pending!;
        pending = firstRow + batchRows < count ? readAhead(firstRow + batchRows) : undefined;
        const ints = new Int32Array(raw.buffer, raw.byteOffset, rows * rowInts);
        const floats = new Float32Array(raw.buffer, raw.byteOffset, rows * rowInts);
        for (let r = 0; r < rows; r++) {
          const at = r * rowInts;
          if (ints[at] !== dims) {
            throw new InputError(path, `dimension header ${ints[at]}, expected ${dims} (rows must all have the same dimension)`, {
              row: firstRow + r,
            });
          }
        }
        if (this.format === 'fvecs') {
          // Destinations never pass their sources (r*dims <= r*(dims+1)+1): a forward memmove.
          for (let r = 0; r < rows; r++) floats.copyWithin(r * dims, r * rowInts + 1, (r + 1) * rowInts);
        } else {
          for (let r = 0; r < rows; r++) {
            const from = r * rowInts + 1;
            const to = r * dims;
            for (let i = 0; i < dims; i++) {
              const v = ints[from + i];
              if (v > MAX_EXACT_INT_F32 || v < -MAX_EXACT_INT_F32) {
                throw new InputError(path, `value ${v} is not exactly representable as float32 (|x| > 2^24)`, {
                  row: firstRow + r,
                  component: i,
                });
              }
              floats[to + i] = v;
            }
          }
        }
        const vectors = new Float32Array(raw.buffer, raw.byteOffset, rows * dims);
        if (this.format === 'fvecs') {
          assertFiniteRows(path, vectors, dims, firstRow);
        }
        yield { firstRow, rows, vectors };
      }
    } finally {
      // Let an abandoned read-ahead settle before closing the handle under it.
      await pending?.catch(() => {});
      await fh.close().catch(() => {});
    }
  }
}

/**
 * Row 1's header must repeat row 0's. When it does not, the usual cause is row 0's own header
 * (a writer that counted the dims wrong, e.g. 9 over rows of 8): then some earlier int32 inside
 * row 0 looks like the next header, and row 0 is the row to name, with the count its values
 * really have, rather than row 1 with a float's bit pattern read as a "dimension".
 */
async function checkFirstRowLength(fh: FileHandle, path: string, size: number, dims: number): Promise<void> {
  const bytes = new Uint8Array(4 * (dims + 2));
  const got = await readAt(fh, path, bytes, 0, Math.min(bytes.length, size), 0);
  const view = new DataView(bytes.buffer);
  const intAt = (i: number) => view.getInt32(4 * i, true);
  if (got < 4 * (dims + 2) || intAt(dims + 1) === dims) return;
  for (let values = 1; values < dims; values++) {
    const next = intAt(values + 1);
    if (next === dims || next === values) {
      throw new InputError(path, `dimension header says ${dims} values but the row holds ${values} (the next row's header, ${next}, follows after ${values} values)`, { row: 0 });
    }
  }
}

/**
 * The file size is not a whole number of rows: walk the row headers to tell a ragged file (a row
 * with another dimension) from a truncated one, and throw naming the row. Reads the file in 1 MiB
 * windows (one read serves many headers); only runs on files already known to be bad.
 */
async function locateIrregularRow(fh: FileHandle, path: string, size: number, dims: number): Promise<never> {
  const rowBytes = 4 + 4 * dims;
  const window = new Uint8Array(Math.max(1 << 20, 4));
  const view = new DataView(window.buffer);
  let winStart = 0;
  let winLen = 0;
  let offset = 0;
  for (let row = 0; ; row++) {
    if (offset + 4 > size) {
      throw new InputError(path, `truncated: the file ends ${size - offset} bytes into the row's dimension header`, { row });
    }
    if (offset < winStart || offset + 4 > winStart + winLen) {
      winStart = offset;
      winLen = await readAt(fh, path, window, 0, window.length, offset);
      if (winLen < 4) throw new InputError(path, 'truncated: the file shrank while reading', { row });
    }
    const d = view.getInt32(offset - winStart, true);
    if (d !== dims) {
      throw new InputError(path, `dimension header ${d}, expected ${dims} (rows must all have the same dimension)`, { row });
    }
    if (offset + rowBytes > size) {
      throw new InputError(path, `truncated: the file ends ${size - offset} bytes into the row (a row is ${rowBytes} bytes)`, { row });
    }
    offset += rowBytes;
  }
}

/** Reads a whole small .ivecs file (e.g. ground truth) as int32. */
export async function readIvecs(path: string): Promise<{ dims: number; count: number; data: Int32Array }> {
  assertLittleEndianHost();
  const source = await openXvecs(path, 'ivecs');
  const { dims, count } = source;
  const rowInts = dims + 1;
  const raw = new Uint8Array(count * rowInts * 4);
  const { fh } = await openForRead(path);
  try {
    const got = await readAt(fh, path, raw, 0, raw.length, 0);
    if (got < raw.length) throw new InputError(path, 'truncated: the file shrank while reading', { row: Math.floor(got / (rowInts * 4)) });
  } finally {
    await fh.close().catch(() => {});
  }
  const ints = new Int32Array(raw.buffer);
  const data = new Int32Array(count * dims);
  for (let r = 0; r < count; r++) {
    if (ints[r * rowInts] !== dims) {
      throw new InputError(path, `dimension header ${ints[r * rowInts]}, expected ${dims} (rows must all have the same dimension)`, { row: r });
    }
    data.set(ints.subarray(r * rowInts + 1, (r + 1) * rowInts), r * dims);
  }
  return { dims, count, data };
}
