import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/**
 * Memory you can count on: an open index holds its codes and graphs once per process, in arenas
 * every worker shares, so more workers add only their scratch. Measured as anonymous memory
 * (RssAnon) in a child process (the test process's own heap would blur it), after opening and
 * searching on every worker, against the same child's pool before the open (so the workers' own
 * cost is excluded): a pool that has searched a small warm-up index, so its workers' code and
 * heaps have already grown to what searching takes.
 *
 * The index is the 200k x 768 from the project's generator, in 65,536-doc segments. A
 * construction beam of 16 (default 100) only makes the build cheaper: the resident layout is the
 * same (fixed 2M + 1 ints per node at M = 16), and neighbour lists are as full.
 */
const N = 200_000;
const DIMS = 768;
const MiB = 2 ** 20;

interface Probe {
  readonly threads: number;
  readonly idle: number;
  readonly afterOpen: number;
  readonly afterSearch: number;
  readonly openMs: number;
  readonly firstMs: number;
  readonly tenthMs: number;
  readonly memory: { readonly codes: number; readonly graphs: number; readonly scratchPerWorker: number };
}

let index: TestIndex;
/** A small index of the same dims that the probe opens and searches before measuring (the pool's own costs). */
let warmup: TestIndex;
let queriesFile: string;

beforeAll(async () => {
  warmup = await buildTestIndex({ n: 3000, dims: DIMS, segmentDocs: 3000, flatThreshold: 0, queries: 1, seed: '11' });
  index = await buildTestIndex({ n: N, dims: DIMS, segmentDocs: 65_536, flatThreshold: 0, queries: 12, extra: { beamWidth: 16 } });
  queriesFile = join(index.root, 'queries.f32');
  writeFileSync(queriesFile, index.queries);
}, 1_200_000);

afterAll(() => {
  index?.cleanup();
  warmup?.cleanup();
});

function probe(threads: number): Probe {
  const script = fileURLToPath(new URL('./support/residentMemoryProbe.mjs', import.meta.url));
  const r = spawnSync(process.execPath, ['--expose-gc', script, index.dir, String(threads), queriesFile, warmup.dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`probe with ${threads} threads failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Probe;
}

function filesBytes(ext: string): number {
  return readdirSync(index.dir)
    .filter((f) => f.endsWith(ext))
    .reduce((a, f) => a + statSync(join(index.dir, f)).size, 0);
}

describe(`resident memory of a ${N / 1000}k x ${DIMS} index`, () => {
  it('4 workers add at most 3 x 16 MiB over 1 worker, and in all at most 1.25x (.veq + 132 B/vector of level-0 lists + ids)', () => {
    const one = probe(1);
    const four = probe(4);
    const added1 = one.afterSearch - one.idle;
    const added4 = four.afterSearch - four.idle;
    const files = filesBytes('.veq') + 132 * N + filesBytes('.ids');
    const report = {
      added1MiB: +(added1 / MiB).toFixed(1),
      added4MiB: +(added4 / MiB).toFixed(1),
      perExtraWorkerMiB: +((added4 - added1) / 3 / MiB).toFixed(2),
      boundMiB: +((1.25 * files) / MiB).toFixed(1),
      ratio4: +(added4 / files).toFixed(3),
      openMs: [Math.round(one.openMs), Math.round(four.openMs)],
      firstVsTenthMs: [+four.firstMs.toFixed(2), +four.tenthMs.toFixed(2)],
    };
    console.log(`resident memory: ${JSON.stringify(report)}`);
    expect(added4 - added1).toBeLessThanOrEqual(3 * 16 * MiB);
    expect(added1).toBeLessThanOrEqual(1.25 * files);
    expect(added4).toBeLessThanOrEqual(1.25 * files);
    // What the index says it holds is what was measured, give or take the workers' heaps: the
    // baseline is read on a pool whose heaps may still hold the warm-up's garbage, and a collection
    // between the two readings has been seen to give back 4.3 MB of it (declared 50.6 MB, measured
    // 46.3 MB on a loaded machine), so the measurement may fall short of the declaration by 8 MiB.
    expect(four.memory.codes).toBe(N * (DIMS / 8 + 16));
    expect(four.memory.codes + four.memory.graphs).toBeLessThanOrEqual(added4 + 8 * MiB);
  }, 600_000);
});
