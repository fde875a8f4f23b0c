/**
 * Raw io_uring (no liburing here) through syscall(2) and koffi views over the shared rings.
 *
 * Why raw: it is the only way on this machine to keep hundreds of 4 KiB reads in flight from one
 * thread without a thread per read (fs.read uses libuv's pool, pread blocks). The rings are plain
 * memory shared with the kernel: we store SQEs and the SQ tail with ordinary typed-array writes
 * and the kernel reads them only inside io_uring_enter (no SQPOLL), which is a full barrier, so
 * x86-64's store ordering is all we need. CQEs are read after io_uring_enter returns (or after
 * reading the CQ tail, which the kernel publishes with a release store; x86 loads are ordered).
 *
 * One ring belongs to one thread. With the default flags (SINGLE_ISSUER | DEFER_TASKRUN) the
 * kernel even enforces it: create the ring in the thread (worker) that uses it.
 */
import { closeSync, openSync, constants as fsConstants } from 'node:fs';
import {
  AlignedMemory,
  MAP_POPULATE,
  MAP_SHARED,
  NativeError,
  PROT_READ,
  PROT_WRITE,
  SYS_io_uring_enter,
  SYS_io_uring_setup,
  close,
  lastError,
  mmap,
  munmap,
  raw,
  viewOf,
} from './libc.js';

const IORING_OFF_SQ_RING = 0;
const IORING_OFF_CQ_RING = 0x8000000;
const IORING_OFF_SQES = 0x10000000;

const IORING_FEAT_SINGLE_MMAP = 1 << 0;
const IORING_ENTER_GETEVENTS = 1 << 0;

export const IORING_SETUP_COOP_TASKRUN = 1 << 8;
export const IORING_SETUP_SINGLE_ISSUER = 1 << 12;
export const IORING_SETUP_DEFER_TASKRUN = 1 << 13;

const IORING_OP_FADVISE = 24;
const IORING_OP_MADVISE = 25;
const IORING_OP_READ = 22;

const SQE_BYTES = 64;
const CQE_BYTES = 16;
const TWO32 = 2 ** 32;

const EINTR = 4;
const EAGAIN = 11;
const EBUSY = 16;
const EINVAL = 22;

export interface IoUringOptions {
  /** Setup flags; default SINGLE_ISSUER | DEFER_TASKRUN (completions run in our io_uring_enter, no IPIs), falling back to 0. */
  readonly flags?: number;
}

/** A page-aligned buffer of `slots` x `slotBytes`, the landing zone of a batch of reads. */
export class IoBuffer {
  readonly slots: number;
  readonly slotBytes: number;
  readonly memory: AlignedMemory;
  private readonly u8: Uint8Array;
  private readonly f32: Float32Array;

  private constructor(slots: number, slotBytes: number) {
    this.slots = slots;
    this.slotBytes = slotBytes;
    this.memory = AlignedMemory.alloc(slots * slotBytes);
    const ab = this.memory.arrayBuffer();
    this.u8 = new Uint8Array(ab, 0, slots * slotBytes);
    this.f32 = new Float32Array(ab, 0, Math.floor((slots * slotBytes) / 4));
  }

  /** Zero-copy view of the whole buffer. Throws after free(); a view kept from before must not be touched. */
  get bytes(): Uint8Array {
    if (this.memory.freed) throw new Error('IoBuffer used after free()');
    return this.u8;
  }

  /** Zero-copy floats of the whole buffer (slot i starts at slotFloat(i)). Same lifetime rule as bytes. */
  get floats(): Float32Array {
    if (this.memory.freed) throw new Error('IoBuffer used after free()');
    return this.f32;
  }

  /** slotBytes should be a multiple of 4096 for O_DIRECT (each slot then stays 4096-aligned). */
  static alloc(slots: number, slotBytes = 4096): IoBuffer {
    if (!(Number.isInteger(slots) && slots > 0 && Number.isInteger(slotBytes) && slotBytes > 0 && slotBytes % 4 === 0)) {
      throw new RangeError(`IoBuffer.alloc(${slots}, ${slotBytes}): need positive integers, slotBytes a multiple of 4`);
    }
    return new IoBuffer(slots, slotBytes);
  }

  get address(): number {
    return this.memory.address;
  }

  slotAddress(slot: number): number {
    if (this.memory.freed) throw new Error('IoBuffer used after free()');
    return this.memory.address + slot * this.slotBytes;
  }

  /** Index of slot `slot`'s first float in `floats`. */
  slotFloat(slot: number): number {
    return (slot * this.slotBytes) >>> 2;
  }

  free(): void {
    this.memory.free();
  }
}

export class IoUring {
  readonly fd: number;
  readonly sqEntries: number;
  readonly cqEntries: number;
  readonly features: number;
  readonly setupFlags: number;

  private readonly maps: { address: number; length: number }[] = [];
  private readonly sq: Uint32Array;
  private readonly cq: Uint32Array;
  private readonly cqI: Int32Array;
  private readonly sqes: Uint32Array;
  private readonly sqHeadIdx: number;
  private readonly sqTailIdx: number;
  private readonly sqMask: number;
  private readonly cqHeadIdx: number;
  private readonly cqTailIdx: number;
  private readonly cqMask: number;
  private readonly cqesIdx: number;
  private sqTail: number;
  private cqHead: number;
  private toSubmit = 0;
  private inFlight = 0;
  private closed = false;
  /** io_uring_enter calls made (for stats). */
  enterCalls = 0;

  // readPages scratch, grown on demand and reused.
  private progress = new Int32Array(0);

  private constructor(entries: number, options: IoUringOptions) {
    if (!(Number.isInteger(entries) && entries >= 1 && entries <= 32768 && (entries & (entries - 1)) === 0)) {
      throw new RangeError(`IoUring: entries ${entries} must be a power of two in [1, 32768]`);
    }
    const params = new Uint32Array(30); // struct io_uring_params, 120 bytes
    const wanted = options.flags ?? IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    params[2] = wanted;
    let fd = raw.io_uring_setup(SYS_io_uring_setup, entries, params);
    if (fd < 0 && options.flags === undefined) {
      // Older kernels reject the newer flags with EINVAL: retry plain.
      params.fill(0);
      fd = raw.io_uring_setup(SYS_io_uring_setup, entries, params);
    }
    if (fd < 0) throw lastError('io_uring_setup', undefined, `entries ${entries}, flags 0x${params[2].toString(16)}`);
    this.fd = fd;
    this.setupFlags = params[2];
    this.sqEntries = params[0];
    this.cqEntries = params[1];
    this.features = params[5];
    const sqOff = params.subarray(10, 20);
    const cqOff = params.subarray(20, 30);
    try {
      const sqBytes = sqOff[6] + this.sqEntries * 4;
      const cqBytes = cqOff[5] + this.cqEntries * CQE_BYTES;
      const single = (this.features & IORING_FEAT_SINGLE_MMAP) !== 0;
      const sqLen = single ? Math.max(sqBytes, cqBytes) : sqBytes;
      const sqRing = this.map(sqLen, IORING_OFF_SQ_RING);
      const cqRing = single ? sqRing : this.map(cqBytes, IORING_OFF_CQ_RING);
      const sqeMem = this.map(this.sqEntries * SQE_BYTES, IORING_OFF_SQES);
      this.sq = new Uint32Array(viewOf(sqRing, sqLen));
      const cqBuf = viewOf(cqRing, single ? sqLen : cqBytes);
      this.cq = new Uint32Array(cqBuf);
      this.cqI = new Int32Array(cqBuf);
      this.sqes = new Uint32Array(viewOf(sqeMem, this.sqEntries * SQE_BYTES));
      this.sqHeadIdx = sqOff[0] >>> 2;
      this.sqTailIdx = sqOff[1] >>> 2;
      this.sqMask = this.sq[sqOff[2] >>> 2];
      this.cqHeadIdx = cqOff[0] >>> 2;
      this.cqTailIdx = cqOff[1] >>> 2;
      this.cqMask = this.cq[cqOff[2] >>> 2];
      this.cqesIdx = cqOff[5] >>> 2;
      // SQ slot i always holds SQE i: the indirection array is set once and never changes.
      const arrayIdx = sqOff[6] >>> 2;
      for (let i = 0; i < this.sqEntries; i++) this.sq[arrayIdx + i] = i;
      this.sqTail = this.sq[this.sqTailIdx];
      this.cqHead = this.cq[this.cqHeadIdx];
    } catch (e) {
      this.unmapAll();
      raw.close(fd);
      throw e;
    }
  }

  /** A ring with `entries` SQ entries (power of two; the CQ gets twice as many). */
  static open(entries = 256, options: IoUringOptions = {}): IoUring {
    return new IoUring(entries, options);
  }

  /** Reads submitted and not yet reaped. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Queues one IORING_OP_READ (not submitted until submit()). Returns false when the SQ is full.
   * userData is a u32 handed back in the completion.
   */
  prepRead(fd: number, fileOffset: number, address: number, length: number, userData: number): boolean {
    return this.prep(IORING_OP_READ, fd, fileOffset, address, length, 0, userData);
  }

  /** Fills one SQE: opcode, fd, off, addr, len, the op-flags word (rw_flags / *advise_advice), user_data. */
  private prep(opcode: number, fd: number, fileOffset: number, address: number, length: number, opFlags: number, userData: number): boolean {
    this.check();
    const tail = this.sqTail;
    if ((tail - this.sq[this.sqHeadIdx]) >>> 0 >= this.sqEntries) return false;
    const w = (tail & this.sqMask) << 4;
    const s = this.sqes;
    s[w] = opcode; // flags 0, ioprio 0
    s[w + 1] = fd;
    s[w + 2] = fileOffset >>> 0;
    s[w + 3] = Math.floor(fileOffset / TWO32);
    s[w + 4] = address >>> 0;
    s[w + 5] = Math.floor(address / TWO32);
    s[w + 6] = length;
    s[w + 7] = opFlags;
    s[w + 8] = userData >>> 0;
    s[w + 9] = 0;
    s[w + 10] = 0; // buf_index, personality
    s[w + 11] = 0; // splice_fd_in / file_index
    s[w + 12] = 0;
    s[w + 13] = 0;
    s[w + 14] = 0;
    s[w + 15] = 0;
    this.sqTail = (tail + 1) >>> 0;
    this.sq[this.sqTailIdx] = this.sqTail;
    this.toSubmit++;
    this.inFlight++;
    return true;
  }

  /**
   * Queues an IORING_OP_MADVISE over [address, address + length). The kernel always runs it on an
   * io-wq worker (it may block), so a batch of WILLNEED advice is issued by kernel threads in
   * parallel after one io_uring_enter. Returns false when the SQ is full.
   */
  prepMadvise(address: number, length: number, advice: number, userData: number): boolean {
    return this.prep(IORING_OP_MADVISE, -1, 0, address, length, advice, userData);
  }

  /** Queues an IORING_OP_FADVISE (posix_fadvise on fd, e.g. POSIX_FADV_WILLNEED). */
  prepFadvise(fd: number, fileOffset: number, length: number, advice: number, userData: number): boolean {
    return this.prep(IORING_OP_FADVISE, fd, fileOffset, 0, length, advice, userData);
  }

  /**
   * Submits everything queued and waits for every operation in flight; returns how many failed
   * (res < 0) and stores the first failure's errno in `lastErrno`. For fire-and-wait batches
   * (advice) whose individual results do not matter to the caller.
   */
  drain(): number {
    let failed = 0;
    const ud = reapUserData;
    const res = reapRes;
    while (this.inFlight > 0) {
      // min_complete counts CQEs not yet reaped, so waiting for all in flight is exact.
      this.submit(this.inFlight);
      let n: number;
      while ((n = this.reap(ud, res)) > 0) {
        for (let j = 0; j < n; j++) {
          if (res[j] < 0) {
            if (failed === 0) this.lastErrno = -res[j];
            failed++;
          }
        }
      }
    }
    return failed;
  }

  /** errno of the first failure seen by the last drain(). */
  lastErrno = 0;

  /** Submits queued SQEs and waits until at least `minComplete` completions are available. */
  submit(minComplete = 0): void {
    this.check();
    for (;;) {
      this.enterCalls++;
      const flags = minComplete > 0 ? IORING_ENTER_GETEVENTS : 0;
      const r = raw.io_uring_enter(SYS_io_uring_enter, this.fd, this.toSubmit, minComplete, flags, 0, 0);
      if (r >= 0) {
        this.toSubmit -= r;
        if (this.toSubmit === 0 || minComplete > 0) return;
        continue;
      }
      const err = lastError('io_uring_enter');
      if (err.errno === EINTR) continue;
      // CQ full (EBUSY) or no memory for requests (EAGAIN): the caller must reap first.
      if ((err.errno === EBUSY || err.errno === EAGAIN) && this.cqReady() > 0) return;
      throw err;
    }
  }

  /** Completions waiting in the CQ. */
  cqReady(): number {
    return (this.cq[this.cqTailIdx] - this.cqHead) >>> 0;
  }

  /**
   * Moves up to `max` completions into outUserData/outRes (res < 0 is -errno) and frees their CQ
   * slots. Returns how many. Allocation-free.
   */
  reap(outUserData: Uint32Array, outRes: Int32Array, max = outUserData.length): number {
    this.check();
    const tail = this.cq[this.cqTailIdx];
    let head = this.cqHead;
    let n = 0;
    while (head !== tail && n < max) {
      const c = this.cqesIdx + ((head & this.cqMask) << 2);
      outUserData[n] = this.cq[c];
      outRes[n] = this.cqI[c + 2];
      n++;
      head = (head + 1) >>> 0;
    }
    this.cqHead = head;
    this.cq[this.cqHeadIdx] = head;
    this.inFlight -= n;
    return n;
  }

  /**
   * Reads `count` ranges of `length` bytes: offsets[i] lands in buffer slot i. Keeps up to
   * `maxInFlight` reads in flight, resubmits short reads, and throws on error or EOF. With an
   * O_DIRECT fd, offsets, length and the buffer must be 4096-aligned.
   */
  readPages(fd: number, offsets: ArrayLike<number>, count: number, length: number, buffer: IoBuffer, maxInFlight: number = this.sqEntries, path?: string): void {
    this.check();
    if (count > buffer.slots || length > buffer.slotBytes) {
      throw new RangeError(`IoUring.readPages: ${count} x ${length} bytes do not fit ${buffer.slots} slots of ${buffer.slotBytes}`);
    }
    if (this.inFlight !== 0) throw new Error('IoUring.readPages: the ring has reads of another caller in flight');
    const depth = Math.max(1, Math.min(maxInFlight, this.sqEntries, this.cqEntries));
    if (this.progress.length < count) this.progress = new Int32Array(Math.max(count, this.progress.length * 2));
    const progress = this.progress;
    progress.fill(0, 0, count);
    const ud = reapUserData;
    const res = reapRes;
    let next = 0;
    let done = 0;
    while (done < count) {
      while (this.inFlight < depth && next < count) {
        this.prepRead(fd, offsets[next], buffer.slotAddress(next), length, next);
        next++;
      }
      // Nothing left to queue: wait for everything at once (one syscall); otherwise refill early.
      this.submit(next < count ? 1 : this.inFlight);
      let n: number;
      while ((n = this.reap(ud, res)) > 0) {
        for (let j = 0; j < n; j++) {
          const i = ud[j];
          const r = res[j];
          if (r < 0) throw this.readError(-r, path, offsets[i], length);
          if (r === 0) {
            throw new Error(`io_uring read${path ? `(${path})` : ''}: end of file at offset ${offsets[i] + progress[i]} (wanted ${length} bytes at ${offsets[i]})`);
          }
          const got = (progress[i] += r);
          if (got < length) {
            // Short read (buffered I/O may split): ask for the rest.
            const rest = length - got;
            if (!this.prepRead(fd, offsets[i] + got, buffer.slotAddress(i) + got, rest, i)) {
              this.submit(0);
              this.prepRead(fd, offsets[i] + got, buffer.slotAddress(i) + got, rest, i);
            }
          } else {
            done++;
          }
        }
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unmapAll();
    close(this.fd);
  }

  private readError(errno: number, path: string | undefined, offset: number, length: number): Error {
    const hint = errno === EINVAL ? 'O_DIRECT needs 4096-aligned buffer, offset and length' : `offset ${offset}, ${length} bytes`;
    return new NativeError('io_uring read', errno, path, hint);
  }

  private map(length: number, offset: number): number {
    const address = mmap(length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, this.fd, offset, 'io_uring');
    this.maps.push({ address, length });
    return address;
  }

  private unmapAll(): void {
    for (const m of this.maps.splice(0)) munmap(m.address, m.length);
  }

  private check(): void {
    if (this.closed) throw new Error('IoUring used after close()');
  }
}

const reapUserData = new Uint32Array(1024);
const reapRes = new Int32Array(1024);

/** Opens `path` read-only for io_uring/pread, with O_DIRECT when asked; close with closeFile. */
export function openForRead(path: string, direct = false): number {
  return openSync(path, fsConstants.O_RDONLY | (direct ? fsConstants.O_DIRECT : 0));
}

export function closeFile(fd: number): void {
  closeSync(fd);
}
