/**
 * The large scratch file I/O benchmarks read: written once, reused across runs. Every 4 KiB page
 * starts with its own page number (u32 lo, u32 hi) so a benchmark can verify it read the right
 * page; the rest is pseudo-random so nothing compresses or dedups below the filesystem.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';

export const PAGE = 4096;
const WRITE_CHUNK = 64 * 2 ** 20;

/** Page number stamped at the start of page `page` (what a correct read of it must see first). */
export function pageStamp(bytes: Uint8Array, at: number): number {
  const dv = new DataView(bytes.buffer, bytes.byteOffset + at, 8);
  return dv.getUint32(0, true) + dv.getUint32(4, true) * 2 ** 32;
}

/** Creates `path` of `bytes` (a multiple of 4096) unless a valid one exists; returns true when it wrote. */
export function ensureColdFile(path: string, bytes: number, log: (msg: string) => void = () => {}): boolean {
  if (bytes % PAGE !== 0) throw new Error(`cold file size ${bytes} is not a multiple of ${PAGE}`);
  if (existsSync(path) && statSync(path).size === bytes && stampsValid(path, bytes)) return false;
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const buf = new Uint8Array(WRITE_CHUNK);
  const u32 = new Uint32Array(buf.buffer);
  let x = 0x9e3779b9;
  for (let i = 0; i < u32.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    u32[i] = x >>> 0;
  }
  const fd = openSync(tmp, 'w');
  const t0 = Date.now();
  try {
    for (let off = 0; off < bytes; off += WRITE_CHUNK) {
      const len = Math.min(WRITE_CHUNK, bytes - off);
      for (let p = 0; p < len / PAGE; p++) {
        const page = off / PAGE + p;
        u32[(p * PAGE) >>> 2] = page >>> 0;
        u32[((p * PAGE) >>> 2) + 1] = Math.floor(page / 2 ** 32);
        u32[((p * PAGE) >>> 2) + 2] ^= page; // vary content between chunks too
      }
      let done = 0;
      while (done < len) done += writeSync(fd, buf, done, len - done, off + done);
      if ((off / WRITE_CHUNK) % 16 === 15) log(`  wrote ${((off + len) / 2 ** 30).toFixed(2)} GiB (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  evictFromPageCache(path);
  return true;
}

function stampsValid(path: string, bytes: number): boolean {
  const pages = bytes / PAGE;
  const fd = openSync(path, 'r');
  const b = new Uint8Array(8);
  try {
    for (const page of [0, 1, Math.floor(pages / 3), Math.floor(pages / 2) + 7, pages - 1]) {
      if (readSync(fd, b, 0, 8, page * PAGE) !== 8 || pageStamp(b, 0) !== page) return false;
    }
    return true;
  } finally {
    closeSync(fd);
  }
}
