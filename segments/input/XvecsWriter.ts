import { open, type FileHandle } from 'node:fs/promises';
import { assertLittleEndianHost } from './fileIo.js';

const DEFAULT_BUFFER_BYTES = 8 << 20;

/**
 * Streaming writer of the TEXMEX `.fvecs` / `.ivecs` layout (per row: int32 LE dims, then dims
 * float32/int32 LE values). Rows are staged in a buffer and written in large sequential writes.
 */
abstract class XvecsWriter<A extends Float32Array | Int32Array> {
  private readonly staging: ArrayBuffer;
  private readonly stagingInts: Int32Array;
  private readonly stagingValues: A;
  private readonly rowInts: number;
  private readonly capacityRows: number;
  private stagedRows = 0;
  private written = 0;
  private closed = false;

  protected constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    readonly dims: number,
    bufferBytes: number,
    makeView: (buffer: ArrayBuffer) => A,
  ) {
    if (!Number.isInteger(dims) || dims <= 0) throw new RangeError(`dims must be a positive integer, got ${dims}`);
    this.rowInts = dims + 1;
    this.capacityRows = Math.max(1, Math.floor(bufferBytes / (4 * this.rowInts)));
    this.staging = new ArrayBuffer(this.capacityRows * this.rowInts * 4);
    this.stagingInts = new Int32Array(this.staging);
    this.stagingValues = makeView(this.staging);
  }

  /** Rows written so far (including staged ones). */
  get rows(): number {
    return this.written + this.stagedRows;
  }

  /** Appends rows x dims values (row-major); `rows` defaults to values.length / dims. */
  async write(values: A, rows = values.length / this.dims): Promise<void> {
    if (this.closed) throw new Error(`${this.path}: writer is closed`);
    if (!Number.isInteger(rows) || rows * this.dims > values.length) {
      throw new RangeError(`${this.path}: ${values.length} values do not hold ${rows} rows of ${this.dims} dims`);
    }
    const { dims, rowInts } = this;
    for (let r = 0; r < rows; r++) {
      if (this.stagedRows === this.capacityRows) await this.flush();
      const at = this.stagedRows * rowInts;
      this.stagingInts[at] = dims;
      this.stagingValues.set(values.subarray(r * dims, (r + 1) * dims), at + 1);
      this.stagedRows++;
    }
  }

  /** Writes out staged rows. */
  async flush(): Promise<void> {
    if (this.stagedRows === 0) return;
    const bytes = new Uint8Array(this.staging, 0, this.stagedRows * this.rowInts * 4);
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done);
      done += bytesWritten;
    }
    this.written += this.stagedRows;
    this.stagedRows = 0;
  }

  /** Flushes, optionally fsyncs, and closes. Idempotent. */
  async close(options: { sync?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
      if (options.sync) await this.fh.sync();
    } finally {
      this.closed = true;
      await this.fh.close();
    }
  }

  /** Closes without flushing staged rows (after a failure). */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close().catch(() => {});
  }
}

export interface XvecsWriterOptions {
  /** Staging buffer size; default 8 MiB. */
  readonly bufferBytes?: number;
  /** 'w' (truncate, the default) or 'wx' (fail if the file exists). */
  readonly flags?: 'w' | 'wx';
}

export class FvecsWriter extends XvecsWriter<Float32Array> {
  private constructor(fh: FileHandle, path: string, dims: number, bufferBytes: number) {
    super(fh, path, dims, bufferBytes, (b) => new Float32Array(b));
  }

  static async open(path: string, dims: number, options: XvecsWriterOptions = {}): Promise<FvecsWriter> {
    assertLittleEndianHost();
    const fh = await open(path, options.flags ?? 'w');
    return new FvecsWriter(fh, path, dims, options.bufferBytes ?? DEFAULT_BUFFER_BYTES);
  }
}

export class IvecsWriter extends XvecsWriter<Int32Array> {
  private constructor(fh: FileHandle, path: string, dims: number, bufferBytes: number) {
    super(fh, path, dims, bufferBytes, (b) => new Int32Array(b));
  }

  static async open(path: string, dims: number, options: XvecsWriterOptions = {}): Promise<IvecsWriter> {
    assertLittleEndianHost();
    const fh = await open(path, options.flags ?? 'w');
    return new IvecsWriter(fh, path, dims, options.bufferBytes ?? DEFAULT_BUFFER_BYTES);
  }
}

/** Writes a small `.fvecs` file in one go (tests, tools). */
export async function writeFvecs(path: string, vectors: Float32Array, dims: number): Promise<void> {
  const w = await FvecsWriter.open(path, dims);
  try {
    await w.write(vectors);
  } finally {
    await w.close();
  }
}

/** Writes a small `.ivecs` file in one go. */
export async function writeIvecs(path: string, values: Int32Array, dims: number): Promise<void> {
  const w = await IvecsWriter.open(path, dims);
  try {
    await w.write(values);
  } finally {
    await w.close();
  }
}
