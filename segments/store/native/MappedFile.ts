/**
 * A read-only memory mapping of a byte range of a file, with zero-copy typed-array views and the
 * page-cache controls prescore's prefetching read paths need (madvise, mincore).
 *
 * Views: koffi aborts the whole process for a view above 4 GiB, so a range up to 4 GiB gets one
 * view and a larger range is cut into 1 GiB chunks. Chunk views OVERLAP by `maxRecordBytes`
 * (1 MiB): a record of up to that size starting in chunk i lies wholly inside chunk i's view, so
 * a vector never has to be stitched together from two views.
 *
 * Lifetime: views are not owned by the GC. After close() every method throws, but a typed array
 * obtained earlier still points at unmapped memory and crashes the process if touched: drop
 * views before closing. A worker thread should map the file itself (MappedFile.open in the
 * worker); mappings are per process, so both see the same page cache.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import {
  MADV_DONTNEED,
  MADV_NORMAL,
  MADV_RANDOM,
  MADV_SEQUENTIAL,
  MADV_WILLNEED,
  MAP_SHARED,
  PAGE_SIZE,
  PROT_READ,
  madvise,
  mincore,
  mmap,
  munmap,
  pageCeil,
  pageFloor,
  viewOf,
  MAX_VIEW_BYTES,
} from './libc.js';

export type Advice = 'normal' | 'random' | 'sequential' | 'willneed' | 'dontneed';

const ADVICE: Record<Advice, number> = {
  normal: MADV_NORMAL,
  random: MADV_RANDOM,
  sequential: MADV_SEQUENTIAL,
  willneed: MADV_WILLNEED,
  dontneed: MADV_DONTNEED,
};

const CHUNK_BYTES = 2 ** 30;
const OVERLAP_BYTES = 2 ** 20;
/** mincore window when scanning the whole mapping: 64 Ki pages = 256 MiB per call, 64 KiB of scratch. */
const SCAN_PAGES = 65536;

export interface MappedFileOptions {
  /** madvise applied to the whole mapping at open (e.g. 'random' for rescoring: no fault read-around). */
  readonly advice?: Advice;
}

export class MappedFile {
  readonly path: string;
  /** File offset of relative offset 0. */
  readonly offset: number;
  /** Bytes mapped, from `offset`. */
  readonly length: number;
  /** Bytes between consecutive chunk starts (Infinity when the whole range is one view). */
  readonly chunkSize: number;
  readonly chunkCount: number;
  /** A record of up to this many bytes is always contiguous within one chunk view. */
  readonly maxRecordBytes: number;

  private mapAddress: number;
  private readonly mapLength: number;
  /** Address of relative offset 0 (mapAddress + offset's distance from its page boundary). */
  private readonly dataAddress: number;
  private readonly byteViews: (Uint8Array | undefined)[];
  private readonly floatViews: (Float32Array | undefined)[];
  private scratch = new Uint8Array(256);
  private closed = false;

  private constructor(path: string, offset: number, length: number, mapAddress: number, mapLength: number) {
    this.path = path;
    this.offset = offset;
    this.length = length;
    this.mapAddress = mapAddress;
    this.mapLength = mapLength;
    this.dataAddress = mapAddress + (offset - pageFloor(offset));
    const single = length <= MAX_VIEW_BYTES;
    this.chunkSize = single ? Infinity : CHUNK_BYTES;
    this.chunkCount = single ? 1 : Math.ceil(length / CHUNK_BYTES);
    this.maxRecordBytes = single ? length : OVERLAP_BYTES;
    this.byteViews = new Array(this.chunkCount).fill(undefined);
    this.floatViews = new Array(this.chunkCount).fill(undefined);
  }

  /** Maps [offset, offset + length) of `path` read-only; length defaults to the rest of the file. */
  static open(path: string, offset = 0, length?: number, options: MappedFileOptions = {}): MappedFile {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      throw new Error(`MappedFile.open(${path}): ${(e as Error).message}`, { cause: e });
    }
    try {
      const size = fstatSync(fd).size;
      const len = length ?? size - offset;
      if (!(Number.isSafeInteger(offset) && offset >= 0 && Number.isSafeInteger(len) && len > 0 && offset + len <= size)) {
        throw new RangeError(`MappedFile.open(${path}): range [${offset}, +${len}) is empty or outside the file (${size} bytes)`);
      }
      const start = pageFloor(offset);
      const mapLength = pageCeil(offset + len) - start;
      // The mapping survives closing the descriptor; holding no fd keeps worker re-maps cheap.
      const address = mmap(mapLength, PROT_READ, MAP_SHARED, fd, start, path);
      const file = new MappedFile(path, offset, len, address, mapLength);
      if (options.advice) file.advise(options.advice);
      return file;
    } finally {
      closeSync(fd);
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Address of relative offset 0, for io paths that take raw addresses. Invalid after close(). */
  get address(): number {
    this.check();
    return this.dataAddress;
  }

  /** The whole range as one zero-copy view; throws when it needs several chunks (over 4 GiB). */
  bytes(): Uint8Array {
    this.requireSingle('bytes');
    return this.chunkBytes(0);
  }

  /** The whole range as floats (the range must start 4-byte aligned); throws over 4 GiB. */
  floats(): Float32Array {
    this.requireSingle('floats');
    return this.chunkFloats(0);
  }

  /** The chunk whose view holds relative offset `rel` (and the following maxRecordBytes). */
  chunkIndex(rel: number): number {
    return this.chunkCount === 1 ? 0 : Math.floor(rel / CHUNK_BYTES);
  }

  /** Relative offset of byte 0 of chunk `i`'s views. */
  chunkStart(i: number): number {
    return this.chunkCount === 1 ? 0 : i * CHUNK_BYTES;
  }

  /** Zero-copy bytes of chunk `i` (cached; index with `rel - chunkStart(i)`). */
  chunkBytes(i: number): Uint8Array {
    this.check();
    let v = this.byteViews[i];
    if (v === undefined) {
      const len = this.chunkLength(i);
      v = this.byteViews[i] = new Uint8Array(viewOf(this.dataAddress + this.chunkStart(i), len));
    }
    return v;
  }

  /** Zero-copy floats of chunk `i` (cached; index with `(rel - chunkStart(i)) / 4`). */
  chunkFloats(i: number): Float32Array {
    this.check();
    let v = this.floatViews[i];
    if (v === undefined) {
      if (this.dataAddress % 4 !== 0) {
        throw new Error(`MappedFile(${this.path}): offset ${this.offset} is not 4-byte aligned, cannot view floats`);
      }
      const len = this.chunkLength(i);
      v = this.floatViews[i] = new Float32Array(viewOf(this.dataAddress + this.chunkStart(i), len), 0, Math.floor(len / 4));
    }
    return v;
  }

  /** A zero-copy Float32Array of `count` floats at `rel` (allocates the small view object). */
  floatsAt(rel: number, count: number): Float32Array {
    this.checkRange(rel, count * 4);
    const i = this.chunkIndex(rel);
    const local = rel - this.chunkStart(i);
    if (local + count * 4 > this.chunkLength(i)) throw this.straddle(rel, count * 4);
    return this.chunkFloats(i).subarray(local >>> 2, (local >>> 2) + count);
  }

  /** Copies `count` floats at `rel` into `out[outOffset..]` (allocation-free). */
  copyFloats(rel: number, count: number, out: Float32Array, outOffset = 0): void {
    this.checkRange(rel, count * 4);
    const i = this.chunkIndex(rel);
    const local = rel - this.chunkStart(i);
    if (local + count * 4 > this.chunkLength(i)) throw this.straddle(rel, count * 4);
    const src = this.chunkFloats(i);
    const from = local >>> 2;
    out.set(src.subarray(from, from + count), outOffset);
  }

  /**
   * Starts reading the pages under [rel, rel + length) into the page cache (madvise WILLNEED,
   * asynchronous: returns once the reads are queued). Returns the number of pages covered.
   */
  prefetch(rel: number, length: number): number {
    this.checkRange(rel, length);
    const start = pageFloor(this.dataAddress + rel);
    const end = this.dataAddress + rel + length;
    madvise(start, end - start, MADV_WILLNEED, this.path);
    return Math.ceil((end - start) / PAGE_SIZE);
  }

  /** True when every page under [rel, rel + length) is in the page cache (one mincore call). */
  isResident(rel: number, length: number): boolean {
    this.checkRange(rel, length);
    const start = pageFloor(this.dataAddress + rel);
    const pages = Math.ceil((this.dataAddress + rel + length - start) / PAGE_SIZE);
    const vec = this.scratchFor(pages);
    mincore(start, pages * PAGE_SIZE, vec, this.path);
    for (let p = 0; p < pages; p++) if ((vec[p] & 1) === 0) return false;
    return true;
  }

  /** madvise over [rel, rel + length), by default the whole mapping. */
  advise(advice: Advice, rel = 0, length = this.length): void {
    this.checkRange(rel, length);
    const code = ADVICE[advice];
    if (code === undefined) throw new Error(`MappedFile(${this.path}): unknown advice '${String(advice)}'`);
    const start = pageFloor(this.dataAddress + rel);
    madvise(start, pageCeil(this.dataAddress + rel + length) - start, code, this.path);
  }

  /**
   * Unmaps this process's page-table entries for the whole mapping (MADV_DONTNEED) without
   * touching the file or the page cache. Eviction (posix_fadvise DONTNEED) skips pages that
   * any process still has mapped, so benchmarks call this before evicting.
   */
  dropPageMappings(): void {
    this.check();
    madvise(this.mapAddress, this.mapLength, MADV_DONTNEED, this.path);
  }

  /** Pages of the mapping, counting partial first/last pages. */
  get pageCount(): number {
    return this.mapLength / PAGE_SIZE;
  }

  /** Pages of the mapping currently in the page cache (mincore over the whole mapping, chunked). */
  residentPages(): number {
    this.check();
    const total = this.pageCount;
    const vec = this.scratchFor(Math.min(total, SCAN_PAGES));
    let resident = 0;
    for (let p = 0; p < total; p += SCAN_PAGES) {
      const n = Math.min(SCAN_PAGES, total - p);
      mincore(this.mapAddress + p * PAGE_SIZE, n * PAGE_SIZE, vec, this.path);
      for (let j = 0; j < n; j++) resident += vec[j] & 1;
    }
    return resident;
  }

  residentFraction(): number {
    return this.residentPages() / this.pageCount;
  }

  /** Unmaps; idempotent. Views handed out earlier must not be touched afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.byteViews.fill(undefined);
    this.floatViews.fill(undefined);
    munmap(this.mapAddress, this.mapLength, this.path);
    this.mapAddress = 0;
  }

  /** Bytes in chunk `i`'s views (chunk size plus the overlap, clipped at the end). */
  chunkLength(i: number): number {
    if (!(Number.isInteger(i) && i >= 0 && i < this.chunkCount)) {
      throw new RangeError(`MappedFile(${this.path}): chunk ${i} outside [0, ${this.chunkCount})`);
    }
    if (this.chunkCount === 1) return this.length;
    return Math.min(CHUNK_BYTES + OVERLAP_BYTES, this.length - i * CHUNK_BYTES);
  }

  private scratchFor(pages: number): Uint8Array {
    if (this.scratch.length < pages) this.scratch = new Uint8Array(Math.max(pages, this.scratch.length * 2));
    return this.scratch;
  }

  private check(): void {
    if (this.closed) throw new Error(`MappedFile(${this.path}) used after close()`);
  }

  private checkRange(rel: number, length: number): void {
    this.check();
    if (!(rel >= 0 && length >= 0 && rel + length <= this.length)) {
      throw new RangeError(`MappedFile(${this.path}): range [${rel}, +${length}) outside the mapping (${this.length} bytes)`);
    }
  }

  private requireSingle(what: string): void {
    this.check();
    if (this.chunkCount !== 1) {
      throw new Error(
        `MappedFile(${this.path}).${what}(): ${this.length} bytes need ${this.chunkCount} views (max 4 GiB each); ` + 'use chunkIndex()/chunkBytes()/chunkFloats() or copyFloats()',
      );
    }
  }

  private straddle(rel: number, length: number): Error {
    return new RangeError(`MappedFile(${this.path}): record [${rel}, +${length}) is larger than maxRecordBytes (${this.maxRecordBytes}) and crosses a view boundary`);
  }
}
