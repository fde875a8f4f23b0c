import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openIndex } from '../src/api/openIndex.js';
import type { SearchHit, VectorIndex } from '../src/api/types.js';
import { Executor } from '../src/executor/Executor.js';
import { planArenas } from '../segments/index/Arena.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { checkFits } from '../segments/index/MemoryBudget.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/**
 * Shared arenas: an index's codes and graphs are loaded once per process into shared
 * WebAssembly memories that every worker searches; an arena holds whole segments, so a small
 * arena size spreads an index over several (the real limit is wasm32's 4 GiB).
 */
let index: TestIndex;

beforeAll(async () => {
  // 5 segments: 4 with graphs, the last one small enough to be scanned exhaustively.
  index = await buildTestIndex({ n: 4600, dims: 72, segmentDocs: 1000, flatThreshold: 700, queries: 25 });
}, 180_000);

afterAll(async () => {
  index?.cleanup();
  await Executor.shutdown();
});

function queries(): Float32Array[] {
  const d = index.dims;
  return Array.from({ length: index.queries.length / d }, (_, i) => index.queries.subarray(i * d, (i + 1) * d));
}

async function searchAll(ix: VectorIndex, k: number): Promise<(readonly SearchHit[])[]> {
  const out: (readonly SearchHit[])[] = [];
  for (const q of queries()) out.push((await ix.search(q, { k, numCandidates: 60 })).hits);
  return out;
}

describe('arenas', () => {
  it('plans one arena for a small index, and one per segment or two when the arena size is small', () => {
    const handles = DirectoryReader.open(index.dir).leaves.map((l) => l.reader.handle);
    expect(planArenas(handles, { threads: 2 }).arenas.length).toBe(1);
    const perSegment = planArenas(handles, { threads: 2, arenaBytes: 200_000 });
    expect(perSegment.arenas.length).toBeGreaterThanOrEqual(3);
    for (const a of perSegment.arenas) expect(a.dataBytes).toBeLessThanOrEqual(64 + 200_000);
    // Every segment lies in one arena, and blocks of one arena do not overlap.
    const byArena = new Map<number, [number, number][]>();
    for (const p of perSegment.placements) {
      const end = p!.records + p!.bytes.codes + p!.bytes.graph;
      const spans = byArena.get(p!.arena) ?? [];
      for (const [s, e] of spans) expect(p!.records >= e || end <= s).toBe(true);
      spans.push([p!.records, end]);
      byArena.set(p!.arena, spans);
    }
    expect(() => planArenas(handles, { threads: 2, arenaBytes: 10_000 })).toThrow(/more than an arena holds/);
  });

  it('spread over several arenas, an index returns exactly the hits of a single-arena open', async () => {
    // One after the other: open together, the second would share the first's segments (ResidentCores).
    const one = await openIndex(index.dir, { threads: 2 });
    const expected: (readonly SearchHit[])[][] = [];
    try {
      expect((await one.describe()).memory.arenas).toBe(1);
      for (const k of [1, 10, 40]) expected.push(await searchAll(one, k));
    } finally {
      await one.close();
    }
    const many = await openIndex(index.dir, { threads: 2, arenaBytes: 200_000 });
    try {
      expect((await many.describe()).memory.arenas).toBeGreaterThanOrEqual(3);
      for (const [i, k] of [1, 10, 40].entries()) expect(await searchAll(many, k)).toEqual(expected[i]);
    } finally {
      await many.close();
    }
  });

  it('reports the bytes it holds: codes as in the .veq files, level-0 lists of 2M + 1 ints per vector', async () => {
    const ix = await openIndex(index.dir, { threads: 2 });
    try {
      const d = await ix.describe();
      const codesInFiles = d.segments.reduce((a, s) => a + s.bytes.codes, 0);
      expect(d.memory.state).toBe('held');
      expect(d.memory.codes).toBe(codesInFiles);
      expect(d.memory.codes).toBe(index.n * (Math.ceil(index.dims / 8) + 16));
      const graphDocs = d.segments.filter((s) => s.hasGraph).reduce((a, s) => a + s.docs, 0);
      // Level 0 at M = 16: 33 ints per node; upper levels and alignment add a few percent.
      expect(d.memory.graphs).toBeGreaterThanOrEqual(132 * graphDocs);
      expect(d.memory.graphs).toBeLessThan(1.15 * 132 * graphDocs);
      expect(d.memory.workers).toBe(2);
      expect(d.memory.scratchPerWorker).toBeGreaterThan(0);
      expect(d.memory.total).toBe(d.memory.codes + d.memory.graphs + 2 * d.memory.scratchPerWorker);
    } finally {
      await ix.close();
    }
  });
});

describe('verified open', () => {
  /** A copy of the index with one byte flipped in the middle of the first file with this extension. */
  function corruptCopy(ext: string): { dir: string; file: string; cleanup: () => void } {
    const dir = join(index.root, `corrupt-${ext}`);
    rmSync(dir, { recursive: true, force: true });
    cpSync(index.dir, dir, { recursive: true });
    const file = readdirSync(dir)
      .filter((f) => f.endsWith(`.${ext}`))
      .sort()[0];
    const path = join(dir, file);
    const bytes = readFileSync(path);
    const at = Math.floor(statSync(path).size / 2);
    bytes[at] ^= 0x10;
    writeFileSync(path, bytes);
    return { dir, file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }

  for (const ext of ['veq', 'vex']) {
    it(`a flipped byte in the middle of a .${ext} fails open with an error naming the file`, async () => {
      const c = corruptCopy(ext);
      try {
        const err = await openIndex(c.dir, { threads: 2 }).then(
          () => null,
          (e: unknown) => e as Error,
        );
        expect(err).not.toBeNull();
        expect(err!.message).toContain(c.file);
        expect(err!.message).toMatch(/checksum failed/);
      } finally {
        c.cleanup();
      }
    });
  }
});

describe('memory budget', () => {
  it('an index that cannot fit fails before anything is allocated, giving the bytes needed', () => {
    const budget = { limit: 8 * 2 ** 30, available: 2 * 2 ** 30, source: 'cgroup v1' as const };
    expect(() => checkFits(3 * 2 ** 30, 'index /x', budget)).toThrow(
      /index \/x needs 3221225472 bytes \(3\.00 GiB\) of memory, but only 2147483648 bytes \(2\.00 GiB\) are available \(a cgroup v1 memory limit of 8\.00 GiB\)/,
    );
    expect(() => checkFits(2 ** 30, 'index /x', budget)).not.toThrow();
  });
});
