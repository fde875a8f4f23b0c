import { assertFiniteRows } from './finite.js';
import { assertLittleEndianHost, openForRead, readAt } from './fileIo.js';
import { InputError } from './InputError.js';
import { npyPrefixLength, parseNpyHeader, type NpyHeader } from './Npy.js';
import type { VectorBatch, VectorSource } from './VectorSource.js';

/** dtype spellings that mean little-endian float32. NumPy itself always writes '<f4'. */
const FLOAT32_DESCRS = new Set(['<f4', 'float32', '<float32', 'f4']);

/**
 * NumPy `.npy` (format 1.0, 2.0, 3.0) holding a 2-D little-endian float32 array in C order, i.e.
 * what `np.save(path, x.astype(np.float32))` writes for x of shape (rows, dims). Any other dtype,
 * shape or order is rejected naming what was found.
 */
export async function openNpy(path: string): Promise<VectorSource & { readonly count: number }> {
  assertLittleEndianHost();
  const { fh, size } = await openForRead(path);
  let header: NpyHeader;
  try {
    if (size === 0) throw new InputError(path, 'empty file (no vectors)');
    const prefix = new Uint8Array(Math.min(size, 12));
    await readAt(fh, path, prefix, 0, prefix.length, 0);
    let dataOffset: number;
    try {
      ({ dataOffset } = npyPrefixLength(prefix));
    } catch (err) {
      throw new InputError(path, (err as Error).message);
    }
    if (dataOffset > size) throw new InputError(path, `truncated .npy header (${size} bytes, header needs ${dataOffset})`);
    const bytes = new Uint8Array(dataOffset);
    await readAt(fh, path, bytes, 0, dataOffset, 0);
    try {
      header = parseNpyHeader(bytes);
    } catch (err) {
      throw new InputError(path, (err as Error).message);
    }
  } finally {
    await fh.close().catch(() => {});
  }
  const { descr, shape, fortranOrder } = header;
  const shapeText = `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
  if (header.structured || !FLOAT32_DESCRS.has(descr)) {
    throw new InputError(
      path,
      `unsupported dtype ${header.structured ? descr : `'${descr}'`} with shape ${shapeText}: expected '<f4' (little-endian float32); ` + `convert with x.astype('<f4')`,
    );
  }
  if (shape.length !== 2) {
    throw new InputError(path, `expected a 2-D array (rows, dims), got shape ${shapeText} with dtype '${descr}'`);
  }
  if (fortranOrder) {
    throw new InputError(path, `Fortran (column-major) order is not supported (shape ${shapeText}, dtype '${descr}'); save a C-order array (np.ascontiguousarray)`);
  }
  const [count, dims] = shape;
  if (count === 0) throw new InputError(path, `empty array (shape ${shapeText}, no vectors)`);
  if (dims === 0) throw new InputError(path, `vectors have 0 dims (shape ${shapeText})`);
  const rowBytes = 4 * dims;
  const expected = header.dataOffset + count * rowBytes;
  if (size < expected) {
    const have = size - header.dataOffset;
    throw new InputError(path, `truncated: shape ${shapeText} needs ${expected} bytes, the file has ${size} (${have % rowBytes} bytes of this row)`, {
      row: Math.floor(have / rowBytes),
    });
  }
  if (size > expected) {
    throw new InputError(path, `${size - expected} unexpected bytes after the ${shapeText} array data`);
  }
  return new NpySource(path, dims, count, header.dataOffset);
}

class NpySource implements VectorSource {
  readonly format = 'npy' as const;
  readonly hasIds = false;

  constructor(
    readonly path: string,
    readonly dims: number,
    readonly count: number,
    private readonly dataOffset: number,
  ) {}

  async *batches(maxRows: number): AsyncGenerator<VectorBatch> {
    const { path, dims, count, dataOffset } = this;
    const rowBytes = 4 * dims;
    const batchRows = Math.max(1, Math.min(Math.floor(maxRows), count));
    const { fh } = await openForRead(path);
    // The data is contiguous float32: each batch is read straight into its own uninitialized
    // buffer (no copy), and the next batch's read is issued before this one is yielded.
    const readAhead = (firstRow: number): Promise<Float32Array> => {
      const p = (async () => {
        const rows = Math.min(batchRows, count - firstRow);
        const raw = Buffer.allocUnsafeSlow(rows * rowBytes);
        const got = await readAt(fh, path, raw, 0, raw.length, dataOffset + firstRow * rowBytes);
        if (got < raw.length) {
          throw new InputError(path, 'truncated: the file ended while reading (it shrank after it was opened?)', {
            row: firstRow + Math.floor(got / rowBytes),
          });
        }
        return new Float32Array(raw.buffer, raw.byteOffset, rows * dims);
      })();
      // Its failure is reported when awaited; until then it must not count as unhandled.
      p.catch(() => {});
      return p;
    };
    let pending: Promise<Float32Array> | undefined;
    try {
      pending = readAhead(0);
      for (let firstRow = 0; firstRow < count; firstRow += batchRows) {
        const rows = Math.min(batchRows, count - firstRow);
        const vectors: Float32Array = await pending!;
        pending = firstRow + batchRows < count ? readAhead(firstRow + batchRows) : undefined;
        assertFiniteRows(path, vectors, dims, firstRow);
        yield { firstRow, rows, vectors };
      }
    } finally {
      await pending?.catch(() => {});
      await fh.close().catch(() => {});
    }
  }
}
