import type { Kernels } from '../kernels/Kernels.js';
import type { LossAndGridPass } from '../quantization/OptimizedScalarQuantizer.js';

/**
 * OptimizedScalarQuantizer's two inner passes in wasm SIMD (Kernels.osqLossAndGrid, ~4x the
 * scalar pass; Kernels.osqCodes, bit for bit the scalar rounding) over one scratch vector of
 * `dims` floats in kernel memory: quantize `vector()` after filling it. The loss-and-grid sums
 * run in lane order, not Lucene's, so an interval may differ from Lucene's in its last bits:
 * fine for queries and for codes in prescore's extended format, never for a segment meant to be
 * byte for byte Lucene's. One block holds the floats, the pass's five f64 sums (8-byte aligned)
 * and one code byte per component. Not thread-safe; release() frees the block.
 */
export class KernelOsqPass implements LossAndGridPass {
  private ptr: number;
  private readonly gridPtr: number;
  private readonly codesPtr: number;
  private view: Float32Array | null = null;
  private sums: Float64Array | null = null;
  private codes: Uint8Array | null = null;

  constructor(
    private readonly kernels: Kernels,
    readonly dims: number,
  ) {
    const gridOffset = (4 * dims + 7) & ~7;
    const codesOffset = gridOffset + 40;
    this.ptr = kernels.alloc(codesOffset + dims, 16);
    this.gridPtr = this.ptr + gridOffset;
    this.codesPtr = this.ptr + codesOffset;
  }

  /** Where the scratch vector starts in kernel memory. */
  get vectorPtr(): number {
    return this.ptr;
  }

  /** The scratch vector; a view re-made only when the kernel memory has grown (a new buffer). */
  vector(): Float32Array {
    if (this.ptr === 0) throw new Error('KernelOsqPass: used after release()');
    // Through u8(): the kernels then know the buffer object (a shared memory's changes on growth).
    const memory = this.kernels.u8().buffer;
    if (this.view === null || this.view.buffer !== memory) this.view = new Float32Array(memory, this.ptr, this.dims);
    return this.view;
  }

  lossAndGrid(vector: Float32Array, a: number, b: number, points: number, norm2: number, lambda: number, grid: Float64Array): number {
    const loss = this.kernels.osqLossAndGrid(vector, a, b, points, norm2, lambda, this.gridPtr);
    if (this.sums === null || this.sums.buffer !== this.kernels.memory.buffer) this.sums = new Float64Array(this.kernels.memory.buffer, this.gridPtr, 5);
    for (let i = 0; i < 5; i++) grid[i] = this.sums[i]!;
    return loss;
  }

  /** `vector` must be the scratch (`vector()`) and `dest` hold at least `dims` bytes. */
  roundToGrid(vector: Float32Array, a: number, b: number, step: number, dest: Uint8Array): number {
    const sum = this.kernels.osqCodes(vector.byteOffset, this.dims, a, b, step, this.codesPtr);
    if (this.codes === null || this.codes.buffer !== this.kernels.memory.buffer) this.codes = new Uint8Array(this.kernels.memory.buffer, this.codesPtr, this.dims);
    dest.set(this.codes);
    return sum;
  }

  release(): void {
    if (this.ptr !== 0) this.kernels.free(this.ptr);
    this.ptr = 0;
    this.view = null;
  }
}
