import { Kernels } from './Kernels.js';
import { adviseHugePages } from '../store/native/libc.js';

let instance: Promise<Kernels> | undefined;

/**
 * This thread's kernels instance (one wasm memory per worker thread, shared by every task the
 * worker runs: resident segment codes, graph-build scratch, query scratch).
 */
export function threadKernels(): Promise<Kernels> {
  // Codes are scored at random ords: huge pages cut TLB misses (measured ~20% on 1024-dim records).
  instance ??= Kernels.load(process.env.PRESCORE_HUGEPAGES === '0' ? {} : { onGrow: (buffer) => void adviseHugePages(buffer) });
  return instance;
}
