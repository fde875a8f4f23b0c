import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { FileSlice } from './FileSlice.js';
import { readSliceBytes } from './FileSlice.js';
import { closeFile, openForRead } from './native/IoUring.js';
import { preadInto } from './native/libc.js';
import { type Advice, MappedFile } from './native/MappedFile.js';

/**
 * Random access to the bytes of a logical file (Lucene's RandomAccessInput), read in place: through
 * a memory mapping (zero copy, page faults) or positioned reads into a small reusable buffer
 * (no mapping). Off-heap readers (the HNSW graph of `.vex`) decode from it without copying the
 * file onto the heap.
 */
export interface RandomAccessBytes {
  readonly name: string;
  readonly length: number;
  /**
   * Makes [offset, offset + length) readable and returns where it starts in `bytes`. The range
   * stays valid until the next load() (a mapping keeps every range valid).
   */
  load(offset: number, length: number): number;
  /** The array load() positions refer to (re-read it after every load()). */
  readonly bytes: Uint8Array;
  /**
   * The range as bytes that stay valid as long as this object is open (a mapping's view, or a heap
   * copy for positioned reads): for small tables read on every access (neighbour offsets).
   */
  pin(offset: number, length: number): Uint8Array;
  /** The mapping, when reads go through one (page-cache probes and madvise for prefetch). */
  readonly mapping: MappedFile | null;
  close(): void;
}

/** A mapped logical file (a plain file or a compound sub-file); `advice` as in MappedFile.open. */
export class MappedBytes implements RandomAccessBytes {
  readonly name: string;
  readonly length: number;
  readonly mapping: MappedFile;
  readonly bytes: Uint8Array;

  /**
   * `advice` defaults to RANDOM: a neighbour list is a few hundred bytes, and fault read-around
   * would read 128 KiB per hop. Readers that stream (doc-values columns) pass 'normal'.
   */
  constructor(slice: FileSlice, advice: Advice = 'random') {
    this.name = slice.name;
    this.length = slice.length;
    this.mapping = MappedFile.open(slice.path, slice.offset, slice.length, { advice });
    if (this.mapping.chunkCount !== 1) {
      this.mapping.close();
      throw new RangeError(`${slice.name}: ${slice.length} bytes exceed the 4 GiB a single mapped view can address`);
    }
    this.bytes = this.mapping.bytes();
  }

  load(offset: number, length: number): number {
    check(this, offset, length);
    return offset;
  }

  pin(offset: number, length: number): Uint8Array {
    check(this, offset, length);
    return this.bytes.subarray(offset, offset + length);
  }

  close(): void {
    this.mapping.close();
  }
}

/** Positioned reads (pread) of a logical file into a reusable buffer; no mapping. */
export class PreadBytes implements RandomAccessBytes {
  readonly name: string;
  readonly length: number;
  readonly mapping = null;
  private buffer = new Uint8Array(4096);
  private readonly fd: number;

  constructor(private readonly slice: FileSlice) {
    this.name = slice.name;
    this.length = slice.length;
    this.fd = openForRead(slice.path, false);
  }

  get bytes(): Uint8Array {
    return this.buffer;
  }

  load(offset: number, length: number): number {
    check(this, offset, length);
    if (this.buffer.length < length) this.buffer = new Uint8Array(Math.max(length, 2 * this.buffer.length));
    const view = length === this.buffer.length ? this.buffer : this.buffer.subarray(0, length);
    if (preadInto(this.fd, view, this.slice.offset + offset, this.slice.path) !== length) {
      throw new CorruptIndexException(`unexpected end of file reading [${offset}, +${length})`, this.name);
    }
    return 0;
  }

  pin(offset: number, length: number): Uint8Array {
    return readSliceBytes(this.slice, offset, length);
  }

  close(): void {
    closeFile(this.fd);
  }
}

function check(b: RandomAccessBytes, offset: number, length: number): void {
  if (!(offset >= 0 && length >= 0 && offset + length <= b.length)) {
    throw new CorruptIndexException(`read [${offset}, +${length}) outside the file (${b.length} bytes)`, b.name);
  }
}
