import { Kernels } from '../../segments/kernels/Kernels.js';

let instance: Promise<Kernels> | undefined;

/**
 * This thread's kernels instance (one wasm memory per worker thread, shared by every task the
 * worker runs: resident segment codes, graph-build scratch, query scratch).
 */
export function threadKernels(): Promise<Kernels> {
  instance ??= Kernels.load();
  return instance;
}
