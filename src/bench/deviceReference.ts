/**
 * The device reference of bench:rescore: what the disk does for exactly the fp32 pages one
 * query's rescoring reads, read by the best raw method this machine allows: io_uring
 * IORING_OP_READ on O_DIRECT descriptors (no page cache, so every read reaches the device
 * whatever is cached), every page in flight at once, submitted and reaped by one thread. A
 * rescoring latency divided by this is the overhead of the read path over the device itself.
 */
import { closeSync } from 'node:fs';
import { IoBuffer, IoUring, openForRead } from '../../segments/store/native/IoUring.js';
import type { IndexReader } from '../../segments/index/IndexReader.js';
import { leafOf } from '../../segments/index/IndexReader.js';
import { docToOrd } from '../../segments/index/SegmentHandle.js';

const PAGE = 4096;

/** The distinct 4 KiB pages of a set of fp32 vectors: parallel arrays of file (index into `files`) and page offset. */
export interface PageSet {
  readonly file: Int32Array;
  readonly offset: Float64Array;
}

export class DeviceReference {
  private readonly files: string[] = [];
  private readonly fds: number[] = [];
  private readonly ring = IoUring.open(1024);
  private buffer: IoBuffer | null = null;
  private readonly ud = new Uint32Array(1024);
  private readonly res = new Int32Array(1024);

  /** The pages holding the fp32 vectors of global docs `docs` (what rescoring them reads). */
  pagesOf(reader: IndexReader, docs: ArrayLike<number>): PageSet {
    const seen = new Set<string>();
    const file: number[] = [];
    const offset: number[] = [];
    for (let i = 0; i < docs.length; i++) {
      const leaf = leafOf(reader.leaves, docs[i]);
      const v = leaf.reader.handle.vectors;
      const ord = docToOrd(v, docs[i] - leaf.docBase);
      if (ord < 0) continue;
      const f = this.fileIndex(v.path);
      const start = v.offset + ord * v.byteSize;
      for (let p = Math.floor(start / PAGE) * PAGE; p < start + v.byteSize; p += PAGE) {
        const key = `${f}:${p}`;
        if (seen.has(key)) continue;
        seen.add(key);
        file.push(f);
        offset.push(p);
      }
    }
    return { file: Int32Array.from(file), offset: Float64Array.from(offset) };
  }

  /** `count` distinct pages drawn uniformly from the whole of `paths` (by `random`, in [0, 1)). */
  randomPages(paths: readonly string[], sizes: readonly number[], count: number, random: () => number): PageSet {
    const total = sizes.reduce((a, b) => a + Math.floor(b / PAGE), 0);
    if (total < count) throw new Error(`device reference: ${paths.join(', ')} hold ${total} pages, fewer than the ${count} asked for`);
    const picked = new Set<number>();
    while (picked.size < count) picked.add(Math.floor(random() * total));
    const file = new Int32Array(count);
    const offset = new Float64Array(count);
    let i = 0;
    for (let page of picked) {
      let f = 0;
      while (page >= Math.floor(sizes[f] / PAGE)) page -= Math.floor(sizes[f++] / PAGE);
      file[i] = this.fileIndex(paths[f]);
      offset[i++] = page * PAGE;
    }
    return { file, offset };
  }

  /** Reads every page of `pages` from the device, all in flight; returns the milliseconds it took. */
  read(pages: PageSet): number {
    const n = pages.file.length;
    if (!this.buffer || this.buffer.slots < n) {
      this.buffer?.free();
      this.buffer = IoBuffer.alloc(Math.max(n, 64), PAGE);
    }
    const buffer = this.buffer;
    const ring = this.ring;
    const t0 = performance.now();
    let next = 0;
    let done = 0;
    while (done < n) {
      while (next < n && ring.prepRead(this.fds[pages.file[next]], pages.offset[next], buffer.slotAddress(next), PAGE, next)) next++;
      // All queued: one io_uring_enter submits them and waits for every completion.
      ring.submit(next < n ? 1 : ring.pending);
      for (let got = ring.reap(this.ud, this.res); got > 0; got = ring.reap(this.ud, this.res)) {
        for (let j = 0; j < got; j++) {
          const r = this.res[j];
          // A file's last page may be short; anything else but a positive count is a failure.
          if (r <= 0) throw new Error(`device reference: O_DIRECT read of ${this.files[pages.file[this.ud[j]]]} at ${pages.offset[this.ud[j]]} gave ${r}`);
          done++;
        }
      }
    }
    return performance.now() - t0;
  }

  close(): void {
    for (const fd of this.fds) closeSync(fd);
    this.ring.close();
    this.buffer?.free();
  }

  private fileIndex(path: string): number {
    let f = this.files.indexOf(path);
    if (f < 0) {
      f = this.files.length;
      this.files.push(path);
      this.fds.push(openForRead(path, true));
    }
    return f;
  }
}
