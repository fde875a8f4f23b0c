/**
 * koffi bindings to the few libc calls prescore's read paths need (x86_64 Linux).
 *
 * Every function is declared once, at module load: declaring is slow (prototype parsing), calling
 * is ~0.1-0.3 us plus the syscall. Never use koffi's `.async` variants on hot paths (50-70 us).
 *
 * Addresses travel as plain JS numbers (`uintptr_t`): user-space addresses are < 2^47, so they
 * are exact doubles, pointer arithmetic is ordinary addition, and they can be posted to worker
 * threads. `viewOf(address, length)` turns an address into a zero-copy ArrayBuffer.
 *
 * The raw functions (`raw.*`) return -1 and leave errno set, like C; the wrappers below them
 * check the result and throw a `NativeError` naming the call, the path (when known) and errno.
 */
import koffi from 'koffi';

if (process.platform !== 'linux' || process.arch !== 'x64') {
  // The constants below (open flags, syscall numbers, madvise values) are x86_64 Linux ones.
  throw new Error(`prescore native I/O supports linux/x64 only (this is ${process.platform}/${process.arch})`);
}

const libc = koffi.load('libc.so.6');

// open(2) flags (asm-generic values, which x86_64 uses).
export const O_RDONLY = 0o0;
export const O_WRONLY = 0o1;
export const O_RDWR = 0o2;
export const O_CREAT = 0o100;
export const O_TRUNC = 0o1000;
export const O_DIRECT = 0o40000;
export const O_NOATIME = 0o1000000;
export const O_CLOEXEC = 0o2000000;

export const PROT_NONE = 0;
export const PROT_READ = 1;
export const PROT_WRITE = 2;
export const MAP_SHARED = 0x01;
export const MAP_PRIVATE = 0x02;
export const MAP_ANONYMOUS = 0x20;
export const MAP_NORESERVE = 0x4000;
export const MAP_POPULATE = 0x8000;

export const MADV_NORMAL = 0;
export const MADV_RANDOM = 1;
export const MADV_SEQUENTIAL = 2;
export const MADV_WILLNEED = 3;
export const MADV_DONTNEED = 4;
/** Back the range with transparent huge pages when THP is in `madvise` mode. */
export const MADV_HUGEPAGE = 14;

export const POSIX_FADV_NORMAL = 0;
export const POSIX_FADV_RANDOM = 1;
export const POSIX_FADV_SEQUENTIAL = 2;
export const POSIX_FADV_WILLNEED = 3;
export const POSIX_FADV_DONTNEED = 4;

export const SYS_io_uring_setup = 425;
export const SYS_io_uring_enter = 426;

const _SC_PAGESIZE = 30;

/**
 * The raw calls. `syscall` is variadic in C; it is declared here with fixed prototypes per use
 * because glibc's x86_64 `syscall` is an assembly shim that only moves registers (it never reads
 * %al or uses va_arg), and fixed prototypes avoid koffi's slower per-call variadic marshalling.
 */
export const raw = {
  open: libc.func('int open(const char *path, int flags, uint32_t mode)') as (path: string, flags: number, mode: number) => number,
  close: libc.func('int close(int fd)') as (fd: number) => number,
  /** Reads into memory at an address (aligned pools, mappings). */
  pread: libc.func('intptr_t pread(int fd, uintptr_t buf, size_t count, int64_t offset)') as (fd: number, buf: number, count: number, offset: number) => number,
  /** Reads into a JS typed array (koffi passes its backing store, honouring byteOffset, without copying). */
  preadInto: libc.func('intptr_t pread(int fd, uint8_t *buf, size_t count, int64_t offset)') as (fd: number, buf: Uint8Array, count: number, offset: number) => number,
  pwrite: libc.func('intptr_t pwrite(int fd, const uint8_t *buf, size_t count, int64_t offset)') as (fd: number, buf: Uint8Array, count: number, offset: number) => number,
  mmap: libc.func('intptr_t mmap(uintptr_t addr, size_t length, int prot, int flags, int fd, int64_t offset)') as (
    addr: number,
    length: number,
    prot: number,
    flags: number,
    fd: number,
    offset: number,
  ) => number,
  munmap: libc.func('int munmap(uintptr_t addr, size_t length)') as (addr: number, length: number) => number,
  madvise: libc.func('int madvise(uintptr_t addr, size_t length, int advice)') as (addr: number, length: number, advice: number) => number,
  /** The same call on a JS ArrayBuffer's memory (koffi passes the backing store's address). */
  madviseBuffer: libc.func('int madvise(void *addr, size_t length, int advice)') as (buffer: ArrayBuffer | Uint8Array, length: number, advice: number) => number,
  mincore: libc.func('int mincore(uintptr_t addr, size_t length, uint8_t *vec)') as (addr: number, length: number, vec: Uint8Array) => number,
  /** Returns the error number itself (0 on success); it does not set errno. */
  posix_fadvise: libc.func('int posix_fadvise(int fd, int64_t offset, int64_t len, int advice)') as (fd: number, offset: number, len: number, advice: number) => number,
  fdatasync: libc.func('int fdatasync(int fd)') as (fd: number) => number,
  sysconf: libc.func('long sysconf(int name)') as (name: number) => number,
  strerror: libc.func('const char *strerror(int errnum)') as (errnum: number) => string,
  /** syscall(SYS_io_uring_setup, entries, struct io_uring_params *p) */
  io_uring_setup: libc.func('syscall', 'long', ['long', 'uint32_t', 'uint32_t *']) as unknown as (nr: number, entries: number, params: Uint32Array) => number,
  /** syscall(SYS_io_uring_enter, fd, to_submit, min_complete, flags, sigset_t *sig, size_t sz) */
  io_uring_enter: libc.func('syscall', 'long', ['long', 'int', 'uint32_t', 'uint32_t', 'uint32_t', 'uintptr_t', 'size_t']) as unknown as (
    nr: number,
    fd: number,
    toSubmit: number,
    minComplete: number,
    flags: number,
    sig: number,
    sz: number,
  ) => number,
};

/** Same as ENOENT etc. in Node's SystemError: lets callers branch on `.code`. */
const errnoNames = new Map<number, string>();
for (const [name, value] of Object.entries(koffi.os.errno)) if (!errnoNames.has(value)) errnoNames.set(value, name);

/** A failed libc call: `open(/data/x.vec): No such file or directory (ENOENT)`. */
export class NativeError extends Error {
  readonly errno: number;
  readonly code: string;
  readonly syscall: string;
  readonly path: string | undefined;

  constructor(syscall: string, errno: number, path?: string, detail?: string) {
    const code = errnoNames.get(errno) ?? `E${errno}`;
    const where = path === undefined ? '' : `(${path})`;
    super(`${syscall}${where}${detail ? ` [${detail}]` : ''}: ${raw.strerror(errno)} (${code})`);
    this.name = 'NativeError';
    this.errno = errno;
    this.code = code;
    this.syscall = syscall;
    this.path = path;
  }
}

/** Reads errno right after a failed call (koffi saves it per call, so nothing can clobber it in between). */
export function lastError(syscall: string, path?: string, detail?: string): NativeError {
  return new NativeError(syscall, koffi.errno(), path, detail);
}

export const PAGE_SIZE: number = raw.sysconf(_SC_PAGESIZE);

export function pageFloor(x: number): number {
  return x - (x % PAGE_SIZE);
}

export function pageCeil(x: number): number {
  const r = x % PAGE_SIZE;
  return r === 0 ? x : x + PAGE_SIZE - r;
}

export function isPageAligned(x: number): boolean {
  return x % PAGE_SIZE === 0;
}

// ---- checked wrappers -------------------------------------------------------------------------

export function open(path: string, flags: number = O_RDONLY, mode = 0o644): number {
  const fd = raw.open(path, flags | O_CLOEXEC, mode);
  if (fd < 0) throw lastError('open', path);
  return fd;
}

export function close(fd: number, path?: string): void {
  if (raw.close(fd) !== 0) throw lastError('close', path);
}

/** Reads exactly `count` bytes at `offset` into memory at `address`, retrying short reads; returns bytes read (less only at EOF). */
export function pread(fd: number, address: number, count: number, offset: number, path?: string): number {
  let done = 0;
  while (done < count) {
    const n = raw.pread(fd, address + done, count - done, offset + done);
    if (n < 0) throw lastError('pread', path, `offset ${offset + done}, ${count - done} bytes`);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** pread into a typed array's bytes; returns bytes read (less than `buf.length` only at EOF). */
export function preadInto(fd: number, buf: Uint8Array, offset: number, path?: string): number {
  let done = 0;
  while (done < buf.length) {
    const target = done === 0 ? buf : buf.subarray(done);
    const n = raw.preadInto(fd, target, buf.length - done, offset + done);
    if (n < 0) throw lastError('pread', path, `offset ${offset + done}, ${buf.length - done} bytes`);
    if (n === 0) break;
    done += n;
  }
  return done;
}

export function mmap(length: number, prot: number, flags: number, fd: number, offset: number, path?: string): number {
  const addr = raw.mmap(0, length, prot, flags, fd, offset);
  if (addr === -1) throw lastError('mmap', path, `offset ${offset}, ${length} bytes`);
  return addr;
}

export function munmap(address: number, length: number, path?: string): void {
  if (raw.munmap(address, length) !== 0) throw lastError('munmap', path);
}

/**
 * Asks for transparent huge pages under a (page-aligned) ArrayBuffer, e.g. a WebAssembly memory
 * holding 1-bit codes that are read at random: fewer TLB misses. A shared memory's
 * SharedArrayBuffer is passed as a page-aligned Uint8Array view of it (koffi takes views of
 * shared buffers, not the buffers). Best effort: returns false when the kernel refuses (THP
 * disabled), never throws.
 */
export function adviseHugePages(buffer: ArrayBuffer | Uint8Array): boolean {
  return raw.madviseBuffer(buffer, buffer.byteLength, MADV_HUGEPAGE) === 0;
}

export function madvise(address: number, length: number, advice: number, path?: string): void {
  if (raw.madvise(address, length, advice) !== 0) throw lastError('madvise', path, `advice ${advice}`);
}

export function mincore(address: number, length: number, vec: Uint8Array, path?: string): void {
  if (raw.mincore(address, length, vec) !== 0) throw lastError('mincore', path);
}

export function posixFadvise(fd: number, offset: number, length: number, advice: number, path?: string): void {
  const err = raw.posix_fadvise(fd, offset, length, advice);
  if (err !== 0) throw new NativeError('posix_fadvise', err, path, `advice ${advice}`);
}

export function fdatasync(fd: number, path?: string): void {
  if (raw.fdatasync(fd) !== 0) throw lastError('fdatasync', path);
}

// ---- addresses and memory ---------------------------------------------------------------------

const pointerScratch = new BigUint64Array(1);

/**
 * A zero-copy ArrayBuffer over `length` bytes at `address`. The buffer is NOT owned: the GC never
 * frees the memory, and touching it after the memory is unmapped or freed crashes the process.
 * koffi aborts the whole process for views above 4 GiB, so that is checked here.
 */
export function viewOf(address: number, length: number): ArrayBuffer {
  if (!(length > 0 && length <= MAX_VIEW_BYTES)) throw new RangeError(`view length ${length} outside (0, ${MAX_VIEW_BYTES}]`);
  pointerScratch[0] = BigInt(address);
  // koffi.view wants an external pointer object; decoding a stored pointer is the cheap way to make one.
  return koffi.view(koffi.decode(pointerScratch, 'void *'), length);
}

/** The largest single koffi view (larger ones abort the process inside koffi). */
export const MAX_VIEW_BYTES = 2 ** 32;

/** Page-aligned, zeroed memory that the GC never moves (usable for O_DIRECT and io_uring buffers). */
export class AlignedMemory {
  readonly address: number;
  readonly byteLength: number;
  private buffer: ArrayBuffer | undefined;
  private released = false;

  private constructor(address: number, byteLength: number) {
    this.address = address;
    this.byteLength = byteLength;
  }

  /** Anonymous mmap: page aligned (>= 4096, what O_DIRECT needs) and returned to the OS on free. */
  static alloc(byteLength: number): AlignedMemory {
    if (!(Number.isSafeInteger(byteLength) && byteLength > 0 && byteLength <= MAX_VIEW_BYTES)) {
      throw new RangeError(`aligned allocation of ${byteLength} bytes outside (0, ${MAX_VIEW_BYTES}]`);
    }
    const length = pageCeil(byteLength);
    return new AlignedMemory(mmap(length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), length);
  }

  get freed(): boolean {
    return this.released;
  }

  /** The whole allocation as an ArrayBuffer (cached). Throws after free(). */
  arrayBuffer(): ArrayBuffer {
    if (this.released) throw new Error('AlignedMemory used after free()');
    return (this.buffer ??= viewOf(this.address, this.byteLength));
  }

  free(): void {
    if (this.released) return;
    this.released = true;
    this.buffer = undefined;
    munmap(this.address, this.byteLength);
  }
}
