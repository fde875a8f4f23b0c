/**
 * One measured run of bench:rescore, in its own process (so the parent can evict the fp32 files
 * before it and confine it to a memory cgroup): open the index, run the queries single stream with
 * one read path and prefetch policy, print one JSON line.
 */
import { rssAnonBytes, storageReadBytes } from './procFiles.js';
import { parseArgs } from 'node:util';
import { openReader } from '../api/openIndex.js';
import type { ReadPath, RescoreThread } from '../api/types.js';
import { Executor } from '../executor/Executor.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { IndexSearcher } from '../../query/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../../query/KnnFloatVectorQuery.js';
import { DeviceReference, type PageSet } from './deviceReference.js';
import { CpuReference } from './cpuReference.js';
import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';
import { diskStats } from './cgroup.js';
import { benchDataset, loadQueries, recallAt } from './benchData.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string' },
    dim: { type: 'string' },
    'read-path': { type: 'string' },
    /** Warm comparison: several read paths in one process, each query run on every path in turn. */
    'read-paths': { type: 'string' },
    policy: { type: 'string' },
    queries: { type: 'string' },
    k: { type: 'string' },
    oversample: { type: 'string' },
    warmup: { type: 'boolean' },
    /** Interleave each query's rescoring with a device read of exactly its fp32 pages (see DeviceReference). */
    device: { type: 'boolean' },
    placement: { type: 'string' },
  },
});
const ds = benchDataset(Number(values.n ?? 1_000_000), Number(values.dim ?? 1024));
const readPath = values['read-path'] as ReadPath;
const prefetchPolicy = (values.policy ?? 'adaptive') as PrefetchPolicyName;
const k = Number(values.k ?? 100);
/** The beam of every search and of the device reference's candidate pass (they must match): the header's num_candidates 100. */
const NUM_CANDIDATES = 100;
const oversample = Number(values.oversample ?? 5);
const { vectors, truth } = await loadQueries(ds, Number(values.queries ?? 200));
const reader = DirectoryReader.open(ds.indexDir);
const index = await openReader(reader, { readPath, prefetchPolicy, rescoreThread: values.placement as RescoreThread | undefined });
const anonAfterOpen = rssAnonBytes();

// The device reference needs each query's rescoring pages before the measured pass: the first
// phase alone (deterministic, touches no fp32 page) gives the exact candidates the search rescores.
const device = values.device ? new DeviceReference() : null;
// With the device reference, the CPU's too: a fixed ~2 ms wasm job (about the first phase's time) next to every query.
const cpu = values.device ? await CpuReference.create(2) : null;
const pageSets: PageSet[] = [];
if (device) {
  const searcher = new IndexSearcher(reader, { executor: Executor.get() });
  const candidates = Math.ceil(k * oversample);
  for (const v of vectors) {
    const knn = new KnnFloatVectorQuery(reader.field.name, v, candidates, { numCandidates: Math.max(candidates, NUM_CANDIDATES) });
    const { topDocs } = await searcher.search(knn, candidates);
    pageSets.push(
      device.pagesOf(
        reader,
        topDocs.scoreDocs.map((d) => d.doc),
      ),
    );
  }
}

const run = async () => {
  const out = {
    latencyMs: [] as number[],
    rescoreMs: [] as number[],
    firstPhaseMs: [] as number[],
    deviceMs: [] as number[],
    cpuMs: [] as number[],
    devicePages: 0,
    callerRescores: 0,
    recall: 0,
    prefetched: 0,
    readAhead: 0,
    resident: 0,
    syscalls: 0,
    readsBeforePrefetch: 0,
    maxDistance: 0,
  };
  for (let i = 0; i < vectors.length; i++) {
    // Query i's device read right before (even i) or after (odd i) its search, so drift cancels.
    if (device && i % 2 === 0) out.deviceMs.push(device.read(pageSets[i]));
    const t0 = performance.now();
    const r = await index.search(vectors[i], { k, oversample, numCandidates: NUM_CANDIDATES, readPath });
    out.latencyMs.push(performance.now() - t0);
    if (device && i % 2 === 1) out.deviceMs.push(device.read(pageSets[i]));
    if (cpu) out.cpuMs.push(cpu.run());
    if (device) out.devicePages += pageSets[i].file.length;
    if (r.stats.rescoredOn === 'caller') out.callerRescores++;
    out.rescoreMs.push(r.stats.timings.rescoreMs);
    out.firstPhaseMs.push(r.stats.timings.firstPhaseMs);
    out.recall += recallAt(k, r.hits, truth[i]) / vectors.length;
    out.prefetched += r.stats.pagesPrefetched;
    out.readAhead += r.stats.pagesReadAhead;
    out.resident += r.stats.pagesResident;
    out.syscalls += r.stats.syscalls;
    out.readsBeforePrefetch += r.stats.readsBeforePrefetch;
    out.maxDistance = Math.max(out.maxDistance, r.stats.maxPrefetchDistance);
  }
  return out;
};

if (values['read-paths']) {
  // Side by side: the same process, the same moment, every path per query in rotating order.
  // Entries are `path` or `path@policy`.
  const paths = values['read-paths'].split(',');
  const latency = new Map(paths.map((p) => [p, [] as number[]]));
  const rescore = new Map(paths.map((p) => [p, [] as number[]]));
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < vectors.length; i++) {
      for (let j = 0; j < paths.length; j++) {
        const p = paths[(i + j) % paths.length];
        const t0 = performance.now();
        const [readPath, policy] = p.split('@') as [ReadPath, PrefetchPolicyName | undefined];
        const r = await index.search(vectors[i], { k, oversample, numCandidates: NUM_CANDIDATES, readPath, prefetchPolicy: policy });
        if (pass === 1) {
          latency.get(p)!.push(performance.now() - t0);
          rescore.get(p)!.push(r.stats.timings.rescoreMs);
        }
      }
    }
  }
  process.stdout.write(
    `${JSON.stringify({ k, oversample, queries: vectors.length, sideBySide: paths.map((p) => ({ readPath: p, latencyMs: latency.get(p), rescoreMs: rescore.get(p) })) })}\n`,
  );
  await index.close();
  process.exit(0);
}
if (values.warmup) await run();
const disk0 = diskStats();
const io0 = storageReadBytes();
const result = await run();
const disk1 = diskStats();
const io1 = storageReadBytes();
process.stdout.write(
  `${JSON.stringify({
    readPath,
    prefetchPolicy,
    k,
    oversample,
    queries: vectors.length,
    ...result,
    diskReads: disk1.readsCompleted - disk0.readsCompleted,
    diskBytes: (disk1.sectorsRead - disk0.sectorsRead) * 512,
    processReadBytes: io1 - io0,
    rssAnonBytes: anonAfterOpen,
  })}\n`,
);
device?.close();
await index.close();
