/**
 * How fp32 vectors are read for rescoring. All paths return identical results.
 * - `mmap`: plain page faults, one at a time (the stock baseline, queue depth 1);
 * - `mmap+prefetch`: madvise(WILLNEED) for the ring from one thread, then fault;
 * - `mmap+parallel`: the ring's prefetch is issued through the executor from several workers;
 * - `pread`: positioned reads with many in flight, no mmap.
 */
export const READ_PATHS = ['mmap', 'mmap+prefetch', 'mmap+parallel', 'pread'] as const;
/** How rescoring reads the fp32 vectors: `mmap`, `mmap+prefetch`, `mmap+parallel` (the default) or `pread` (io_uring). */
export type ReadPath = (typeof READ_PATHS)[number];
