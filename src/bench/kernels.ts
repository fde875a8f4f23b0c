/**
 * `npm run bench:kernels`: the wasm SIMD kernels against the plain-JS reference, 1024 dims.
 *
 * JS and wasm trials alternate (best of several), so both see the same machine noise; the
 * wasm/JS column is the speed ratio (higher = wasm faster). Also reports how long it takes a
 * thread to get a kernels instance (wabt compile vs prebuilt .wasm vs a posted Module).
 */
import { Worker } from 'node:worker_threads';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernels } from '../../segments/kernels/Kernels.js';
import { JsKernels, type JsOsqQuery } from '../../segments/kernels/JsKernels.js';
import { compileWat, emitKernelsWasm, findKernelsWat, readKernelsWat } from '../../segments/kernels/KernelsBinary.js';
import { wasm } from '../../segments/kernels/wasmApi.js';
import { encodingForBits } from '../../segments/quantized/ScalarEncodings.js';
import { mulberry32 as rng } from '../gen/Rng.js';

const DIMS = 1024;
const CODE_BYTES = DIMS / 8;
const RECORD = CODE_BYTES + 16;
const N_RECORDS = 100_000;

/**
 * Seconds of process CPU time per call of fn, over calls totalling at least minMs. CPU time
 * rather than wall time: the 2 cores are shared with other work, and a descheduled thread
 * should not count as a slow kernel (cache and SMT interference still do).
 */
function timeIt(fn: () => void, minMs: number): number {
  let calls = 0;
  const c0 = process.cpuUsage();
  let us = 0;
  do {
    fn();
    calls++;
    const c = process.cpuUsage(c0);
    us = c.user + c.system;
  } while (us < minMs * 1000);
  return us / 1e6 / calls;
}

/** Alternates JS and wasm trials; returns the best seconds per call of each. */
function compare(js: () => void, wa: () => void, trials = 5, minMs = 150): { js: number; wasm: number } {
  js();
  wa();
  let bj = Infinity,
    bw = Infinity;
  for (let i = 0; i < trials; i++) {
    bj = Math.min(bj, timeIt(js, minMs));
    bw = Math.min(bw, timeIt(wa, minMs));
  }
  return { js: bj, wasm: bw };
}

interface Row {
  kernel: string;
  unit: string;
  js: number;
  wasm: number;
}
const rows: Row[] = [];
function add(kernel: string, unit: string, perSecJs: number, perSecWasm: number): void {
  rows.push({ kernel, unit, js: perSecJs, wasm: perSecWasm });
  console.error(`  done: ${kernel}`);
}

function fmt(x: number): string {
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

async function loadTimes(): Promise<string[]> {
  const lines: string[] = [];
  const t0 = performance.now();
  const module = await Kernels.module();
  const t1 = performance.now();
  const info = Kernels.binaryInfo()!;
  lines.push(
    `Kernels.module() in this thread: ${(t1 - t0).toFixed(1)} ms ` +
      `(source ${info.source}: bytes ${info.bytesMs.toFixed(1)} ms, WebAssembly.compile ${info.compileMs.toFixed(1)} ms, ${info.byteLength} B)`,
  );
  const t2 = performance.now();
  await Kernels.load({ module });
  lines.push(`Kernels.load() with the module compiled: ${(performance.now() - t2).toFixed(2)} ms (instantiate + memory)`);

  const watPath = findKernelsWat()!;
  const wat = readKernelsWat(watPath);
  const t3 = performance.now();
  const bytes = await compileWat(wat);
  lines.push(`wabt parseWat+encode again (wabt already started): ${(performance.now() - t3).toFixed(1)} ms`);
  const t4 = performance.now();
  await wasm.compile(bytes);
  lines.push(`async WebAssembly.compile of the same bytes: ${(performance.now() - t4).toFixed(1)} ms (Kernels uses the sync new WebAssembly.Module)`);

  // A fresh thread, three ways.
  const dir = mkdtempSync(join(tmpdir(), 'prescore-kernels-'));
  try {
    const kernelsUrl = new URL('../../segments/kernels/Kernels.js', import.meta.url).href;
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      (async () => {
        const t0 = performance.now();
        const { Kernels } = await import(workerData.url);
        const t1 = performance.now();
        const k = await Kernels.load(workerData.module ? { module: workerData.module } : {});
        const t2 = performance.now();
        parentPort.postMessage({ importMs: t1 - t0, loadMs: t2 - t1, source: workerData.module ? 'posted' : Kernels.binaryInfo().source });
      })();`;
    const inWorker = (module?: unknown) =>
      new Promise<{ importMs: number; loadMs: number; source: string }>((resolve, reject) => {
        const w = new Worker(code, { eval: true, workerData: { url: kernelsUrl, module } });
        w.once('message', (m) => {
          resolve(m);
          void w.terminate();
        });
        w.once('error', reject);
      });
    const fromWat = await inWorker();
    lines.push(`new worker thread, Kernels.load() (${fromWat.source}): ${fromWat.loadMs.toFixed(1)} ms (+ module import ${fromWat.importMs.toFixed(1)} ms)`);
    const posted = await inWorker(module);
    lines.push(`new worker thread, Kernels.load({ module }) (posted Module): ${posted.loadMs.toFixed(1)} ms`);
    const emitted = await emitKernelsWasm(dir);
    const t5 = performance.now();
    new wasm.Module(new Uint8Array(readFileSync(emitted[0])));
    lines.push(`prebuilt kernels.wasm: read + new WebAssembly.Module ${(performance.now() - t5).toFixed(1)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

async function main(): Promise<void> {
  if (process.argv.includes('--encodings')) {
    // Only the per-encoding table (a few seconds of CPU instead of minutes).
    const perByte = encodingRows(await Kernels.load(), rng(1));
    console.log(`\nper doc and per code byte, every doc encoding (${DIMS} dims, ${ENC_RECORDS / 1000}k records; wasm only)\n`);
    for (const l of perByte) console.log(l);
    return;
  }
  console.error('kernels benchmark: loading ...');
  const loadLines = await loadTimes();
  const k = await Kernels.load();
  const r = rng(1);

  // ---- 1-bit records and a 4-bit query --------------------------------------------------
  const sigma = 1 / Math.sqrt(DIMS);
  const records = new Uint8Array(N_RECORDS * RECORD);
  const view = new DataView(records.buffer);
  for (let i = 0; i < N_RECORDS; i++) {
    const off = i * RECORD;
    let pop = 0;
    for (let b = 0; b < CODE_BYTES; b++) {
      const byte = Math.floor(r() * 256);
      records[off + b] = byte;
      for (let x = byte; x; x &= x - 1) pop++;
    }
    view.setFloat32(off + CODE_BYTES, -sigma * (0.7 + 0.1 * r()), true);
    view.setFloat32(off + CODE_BYTES + 4, sigma * (0.7 + 0.1 * r()), true);
    view.setFloat32(off + CODE_BYTES + 8, 0.3 + 0.6 * r(), true);
    view.setInt32(off + CODE_BYTES + 12, pop, true);
  }
  const planes = Uint8Array.from({ length: 4 * CODE_BYTES }, () => Math.floor(r() * 256));
  const corr = {
    lower: Math.fround(-2.5 * sigma),
    upper: Math.fround(2.5 * sigma),
    additionalCorrection: 0.05,
    componentSum: 7 * DIMS,
    dims: DIMS,
    similarity: 1,
    centroidDP: 0.6,
  };
  const jq: JsOsqQuery = { ...corr, planes };
  const recPtr = k.alloc(records.length);
  const planesPtr = k.alloc(planes.length);
  k.u8().set(records, recPtr);
  k.u8().set(planes, planesPtr);
  const wq = { ...corr, planesPtr };

  // int4BitDotProduct: one call per record over 1000 records.
  {
    const n = 1000;
    let sink = 0;
    const t = compare(
      () => {
        for (let i = 0; i < n; i++) sink += JsKernels.int4BitDotProduct(planes, 0, records, i * RECORD, CODE_BYTES);
      },
      () => {
        for (let i = 0; i < n; i++) sink += k.int4BitDotProduct(planesPtr, recPtr + i * RECORD, CODE_BYTES);
      },
    );
    if (sink === 42) console.log('');
    add('int4BitDotProduct (1 call/record)', 'M codes/s', n / t.js / 1e6, n / t.wasm / 1e6);
  }

  // scoreOsqRange over all 100k records.
  const jsOut = new Float32Array(N_RECORDS);
  const outPtr = k.alloc(4 * N_RECORDS);
  {
    const t = compare(
      () => JsKernels.scoreOsqRange(jq, records, RECORD, CODE_BYTES, 0, N_RECORDS, jsOut),
      () => k.scoreOsqRange(wq, recPtr, RECORD, CODE_BYTES, 0, N_RECORDS, outPtr),
      3,
    );
    const w = k.f32().subarray(outPtr >>> 2, (outPtr >>> 2) + N_RECORDS);
    for (let i = 0; i < N_RECORDS; i++) {
      if (!Object.is(w[i], jsOut[i])) throw new Error(`scoreOsqRange mismatch at ${i}: ${w[i]} vs ${jsOut[i]}`);
    }
    add('scoreOsqRange, 100k records', 'M records/s', N_RECORDS / t.js / 1e6, N_RECORDS / t.wasm / 1e6);
  }

  // scoreOsqOrds: 10k random ords in one call, and in HNSW-like calls of 32.
  {
    const n = 10_000;
    const ords = Int32Array.from({ length: n }, () => Math.floor(r() * N_RECORDS));
    const ordsPtr = k.alloc(4 * n);
    k.i32().set(ords, ordsPtr >>> 2);
    let t = compare(
      () => JsKernels.scoreOsqOrds(jq, records, RECORD, CODE_BYTES, ords, n, jsOut),
      () => k.scoreOsqOrds(wq, recPtr, RECORD, CODE_BYTES, ordsPtr, n, outPtr),
    );
    add('scoreOsqOrds, 10k random ords/call', 'M records/s', n / t.js / 1e6, n / t.wasm / 1e6);
    t = compare(
      () => {
        for (let i = 0; i + 32 <= n; i += 32) JsKernels.scoreOsqOrds(jq, records, RECORD, CODE_BYTES, ords.subarray(i, i + 32), 32, jsOut, i);
      },
      () => {
        for (let i = 0; i + 32 <= n; i += 32) k.scoreOsqOrds(wq, recPtr, RECORD, CODE_BYTES, ordsPtr + 4 * i, 32, outPtr + 4 * i);
      },
    );
    add('scoreOsqOrds, 32 random ords/call', 'M records/s', n / t.js / 1e6, n / t.wasm / 1e6);
    k.free(ordsPtr);
  }
  k.free(recPtr);
  k.free(outPtr);

  const perByte = encodingRows(k, r);

  // ---- fp32 -----------------------------------------------------------------------------
  const nDocs = 1000;
  const docs = Float32Array.from({ length: nDocs * DIMS }, () => r() * 2 - 1);
  const query = Float32Array.from({ length: DIMS }, () => r() * 2 - 1);
  const docsPtr = k.alloc(docs.byteLength);
  const qPtr = k.alloc(query.byteLength);
  k.f32().set(docs, docsPtr >>> 2);
  k.f32().set(query, qPtr >>> 2);
  for (const [name, jsFn, waFn] of [
    ['dot', JsKernels.dot, (a: number, b: number, d: number) => k.dot(a, b, d)],
    ['squareDistance', JsKernels.squareDistance, (a: number, b: number, d: number) => k.squareDistance(a, b, d)],
    ['cosine', JsKernels.cosine, (a: number, b: number, d: number) => k.cosine(a, b, d)],
  ] as const) {
    let sink = 0;
    const t = compare(
      () => {
        for (let i = 0; i < nDocs; i++) sink += jsFn(query, 0, docs, i * DIMS, DIMS);
      },
      () => {
        for (let i = 0; i < nDocs; i++) sink += waFn(qPtr, docsPtr + i * DIMS * 4, DIMS);
      },
    );
    if (sink === 42) console.log('');
    add(`fp32 ${name} (1 call/vector, 4 MB of docs)`, 'M vectors/s', nDocs / t.js / 1e6, nDocs / t.wasm / 1e6);
  }
  k.free(docsPtr);
  k.free(qPtr);

  // dotBatch: GFLOP/s (2 flops per multiply-add).
  let gtLine = '';
  {
    const nq = 32,
      nd = 4096;
    const qs = Float32Array.from({ length: nq * DIMS }, () => r() * 2 - 1);
    const ds = Float32Array.from({ length: nd * DIMS }, () => r() * 2 - 1);
    const out = new Float32Array(nq * nd);
    const pq = k.alloc(qs.byteLength),
      pd = k.alloc(ds.byteLength),
      po = k.alloc(out.byteLength);
    k.f32().set(qs, pq >>> 2);
    k.f32().set(ds, pd >>> 2);
    const flops = 2 * nq * nd * DIMS;
    const t = compare(
      () => JsKernels.dotBatch(qs, nq, ds, nd, DIMS, out),
      () => k.dotBatch(pq, nq, pd, nd, DIMS, po),
      3,
      100,
    );
    add(`dotBatch ${nq} queries x ${nd} docs (16 MB)`, 'GFLOP/s', flops / t.js / 1e9, flops / t.wasm / 1e9);

    // A ground-truth-shaped call: 1000 queries against a 16k-doc slice.
    const nq2 = 1000,
      nd2 = 16384;
    const qs2 = k.alloc(nq2 * DIMS * 4),
      ds2 = k.alloc(nd2 * DIMS * 4),
      po2 = k.alloc(nq2 * nd2 * 4);
    const f = k.f32();
    for (let i = 0; i < nq2 * DIMS; i++) f[(qs2 >>> 2) + i] = r() * 2 - 1;
    for (let i = 0; i < nd2 * DIMS; i++) f[(ds2 >>> 2) + i] = r() * 2 - 1;
    const c0 = process.cpuUsage();
    k.dotBatch(qs2, nq2, ds2, nd2, DIMS, po2);
    const cu = process.cpuUsage(c0);
    const sec = (cu.user + cu.system) / 1e6;
    const gflops = (2 * nq2 * nd2 * DIMS) / sec / 1e9;
    const gtSec = (2 * 1000 * 1e6 * DIMS) / (gflops * 1e9);
    gtLine =
      `dotBatch ${nq2} x ${nd2} x ${DIMS} (one thread, CPU time): ${gflops.toFixed(2)} GFLOP/s -> exact top-k for 1000 queries over ` +
      `1M x ${DIMS} ≈ ${(gtSec / 60).toFixed(1)} min on 1 thread, ≈ ${(gtSec / 120).toFixed(1)} min on 2`;
  }

  console.log(`\nkernels benchmark, ${DIMS} dims, node ${process.version}, CPU time, best of alternating trials\n`);
  for (const l of loadLines) console.log(`  ${l}`);
  console.log('');
  const head = ['kernel', 'unit', 'JS', 'wasm', 'wasm/JS'];
  const body = rows.map((x) => [x.kernel, x.unit, fmt(x.js), fmt(x.wasm), `${(x.wasm / x.js).toFixed(1)}x`]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  console.log(line(head));
  console.log('|' + widths.map((w, i) => (i < 2 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|');
  for (const b of body) console.log(line(b));
  console.log(`\n  ${gtLine}`);
  console.log(`\nper doc and per code byte, every doc encoding (${DIMS} dims, ${ENC_RECORDS / 1000}k records; wasm only; GB/s = code bytes scored per second)\n`);
  for (const l of perByte) console.log(l);
}

const ENC_RECORDS = 100_000;

/**
 * The estimator per doc encoding, scanned (scoreOsqRange / scoreEncoded over consecutive records)
 * and at random ords in graph-sized calls of 32: ns per doc and GB/s of codes, so "as fast per
 * byte as the 1-bit kernel" is a ratio in one table. Codes and corrections are random bytes (the
 * kernels' speed does not depend on the values).
 */
function encodingRows(k: Kernels, r: () => number): string[] {
  const rows: string[][] = [];
  const nOrds = 10_000;
  const ords = Int32Array.from({ length: nOrds }, () => Math.floor(r() * ENC_RECORDS));
  const ordsPtr = k.alloc(4 * nOrds);
  k.i32().set(ords, ordsPtr >>> 2);
  const outPtr = k.alloc(4 * ENC_RECORDS);
  let base1: { scan: number; random: number } | null = null;
  for (const bits of [1, 2, 4, 8] as const) {
    const enc = encodingForBits(bits);
    const codeBytes = enc.docCodeBytes(DIMS);
    const recordBytes = codeBytes + 16;
    const recPtr = k.alloc(ENC_RECORDS * recordBytes);
    const u8 = k.u8();
    for (let i = 0; i < ENC_RECORDS * recordBytes; i++) u8[recPtr + i] = Math.floor(r() * 256);
    // Records are packed without alignment: corrections go through a DataView.
    const view = new DataView(k.u8().buffer);
    for (let i = 0; i < ENC_RECORDS; i++) {
      const c = recPtr + i * recordBytes + codeBytes;
      view.setFloat32(c, -0.05 * (0.7 + 0.1 * r()), true);
      view.setFloat32(c + 4, 0.05 * (0.7 + 0.1 * r()), true);
      view.setFloat32(c + 8, 0.3 + 0.6 * r(), true);
      view.setInt32(c + 12, Math.floor(r() * DIMS), true);
    }
    const qBytes = enc.queryCodeBytes(DIMS);
    const qPtr = k.alloc(qBytes);
    const maxQ = (1 << enc.queryBits) - 1;
    for (let i = 0; i < qBytes; i++) k.u8()[qPtr + i] = bits <= 2 ? Math.floor(r() * 256) : Math.floor(r() * (maxQ + 1));
    const corr = { lower: -0.1, upper: 0.1, additionalCorrection: 0.05, componentSum: 7 * DIMS, dims: DIMS, similarity: 1, centroidDP: 0.6 };
    const scan =
      bits === 1
        ? () => k.scoreOsqRange({ ...corr, planesPtr: qPtr }, recPtr, recordBytes, codeBytes, 0, ENC_RECORDS, outPtr)
        : () => k.scoreEncoded({ ...corr, codePtr: qPtr }, bits, DIMS, codeBytes, recPtr, recordBytes, 0, 0, ENC_RECORDS, outPtr);
    const random =
      bits === 1
        ? () => {
            for (let i = 0; i + 32 <= nOrds; i += 32) k.scoreOsqOrds({ ...corr, planesPtr: qPtr }, recPtr, recordBytes, codeBytes, ordsPtr + 4 * i, 32, outPtr + 4 * i);
          }
        : () => {
            for (let i = 0; i + 32 <= nOrds; i += 32)
              k.scoreEncoded({ ...corr, codePtr: qPtr }, bits, DIMS, codeBytes, recPtr, recordBytes, ordsPtr + 4 * i, 0, 32, outPtr + 4 * i);
          };
    // compare() alternates its two arguments' trials: here the scan and the random-ord calls.
    const t = compare(scan, random, 3, 150);
    const scanNs = (t.js / ENC_RECORDS) * 1e9;
    const randomNs = (t.wasm / nOrds) * 1e9;
    base1 ??= { scan: scanNs / codeBytes, random: randomNs / codeBytes };
    rows.push([
      `${bits}-bit (${enc.name})`,
      String(codeBytes),
      scanNs.toFixed(1),
      (codeBytes / scanNs).toFixed(2),
      (base1.scan / (scanNs / codeBytes)).toFixed(2),
      randomNs.toFixed(1),
      (codeBytes / randomNs).toFixed(2),
      (base1.random / (randomNs / codeBytes)).toFixed(2),
    ]);
    console.error(`  done: ${bits}-bit per byte`);
    k.free(recPtr);
    k.free(qPtr);
  }
  k.free(ordsPtr);
  k.free(outPtr);
  const head = ['doc codes', 'code B', 'scan ns/doc', 'scan GB/s', 'scan per byte vs 1-bit', '32 random ords: ns/doc', 'GB/s', 'per byte vs 1-bit'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((b) => b[i].length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (i < 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  return [line(head), '|' + widths.map((w, i) => (i < 1 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|', ...rows.map(line)];
}

await main();
