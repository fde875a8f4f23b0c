import { FirstFitHeap, type HeapRegion, type HeapStats } from './FirstFitHeap.js';
import { loadKernelsBytes, type KernelsBinaryInfo, type KernelsMemoryKind } from './KernelsBinary.js';
import { wasm, type WasmInstance, type WasmMemory, type WasmModule } from './wasmApi.js';
import type { OsqQueryCorrections } from './OsqEstimator.js';

export type { KernelsBinaryInfo, KernelsMemoryKind } from './KernelsBinary.js';
export type { HeapStats } from './FirstFitHeap.js';
export type { WasmModule, WasmMemory } from './wasmApi.js';

/**
 * A 4-bit query for the 1-bit estimator, as seen by the wasm kernels: its 4 bit planes live in
 * the instance's memory at planesPtr (plane p at planesPtr + p * codeBytes, LSB plane first).
 */
export interface OsqQuery extends OsqQueryCorrections {
  readonly planesPtr: number;
}

/** A query for the multi-bit kernel: its packed code lives in the instance's memory at codePtr. */
export interface EncodedKernelQuery extends OsqQueryCorrections {
  readonly codePtr: number;
}

/** The raw exports of kernels.wat. Pointers are byte addresses in the instance's memory. */
interface KernelExports {
  int4BitDotProduct(q: number, d: number, codeBytes: number): number;
  osqScore(
    planes: number,
    codeBytes: number,
    pad: number,
    records: number,
    recordSize: number,
    ords: number,
    start: number,
    n: number,
    out: number,
    ay: number,
    uy: number,
    y1: number,
    corrY: number,
    dims: number,
    sim: number,
    centroidDP: number,
  ): void;
  hnswSearchL0(ctx: number): number;
  osqScoreEncoded(
    query: number,
    docBits: number,
    codeBytes: number,
    planeBytes: number,
    pad: number,
    records: number,
    recordSize: number,
    ords: number,
    start: number,
    n: number,
    out: number,
    ay: number,
    ly: number,
    lxScale: number,
    df: number,
    y1f: number,
    corrY: number,
    sim: number,
    centroidDP: number,
  ): void;
  osqLossAndGrid(vec: number, dim: number, a: number, b: number, points: number, norm2: number, lambda: number, grid: number): number;
  osqNormalize(vec: number, dim: number): number;
  osqCodes(vec: number, dim: number, a: number, b: number, step: number, dest: number): number;
  dot(a: number, b: number, dim: number): number;
  squareDistance(a: number, b: number, dim: number): number;
  cosine(a: number, b: number, dim: number): number;
  cosineParts(a: number, b: number, dim: number, out: number): void;
  dotBatch(qs: number, nq: number, ds: number, nd: number, dim: number, out: number): void;
}

export interface KernelsLoadOptions {
  /** A compiled 'private' module (e.g. posted from the main thread); skips reading/compiling the binary. */
  readonly module?: WasmModule;
  /** Initial memory size in bytes (rounded up to 64 KiB pages); default 1 MiB. */
  readonly initialBytes?: number;
  /**
   * Called with the memory's new buffer once at load and after every growth, before the new
   * space is handed out: the place to madvise(MADV_HUGEPAGE) it. Random-ord scoring over a
   * 144 MB segment measured ~22% faster with transparent huge pages (THP in "madvise" mode).
   */
  readonly onGrow?: (buffer: ArrayBuffer) => void;
}

export interface KernelsAttachOptions {
  /** A compiled 'shared' module; default Kernels.module('shared'). */
  readonly module?: WasmModule;
  /**
   * Bytes of this thread's first scratch region in the arena (rounded up to 64 KiB pages); when
   * it is used up, the arena grows by another region of at least this size.
   */
  readonly scratchBytes: number;
}

export const WASM_PAGE = 65536;
/** 4 GiB, wasm32's limit. */
export const MAX_WASM_PAGES = 65536;
const PAGE = WASM_PAGE;
const MAX_PAGES = MAX_WASM_PAGES;
/** Addresses below this are never allocated, so 0 can mean "no pointer". */
export const HEAP_BASE = 64;

const modulePromises = new Map<KernelsMemoryKind, Promise<WasmModule>>();
const binaryInfos = new Map<KernelsMemoryKind, KernelsBinaryInfo>();

/**
 * Per-thread WebAssembly SIMD kernels: one instance over a memory, and a first-fit allocator over
 * this thread's part of it. Not thread-safe; create one per thread (per memory).
 *
 * Two kinds (KernelsMemoryKind): load() gives an instance with its own growable memory (up to
 * 4 GiB), the thread's scratch for graph building, fp32 rescoring and tests; attach() gives an
 * instance over a shared arena (segments/index/Arena.ts) holding segments' codes and graphs
 * that every worker reads, where this thread allocates only inside its own scratch regions
 * (grown off the arena's end, so no two threads ever share one).
 *
 * Typed-array views of a private memory are invalidated when it grows (every alloc may grow
 * it); views of a shared one stay valid but do not cover later growth. Either way, fetch them
 * through u8() / f32() / i32() after allocating.
 */
export class Kernels {
  readonly memory: WasmMemory;
  private readonly x: KernelExports;
  private readonly heap: FirstFitHeap;
  private buffer: ArrayBuffer;
  private u8View: Uint8Array;
  private f32View: Float32Array;
  private i32View: Int32Array;
  /**
   * Every buffer object this instance has handed out views of. A shared memory's buffer object
   * changes when any thread grows it, while views of the old one stay valid for its bytes.
   */
  private readonly ownBuffers = new WeakSet<ArrayBuffer>();
  /** Scratch for the zero-padded copy of a query's planes (4 x codeBytes rounded up to 16). */
  private padPtr = 0;
  private padBytes = 0;
  private partsPtr = 0;

  private constructor(
    instance: WasmInstance,
    memory: WasmMemory,
    private readonly onGrow: ((buffer: ArrayBuffer) => void) | undefined,
    scratch: HeapRegion | null,
    private readonly scratchBytes = 0,
  ) {
    this.memory = memory;
    this.x = instance.exports as unknown as KernelExports;
    this.buffer = memory.buffer;
    this.ownBuffers.add(this.buffer);
    this.u8View = new Uint8Array(this.buffer);
    this.f32View = new Float32Array(this.buffer);
    this.i32View = new Int32Array(this.buffer);
    this.heap = scratch
      ? new FirstFitHeap(scratch.start, scratch.end, (_, bytes) => this.claimRegion(bytes))
      : new FirstFitHeap(HEAP_BASE, memory.buffer.byteLength, (minEnd) => this.growTo(minEnd));
    onGrow?.(this.buffer);
  }

  /** Instantiates the kernels with a fresh private memory. The module is compiled once per thread. */
  static async load(options: KernelsLoadOptions = {}): Promise<Kernels> {
    const module = options.module ?? (await Kernels.module());
    const initialPages = Math.min(MAX_PAGES, Math.max(1, Math.ceil((options.initialBytes ?? 1 << 20) / PAGE)));
    const memory = new wasm.Memory({ initial: initialPages, maximum: MAX_PAGES });
    // Synchronous, like the compile in module(): the async form can wait behind unrelated
    // background compilation jobs.
    const instance = new wasm.Instance(module, { env: { memory } });
    return new Kernels(instance, memory, options.onGrow, null);
  }

  /**
   * Instantiates the kernels over a shared arena memory (another thread may have created it and
   * be using it at the same time). This thread's allocations go to a scratch region of its own,
   * claimed by growing the arena; nothing below it is ever handed out by this instance.
   */
  static async attach(memory: WasmMemory, options: KernelsAttachOptions): Promise<Kernels> {
    const module = options.module ?? (await Kernels.module('shared'));
    const instance = new wasm.Instance(module, { env: { memory } });
    const scratchBytes = Math.max(PAGE, Math.ceil(options.scratchBytes / PAGE) * PAGE);
    const region = claimArenaRegion(memory, scratchBytes);
    return new Kernels(instance, memory, undefined, region, scratchBytes);
  }

  /** The compiled kernels module of a memory kind (cached per thread); structured-cloneable to worker threads. */
  static module(memory: KernelsMemoryKind = 'private'): Promise<WasmModule> {
    let p = modulePromises.get(memory);
    if (!p) {
      p = (async () => {
        const { bytes, source, path, bytesMs } = await loadKernelsBytes(memory);
        // Synchronous compile: the module is ~3 KB (about a millisecond), whereas the async
        // WebAssembly.compile queues behind background tier-up of wabt's own large module when
        // the bytes were just produced by wabt (measured 80-150 ms).
        const t0 = performance.now();
        const module = new wasm.Module(bytes);
        binaryInfos.set(memory, { source, path, bytesMs, compileMs: performance.now() - t0, byteLength: bytes.byteLength });
        return module;
      })();
      modulePromises.set(memory, p);
      p.catch(() => modulePromises.delete(memory));
    }
    return p;
  }

  /** How this thread's module of a memory kind was obtained (undefined until module() has resolved). */
  static binaryInfo(memory: KernelsMemoryKind = 'private'): KernelsBinaryInfo | undefined {
    return binaryInfos.get(memory);
  }

  /** True for an instance over a shared arena (attach()). */
  get attached(): boolean {
    return this.scratchBytes > 0;
  }

  // ---- memory ---------------------------------------------------------------------------

  /** Allocates `bytes` in this instance's memory, aligned to `align` (power of two, default 16). May grow the memory. */
  alloc(bytes: number, align = 16): number {
    return this.heap.alloc(bytes, align);
  }

  free(ptr: number): void {
    this.heap.free(ptr);
  }

  heapStats(): HeapStats {
    return this.heap.stats();
  }

  /** A byte view of the whole memory, re-created after growth. */
  u8(): Uint8Array {
    if (this.buffer !== this.memory.buffer) this.refreshViews();
    return this.u8View;
  }

  /** A float32 view of the whole memory (index = ptr >>> 2), re-created after growth. */
  f32(): Float32Array {
    if (this.buffer !== this.memory.buffer) this.refreshViews();
    return this.f32View;
  }

  /** An int32 view of the whole memory (index = ptr >>> 2), re-created after growth. */
  i32(): Int32Array {
    if (this.buffer !== this.memory.buffer) this.refreshViews();
    return this.i32View;
  }

  private refreshViews(): void {
    this.buffer = this.memory.buffer;
    this.ownBuffers.add(this.buffer);
    this.u8View = new Uint8Array(this.buffer);
    this.f32View = new Float32Array(this.buffer);
    this.i32View = new Int32Array(this.buffer);
  }

  /** A further scratch region in the arena, for an allocation of `bytes` that did not fit. */
  private claimRegion(bytes: number): HeapRegion {
    const region = claimArenaRegion(this.memory, Math.max(this.scratchBytes, Math.ceil(bytes / PAGE) * PAGE));
    this.refreshViews();
    return region;
  }

  private growTo(minEnd: number): number {
    const have = this.memory.buffer.byteLength / PAGE;
    const need = Math.ceil(minEnd / PAGE);
    if (need > MAX_PAGES) {
      throw new RangeError(`Kernels.alloc: needs ${minEnd} bytes of wasm memory, more than the 4 GiB limit`);
    }
    // Grow by at least 1/8 of the current size so many small allocations do not grow page by page.
    const generous = Math.min(MAX_PAGES, Math.max(need, have + (have >>> 3)));
    try {
      this.memory.grow(generous - have);
    } catch {
      try {
        this.memory.grow(need - have);
      } catch (e) {
        throw new RangeError(`Kernels.alloc: cannot grow wasm memory from ${have * PAGE} to ${need * PAGE} bytes: ${(e as Error).message}`);
      }
    }
    this.refreshViews();
    this.onGrow?.(this.buffer);
    return this.memory.buffer.byteLength;
  }

  // ---- 1-bit x 4-bit estimator ----------------------------------------------------------

  /** Sum over p = 0..3 of popcount(plane_p AND doc) << p; planes at qPtr + p * codeBytes, doc code at dPtr. */
  int4BitDotProduct(qPtr: number, dPtr: number, codeBytes: number): number {
    return this.x.int4BitDotProduct(qPtr, dPtr, codeBytes) >>> 0;
  }

  /**
   * Lucene's estimator score of records ords[0..n) (i32 array at ordsPtr) against q, written as
   * float32 to outPtr[0..n). Records are recordSize bytes (>= codeBytes + 16) back to back at recordsPtr.
   */
  scoreOsqOrds(q: OsqQuery, recordsPtr: number, recordSize: number, codeBytes: number, ordsPtr: number, n: number, outPtr: number): void {
    if (ordsPtr === 0) throw new RangeError('scoreOsqOrds: ordsPtr is 0');
    this.score(q, recordsPtr, recordSize, codeBytes, ordsPtr, 0, n, outPtr);
  }

  /** Throws unless 1-bit codes of `codeBytes` bytes fit records of `recordSize` bytes (code + 16 bytes of corrections). */
  static checkOsqRecords(recordSize: number, codeBytes: number): void {
    if (recordSize < codeBytes + 16) {
      throw new RangeError(`1-bit records of ${codeBytes} code bytes need at least ${codeBytes + 16} bytes, got ${recordSize}`);
    }
  }

  /** Throws unless `q` can be scored against codes of `codeBytes` bytes (its dims, a known similarity). */
  static checkOsqQuery(q: Pick<OsqQuery, 'dims' | 'similarity'>, codeBytes: number): void {
    if (q.dims > codeBytes * 8 || q.dims <= codeBytes * 8 - 8) {
      throw new RangeError(`query has ${q.dims} dims but codes are ${codeBytes} bytes`);
    }
    Kernels.checkSimilarity(q.similarity);
  }

  /** Throws unless `similarity` is a similarity ordinal the estimator knows (0..3). */
  static checkSimilarity(similarity: number): void {
    if (similarity < 0 || similarity > 3 || !Number.isInteger(similarity)) {
      throw new RangeError(`unknown similarity ordinal ${similarity}`);
    }
  }

  /**
   * Allocates now the scratch that scoring codes of `codeBytes` bytes needs (the padded copy of
   * the query planes), so that later scoring calls do not allocate, and so cannot grow the
   * memory under views a caller holds.
   */
  reserveOsqScratch(codeBytes: number): void {
    const padBytes = 4 * ((codeBytes + 15) & ~15);
    if (padBytes <= this.padBytes) return;
    if (this.padPtr !== 0) this.heap.free(this.padPtr);
    this.padPtr = 0;
    this.padBytes = 0;
    this.padPtr = this.heap.alloc(padBytes);
    this.padBytes = padBytes;
  }

  /** As scoreOsqOrds for the records startOrd .. startOrd + n - 1. */
  scoreOsqRange(q: OsqQuery, recordsPtr: number, recordSize: number, codeBytes: number, startOrd: number, n: number, outPtr: number): void {
    this.score(q, recordsPtr, recordSize, codeBytes, 0, startOrd, n, outPtr);
  }

  private score(q: OsqQuery, recordsPtr: number, recordSize: number, codeBytes: number, ordsPtr: number, startOrd: number, n: number, outPtr: number): void {
    Kernels.checkOsqRecords(recordSize, codeBytes);
    Kernels.checkOsqQuery(q, codeBytes);
    if (n <= 0) return;
    this.reserveOsqScratch(codeBytes);
    this.x.osqScore(
      q.planesPtr,
      codeBytes,
      this.padPtr,
      recordsPtr,
      recordSize,
      ordsPtr,
      startOrd,
      n,
      outPtr,
      q.lower,
      q.upper,
      q.componentSum,
      q.additionalCorrection,
      q.dims,
      q.similarity,
      q.centroidDP,
    );
  }

  // ---- multi-bit encodings (2-bit x 4-bit, 4 x 4, 7 x 7, 8 x 8) ----------------------------

  /**
   * Lucene's estimator for the multi-bit encodings over records ords[0..n) (ordsPtr != 0) or
   * startOrd .. startOrd + n - 1 (ordsPtr = 0), written as f32 to outPtr[0..n). The query code at
   * q.codePtr is laid out as ScalarEncodingInfo.queryCodeBytes says (4 planes for 2 doc bits, one
   * byte per component otherwise). Float32 exact, as the 1-bit kernel.
   */
  scoreEncoded(
    q: EncodedKernelQuery,
    docBits: 2 | 4 | 7 | 8,
    dims: number,
    codeBytes: number,
    recordsPtr: number,
    recordSize: number,
    ordsPtr: number,
    startOrd: number,
    n: number,
    outPtr: number,
  ): void {
    if (recordSize < codeBytes + 16) throw new RangeError(`records of ${codeBytes} code bytes need at least ${codeBytes + 16} bytes, got ${recordSize}`);
    if (n <= 0) return;
    const planeBytes = (dims + 7) >> 3;
    if (docBits === 2) this.reserveOsqScratch(planeBytes);
    const f = Math.fround;
    const queryScale = f(1 / ((1 << (docBits === 2 ? 4 : docBits)) - 1));
    const ly = f(f(f(q.upper) - f(q.lower)) * queryScale);
    this.x.osqScoreEncoded(
      q.codePtr,
      docBits,
      codeBytes,
      planeBytes,
      this.padPtr,
      recordsPtr,
      recordSize,
      ordsPtr,
      startOrd,
      n,
      outPtr,
      q.lower,
      ly,
      f(1 / ((1 << docBits) - 1)),
      q.dims,
      q.componentSum,
      q.additionalCorrection,
      q.similarity,
      q.centroidDP,
    );
  }

  /**
   * Level-0 HNSW beam search in wasm over a context block laid out as documented at
   * kernels.wat's hnswSearchL0 (see ResidentGraphSearcher, its only caller). Returns the number
   * of results written.
   */
  hnswSearchL0(ctxPtr: number): number {
    return this.x.hnswSearchL0(ctxPtr);
  }

  /**
   * OptimizedScalarQuantizer's loss-and-grid pass over `vector` (a Float32Array view of this
   * instance's memory) in SIMD lane order: writes (daa, dab, dbb, dax, dbx) as five f64 at
   * gridPtr (8-byte aligned) and returns the loss. For query quantization only (see kernels.wat,
   * osqLossAndGrid). Allocates nothing, so views stay valid across the call.
   */
  osqLossAndGrid(vector: Float32Array, a: number, b: number, points: number, norm2: number, lambda: number, gridPtr: number): number {
    const own = vector.buffer as ArrayBuffer;
    if (own !== this.memory.buffer && !(this.attached && this.ownBuffers.has(own))) {
      throw new RangeError("osqLossAndGrid: the vector must be a view of this instance's memory");
    }
    return this.x.osqLossAndGrid(vector.byteOffset, vector.length, a, b, points, norm2, lambda, gridPtr);
  }

  /**
   * VectorUtil.l2normalize of the `dim` floats at vecPtr in place, bit for bit (Lucene's scalar
   * summation order); returns ‖v‖² (0: the vector is left as it is and the caller reports it).
   */
  osqNormalize(vecPtr: number, dim: number): number {
    return this.x.osqNormalize(vecPtr, dim);
  }

  /** The quantizer's rounding pass (OptimizedScalarQuantizer.roundToGrid, bit for bit): one code byte per component at destPtr; returns Σ codes. */
  osqCodes(vecPtr: number, dim: number, a: number, b: number, step: number, destPtr: number): number {
    return this.x.osqCodes(vecPtr, dim, a, b, step, destPtr);
  }

  // ---- fp32 -----------------------------------------------------------------------------

  /** Σ a[i]·b[i] over dim floats (SIMD summation order). */
  dot(aPtr: number, bPtr: number, dim: number): number {
    return this.x.dot(aPtr, bPtr, dim);
  }

  /** Σ (a[i] − b[i])² over dim floats (SIMD summation order). */
  squareDistance(aPtr: number, bPtr: number, dim: number): number {
    return this.x.squareDistance(aPtr, bPtr, dim);
  }

  /** Lucene's cosine: float sums, then a·b / sqrt(a·a · b·b) in double, cast to float (NaN for a zero vector). */
  cosine(aPtr: number, bPtr: number, dim: number): number {
    return this.x.cosine(aPtr, bPtr, dim);
  }

  /** Writes (a·b, a·a, b·b) as three float32 at outPtr. */
  cosineParts(aPtr: number, bPtr: number, dim: number, outPtr: number): void {
    this.x.cosineParts(aPtr, bPtr, dim, outPtr);
  }

  /** (a·b, a·a, b·b) as numbers; uses an internal 16-byte scratch block. */
  cosineSums(aPtr: number, bPtr: number, dim: number): [dot: number, aa: number, bb: number] {
    if (this.partsPtr === 0) this.partsPtr = this.heap.alloc(16);
    this.x.cosineParts(aPtr, bPtr, dim, this.partsPtr);
    const f = this.f32();
    const i = this.partsPtr >>> 2;
    return [f[i], f[i + 1], f[i + 2]];
  }

  /**
   * out[q * nd + d] = dot(query q, doc d) for nq row-major query vectors at queriesPtr and nd
   * doc vectors at docsPtr (dim floats each), float32 into outPtr. Blocked for cache and registers.
   */
  dotBatch(queriesPtr: number, nq: number, docsPtr: number, nd: number, dim: number, outPtr: number): void {
    if (nq <= 0 || nd <= 0) return;
    this.x.dotBatch(queriesPtr, nq, docsPtr, nd, dim, outPtr);
  }
}

/**
 * Grows a shared arena by `bytes` (a page multiple) and returns the new space. memory.grow is
 * atomic, so threads growing the same arena at once each get a region of their own.
 */
function claimArenaRegion(memory: WasmMemory, bytes: number): HeapRegion {
  const pages = bytes / PAGE;
  let before: number;
  try {
    before = memory.grow(pages);
  } catch (e) {
    const have = memory.buffer.byteLength;
    throw new RangeError(`arena of ${have} bytes cannot grow by ${bytes} bytes of worker scratch (wasm32 holds at most 4 GiB): ${(e as Error).message}`);
  }
  return { start: before * PAGE, end: (before + pages) * PAGE };
}
