/**
 * Which read path should bring a query's rescoring shortlist in from a cold fp32 file?
 *
 * One batch = the shortlist of one query: 500 random 4 KiB pages (500 fp32 vectors of 1024 dims)
 * of a >= 4 GiB file. Cold: the file is evicted before every batch (and every path's pages are
 * fresh random ones), so each batch pays the disk. Warm: the same batch again and again with
 * everything cached, to price each path's per-page CPU overhead. Paths run round-robin inside
 * each round so machine noise (2 shared cores, a shared disk) hits them alike.
 *
 *   npm run bench:io -- [--batches=20] [--pages=500] [--size-gib=4.25] [--file=.bench/io-4g.bin]
 *                       [--only=mmap,uring] [--cgroup=1G]
 *
 * Runs compiled (worker threads cannot load .ts). Writes .bench/readPaths.json.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, read as fsRead, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { MappedFile } from '../../segments/store/native/MappedFile.js';
import { IoBuffer, IoUring, openForRead } from '../../segments/store/native/IoUring.js';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';
import { MADV_WILLNEED, POSIX_FADV_RANDOM, posixFadvise, raw } from '../../segments/store/native/libc.js';
import { diskStats, memoryCgroupSupport, MemoryCgroup, parseBytes } from './cgroup.js';
import { ensureColdFile, PAGE, pageStamp } from './coldFile.js';
import { mulberry32 as rng } from '../gen/Rng.js';
import { percentile } from '../../load/percentile.js';

const here = fileURLToPath(import.meta.url);

// ---- options ----------------------------------------------------------------------------------

interface Options {
  file: string;
  sizeBytes: number;
  batches: number;
  pages: number;
  warmReps: number;
  only: string[] | undefined;
  cgroup: string | undefined;
  out: string;
}

function parseOptions(argv: readonly string[]): Options {
  const get = (name: string): string | undefined => {
    const hit = argv.find((a) => a.startsWith(`--${name}=`));
    return hit?.slice(name.length + 3);
  };
  const root = findRoot();
  const sizeGiB = Number(get('size-gib') ?? 4.25);
  return {
    file: resolve(get('file') ?? join(root, '.bench', 'io-4g.bin')),
    sizeBytes: Math.round((sizeGiB * 2 ** 30) / PAGE) * PAGE,
    batches: Number(get('batches') ?? 20),
    pages: Number(get('pages') ?? 500),
    warmReps: Number(get('warm-reps') ?? 30),
    only: get('only')?.split(','),
    cgroup: get('cgroup'),
    out: resolve(get('out') ?? join(root, '.bench', 'readPaths.json')),
  };
}

function findRoot(): string {
  let dir = dirname(here);
  for (;;) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'prescore') return dir;
    } catch {
      /* keep walking */
    }
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

// ---- helpers ----------------------------------------------------------------------------------

/** Distinct random page offsets, in random (not sorted) order like a shortlist in score order. */
function randomPages(r: () => number, filePages: number, n: number, out: Float64Array): void {
  const seen = new Set<number>();
  for (let i = 0; i < n; ) {
    const p = Math.floor(r() * filePages);
    if (seen.has(p)) continue;
    seen.add(p);
    out[i++] = p * PAGE;
  }
}

/** Major faults of this process (all threads), /proc/self/stat field 12. */
function majorFaults(): number {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(fields[9]);
}

// ---- the paths --------------------------------------------------------------------------------

interface Batch {
  readonly offsets: Float64Array;
  readonly n: number;
}

interface ReadPath {
  readonly name: string;
  readonly inFlight: string;
  readonly what: string;
  /** Cap on cold batches (stock read-around makes some paths read ~8 MiB per fault). */
  readonly maxColdBatches?: number;
  /** Brings in the batch's pages and consumes them; returns the batch time in ms (measured inside). */
  run(batch: Batch): Promise<number> | number;
  /** Counts pages whose stamp is wrong after run() (outside the timing). */
  verify(batch: Batch): number;
  close(): Promise<void> | void;
}

let sink = 0;

/** Consumes a page from a mapping: the first and last float, as a scorer would read it. */
function touchMapped(m: MappedFile, off: number): number {
  const i = m.chunkIndex(off);
  const f = m.chunkFloats(i);
  const at = (off - m.chunkStart(i)) >>> 2;
  return f[at] + f[at + 1023];
}

/** Reads one float at each end of every page of the batch (faulting in what is not resident). */
function touchBatch(m: MappedFile, b: Batch): void {
  let s = 0;
  for (let k = 0; k < b.n; k++) s += touchMapped(m, b.offsets[k]);
  sink += s;
}

function verifyMapped(m: MappedFile, batch: Batch): number {
  let bad = 0;
  for (let k = 0; k < batch.n; k++) {
    const off = batch.offsets[k];
    const i = m.chunkIndex(off);
    if (pageStamp(m.chunkBytes(i), off - m.chunkStart(i)) !== off / PAGE) bad++;
  }
  return bad;
}

function verifyBuffer(buf: IoBuffer, batch: Batch): number {
  let bad = 0;
  for (let k = 0; k < batch.n; k++) if (pageStamp(buf.bytes, k * buf.slotBytes) !== batch.offsets[k] / PAGE) bad++;
  return bad;
}

function consumeBuffer(buf: IoBuffer, n: number): number {
  const f = buf.floats;
  let s = 0;
  for (let k = 0; k < n; k++) s += f[k * 1024] + f[k * 1024 + 1023];
  return s;
}

function mmapTouch(name: string, m: MappedFile, what: string, maxColdBatches?: number): ReadPath {
  return {
    name,
    inFlight: '1',
    what,
    maxColdBatches,
    run(b) {
      const t0 = performance.now();
      touchBatch(m, b);
      return performance.now() - t0;
    },
    verify: (b) => verifyMapped(m, b),
    close() {},
  };
}

function mmapWillneed(name: string, m: MappedFile, what: string, gateWithMincore = false): ReadPath {
  return {
    name,
    inFlight: 'all',
    what,
    run(b) {
      const t0 = performance.now();
      for (let k = 0; k < b.n; k++) {
        const off = b.offsets[k];
        if (gateWithMincore && m.isResident(off, PAGE)) continue;
        m.prefetch(off, PAGE);
      }
      touchBatch(m, b);
      return performance.now() - t0;
    },
    verify: (b) => verifyMapped(m, b),
    close() {},
  };
}

/**
 * Warm detection per batch: mincore on `sample` spread-out pages; when all are resident the batch
 * is treated as warm and touched without advice, else every page gets WILLNEED first.
 */
function mmapSampledGate(m: MappedFile, sample: number): ReadPath {
  return {
    name: `mmap+gate(${sample})+willneed`,
    inFlight: 'all',
    what: `mincore on ${sample} sampled pages per batch; all resident -> touch only, else WILLNEED all then touch`,
    run(b) {
      const t0 = performance.now();
      let warm = true;
      const step = Math.max(1, Math.floor(b.n / sample));
      for (let k = 0; k < b.n && warm; k += step) warm = m.isResident(b.offsets[k], PAGE);
      if (!warm) for (let k = 0; k < b.n; k++) m.prefetch(b.offsets[k], PAGE);
      touchBatch(m, b);
      return performance.now() - t0;
    },
    verify: (b) => verifyMapped(m, b),
    close() {},
  };
}

/** All WILLNEED advice queued on an io_uring and issued by the kernel's io-wq workers; wait, then touch. */
function mmapUringAdvice(m: MappedFile, ring: IoUring): ReadPath {
  return {
    name: 'mmap+willneed via io_uring',
    inFlight: 'all',
    what: 'IORING_OP_MADVISE(WILLNEED) per page, one io_uring_enter, wait for all, then touch',
    run(b) {
      const t0 = performance.now();
      const base = m.address;
      for (let k = 0; k < b.n; k++) {
        if (!ring.prepMadvise(base + b.offsets[k], PAGE, MADV_WILLNEED, k)) {
          ring.submit(0);
          k--;
        }
      }
      if (ring.drain() > 0) throw new Error(`io_uring madvise failed: errno ${ring.lastErrno}`);
      touchBatch(m, b);
      return performance.now() - t0;
    },
    verify: (b) => verifyMapped(m, b),
    close() {},
  };
}

/** madvise(WILLNEED) issued by worker threads that map the file themselves; main waits, then touches. */
async function mmapParallel(file: string, m: MappedFile, workers: number, maxPages: number): Promise<ReadPath> {
  const sab = new SharedArrayBuffer(16 + 8 * maxPages);
  const ctrl = new Int32Array(sab, 0, 4); // [seq, count, done, -]
  const offs = new Float64Array(sab, 16, maxPages);
  const threads: Worker[] = [];
  for (let w = 0; w < workers; w++) {
    const t = new Worker(here, { workerData: { role: 'willneed', file, sab, index: w, workers } });
    await new Promise<void>((ok, fail) => {
      t.once('message', () => ok());
      t.once('error', fail);
    });
    threads.push(t);
  }
  let seq = 0;
  return {
    name: `mmap+willneed x${workers}w`,
    inFlight: 'all',
    what: `madvise(WILLNEED) split over ${workers} worker threads (each maps the file), main waits then touches`,
    run(b) {
      const t0 = performance.now();
      offs.set(b.offsets.subarray(0, b.n));
      Atomics.store(ctrl, 1, b.n);
      Atomics.store(ctrl, 2, 0);
      Atomics.store(ctrl, 0, ++seq);
      Atomics.notify(ctrl, 0);
      for (let done = Atomics.load(ctrl, 2); done < workers; done = Atomics.load(ctrl, 2)) Atomics.wait(ctrl, 2, done);
      touchBatch(m, b);
      return performance.now() - t0;
    },
    verify: (b) => verifyMapped(m, b),
    async close() {
      Atomics.store(ctrl, 0, -1);
      Atomics.notify(ctrl, 0);
      await Promise.all(threads.map((t) => new Promise((ok) => t.once('exit', ok))));
    },
  };
}

function workerMain(): void {
  const { file, sab, index, workers } = workerData as { file: string; sab: SharedArrayBuffer; index: number; workers: number };
  const ctrl = new Int32Array(sab, 0, 4);
  const offs = new Float64Array(sab, 16);
  const m = MappedFile.open(file);
  parentPort!.postMessage('ready');
  let seen = 0;
  for (;;) {
    Atomics.wait(ctrl, 0, seen);
    seen = Atomics.load(ctrl, 0);
    if (seen < 0) break;
    const n = Atomics.load(ctrl, 1);
    // Interleaved shares keep both threads' issue order close to the consumer's order.
    for (let k = index; k < n; k += workers) m.prefetch(offs[k], PAGE);
    Atomics.add(ctrl, 2, 1);
    Atomics.notify(ctrl, 2);
  }
  m.close();
  parentPort!.close();
}

function preadPath(file: string, pages: number): ReadPath {
  const fd = openForRead(file);
  const buf = IoBuffer.alloc(pages);
  return {
    name: 'pread',
    inFlight: '1',
    what: 'koffi pread(2) one page at a time into an aligned buffer',
    run(b) {
      const t0 = performance.now();
      for (let k = 0; k < b.n; k++) {
        if (raw.pread(fd, buf.slotAddress(k), PAGE, b.offsets[k]) !== PAGE) throw new Error(`pread(${file}) short/failed at ${b.offsets[k]}`);
      }
      sink += consumeBuffer(buf, b.n);
      return performance.now() - t0;
    },
    verify: (b) => verifyBuffer(buf, b),
    close() {
      closeSync(fd);
      buf.free();
    },
  };
}

function uringPath(file: string, pages: number, ring: IoUring, depth: number, direct: boolean): ReadPath {
  const fd = openForRead(file, direct);
  const buf = IoBuffer.alloc(pages);
  return {
    name: `io_uring${direct ? ' O_DIRECT' : ''} qd${depth >= pages ? 'all' : depth}`,
    inFlight: depth >= pages ? String(pages) : String(depth),
    what: `raw io_uring IORING_OP_READ, ${direct ? 'O_DIRECT' : 'buffered'}, ${depth >= pages ? 'the whole batch' : depth} in flight`,
    run(b) {
      const t0 = performance.now();
      ring.readPages(fd, b.offsets, b.n, PAGE, buf, depth, file);
      sink += consumeBuffer(buf, b.n);
      return performance.now() - t0;
    },
    verify: (b) => verifyBuffer(buf, b),
    close() {
      closeSync(fd);
      buf.free();
    },
  };
}

/** fs.read with `depth` in flight, in a child process whose libuv pool is sized before it starts. */
async function fsReadPath(file: string, pages: number, depth: number, ioUring: boolean): Promise<ReadPath> {
  const env = { ...process.env, UV_THREADPOOL_SIZE: String(depth), UV_USE_IO_URING: ioUring ? '1' : '0' };
  const child: ChildProcess = fork(here, ['--child=fsread', `--file=${file}`, `--pages=${pages}`, `--depth=${depth}`], {
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((ok, fail) => {
    child.once('message', () => ok());
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`fs.read child exited early (${code})`)));
  });
  child.removeAllListeners('exit');
  let last: { ms: number; bad: number } = { ms: NaN, bad: 0 };
  const ask = (b: Batch) =>
    new Promise<{ ms: number; bad: number }>((ok) => {
      child.once('message', (m) => ok(m as { ms: number; bad: number }));
      child.send({ offsets: Array.from(b.offsets.subarray(0, b.n)) });
    });
  return {
    name: `fs.read qd${depth}${ioUring ? ' uv-io_uring' : ''}`,
    inFlight: String(depth),
    what: `Node fs.read callbacks, ${depth} in flight, UV_THREADPOOL_SIZE=${depth}, UV_USE_IO_URING=${ioUring ? 1 : 0} (child process)`,
    async run(b) {
      last = await ask(b);
      return last.ms;
    },
    verify: () => last.bad,
    async close() {
      const exited = new Promise((ok) => child.once('exit', ok));
      child.send({ quit: true });
      await exited;
    },
  };
}

function fsReadChild(argv: readonly string[]): void {
  const get = (n: string) => argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? '';
  const file = get('file');
  const pages = Number(get('pages'));
  const depth = Number(get('depth'));
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(pages * PAGE);
  process.on('message', (msg: { offsets?: number[]; quit?: boolean }) => {
    if (msg.quit || !msg.offsets) {
      closeSync(fd);
      process.disconnect();
      return;
    }
    const offsets = msg.offsets;
    const n = offsets.length;
    let next = 0;
    let done = 0;
    const t0 = performance.now();
    const issue = (): void => {
      const k = next++;
      fsRead(fd, buf, k * PAGE, PAGE, offsets[k], (err, bytes) => {
        if (err || bytes !== PAGE) throw err ?? new Error(`fs.read(${file}) short at ${offsets[k]}`);
        if (next < n) issue();
        if (++done === n) {
          let s = 0;
          for (let j = 0; j < n; j++) s += buf.readFloatLE(j * PAGE) + buf.readFloatLE(j * PAGE + 4092);
          const ms = performance.now() - t0;
          let bad = 0;
          for (let j = 0; j < n; j++) if (pageStamp(buf, j * PAGE) !== offsets[j] / PAGE) bad++;
          process.send!({ ms, bad, s });
        }
      });
    };
    for (let i = 0; i < Math.min(depth, n); i++) issue();
  });
  process.send!('ready');
}

// ---- the run ----------------------------------------------------------------------------------

interface ColdStats {
  ms: number[];
  diskReads: number[];
  kib: number[];
  majflt: number[];
  preResident: number[];
  bad: number;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const log = (s: string) => process.stdout.write(`${s}\n`);

  if (opts.cgroup && !process.env.PRESCORE_BENCH_IN_CGROUP) {
    const support = memoryCgroupSupport();
    if (support.ok) {
      const limit = parseBytes(opts.cgroup);
      const group = MemoryCgroup.create(`prescore-bench-io-${process.pid}`, limit);
      log(`running inside memory cgroup ${group.path} (limit ${opts.cgroup})`);
      const child = group.spawn(process.execPath, [here, ...process.argv.slice(2)], {
        stdio: 'inherit',
        env: { ...process.env, PRESCORE_BENCH_IN_CGROUP: group.path },
      });
      const code = await new Promise<number>((ok) => child.once('exit', (c) => ok(c ?? 1)));
      const st = group.stat();
      log(`cgroup at exit: cache ${(st.cache / 2 ** 20).toFixed(0)} MiB, pgmajfault ${st.pgmajfault}`);
      group.remove();
      process.exitCode = code;
      return;
    }
    log(`cgroup: not used (${support.reason}); falling back to eviction before every batch`);
  }

  mkdirSync(dirname(opts.out), { recursive: true });
  log(`file ${opts.file} (${(opts.sizeBytes / 2 ** 30).toFixed(2)} GiB)`);
  if (ensureColdFile(opts.file, opts.sizeBytes, log)) log('  created');
  else log('  reusing the existing file');
  const filePages = opts.sizeBytes / PAGE;
  const n = opts.pages;

  const mRandom = MappedFile.open(opts.file, 0, undefined, { advice: 'random' });
  const mNormal = MappedFile.open(opts.file, 0, undefined, { advice: 'normal' });
  const ring = IoUring.open(Math.max(64, 2 ** Math.ceil(Math.log2(n))));

  const all: ReadPath[] = [
    mmapTouch('mmap RANDOM', mRandom, 'touch one page at a time, MADV_RANDOM (Lucene .vec advice): queue depth 1'),
    mmapTouch('mmap NORMAL', mNormal, 'touch one page at a time, no madvise (stock mmap; kernel read-around applies)', 5),
    mmapWillneed('mmap+willneed RANDOM', mRandom, 'madvise(WILLNEED) for all pages from this thread, then touch'),
    mmapWillneed('mmap+willneed NORMAL', mNormal, 'same, on a MADV_NORMAL mapping'),
    mmapWillneed('mmap+mincore+willneed', mRandom, 'mincore first, WILLNEED only non-resident pages (Lucene isLoaded gate)', true),
    mmapSampledGate(mRandom, 8),
    await mmapParallel(opts.file, mRandom, 2, n),
    mmapUringAdvice(mRandom, ring),
    preadPath(opts.file, n),
    await fsReadPath(opts.file, n, 64, false),
    await fsReadPath(opts.file, n, 64, true),
    uringPath(opts.file, n, ring, n, false),
    uringPath(opts.file, n, ring, 64, false),
    uringPath(opts.file, n, ring, n, true),
    uringPath(opts.file, n, ring, 64, true),
  ];
  const paths = opts.only ? all.filter((p) => opts.only!.some((o) => p.name.toLowerCase().includes(o.toLowerCase()))) : all;
  for (const p of all) if (!paths.includes(p)) await p.close();

  // Readahead on the plain fd stays off for random reads either way; say so explicitly.
  {
    const fd = openSync(opts.file, 'r');
    posixFadvise(fd, 0, 0, POSIX_FADV_RANDOM, opts.file);
    closeSync(fd);
  }

  const evict = (): number => {
    mRandom.dropPageMappings();
    mNormal.dropPageMappings();
    const t = performance.now();
    evictFromPageCache(opts.file);
    return performance.now() - t;
  };

  const cold = new Map<string, ColdStats>(paths.map((p) => [p.name, { ms: [], diskReads: [], kib: [], majflt: [], preResident: [], bad: 0 }]));
  const r = rng(42);
  const offsets = new Float64Array(n);
  const batch: Batch = { offsets, n };
  let evictMs = 0;
  log(`cold: ${opts.batches} rounds x ${paths.length} paths x ${n} random 4 KiB pages, evicting before every batch`);
  const tCold = performance.now();
  for (let round = 0; round < opts.batches; round++) {
    for (let j = 0; j < paths.length; j++) {
      const p = paths[(j + round) % paths.length];
      if (p.maxColdBatches !== undefined && round >= p.maxColdBatches) continue;
      randomPages(r, filePages, n, offsets);
      evictMs += evict();
      let pre = 0;
      for (let k = 0; k < n; k++) if (mRandom.isResident(offsets[k], PAGE)) pre++;
      const d0 = diskStats();
      const f0 = majorFaults();
      const ms = await p.run(batch);
      const f1 = majorFaults();
      const d1 = diskStats();
      const st = cold.get(p.name)!;
      st.ms.push(ms);
      st.diskReads.push(d1.readsCompleted - d0.readsCompleted);
      st.kib.push(((d1.sectorsRead - d0.sectorsRead) * 512) / 1024);
      st.majflt.push(f1 - f0);
      st.preResident.push(pre);
      st.bad += p.verify(batch);
    }
    process.stdout.write(`  round ${round + 1}/${opts.batches}\r`);
  }
  log(`  cold phase ${((performance.now() - tCold) / 1000).toFixed(1)} s (eviction ${(evictMs / (opts.batches * paths.length)).toFixed(2)} ms per batch)`);

  // Warm: one fixed batch, cached and (for mmap) mapped; the per-page cost is pure CPU + syscalls.
  randomPages(r, filePages, n, offsets);
  const warm = new Map<string, number[]>(paths.map((p) => [p.name, []]));
  for (const p of paths) await p.run(batch);
  for (let rep = 0; rep < opts.warmReps; rep++) {
    for (let j = 0; j < paths.length; j++) {
      const p = paths[(j + rep) % paths.length];
      warm.get(p.name)!.push(await p.run(batch));
    }
  }
  // The scoring work each page feeds: a 1024-dim fp32 dot product in JS, for scale.
  const scoreUs = dotReferenceUs(mRandom, batch);

  for (const p of paths) await p.close();
  ring.close();
  mRandom.close();
  mNormal.close();

  // ---- report ----
  const rows = paths.map((p) => {
    const st = cold.get(p.name)!;
    const sorted = [...st.ms].sort((a, b) => a - b);
    const total = st.ms.reduce((a, b) => a + b, 0);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const w = [...warm.get(p.name)!].sort((a, b) => a - b);
    return {
      path: p.name,
      inFlight: p.inFlight,
      what: p.what,
      cold: {
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        minMs: sorted[0],
        pagesPerSecP50: n / (percentile(sorted, 50) / 1000),
        pagesPerSecMean: (st.ms.length * n) / (total / 1000),
        diskReadsPerBatch: mean(st.diskReads),
        kibReadPerBatch: mean(st.kib),
        majorFaultsPerBatch: mean(st.majflt),
        residentBeforeBatch: Math.max(...st.preResident),
        wrongPages: st.bad,
        batchesMs: st.ms,
      },
      warm: { p50UsPerPage: (percentile(w, 50) * 1000) / n, minUsPerPage: (w[0] * 1000) / n },
    };
  });
  const baseMin = rows.find((x) => x.path === 'mmap RANDOM')?.warm.minUsPerPage;
  const baseCold = rows.find((x) => x.path === 'mmap RANDOM')?.cold.p50Ms;

  const table: string[][] = [
    ['path', 'in flight', 'cold p50 ms', 'p99 ms', 'pages/s@p50', 'mean pages/s', 'x mmap', 'disk reads', 'KiB read', 'majflt', 'warm us/pg', 'min', '+us/pg vs mmap'],
  ];
  for (const x of rows) {
    table.push([
      x.path,
      x.inFlight,
      x.cold.p50Ms.toFixed(2),
      x.cold.p99Ms.toFixed(2),
      Math.round(x.cold.pagesPerSecP50).toLocaleString('en-US'),
      Math.round(x.cold.pagesPerSecMean).toLocaleString('en-US'),
      baseCold ? (baseCold / x.cold.p50Ms).toFixed(1) : '',
      x.cold.diskReadsPerBatch.toFixed(0),
      x.cold.kibReadPerBatch.toFixed(0),
      x.cold.majorFaultsPerBatch.toFixed(0),
      x.warm.p50UsPerPage.toFixed(3),
      x.warm.minUsPerPage.toFixed(3),
      baseMin === undefined ? '' : (x.warm.minUsPerPage - baseMin).toFixed(3),
    ]);
  }
  const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
  log('');
  log(`${n} random 4 KiB pages per batch; cold = evicted before each batch (${opts.batches} batches per path, p99 of that many ~ max;`);
  for (const p of paths) if (p.maxColdBatches !== undefined) log(`  ${p.name}: only ${Math.min(p.maxColdBatches, opts.batches)} cold batches);`);
  log('disk reads / KiB read / majflt are per batch (whole-disk counters: other processes add noise);');
  log(`warm = the same cached batch ${opts.warmReps}x: p50 and min us per page; +us/pg compares mins (least disturbed by other load)`);
  log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cpus().length} cpus`,
  );
  for (const [i, row] of table.entries()) {
    log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    if (i === 0) log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  log('');
  log(`scale: a 1024-dim fp32 dot product in JS costs ${scoreUs.toFixed(3)} us per page`);
  const wrong = rows.reduce((a, x) => a + x.cold.wrongPages, 0);
  const leaked = rows.filter((x) => x.cold.residentBeforeBatch > 0).map((x) => x.path);
  log(wrong === 0 ? 'verify: every page read carried its own page stamp' : `verify: ${wrong} WRONG PAGES`);
  if (leaked.length) log(`warning: some pages were resident before a cold batch: ${leaked.join(', ')}`);

  const json = {
    date: new Date().toISOString(),
    node: process.version,
    libuv: process.versions.uv,
    kernel: readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(),
    cpus: cpus().length,
    loadavg: loadavg(),
    cgroup: process.env.PRESCORE_BENCH_IN_CGROUP ?? null,
    file: opts.file,
    fileBytes: opts.sizeBytes,
    pagesPerBatch: n,
    batches: opts.batches,
    warmReps: opts.warmReps,
    ioUringSetupFlags: ring.setupFlags,
    scoreReferenceUsPerPage: scoreUs,
    evictMsPerBatch: evictMs / (opts.batches * paths.length),
    rows,
  };
  writeFileSync(opts.out, JSON.stringify(json, null, 2));
  log(`wrote ${opts.out}`);
  // Keeps the consumed values observable so the JIT cannot drop the page touches.
  if (sink === 42) log('');
}

function dotReferenceUs(m: MappedFile, b: Batch): number {
  const q = new Float32Array(1024).fill(0.5);
  let best = Infinity;
  for (let rep = 0; rep < 20; rep++) {
    const t0 = performance.now();
    let s = 0;
    for (let k = 0; k < b.n; k++) {
      const off = b.offsets[k];
      const i = m.chunkIndex(off);
      const f = m.chunkFloats(i);
      const at = (off - m.chunkStart(i)) >>> 2;
      let d = 0;
      for (let j = 0; j < 1024; j++) d += f[at + j] * q[j];
      s += d;
    }
    sink += s;
    best = Math.min(best, ((performance.now() - t0) * 1000) / b.n);
  }
  return best;
}

if (!isMainThread) {
  if ((workerData as { role?: string })?.role === 'willneed') workerMain();
} else if (process.argv.includes('--child=fsread')) {
  fsReadChild(process.argv.slice(2));
} else {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
