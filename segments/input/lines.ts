import type { FileHandle } from 'node:fs/promises';
import { readAt } from './fileIo.js';

const READ_BYTES = 1 << 20;

/** Splits a file into lines (1-based numbers), reading 1 MiB at a time; strips BOM and CR. */
export async function* lines(fh: FileHandle, path: string): AsyncGenerator<{ text: string; number: number }> {
  const chunk = Buffer.allocUnsafe(READ_BYTES);
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let carry: Buffer | null = null;
  let position = 0;
  let number = 0;
  let first = true;
  for (;;) {
    const n = await readAt(fh, path, chunk, 0, chunk.length, position);
    position += n;
    const data: Buffer = carry ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
    let start = 0;
    if (first && data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) start = 3;
    first = false;
    for (;;) {
      const nl = data.indexOf(10, start);
      if (nl < 0) break;
      const end = nl > start && data[nl - 1] === 13 ? nl - 1 : nl;
      yield { text: decoder.decode(data.subarray(start, end)), number: ++number };
      start = nl + 1;
    }
    if (n === 0) {
      if (start < data.length) {
        const end = data[data.length - 1] === 13 ? data.length - 1 : data.length;
        yield { text: decoder.decode(data.subarray(start, end)), number: ++number };
      }
      return;
    }
    // Copy the partial line: `chunk` is reused by the next read.
    carry = start < data.length ? Buffer.from(data.subarray(start)) : null;
  }
}
