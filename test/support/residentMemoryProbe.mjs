// Child process of test/residentMemory.test.ts: measures the anonymous memory (RssAnon) an open
// index adds to a process with an executor of N threads. Prints one JSON line.
//   node --expose-gc residentMemoryProbe.mjs INDEX_DIR THREADS QUERIES_F32_FILE WARMUP_INDEX_DIR
// Runs the compiled package (dist/), as the executor's workers do.
//
// The baseline is a pool that has already searched: a small warm-up index (same dims) is opened
// and searched first, so the workers have loaded their modules, compiled their code and grown
// their heaps to what searching takes. Its memory is in both readings, so the difference is
// what the measured index adds.
import { readFileSync } from 'node:fs';
import { openIndex } from '../../dist/src/api/openIndex.js';
import { Executor } from '../../dist/src/executor/Executor.js';
import { PING } from '../../dist/src/executor/tasks.js';

const [dir, threadsArg, queriesPath, warmupDir] = process.argv.slice(2);
const threads = Number(threadsArg);

/** RssAnon once every thread's heap is collected (a full GC here and in each worker: concurrent pings land on distinct workers). */
async function rssAnon() {
  const executor = Executor.get();
  await Promise.all(Array.from({ length: executor.threads }, () => executor.run(PING, { gc: true, sleepMs: 50 })));
  globalThis.gc();
  const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return Number(m[1]) * 1024;
}

const raw = readFileSync(queriesPath);
const queries = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);

/**
 * Three rounds over the queries (each query runs one slice per thread, so every worker searches).
 * Both indexes keep the first phase on the executor (knnThread 'executor'): on the calling thread
 * a single stream leaves the workers idle and grows the main thread's heap instead, which blurs
 * the baseline (measured: 46.4 MiB added with 4 workers vs 51.4 pinned, below the 48.3 MiB of
 * codes and graphs themselves); this probe measures what the workers share and add.
 */
async function searchRounds(index) {
  const dims = index.dims;
  const times = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < queries.length / dims; i++) {
      const s = performance.now();
      await index.search(queries.subarray(i * dims, (i + 1) * dims), { k: 10, knnThread: 'executor' });
      times.push(performance.now() - s);
    }
  }
  return times;
}

const warmup = await openIndex(warmupDir, { threads, knnThread: 'executor', calibrate: 'never' });
// Long enough for the workers' heaps to stop growing (fewer rounds left ~2-3 MiB per worker of
// young-generation growth to show up in the measured index's searches).
for (let i = 0; i < 8; i++) await searchRounds(warmup);
const idle = await rssAnon();

const t0 = performance.now();
const index = await openIndex(dir, { threads, knnThread: 'executor', calibrate: 'never' });
const openMs = performance.now() - t0;
const afterOpen = await rssAnon();
const times = await searchRounds(index);
const afterSearch = await rssAnon();
const memory = (await index.describe()).memory ?? null;
process.stdout.write(`${JSON.stringify({ threads, idle, afterOpen, afterSearch, openMs, firstMs: times[0], tenthMs: times[9], memory })}\n`);
await index.close();
await warmup.close();
