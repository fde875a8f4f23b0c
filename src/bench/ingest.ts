/**
 * `npm run bench:ingest`: documents written through `_bulk` over HTTP against the batch build of
 * the same data, in one run.
 *
 *   npm run bench:ingest -- --sizes 200000x768 [--batch 500] [--clients 2] [--phases ingest,recall]
 *
 * Per size (a `prescore gen --filters` dataset: each row's vector with its fields), phase `ingest`:
 * 1. the batch rate: `prescore build` of the vectors with their fields (a child process);
 * 2. the write rate: a new empty index served by `prescore serve` (a child), `--clients` clients
 *    sending `_bulk` bodies of `--batch` documents back to back (refresh=false, every write
 *    acknowledged after its translog fdatasync), docs/s acknowledged, and the clients' own CPU.
 *    The bodies are pre-encoded, as Rally sends pre-generated files: the whole `_bulk` stream is
 *    written once beside the dataset (bulk.ndjson, reused by later runs) and while timing the
 *    clients only read each batch's byte range and send it. Building the bodies while timing (768
 *    floats per document through shortestFloat32) cost the generator 1.77-1.87 ms of CPU per
 *    document, ~0.76 of a core of the 2-core VM, taken from the server under test; sending them
 *    pre-encoded, 0.10-0.11 ms (20k x 768);
 * 3. while they write: a search every 50 ms (knn, k=10) and, every 2 s, a marker document whose
 *    time from acknowledgement to visibility (`_count` on its id, polled every 10 ms) is the
 *    refresh-to-visible latency; then the same searches on the idle server;
 * 4. a metadata-only update: 1,000 `_update`s of one field, then `_flush` (a commit), and the bytes
 *    the server wrote (`/proc/<pid>/io` write_bytes) per update.
 *
 * and (phase `recall`) recall after deletes and a merge, against a fresh build of what is left:
 * 5. index A: the batch build of step 1 (built for this phase when `ingest` does not run); an
 *    IndexWriter on it (no merge policy, so nothing merges on its own) deletes a seeded random 20%
 *    of the ids and commits (the deletions are .liv files only), then forceMerge(1) (the merged
 *    segment's graph is built again from the live docs) and close;
 * 6. index B: `prescore build` of only the surviving rows (their vectors and fields, same flags);
 * 7. exact top-10 over the surviving rows (the generator's brute force, computeGroundTruth, over
 *    B's input) for the dataset's queries, and recall@10 of A after the commit of the deletions,
 *    then of A merged and B query by query in turn (k=10, default num_candidates and
 *    oversample). The check: |recall A merged - recall B| <= 0.01.
 *
 *   npm run bench:ingest -- --sizes 100000x768 --phases recall [--seed 42]
 *
 * One JSON line with every figure is printed before the tables. PRESCORE_SERVER_NODE_ARGS passes
 * node flags to the server under test (e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile it).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fdatasyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../executor/packageRoot.js';
import { openIndexWriter } from '../api/openIndexWriter.js';
import { openIndex } from '../api/openIndex.js';
import { Executor } from '../executor/Executor.js';
import { Mapping } from '../../segments/document/Mapping.js';
import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import { SEGMENT_SETTINGS_KEY } from '../../segments/index/SegmentWriter.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { readAllVectors, writeFvecs } from '../../segments/input/index.js';
import { shortestFloat32 } from '../../query/fetch/FetchPhase.js';
import { computeGroundTruth } from '../gen/generateDataset.js';
import type { GenSimilarity } from '../gen/DatasetSpec.js';
import { parseSeed, Rng } from '../gen/Rng.js';
import { benchDataset, loadQueries, recallAt, summarize, type BenchDataset } from './benchData.js';
import { ColdServer } from './coldServer.js';

const PHASES = ['ingest', 'recall'] as const;
type Phase = (typeof PHASES)[number];

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    batch: { type: 'string' },
    clients: { type: 'string' },
    phases: { type: 'string' },
    seed: { type: 'string' },
  },
});
const BATCH = Number(values.batch ?? 500);
const CLIENTS = Number(values.clients ?? 2);
const sizes = (values.sizes ?? '1000000x768,1000000x1024').split(',').map((s) => {
  const [n, dim] = s.split('x').map(Number);
  if (!(n! > 0 && dim! > 0)) throw new Error(`--sizes: expected NxDIM, got ${s}`);
  return { n: n!, dim: dim! };
});
const phases = new Set((values.phases ?? PHASES.join(',')).split(',').map((p) => p.trim()));
for (const p of phases) if (!PHASES.includes(p as Phase)) throw new Error(`--phases: expected some of ${PHASES.join(',')}, got ${values.phases}`);
/** Which ids the recall phase deletes (Rng.from(seed, n)). */
const SEED = parseSeed(values.seed ?? '42');
/** The writes issue's acceptance: after deleting 20% and merging, recall@10 within 0.01 of a fresh build. */
const DELETE_FRACTION = 0.2;
const RECALL_K = 10;
const RECALL_TOLERANCE = 0.01;

interface IngestFigures {
  readonly buildDocsPerSec: number;
  readonly ingestDocsPerSec: number;
  readonly clientCpuMsPerDoc: number;
  readonly visibleP50Ms: number;
  readonly visibleP99Ms: number;
  readonly searchBusyP50: number;
  readonly searchBusyP99: number;
  readonly searchIdleP50: number;
  readonly searchIdleP99: number;
  readonly segments: number;
  readonly bytesPerMetadataUpdate: number;
}

/** An index's committed state: live docs, docs including the deleted ones, segments, segments with a graph. */
interface IndexShape {
  readonly docs: number;
  readonly maxDoc: number;
  readonly segments: number;
  readonly graphs: number;
}

interface RecallFigures {
  readonly queries: number;
  readonly seed: string;
  readonly deleted: number;
  readonly survivors: number;
  /** `prescore build` of all rows (index A); of the surviving rows (index B). */
  readonly buildASeconds: number;
  readonly buildBSeconds: number;
  /** deleteDocuments of the chosen ids and the commit writing the .liv files. */
  readonly deleteCommitSeconds: number;
  /** forceMerge(1), graph of the live docs included. */
  readonly mergeSeconds: number;
  /** A after the deletions' commit; A after forceMerge(1); B. */
  readonly deletesOnly: IndexShape;
  readonly merged: IndexShape;
  readonly fresh: IndexShape;
  readonly recallDeletesOnly: number;
  readonly recallMerged: number;
  readonly recallFresh: number;
  /** recallMerged - recallFresh. */
  readonly difference: number;
  /** Mean search time, A merged and B searched in turn, query by query. */
  readonly searchMsMerged: number;
  readonly searchMsFresh: number;
  /** Mean docs the first phase scored per query: A with deletions only, A merged, B. */
  readonly visitedDeletesOnly: number;
  readonly visitedMerged: number;
  readonly visitedFresh: number;
  /** Queries whose top-10 (as a set of rows) differs between A merged and B. */
  readonly queriesDiffering: number;
  /** Hits on deleted ids, A before and after the merge (must be 0). */
  readonly deletedHits: number;
  /** Queries whose exact top-10 over the survivors differs from the generator's top-100 (all rows) less the deleted ids. */
  readonly truthDisagreements: number;
}

interface Figures {
  readonly size: string;
  readonly ingest?: IngestFigures;
  readonly recall?: RecallFigures;
}

const results: Figures[] = [];
process.stderr.write(
  `bench:ingest: load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}, phases ${[...phases].join(',')}\n`,
);
for (const { n, dim } of sizes) results.push(await runSize(benchDataset(n, dim, 200)));
await Executor.shutdown();

console.log(JSON.stringify({ bench: 'ingest', phases: [...phases], loadAverage: loadavg(), results }));
const ingested = results.filter((r) => r.ingest !== undefined) as (Figures & { ingest: IngestFigures })[];
if (ingested.length > 0) {
  console.log(
    '\n| size | build docs/s | _bulk docs/s (ratio) | client CPU ms/doc | visible p50 / p99 ms | search while writing p50 / p99 ms | idle p50 / p99 ms | ratio p50 / p99 | segments after | bytes per metadata update |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { size, ingest: r } of ingested) {
    console.log(
      `| ${size} | ${r.buildDocsPerSec.toFixed(0)} | ${r.ingestDocsPerSec.toFixed(0)} (${(r.ingestDocsPerSec / r.buildDocsPerSec).toFixed(2)}x) | ${r.clientCpuMsPerDoc.toFixed(3)} | ${r.visibleP50Ms.toFixed(0)} / ${r.visibleP99Ms.toFixed(0)} | ${r.searchBusyP50.toFixed(2)} / ${r.searchBusyP99.toFixed(2)} | ${r.searchIdleP50.toFixed(2)} / ${r.searchIdleP99.toFixed(2)} | ${(r.searchBusyP50 / r.searchIdleP50).toFixed(2)}x / ${(r.searchBusyP99 / r.searchIdleP99).toFixed(2)}x | ${r.segments} | ${r.bytesPerMetadataUpdate.toFixed(0)} |`,
    );
  }
}
const recalled = results.filter((r) => r.recall !== undefined) as (Figures & { recall: RecallFigures })[];
if (recalled.length > 0) {
  const shape = (s: IndexShape) => `${s.docs} / ${s.maxDoc} / ${s.segments} (${s.graphs} graphs)`;
  console.log(
    `\n| size | deleted | recall@${RECALL_K} A deletes only | A merged | B fresh | A merged - B | delete + commit s | forceMerge s | A before merge: live / docs / segments | A after | B | search ms A / B | visited A deletes only / A merged / B | queries with other top-10, A merged vs B |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const { size, recall: r } of recalled) {
    console.log(
      `| ${size} | ${r.deleted} of ${r.deleted + r.survivors} | ${r.recallDeletesOnly.toFixed(4)} | ${r.recallMerged.toFixed(4)} | ${r.recallFresh.toFixed(4)} | ${r.difference >= 0 ? '+' : ''}${r.difference.toFixed(4)} | ${r.deleteCommitSeconds.toFixed(1)} | ${r.mergeSeconds.toFixed(1)} | ${shape(r.deletesOnly)} | ${shape(r.merged)} | ${shape(r.fresh)} | ${r.searchMsMerged.toFixed(2)} / ${r.searchMsFresh.toFixed(2)} | ${r.visitedDeletesOnly.toFixed(0)} / ${r.visitedMerged.toFixed(0)} / ${r.visitedFresh.toFixed(0)} | ${r.queriesDiffering} of ${r.queries} |`,
    );
  }
}
console.log('\nchecks:');
for (const { size, ingest: r, recall } of results) {
  const check = (ok: boolean, what: string) => console.log(`  ${ok ? 'ok  ' : 'MISS'} ${size}: ${what}`);
  if (r) {
    check(r.ingestDocsPerSec >= 0.8 * r.buildDocsPerSec, `acknowledged docs/s >= 0.8x the batch build (${(r.ingestDocsPerSec / r.buildDocsPerSec).toFixed(2)}x)`);
    check(r.visibleP99Ms <= 1000, `refresh-to-visible p99 <= 1 s (${r.visibleP99Ms.toFixed(0)} ms)`);
    check(r.searchBusyP50 <= 2 * r.searchIdleP50 && r.searchBusyP99 <= 2 * r.searchIdleP99, 'search p50/p99 while writing <= 2x idle');
  }
  if (recall) {
    check(
      Math.abs(recall.difference) <= RECALL_TOLERANCE,
      `after deleting ${DELETE_FRACTION * 100}% and forceMerge(1), recall@${RECALL_K} within ${RECALL_TOLERANCE} of a fresh build (${recall.recallMerged.toFixed(4)} vs ${recall.recallFresh.toFixed(4)}, ${recall.difference >= 0 ? '+' : ''}${recall.difference.toFixed(4)})`,
    );
    check(recall.deletedHits === 0, `no deleted id among the hits (${recall.deletedHits})`);
    check(
      recall.truthDisagreements === 0,
      `exact top-${RECALL_K} over the survivors = the generator's top-100 less the deleted rows (${recall.truthDisagreements} queries differ)`,
    );
    check(
      recall.merged.segments === 1 && recall.merged.docs === recall.merged.maxDoc,
      `forceMerge(1) leaves one segment without deletions (${recall.merged.segments}, ${recall.merged.maxDoc - recall.merged.docs} deleted)`,
    );
  }
}
console.log(
  `load average at the end: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);

/**
 * The dataset with its documents' fields: `prescore gen --filters` (benchData's ensureDataset
 * generates without them, and this bench builds and writes whole documents).
 */
function ensureFieldsDataset(ds: BenchDataset): void {
  const info = join(ds.dir, 'dataset.json');
  const spec = existsSync(info) ? (JSON.parse(readFileSync(info, 'utf8')) as { n: number; dim: number; queries: number; filters?: unknown }) : null;
  if (spec?.filters && spec.n === ds.n && spec.dim === ds.dim && spec.queries >= ds.queries && existsSync(join(ds.dir, 'base.fvecs'))) return;
  process.stderr.write(`bench:ingest: generating ${ds.n} x ${ds.dim} with --filters into ${ds.dir}\n`);
  const r = spawnSync(
    process.execPath,
    [join(packageRoot(), 'bin', 'prescore.js'), 'gen', '--n', String(ds.n), '--dim', String(ds.dim), '--queries', String(ds.queries), '--filters', '--out', ds.dir],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (r.status !== 0) throw new Error(`prescore gen failed (exit ${r.status})`);
}

/** The batch build: `prescore build` of vectors with their fields and the dataset's mapping (a child process); its seconds. */
function batchBuild(ds: BenchDataset, base: string, fieldsFile: string, out: string): number {
  rmSync(out, { recursive: true, force: true });
  process.stderr.write(`bench:ingest ${ds.name}: prescore build into ${out}\n`);
  const t0 = performance.now();
  const built = spawnSync(
    process.execPath,
    [join(packageRoot(), 'bin', 'prescore.js'), 'build', '--input', base, '--fields', fieldsFile, '--mapping', join(ds.dir, 'mapping.json'), '--out', out],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PRESCORE_PROGRESS: '0' } },
  );
  if (built.status !== 0) throw new Error('prescore build failed');
  return (performance.now() - t0) / 1000;
}

async function runSize(ds: BenchDataset): Promise<Figures> {
  ensureFieldsDataset(ds);
  const base = join(ds.dir, 'base.fvecs');
  const fieldsFile = join(ds.dir, 'fields.jsonl');
  const vectors = (await readAllVectors(base)).vectors;
  const fields = readFileSync(fieldsFile, 'utf8').trim().split('\n');

  // 1. The batch build of the same rows; the recall phase's index A when that runs too.
  const buildDir = `${ds.indexDir}-ingest-build`;
  let buildSeconds: number | null = null;
  let ingest: IngestFigures | undefined;
  let recall: RecallFigures | undefined;
  try {
    if (phases.has('ingest')) buildSeconds = batchBuild(ds, base, fieldsFile, buildDir);
    if (phases.has('recall')) recall = await recallAfterDeletes(ds, vectors, fields, buildDir, buildSeconds);
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
  }
  if (phases.has('ingest')) ingest = await writeOverHttp(ds, vectors, fields, ds.n / buildSeconds!);
  return { size: ds.name, ...(ingest ? { ingest } : {}), ...(recall ? { recall } : {}) };
}

/** An index's committed state, read from its newest commit. */
function shapeOf(dir: string): IndexShape {
  const reader = DirectoryReader.open(dir);
  try {
    let docs = 0;
    let graphs = 0;
    for (const l of reader.leaves) {
      docs += l.reader.numVectors;
      if (l.reader.handle.graph !== null) graphs++;
    }
    return { docs, maxDoc: reader.maxDoc, segments: reader.leaves.length, graphs };
  } finally {
    reader.close();
  }
}

/**
 * Phase `recall` (steps 5-7 of the header): index A (all rows; `builtA` when step 1 built it,
 * else built here the same way), 20% of its ids deleted through an IndexWriter and merged away;
 * index B built from the surviving rows alone; recall@10 of both against exact top-10 over the
 * survivors.
 */
async function recallAfterDeletes(ds: BenchDataset, vectors: Float32Array, fields: string[], builtA: string, builtSeconds: number | null): Promise<RecallFigures> {
  const spec = JSON.parse(readFileSync(join(ds.dir, 'dataset.json'), 'utf8')) as { similarity: GenSimilarity };
  const aDir = builtA;
  const bDir = `${ds.indexDir}-ingest-recall-fresh`;
  const bInput = `${ds.indexDir}-ingest-recall-input`;
  try {
    const buildASeconds = builtSeconds ?? batchBuild(ds, join(ds.dir, 'base.fvecs'), join(ds.dir, 'fields.jsonl'), aDir);
    {
      const r = DirectoryReader.open(aDir);
      process.stderr.write(`bench:ingest ${ds.name}: A's recorded segment settings (the merge builds with them): ${r.commit.userData.get(SEGMENT_SETTINGS_KEY) ?? 'none'}\n`);
      r.close();
    }

    // Which rows go: a seeded partial Fisher-Yates shuffle picks exactly 20% of them.
    const deleteCount = Math.round(DELETE_FRACTION * ds.n);
    const order = Int32Array.from({ length: ds.n }, (_, i) => i);
    const rng = Rng.from(SEED, ds.n);
    for (let i = 0; i < deleteCount; i++) {
      const j = i + rng.nextInt(ds.n - i);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const deleted = new Uint8Array(ds.n);
    for (let i = 0; i < deleteCount; i++) deleted[order[i]!] = 1;
    const survivors: number[] = [];
    for (let row = 0; row < ds.n; row++) if (!deleted[row]) survivors.push(row);

    // B's input: the surviving rows' vectors and fields, in row order (B's ids: row numbers in that file).
    rmSync(bInput, { recursive: true, force: true });
    mkdirSync(bInput, { recursive: true });
    const survivorVectors = new Float32Array(survivors.length * ds.dim);
    survivors.forEach((row, j) => {
      survivorVectors.set(vectors.subarray(row * ds.dim, (row + 1) * ds.dim), j * ds.dim);
    });
    const bBase = join(bInput, 'base.fvecs');
    const bFields = join(bInput, 'fields.jsonl');
    await writeFvecs(bBase, survivorVectors, ds.dim);
    writeFileSync(bFields, `${survivors.map((row) => fields[row]!).join('\n')}\n`);
    const buildBSeconds = batchBuild(ds, bBase, bFields, bDir);
    const fresh = shapeOf(bDir);

    // Exact top-10 over the survivors: the generator's brute force over B's input, ids mapped back to rows.
    const { vectors: queryVectors, truth: genTruth } = await loadQueries(ds);
    const flatQueries = new Float32Array(queryVectors.length * ds.dim);
    queryVectors.forEach((q, i) => {
      flatQueries.set(q, i * ds.dim);
    });
    const tTruth = performance.now();
    const exact = await computeGroundTruth(Executor.get(), bBase, { n: survivors.length, dim: ds.dim, k: RECALL_K, similarity: spec.similarity }, flatQueries);
    const truth = queryVectors.map((_, q) => Array.from(exact.ids.subarray(q * exact.k, (q + 1) * exact.k), (j) => String(survivors[j]!)));
    process.stderr.write(
      `bench:ingest ${ds.name}: exact top-${RECALL_K} over ${survivors.length} survivors in ${((performance.now() - tTruth) / 1000).toFixed(1)} s (${exact.kernel})\n`,
    );
    // Cross-check: the generator's top-100 over all rows, less the deleted ones, starts with the same ten.
    let truthDisagreements = 0;
    truth.forEach((t, q) => {
      const kept = genTruth[q]!.filter((id) => !deleted[Number(id)]).slice(0, RECALL_K);
      if (kept.length < RECALL_K || kept.some((id, i) => id !== t[i])) truthDisagreements++;
    });

    const searchA = async (dir: string) => {
      const index = await openIndex(dir, { calibrate: 'first-use' });
      try {
        let sum = 0;
        let deletedHits = 0;
        let visited = 0;
        for (let q = 0; q < queryVectors.length; q++) {
          const { hits, stats } = await index.search(queryVectors[q]!, { k: RECALL_K });
          deletedHits += hits.filter((h) => deleted[Number(h.id)]).length;
          sum += recallAt(RECALL_K, hits, truth[q]!);
          visited += stats.visited;
        }
        return { recall: sum / queryVectors.length, deletedHits, visited: visited / queryVectors.length };
      } finally {
        await index.close();
      }
    };

    // A: delete 20% through the writer and commit (.liv files only; no merge policy, so nothing merges on its own).
    process.stderr.write(`bench:ingest ${ds.name}: deleting ${deleteCount} of ${ds.n} ids from A\n`);
    const writer = await openIndexWriter(aDir, { mergePolicy: null });
    let deleteCommitSeconds: number;
    let mergeSeconds: number;
    let deletesOnly: IndexShape;
    let beforeMerge: { recall: number; deletedHits: number; visited: number };
    try {
      const t0 = performance.now();
      for (let i = 0; i < deleteCount; i++) writer.deleteDocuments(String(order[i]));
      await writer.commit();
      deleteCommitSeconds = (performance.now() - t0) / 1000;
      if (writer.numDocs !== survivors.length) throw new Error(`A holds ${writer.numDocs} live docs after the deletions, expected ${survivors.length}`);
      deletesOnly = shapeOf(aDir);
      beforeMerge = await searchA(aDir);
      process.stderr.write(`bench:ingest ${ds.name}: A with deletions only: recall@${RECALL_K} ${beforeMerge.recall.toFixed(4)}; forceMerge(1)\n`);
      const t1 = performance.now();
      await writer.forceMerge(1);
      mergeSeconds = (performance.now() - t1) / 1000;
    } finally {
      await writer.close();
    }
    const merged = shapeOf(aDir);

    // A merged and B, query by query in turn (which goes first alternates), the same search options.
    const a = await openIndex(aDir, { calibrate: 'first-use' });
    const b = await openIndex(bDir, { calibrate: 'first-use' });
    let recallMerged = 0;
    let recallFresh = 0;
    let deletedHits = beforeMerge.deletedHits;
    const msA: number[] = [];
    const msB: number[] = [];
    let visitedMerged = 0;
    let visitedFresh = 0;
    let queriesDiffering = 0;
    try {
      for (let q = 0; q < 5; q++) {
        await a.search(queryVectors[q]!, { k: RECALL_K });
        await b.search(queryVectors[q]!, { k: RECALL_K });
      }
      for (let q = 0; q < queryVectors.length; q++) {
        let rowsA: string[] = [];
        let rowsB: string[] = [];
        for (const which of q % 2 === 0 ? ['a', 'b'] : ['b', 'a']) {
          const t0 = performance.now();
          const { hits, stats } = await (which === 'a' ? a : b).search(queryVectors[q]!, { k: RECALL_K });
          const ms = performance.now() - t0;
          if (which === 'a') {
            msA.push(ms);
            visitedMerged += stats.visited;
            deletedHits += hits.filter((h) => deleted[Number(h.id)]).length;
            recallMerged += recallAt(RECALL_K, hits, truth[q]!);
            rowsA = hits.map((h) => h.id);
          } else {
            msB.push(ms);
            visitedFresh += stats.visited;
            const asRows = hits.map((h) => ({ id: String(survivors[Number(h.id)]!) }));
            recallFresh += recallAt(RECALL_K, asRows, truth[q]!);
            rowsB = asRows.map((h) => h.id);
          }
        }
        if (rowsA.length !== rowsB.length || rowsA.some((id) => !rowsB.includes(id))) queriesDiffering++;
      }
    } finally {
      await a.close();
      await b.close();
    }
    recallMerged /= queryVectors.length;
    recallFresh /= queryVectors.length;
    return {
      queries: queryVectors.length,
      seed: String(SEED),
      deleted: deleteCount,
      survivors: survivors.length,
      buildASeconds,
      buildBSeconds,
      deleteCommitSeconds,
      mergeSeconds,
      deletesOnly,
      merged,
      fresh,
      recallDeletesOnly: beforeMerge.recall,
      recallMerged,
      recallFresh,
      difference: recallMerged - recallFresh,
      searchMsMerged: summarize(msA).mean,
      searchMsFresh: summarize(msB).mean,
      visitedDeletesOnly: beforeMerge.visited,
      visitedMerged: visitedMerged / queryVectors.length,
      visitedFresh: visitedFresh / queryVectors.length,
      queriesDiffering,
      deletedHits,
      truthDisagreements,
    };
  } finally {
    rmSync(bDir, { recursive: true, force: true });
    rmSync(bInput, { recursive: true, force: true });
  }
}

/**
 * A row's document line in a `_bulk` body: its fields (without the closing brace) and its vector,
 * each float with 9 significant digits (always enough to give the same float32 back): 0.35 ms per
 * 768-dim row against 2.4 ms for the shortest form, which made writing the 1M x 768 stream a
 * 40-minute step. Clients send no shorter: a float32 written as a double takes up to 17 digits.
 */
function documentLine(vectors: Float32Array, dim: number, fields: string[], row: number): string {
  const v = vectors.subarray(row * dim, (row + 1) * dim);
  return `${fields[row]!.slice(0, -1)},"vector":[${Array.from(v, (x) => x.toPrecision(9)).join(',')}]}`;
}

/** A dataset's pre-encoded `_bulk` stream: the file, and where each row's two lines start (n + 1 offsets, the last one the file's size). */
interface BulkFile {
  readonly path: string;
  readonly offsets: Float64Array;
}

/**
 * The `_bulk` stream of every row (`{"index":{"_id":"<row>"}}` and its document line), written
 * once beside the dataset and reused while bulk.json matches the dataset and the files' sizes.
 * Per-row offsets (bulk.offsets, n + 1 float64) rather than per-batch ones, so any `--batch`
 * reads its bodies from the same file. Written a chunk of ~8 MB at a time (1M x 1024 is ~11 GB of
 * text), once instead of inside every timed run.
 */
function ensureBulkFile(ds: BenchDataset, vectors: Float32Array, fields: string[]): BulkFile {
  const path = join(ds.dir, 'bulk.ndjson');
  const offsetsPath = join(ds.dir, 'bulk.offsets');
  const sidecar = join(ds.dir, 'bulk.json');
  // What the stream was written from: a regenerated dataset (other sizes or times) writes it again.
  const source = [join(ds.dir, 'base.fvecs'), join(ds.dir, 'fields.jsonl')].map((f) => {
    const st = statSync(f);
    return { file: basename(f), size: st.size, mtimeMs: st.mtimeMs };
  });
  const expected = JSON.stringify({ format: 2, n: ds.n, dim: ds.dim, source });
  if (existsSync(sidecar) && existsSync(path) && existsSync(offsetsPath)) {
    const { bytes, ...written } = JSON.parse(readFileSync(sidecar, 'utf8')) as { bytes: number };
    if (JSON.stringify(written) === expected && statSync(path).size === bytes && statSync(offsetsPath).size === (ds.n + 1) * 8) {
      const raw = readFileSync(offsetsPath);
      const offsets = new Float64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
      if (offsets[ds.n] === bytes) return { path, offsets };
    }
  }

  process.stderr.write(`bench:ingest ${ds.name}: writing the _bulk stream of ${ds.n} rows into ${path}\n`);
  rmSync(sidecar, { force: true });
  const t0 = performance.now();
  const offsets = new Float64Array(ds.n + 1);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  let bytes = 0;
  try {
    const flush = (buf: Buffer) => {
      for (let done = 0; done < buf.length; ) done += writeSync(fd, buf, done, buf.length - done);
    };
    const tenth = Math.ceil(ds.n / 10);
    let chunk: string[] = [];
    let chunkBytes = 0;
    for (let row = 0; row < ds.n; row++) {
      offsets[row] = bytes;
      const pair = `{"index":{"_id":"${row}"}}\n${documentLine(vectors, ds.dim, fields, row)}\n`;
      const len = Buffer.byteLength(pair);
      bytes += len;
      chunkBytes += len;
      chunk.push(pair);
      if (chunkBytes >= 8 << 20 || row === ds.n - 1) {
        flush(Buffer.from(chunk.join('')));
        chunk = [];
        chunkBytes = 0;
      }
      if ((row + 1) % tenth === 0 || row === ds.n - 1) {
        process.stderr.write(`  ${row + 1} / ${ds.n} rows, ${(bytes / 2 ** 30).toFixed(2)} GiB, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
      }
    }
    offsets[ds.n] = bytes;
    // On disk before the timed phase: otherwise the kernel writes these GBs of dirty pages back
    // while the server fdatasyncs its translog.
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  writeFileSync(offsetsPath, new Uint8Array(offsets.buffer));
  renameSync(tmp, path);
  writeFileSync(sidecar, JSON.stringify({ ...JSON.parse(expected), bytes }));
  process.stderr.write(
    `bench:ingest ${ds.name}: _bulk stream written, ${(bytes / 2 ** 30).toFixed(2)} GiB in ${((performance.now() - t0) / 1000).toFixed(1)} s (${((performance.now() - t0) / ds.n).toFixed(2)} ms per row)\n`,
  );
  return { path, offsets };
}

/**
 * Reads the whole file once (into the page cache, when it fits), so the clients' reads while
 * timing do not take the disk from the server's translog fdatasyncs; its seconds.
 */
function warmRead(path: string): number {
  const t0 = performance.now();
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(8 << 20);
    for (let pos = 0; ; ) {
      const got = readSync(fd, buf, 0, buf.length, pos);
      if (got === 0) break;
      pos += got;
    }
  } finally {
    closeSync(fd);
  }
  return (performance.now() - t0) / 1000;
}

/** Steps 2-4 of the header: a new empty index served, written through `_bulk`, searched meanwhile and idle, updated. */
async function writeOverHttp(ds: BenchDataset, vectors: Float32Array, fields: string[], buildDocsPerSec: number): Promise<IngestFigures> {
  // The bodies, pre-encoded before the server starts (its CPU and disk are not shared yet).
  const bulkFile = ensureBulkFile(ds, vectors, fields);
  process.stderr.write(`bench:ingest ${ds.name}: ${bulkFile.path} read through in ${warmRead(bulkFile.path).toFixed(1)} s\n`);
  const mappingJson = JSON.parse(readFileSync(join(ds.dir, 'mapping.json'), 'utf8')) as Record<string, unknown>;
  const spec = JSON.parse(readFileSync(join(ds.dir, 'dataset.json'), 'utf8')) as { similarity: string };
  const queries = (await readAllVectors(join(ds.dir, 'query.fvecs'))).vectors;

  // 2. A new empty index, served; then _bulk from CLIENTS clients.
  const liveDir = `${ds.indexDir}-ingest-live`;
  rmSync(liveDir, { recursive: true, force: true });
  const creator = await openIndexWriter(liveDir, {
    create: { dims: ds.dim, similarity: VectorSimilarityFunction.fromName(spec.similarity), mapping: Mapping.parse(mappingJson) },
  });
  await creator.close();
  const server = await ColdServer.start({
    argv: [
      ...(process.env.PRESCORE_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      join(packageRoot(), 'bin', 'prescore.js'),
      'serve',
      '--index',
      liveDir,
      '--port',
      '0',
      '--name',
      'live',
      // A background recall calibration at start would share the cores with what is measured.
      '--calibrate',
      'first-use',
    ],
    coldFiles: [],
    limit: { kind: 'fixed', bytes: 0 },
    cgroup: { ok: false, reason: 'warm' },
    name: 'ingest',
  });
  try {
    const url = server.url;
    let retries = 0;
    const post = async (path: string, body: string | Uint8Array, contentType = 'application/json') => {
      for (let attempt = 1; ; attempt++) {
        let res: Response;
        try {
          res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
        } catch (e) {
          // A keep-alive connection the server closed as the client reused it: every request here is
          // idempotent (explicit ids), so send it again, as the official clients do; counted.
          if (attempt >= 3) throw e;
          retries++;
          continue;
        }
        if (res.status === 429) {
          await res.arrayBuffer();
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        const json = (await res.json()) as Record<string, unknown>;
        if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
        return json;
      }
    };
    const docLine = (row: number) => documentLine(vectors, ds.dim, fields, row);
    const searchBody = (q: number) =>
      JSON.stringify({ knn: { field: 'vector', query_vector: Array.from(queries.subarray(q * ds.dim, (q + 1) * ds.dim), shortestFloat32), k: 10, num_candidates: 100 } });

    let next = 0;
    let writing = true;
    const { offsets } = bulkFile;
    const bulk = await open(bulkFile.path, 'r');
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    const client = async () => {
      for (;;) {
        const from = next;
        if (from >= ds.n) return;
        next = Math.min(ds.n, from + BATCH);
        // The batch's rows are one byte range of the pre-encoded stream, sent as read.
        const start = offsets[from]!;
        const body = Buffer.allocUnsafe(offsets[next]! - start);
        for (let got = 0; got < body.length; ) {
          const { bytesRead } = await bulk.read(body, got, body.length - got, start + got);
          if (bytesRead === 0) throw new Error(`${bulkFile.path} ends at byte ${start + got}, before row ${next}`);
          got += bytesRead;
        }
        const answer = await post('/live/_bulk', body, 'application/x-ndjson');
        if (answer.errors) throw new Error(`bulk errors: ${JSON.stringify(answer).slice(0, 400)}`);
      }
    };
    const busy: number[] = [];
    const searcher = async (out: number[], until: () => boolean) => {
      for (let q = 0; until(); q = (q + 1) % 200) {
        const s = performance.now();
        await post('/live/_search', searchBody(q));
        out.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const visible: number[] = [];
    const markers = async () => {
      for (let m = 0; writing; m++) {
        await new Promise((r) => setTimeout(r, 2000));
        if (!writing) return;
        const id = `marker-${m}`;
        await post(`/live/_doc/${id}`, docLine(m));
        const acked = performance.now();
        for (;;) {
          const count = await post('/live/_count', JSON.stringify({ query: { ids: { values: [id] } } }));
          if (count.count === 1) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        visible.push(performance.now() - acked);
      }
    };
    process.stderr.write(`bench:ingest ${ds.name}: _bulk x ${CLIENTS} clients, ${BATCH} docs per request\n`);
    // A failed search or marker ends the run, after the server is stopped (the finally below): a
    // rejection left unhandled until the clients finished took the bench down with the server
    // still running.
    let backgroundError: unknown = null;
    const background = [searcher(busy, () => writing), markers()].map((p) =>
      p.catch((e: unknown) => {
        backgroundError ??= e;
        writing = false;
        next = ds.n; // the clients stop at their next batch
      }),
    );
    const progress = setInterval(() => process.stderr.write(`  ${next} / ${ds.n} sent\n`), 10_000);
    try {
      await Promise.all(Array.from({ length: CLIENTS }, client));
    } finally {
      await bulk.close();
    }
    const ingestSeconds = (performance.now() - t1) / 1000;
    const cpu = process.cpuUsage(cpu0);
    clearInterval(progress);
    writing = false;
    await Promise.all(background);
    if (backgroundError !== null) throw backgroundError;
    await post('/live/_refresh', '{}');

    // 3. The same searches on the idle server.
    const idle: number[] = [];
    const idleUntil = performance.now() + Math.max(10_000, Math.min(30_000, busy.length * 60));
    await searcher(idle, () => performance.now() < idleUntil);
    process.stderr.write(`bench:ingest ${ds.name}: ${retries} requests sent again after a connection error\n`);
    const segments = ((await (await fetch(`${url}/v1/indexes`)).json()) as { indexes: { segments: unknown[] }[] }).indexes[0]!.segments.length;

    // 4. Metadata-only updates: bytes the server wrote per update.
    const written = () => Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${server.pid}/io`, 'utf8'))![1]);
    const w0 = written();
    for (let i = 0; i < 1000; i++) await post(`/live/_update/${i * 7}`, JSON.stringify({ doc: { u: 0.5 } }));
    // Committed, so that the bytes count the segment the updates are written to, not the translog only.
    await post('/live/_flush', '{}');
    const bytesPerMetadataUpdate = (written() - w0) / 1000;
    const [seen, whileWriting, afterwards] = [summarize(visible), summarize(busy), summarize(idle)];
    return {
      buildDocsPerSec,
      ingestDocsPerSec: ds.n / ingestSeconds,
      clientCpuMsPerDoc: (cpu.user + cpu.system) / 1000 / ds.n,
      visibleP50Ms: seen.p50,
      visibleP99Ms: seen.p99,
      searchBusyP50: whileWriting.p50,
      searchBusyP99: whileWriting.p99,
      searchIdleP50: afterwards.p50,
      searchIdleP99: afterwards.p99,
      segments,
      bytesPerMetadataUpdate,
    };
  } finally {
    await server.stop();
    rmSync(liveDir, { recursive: true, force: true });
  }
}
