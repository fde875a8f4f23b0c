import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { deferSync } from './DeferredSync.js';
import { crc32 } from 'node:zlib';
import { DataOutput } from './DataOutput.js';

/**
 * A buffered, append-only file output that keeps a running CRC32 of everything written, so
 * the CodecUtil footer can be written without re-reading the file.
 */
export class IndexOutput extends DataOutput {
  private readonly fd: number;
  private readonly buf = new Uint8Array(1 << 16);
  private used = 0;
  private flushed = 0;
  private crc = 0;
  private closed = false;

  constructor(readonly path: string) {
    super();
    this.fd = openSync(path, 'wx');
  }

  get filePointer(): number {
    return this.flushed + this.used;
  }

  /** CRC32 of every byte written so far. */
  get checksum(): number {
    this.flush();
    return this.crc;
  }

  writeByte(b: number): void {
    if (this.used === this.buf.length) this.flush();
    this.buf[this.used++] = b;
  }

  writeBytes(bytes: Uint8Array, offset = 0, length = bytes.length - offset): void {
    if (length <= this.buf.length - this.used) {
      this.buf.set(bytes.subarray(offset, offset + length), this.used);
      this.used += length;
      return;
    }
    this.flush();
    const chunk = bytes.subarray(offset, offset + length);
    this.crc = crc32(chunk, this.crc);
    writeFully(this.fd, chunk);
    this.flushed += length;
  }

  /** Pads with zero bytes to an absolute file offset that is a multiple of `alignment`. */
  alignTo(alignment: number): number {
    const pad = (alignment - (this.filePointer % alignment)) % alignment;
    for (let i = 0; i < pad; i++) this.writeByte(0);
    return this.filePointer;
  }

  private flush(): void {
    if (this.used === 0) return;
    const chunk = this.buf.subarray(0, this.used);
    this.crc = crc32(chunk, this.crc);
    writeFully(this.fd, chunk);
    this.flushed += this.used;
    this.used = 0;
  }

  /** Flushes, fsyncs (unless a deferringSync scope defers it) and closes. */
  close(): void {
    if (this.closed) return;
    this.flush();
    if (!deferSync(this.path)) fsyncSync(this.fd);
    closeSync(this.fd);
    this.closed = true;
  }

  /** Closes without fsync, for error paths (the file is about to be deleted). */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

function writeFully(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
}
