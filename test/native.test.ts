import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MappedFile } from '../segments/store/native/MappedFile.js';
import { IoBuffer, IoUring, openForRead, closeFile } from '../segments/store/native/IoUring.js';
import { evictFromPageCache, residency } from '../segments/store/native/PageCache.js';
import { AlignedMemory, NativeError, O_RDONLY, PAGE_SIZE, open as libcOpen, pread } from '../segments/store/native/libc.js';
import { mulberry32 as rng } from '../src/gen/Rng.js';

const MiB = 1 << 20;
const FILE_BYTES = 32 * MiB;
const PAGES = FILE_BYTES / 4096;

let dir: string;
let file: string;

/** Deterministic, non-repeating content so a misplaced read cannot pass by accident. */
function fill(buf: Uint8Array, seed: number): void {
  let x = seed >>> 0 || 1;
  const u32 = new Uint32Array(buf.buffer, buf.byteOffset, buf.byteLength >>> 2);
  for (let i = 0; i < u32.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    u32[i] = x >>> 0;
  }
}

function fsBytes(offset: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, out, 0, length, offset);
  } finally {
    closeSync(fd);
  }
  return out;
}

async function until(cond: () => boolean, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return cond();
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'prescore-native-'));
  file = join(dir, 'data.bin');
  const fd = openSync(file, 'w');
  const chunk = new Uint8Array(4 * MiB);
  for (let i = 0; i < FILE_BYTES / chunk.length; i++) {
    fill(chunk, 1 + i);
    writeSync(fd, chunk);
  }
  fsyncSync(fd);
  closeSync(fd);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('MappedFile', () => {
  it('views equal the bytes fs reads, at random offsets, for aligned and misaligned ranges', () => {
    const r = rng(1);
    for (const start of [0, 4096 * 3 + 8, 12345]) {
      const len = FILE_BYTES - start - 777;
      const m = MappedFile.open(file, start, len);
      try {
        expect(m.length).toBe(len);
        expect(m.chunkCount).toBe(1);
        const bytes = m.bytes();
        expect(bytes.length).toBe(len);
        for (let k = 0; k < 50; k++) {
          const rel = Math.floor(r() * (len - 5000));
          const want = fsBytes(start + rel, 4096 + 3);
          expect(Buffer.from(bytes.subarray(rel, rel + want.length)).equals(Buffer.from(want))).toBe(true);
        }
        if (start % 4 === 0) {
          const f = m.floats();
          const rel = 4096 * 17 + 64;
          const want = new Float32Array(fsBytes(start + rel, 4096).buffer);
          expect(f.subarray(rel / 4, rel / 4 + 1024)).toEqual(want);
          const out = new Float32Array(1030);
          m.copyFloats(rel, 1024, out, 3);
          expect(out.subarray(3, 1027)).toEqual(want);
          expect(m.floatsAt(rel, 1024)).toEqual(want);
        } else {
          expect(() => m.floats()).toThrow(/not 4-byte aligned/);
        }
      } finally {
        m.close();
      }
    }
  });

  it('prefetch and isResident follow the page cache', async () => {
    evictFromPageCache(file);
    const m = MappedFile.open(file, 0, undefined, { advice: 'random' });
    try {
      const page = 1000 * 4096;
      const other = 3000 * 4096;
      expect(m.isResident(page, 4096)).toBe(false);
      expect(m.isResident(other, 4096)).toBe(false);
      expect(m.prefetch(page + 100, 10)).toBe(1);
      // WILLNEED only queues the read.
      expect(await until(() => m.isResident(page, 4096))).toBe(true);
      void m.bytes()[other + 5]; // a fault brings the page in
      expect(m.isResident(other, 4096)).toBe(true);
      expect(m.isResident(other - 4096, 8192)).toBe(false); // its neighbour is not (MADV_RANDOM: no read-around)
      expect(m.residentPages()).toBeGreaterThanOrEqual(2);
      // A page this process maps is not dropped by eviction until the mapping lets go of it.
      evictFromPageCache(file);
      expect(m.isResident(other, 4096)).toBe(true);
      m.dropPageMappings();
      evictFromPageCache(file);
      expect(m.isResident(other, 4096)).toBe(false);
      expect(m.residentFraction()).toBeLessThan(0.01);
    } finally {
      m.close();
    }
    expect(residency(file).pages).toBe(PAGES);
    expect(residency(file).fraction).toBeLessThan(0.01);
    fsBytes(0, 8 * MiB);
    expect(residency(file).residentPages).toBeGreaterThanOrEqual((8 * MiB) / PAGE_SIZE);
  });

  it('refuses to be used after close()', () => {
    const m = MappedFile.open(file);
    m.close();
    m.close(); // idempotent
    expect(m.isClosed).toBe(true);
    expect(() => m.bytes()).toThrow(/used after close/);
    expect(() => m.floats()).toThrow(/used after close/);
    expect(() => m.prefetch(0, 4096)).toThrow(/used after close/);
    expect(() => m.isResident(0, 4096)).toThrow(/used after close/);
    expect(() => m.residentPages()).toThrow(/used after close/);
    expect(() => m.chunkBytes(0)).toThrow(/used after close/);
    expect(() => m.address).toThrow(/used after close/);
  });

  it('names the path in errors', () => {
    const missing = join(dir, 'missing.vec');
    expect(() => MappedFile.open(missing)).toThrow(missing);
    expect(() => MappedFile.open(file, FILE_BYTES - 10, 20)).toThrow(file);
    const m = MappedFile.open(file, 0, 8192);
    try {
      expect(() => m.prefetch(4096, 8192)).toThrow(file);
    } finally {
      m.close();
    }
    let err: unknown;
    try {
      libcOpen(missing, O_RDONLY);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NativeError);
    expect((err as NativeError).code).toBe('ENOENT');
    expect((err as Error).message).toContain(`open(${missing})`);
    expect((err as Error).message).toContain('No such file or directory');
  });

  it('cuts ranges over 4 GiB into overlapping chunk views (sparse file)', () => {
    const sparse = join(dir, 'sparse.bin');
    const size = 5 * 2 ** 30 + 12288;
    const fd = openSync(sparse, 'w');
    const stamps = [2 ** 30 - 8, 2 ** 32 - 4, 2 ** 32 + 4096, size - 16];
    try {
      ftruncateSync(fd, size);
      stamps.forEach((at, k) => {
        writeSync(fd, new Float32Array([k, k + 0.25, k + 0.5, k + 0.75]), 0, 16, at);
      });
    } finally {
      closeSync(fd);
    }
    const m = MappedFile.open(sparse, 0, undefined, { advice: 'random' });
    try {
      expect(m.chunkCount).toBe(6);
      expect(() => m.bytes()).toThrow(/need 6 views/);
      const out = new Float32Array(4);
      stamps.forEach((at, k) => {
        m.copyFloats(at, 4, out);
        expect(Array.from(out)).toEqual([k, k + 0.25, k + 0.5, k + 0.75]);
        const i = m.chunkIndex(at);
        expect(m.chunkFloats(i)[(at - m.chunkStart(i)) / 4 + 2]).toBe(k + 0.5);
        expect(m.chunkBytes(i).length).toBeLessThanOrEqual(2 ** 30 + 2 ** 20);
      });
    } finally {
      m.close();
      rmSync(sparse);
    }
  });
});

describe('IoUring', () => {
  const pages = (seed: number, n: number): Float64Array => {
    const r = rng(seed);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(r() * PAGES) * 4096;
    return out;
  };

  for (const direct of [false, true]) {
    it(`reads the same bytes as fs.read (${direct ? 'O_DIRECT' : 'buffered'}), 100 random pages, deep and shallow`, () => {
      evictFromPageCache(file);
      const ring = IoUring.open(128);
      const buf = IoBuffer.alloc(100);
      const fd = openForRead(file, direct);
      try {
        for (const depth of [128, 8]) {
          const offs = pages(direct ? 7 + depth : 3 + depth, 100);
          buf.bytes.fill(0);
          ring.readPages(fd, offs, 100, 4096, buf, depth, file);
          for (let i = 0; i < 100; i++) {
            const got = buf.bytes.subarray(i * 4096, (i + 1) * 4096);
            expect(Buffer.from(got).equals(Buffer.from(fsBytes(offs[i], 4096)))).toBe(true);
          }
          expect(ring.pending).toBe(0);
        }
        const f = buf.floats.subarray(buf.slotFloat(5), buf.slotFloat(5) + 1024);
        expect(f.length).toBe(1024);
      } finally {
        closeFile(fd);
        buf.free();
        ring.close();
      }
    });
  }

  it('reports O_DIRECT misalignment and read errors with the path', () => {
    const ring = IoUring.open(8);
    const buf = IoBuffer.alloc(2);
    const fd = openForRead(file, true);
    try {
      expect(() => ring.readPages(fd, [100], 1, 4096, buf, 8, file)).toThrow(new RegExp(`${file}.*4096-aligned|EINVAL`));
    } finally {
      closeFile(fd);
    }
    const fd2 = openForRead(file);
    try {
      expect(() => ring.readPages(fd2, [FILE_BYTES], 1, 4096, buf, 8, file)).toThrow(/end of file/);
    } finally {
      closeFile(fd2);
      buf.free();
      ring.close();
    }
  });

  it('refuses to be used after close()', () => {
    const ring = IoUring.open(4);
    const buf = IoBuffer.alloc(1);
    ring.close();
    expect(() => ring.prepRead(0, 0, buf.address, 4096, 0)).toThrow(/after close/);
    expect(() => ring.readPages(0, [0], 1, 4096, buf)).toThrow(/after close/);
    buf.free();
    expect(() => buf.memory.arrayBuffer()).toThrow(/after free/);
    expect(() => buf.bytes).toThrow(/after free/);
    expect(() => buf.slotAddress(0)).toThrow(/after free/);
  });
});

describe('libc', () => {
  it('pread into aligned memory equals fs bytes', () => {
    const mem = AlignedMemory.alloc(8192);
    const fd = openForRead(file, true);
    try {
      expect(mem.address % 4096).toBe(0);
      expect(pread(fd, mem.address, 8192, 4096 * 77, file)).toBe(8192);
      expect(Buffer.from(new Uint8Array(mem.arrayBuffer())).equals(Buffer.from(fsBytes(4096 * 77, 8192)))).toBe(true);
    } finally {
      closeFile(fd);
      mem.free();
    }
  });
});

// Workers run compiled code (`npm test` builds first); skipped when dist/ has not been built.
const distNative = resolve(import.meta.dirname, '..', 'dist', 'src', 'native');
describe.skipIf(!existsSync(join(distNative, 'IoUring.js')))('from a worker thread', () => {
  it('maps the file and runs its own ring inside the worker', async () => {
    const offs = [0, 4096 * 5, 4096 * 4000, FILE_BYTES - 4096];
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      (async () => {
        const { MappedFile } = await import(workerData.mapped);
        const { IoUring, IoBuffer, openForRead, closeFile } = await import(workerData.uring);
        const m = MappedFile.open(workerData.file, 0, undefined, { advice: 'random' });
        const ring = IoUring.open(8);
        const buf = IoBuffer.alloc(workerData.offs.length);
        const fd = openForRead(workerData.file, true);
        ring.readPages(fd, workerData.offs, workerData.offs.length, 4096, buf, 8, workerData.file);
        const viaMap = workerData.offs.map((o) => Array.from(m.bytes().subarray(o, o + 16)));
        const viaRing = workerData.offs.map((o, i) => Array.from(buf.bytes.subarray(i * 4096, i * 4096 + 16)));
        closeFile(fd); buf.free(); ring.close(); m.close();
        parentPort.postMessage({ viaMap, viaRing });
      })().catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));
    `;
    const w = new Worker(code, {
      eval: true,
      workerData: {
        file,
        offs,
        mapped: pathToFileURL(join(distNative, 'MappedFile.js')).href,
        uring: pathToFileURL(join(distNative, 'IoUring.js')).href,
      },
    });
    const msg = await new Promise<{ viaMap?: number[][]; viaRing?: number[][]; error?: string }>((ok, fail) => {
      w.once('message', ok);
      w.once('error', fail);
    });
    await w.terminate();
    expect(msg.error).toBeUndefined();
    offs.forEach((o, i) => {
      const want = Array.from(fsBytes(o, 16));
      expect(msg.viaMap![i]).toEqual(want);
      expect(msg.viaRing![i]).toEqual(want);
    });
  });
});
