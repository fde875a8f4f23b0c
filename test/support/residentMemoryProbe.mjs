// Child process of test/residentMemory.test.ts: measures the anonymous memory (RssAnon) an open
// index adds to a process with an executor of N threads. Prints one JSON line.
//   node residentMemoryProbe.mjs INDEX_DIR THREADS QUERIES_F32_FILE
// Runs the compiled package (dist/), as the executor's workers do.
import { readFileSync } from 'node:fs';
import { openIndex } from '../../dist/src/api/openIndex.js';
import { Executor } from '../../dist/src/executor/Executor.js';
import { PING } from '../../dist/src/executor/tasks.js';

const [dir, threadsArg, queriesPath] = process.argv.slice(2);
const threads = Number(threadsArg);

function rssAnon() {
  const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return Number(m[1]) * 1024;
}

// The idle pool first: every worker started and through its entry module, nothing opened.
const executor = Executor.get({ threads });
await Promise.all(Array.from({ length: threads * 4 }, () => executor.run(PING, { sleepMs: 20 })));
globalThis.gc?.();
const idle = rssAnon();

const t0 = performance.now();
const index = await openIndex(dir, { threads });
const openMs = performance.now() - t0;
const afterOpen = rssAnon();

// Searches on every worker (each query runs one slice per thread), first and tenth timed.
const raw = readFileSync(queriesPath);
const queries = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
const dims = index.dims;
const times = [];
for (let round = 0; round < 3; round++) {
  for (let i = 0; i < queries.length / dims; i++) {
    const s = performance.now();
    await index.search(queries.subarray(i * dims, (i + 1) * dims), { k: 10 });
    times.push(performance.now() - s);
  }
}
globalThis.gc?.();
const afterSearch = rssAnon();
const memory = (await index.describe()).memory;
process.stdout.write(`${JSON.stringify({ threads, idle, afterOpen, afterSearch, openMs, firstMs: times[0], tenthMs: times[9], memory })}\n`);
await index.close();
