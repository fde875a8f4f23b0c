import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/**
 * What the benchmarks read of this process (Linux /proc) and how they warm a file: one copy for
 * bench:filter, bench:graph, bench:rescore and bench:serve.
 */

/** This process's anonymous resident memory in bytes (RssAnon: heaps and buffers, not the page cache); NaN when /proc does not say. */
export function rssAnonBytes(): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Bytes this process has caused to be read from storage (read_bytes of /proc/self/io); NaN when /proc does not say. */
export function storageReadBytes(): number {
  const m = /read_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** Reads a file once front to back, so its pages are in the page cache (a warm run). */
export function warmFile(path: string): void {
  const fd = openSync(path, 'r');
  const buffer = Buffer.allocUnsafe(8 << 20);
  try {
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd);
  }
}
