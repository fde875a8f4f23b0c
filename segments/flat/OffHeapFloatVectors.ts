import { IoBuffer, type IoUring } from '../store/native/IoUring.js';
import { POSIX_FADV_WILLNEED, pread } from '../store/native/libc.js';
import type { MappedFile } from '../store/native/MappedFile.js';

/**
 * fp32 vectors read in place from a `.vec` (Lucene's OffHeapFloatVectorValues): `vector(ord)`
 * makes ord's vector readable and returns the index of its first float in `floats` (valid until
 * the next call). Two read paths: a mapping (zero copy; a cold page faults) and io_uring reads
 * into a small ring of page-aligned slots (no mapping).
 */
export interface OffHeapFloatVectors {
  readonly dims: number;
  readonly size: number;
  /** Bytes per vector (dims x 4). */
  readonly byteSize: number;
  vector(ord: number): number;
  /** The array vector() positions refer to (re-read it after every vector()). */
  readonly floats: Float32Array;
}

/** Vectors through a read-only mapping of the `.vec` data (ord 0 at relative offset 0). */
export class MappedFloatVectors implements OffHeapFloatVectors {
  readonly byteSize: number;
  floats: Float32Array;

  constructor(
    readonly file: MappedFile,
    readonly dims: number,
    readonly size: number,
  ) {
    this.byteSize = dims * 4;
    if (size * this.byteSize > file.length) throw new RangeError(`${file.path}: ${size} vectors of ${dims} dims exceed the ${file.length} mapped bytes`);
    this.floats = file.chunkFloats(0);
  }

  vector(ord: number): number {
    if (!(ord >= 0 && ord < this.size)) throw new RangeError(`vector ordinal ${ord} out of [0, ${this.size})`);
    const file = this.file;
    const rel = ord * this.byteSize;
    // One view covers files up to 4 GiB; beyond, overlapping chunk views (a vector never straddles two).
    const c = file.chunkCount === 1 ? 0 : file.chunkIndex(rel);
    this.floats = file.chunkFloats(c);
    return (rel - file.chunkStart(c)) >>> 2;
  }
}

const NO_SLOT = 0xffffffff;
const ADVICE = 0xfffffffe;

/**
 * Vectors read with io_uring into `slots` page-aligned buffers, reused round robin. read(ord)
 * queues a read (submitted by the next submit() or wait); vector(ord) waits for ord's read, or
 * reads it synchronously (pread) when none is in flight or its slot was reused since. advise(ord)
 * queues POSIX_FADV_WILLNEED for ord's bytes (read-ahead into the page cache that keeps no slot).
 * The ring belongs to the calling thread and may be shared with other users that call quiesce()
 * before handing it over; every completion this object queued is reaped by it.
 */
export class UringFloatVectors implements OffHeapFloatVectors {
  readonly byteSize: number;
  readonly floats: Float32Array;
  private readonly buffer: IoBuffer;
  private readonly slotBytes: number;
  private readonly slotOrd: Int32Array;
  private readonly pending: Uint8Array;
  /** ord -> the slot its last read went to (valid when slotOrd agrees). */
  private readonly slotOf: Int32Array;
  private nextSlot = 0;
  private inFlight = 0;
  private readonly reapUserData = new Uint32Array(256);
  private readonly reapRes = new Int32Array(256);
  /** io_uring_enter + pread calls. */
  syscalls = 0;

  constructor(
    readonly ring: IoUring,
    readonly fd: number,
    readonly path: string,
    /** File offset of ord 0. */
    readonly offset: number,
    readonly dims: number,
    readonly size: number,
    readonly slots: number,
  ) {
    this.byteSize = dims * 4;
    this.slotBytes = Math.ceil(this.byteSize / 4096) * 4096;
    this.buffer = IoBuffer.alloc(slots, this.slotBytes);
    this.floats = this.buffer.floats;
    this.slotOrd = new Int32Array(slots).fill(-1);
    this.pending = new Uint8Array(slots);
    this.slotOf = new Int32Array(size);
  }

  private check(ord: number): void {
    if (!(ord >= 0 && ord < this.size)) throw new RangeError(`vector ordinal ${ord} out of [0, ${this.size})`);
  }

  private holds(ord: number): number {
    const s = this.slotOf[ord];
    return s >= 0 && s < this.slots && this.slotOrd[s] === ord ? s : -1;
  }

  /** A free slot (waiting for the read in it, if any) now owned by ord. */
  private claim(ord: number): number {
    const s = this.nextSlot;
    this.nextSlot = s + 1 === this.slots ? 0 : s + 1;
    while (this.pending[s]) this.reapSome(1);
    this.slotOrd[s] = ord;
    this.slotOf[ord] = s;
    return s;
  }

  /** Queues a read of ord's vector; false when it is already read or in flight. */
  read(ord: number): boolean {
    this.check(ord);
    if (this.holds(ord) >= 0) return false;
    const s = this.claim(ord);
    while (!this.ring.prepRead(this.fd, this.offset + ord * this.byteSize, this.buffer.slotAddress(s), this.byteSize, s)) this.reapSome(0);
    this.pending[s] = 1;
    this.inFlight++;
    return true;
  }

  /** Queues page-cache read-ahead of ord's vector (no slot; its later read then hits the cache). */
  advise(ord: number): void {
    this.check(ord);
    while (!this.ring.prepFadvise(this.fd, this.offset + ord * this.byteSize, this.byteSize, POSIX_FADV_WILLNEED, ADVICE)) this.reapSome(0);
    this.inFlight++;
  }

  /** Submits what is queued without waiting. */
  submit(): void {
    this.syscalls++;
    this.ring.submit(0);
    this.reapReady();
  }

  vector(ord: number): number {
    this.check(ord);
    let s = this.holds(ord);
    if (s < 0) {
      s = this.claim(ord);
      this.syscalls++;
      const got = pread(this.fd, this.buffer.slotAddress(s), this.byteSize, this.offset + ord * this.byteSize, this.path);
      if (got !== this.byteSize) throw new Error(`${this.path}: unexpected end of file reading vector ${ord}`);
    }
    while (this.pending[s]) this.reapSome(1);
    return this.buffer.slotFloat(s);
  }

  /** Waits for everything this object queued (before the ring serves another user). */
  quiesce(): void {
    while (this.inFlight > 0) this.reapSome(1);
  }

  private reapReady(): void {
    const ud = this.reapUserData;
    const res = this.reapRes;
    for (let got = this.ring.reap(ud, res); got > 0; got = this.ring.reap(ud, res)) {
      for (let j = 0; j < got; j++) this.complete(ud[j], res[j]);
    }
  }

  /** Submits what is queued, waits for at least `min` completions, and processes all that are ready. */
  private reapSome(min: number): void {
    this.syscalls++;
    this.ring.submit(min);
    this.reapReady();
  }

  private complete(userData: number, res: number): void {
    this.inFlight--;
    if (userData === ADVICE || userData === NO_SLOT) return; // advice failing only loses read-ahead
    const s = userData;
    this.pending[s] = 0;
    if (res !== this.byteSize) {
      const ord = this.slotOrd[s];
      this.slotOrd[s] = -1;
      throw new Error(
        res < 0 ? `io_uring read of ${this.path} (vector ${ord}) failed: errno ${-res}` : `${this.path}: short read of vector ${ord} (${res} of ${this.byteSize} bytes)`,
      );
    }
  }

  close(): void {
    this.quiesce();
    this.buffer.free();
  }
}

/** Vectors already on the heap, packed back to back (tests, and scorers compared against the off-heap ones). */
export class HeapFloatVectors implements OffHeapFloatVectors {
  readonly byteSize: number;
  readonly size: number;

  constructor(
    readonly floats: Float32Array,
    readonly dims: number,
  ) {
    this.byteSize = dims * 4;
    this.size = Math.floor(floats.length / dims);
  }

  vector(ord: number): number {
    if (!(ord >= 0 && ord < this.size)) throw new RangeError(`vector ordinal ${ord} out of [0, ${this.size})`);
    return ord * this.dims;
  }
}
