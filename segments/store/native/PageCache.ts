/**
 * Page-cache residency of whole files: make a file cold for a benchmark, and report how much of
 * an index is in memory (GET /v1/indexes). Both work without root (drop_caches is not writable).
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { MAP_SHARED, PAGE_SIZE, POSIX_FADV_DONTNEED, PROT_READ, fdatasync, mincore, mmap, munmap, pageCeil, posixFadvise } from './libc.js';

const SCAN_PAGES = 65536;
const scanVec = new Uint8Array(SCAN_PAGES);

export interface Residency {
  readonly pages: number;
  readonly residentPages: number;
  /** residentPages / pages, 0 for an empty file. */
  readonly fraction: number;
}

/**
 * Drops the file's clean pages from the page cache: fdatasync (dirty pages are never dropped),
 * then posix_fadvise(DONTNEED) over the whole file. Pages that any live process has mapped (a
 * MappedFile someone touched) are NOT dropped: call MappedFile.dropPageMappings() or close it
 * first, and check with residency() when it matters.
 */
export function evictFromPageCache(path: string): void {
  const fd = openFd(path, 'evictFromPageCache');
  try {
    fdatasync(fd, path);
    posixFadvise(fd, 0, 0, POSIX_FADV_DONTNEED, path);
  } finally {
    closeSync(fd);
  }
}

/** How many of the file's pages are in the page cache (mincore over a temporary mapping). */
export function residency(path: string): Residency {
  const fd = openFd(path, 'residency');
  let address = 0;
  let length = 0;
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { pages: 0, residentPages: 0, fraction: 0 };
    length = pageCeil(size);
    address = mmap(length, PROT_READ, MAP_SHARED, fd, 0, path);
    const pages = length / PAGE_SIZE;
    let resident = 0;
    for (let p = 0; p < pages; p += SCAN_PAGES) {
      const n = Math.min(SCAN_PAGES, pages - p);
      mincore(address + p * PAGE_SIZE, n * PAGE_SIZE, scanVec, path);
      for (let j = 0; j < n; j++) resident += scanVec[j] & 1;
    }
    return { pages, residentPages: resident, fraction: resident / pages };
  } finally {
    if (address !== 0) munmap(address, length, path);
    closeSync(fd);
  }
}

/** Fraction of the file's pages in the page cache, in [0, 1]. */
export function residentFraction(path: string): number {
  return residency(path).fraction;
}

function openFd(path: string, what: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    throw new Error(`${what}(${path}): ${(e as Error).message}`, { cause: e });
  }
}
