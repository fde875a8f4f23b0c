import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { TieredMergePolicy } from '../segments/index/TieredMergePolicy.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';

/**
 * Concurrent writers, readers and merges while the disk fails now and then (Lucene's
 * MockDirectoryWrapper with random I/O exceptions): in spells, every write, fsync and rename the
 * writer makes in this process fails with EIO at a seeded rate of 4%. Nothing may hang, a search may
 * never return a wrong hit (a document whose vector, source and id do not belong together, a
 * deleted version, or a state its id never had), and once the faults stop, the reopened index
 * holds every acknowledged write exactly. (Segment codes and graphs, and merged segments, are
 * written on the executor's worker threads, whose writes this does not reach.)
 */
const faults = vi.hoisted(() => ({ rate: 0, injected: 0, state: 20261203 }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const roll = () => {
    faults.state = (Math.imul(faults.state, 1103515245) + 12345) >>> 0;
    return faults.state / 2 ** 32;
  };
  const failure = (what: string): Error | null => {
    if (faults.rate === 0 || roll() >= faults.rate) return null;
    faults.injected++;
    return Object.assign(new Error(`EIO: i/o error (injected), ${what}`), { code: 'EIO' });
  };
  const sync =
    <A extends unknown[], R>(what: string, f: (...a: A) => R) =>
    (...a: A): R => {
      const e = failure(what);
      if (e) throw e;
      return f(...a);
    };
  /** A callback-style call: the failure goes to its callback, as the real one reports it. */
  const async =
    (what: string, f: (...a: never[]) => unknown) =>
    (...a: unknown[]) => {
      const e = failure(what);
      if (e) return void process.nextTick(a.at(-1) as (e: Error) => void, e);
      return (f as (...x: unknown[]) => unknown)(...a);
    };
  const faulty = {
    ...fs,
    writeSync: sync('write', fs.writeSync),
    fsyncSync: sync('fsync', fs.fsyncSync),
    renameSync: sync('rename', fs.renameSync),
    write: async('write', fs.write as never),
    fdatasync: async('fdatasync', fs.fdatasync as never),
  };
  return { ...faulty, default: faulty };
});

const roots: string[] = [];
afterAll(() => {
  faults.rate = 0;
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const DIMS = 16;
/** Value n's vector: seeded pseudo-random, so no two values are near duplicates. */
const vector = (n: number) => {
  let x = (n + 1) * 2654435761;
  return Array.from({ length: DIMS }, () => {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return Math.fround(x / 2 ** 32 + 0.05);
  });
};
const cosine = (a: readonly number[], b: readonly number[]) => {
  let d = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return d / Math.sqrt(na * nb);
};
/** Lucene's cosine score. */
const score = (a: readonly number[], b: readonly number[]) => (1 + cosine(a, b)) / 2;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** An id's state: the value it holds, or null (deleted or never written). */
type State = number | null;

describe('concurrent writers, readers and merges with injected I/O errors', () => {
  it('never hangs, never returns a wrong hit, and keeps every acknowledged write', async () => {
    const root = mkdtempSync(join(tmpdir(), 'prescore-faults-'));
    roots.push(root);
    const dir = join(root, 'index');
    const writer = await openIndexWriter(dir, {
      create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE },
      ramBufferBytes: 4 * 1024, // a flush every ~40 docs
      mergePolicy: new TieredMergePolicy({ segmentsPerTier: 3, maxMergeAtOnce: 3 }),
    });

    // Per id: every value it ever held (what a hit may show) and the ledger (what it must hold).
    const history = new Map<string, Set<number>>();
    const acked = new Map<string, State>();
    /** Writes not covered by a successful sync yet, per id, in order: any of them may survive, whole. */
    const pending = new Map<string, State[]>();
    let value = 0;
    const counts = { syncOk: 0, syncFailed: 0, commitOk: 0, commitFailed: 0, searches: 0, hits: 0 };

    const writerLoop = async (w: number) => {
      const ids = Array.from({ length: 8 }, (_, i) => `w${w}-${i}`);
      let unsynced: [string, State][] = [];
      for (let step = 0; step < 80; step++) {
        const id = ids[(step * 5 + w) % ids.length]!;
        let state: State;
        if (step % 5 === 4) {
          writer.deleteDocument(id);
          state = null;
        } else {
          state = ++value;
          writer.updateDocument(id, { vector: vector(state), n: state, id });
          if (!history.has(id)) history.set(id, new Set());
          history.get(id)!.add(state);
        }
        unsynced.push([id, state]);
        pending.set(id, [...(pending.get(id) ?? []), state]);
        try {
          await writer.sync();
          counts.syncOk++;
          // Acknowledged: everything this loop wrote so far is durable; its last state per id wins.
          for (const [i, s] of unsynced) {
            acked.set(i, s);
            pending.set(i, []);
          }
          unsynced = [];
        } catch {
          counts.syncFailed++;
        }
        await tick();
      }
    };

    const readerLoop = async () => {
      for (let round = 0; round < 30; round++) {
        // The disk fails in spells (every other round), so merges, which write much, finish in between.
        faults.rate = round % 2 === 0 ? 0.04 : 0;
        try {
          if (round % 7 === 6) await writer.forceMerge(2);
          else await writer.commit();
          counts.commitOk++;
        } catch {
          counts.commitFailed++;
        }
        const index = await openIndex(dir);
        try {
          for (const [id, values] of [...history].slice(round % 3, (round % 3) + 4)) {
            const query = vector([...values].at(-1)!);
            const result = await index.search(Float32Array.from(query), { k: 10, source: true });
            counts.searches++;
            const seen = new Set<string>();
            for (const hit of result.hits) {
              counts.hits++;
              const n = hit.source!.n as number;
              expect(hit.source!.id, `hit ${hit.id} of a search for ${id}`).toBe(hit.id); // its source is its own
              expect(history.get(hit.id)!.has(n), `${hit.id} never held ${n}`).toBe(true); // a state it had
              expect(hit.score).toBeCloseTo(score(query, vector(n)), 4); // its vector goes with its source
              expect(seen.has(hit.id), `${hit.id} twice: a deleted version came back`).toBe(false);
              seen.add(hit.id);
            }
          }
        } finally {
          await index.close();
        }
        await tick();
      }
    };

    await Promise.all([writerLoop(0), writerLoop(1), writerLoop(2), readerLoop()]);
    expect(faults.injected).toBeGreaterThan(5);
    expect(counts.syncFailed + counts.commitFailed).toBeGreaterThan(0);
    expect(counts.syncOk).toBeGreaterThan(100);
    expect(counts.commitOk).toBeGreaterThan(0);
    expect(counts.hits).toBeGreaterThan(50);
    expect(writer.mergeStats.merges).toBeGreaterThan(0); // merges ran among the writes and faults

    // The faults stop; the writer closes (its last commit may still report a failure a
    // background flush met: the translog holds the writes then) and the index is reopened.
    faults.rate = 0;
    await writer.close().catch(() => {});
    const reopened = await openIndexWriter(dir);
    try {
      for (const [id, state] of acked) {
        const doc = reopened.getDocument(id);
        const got: State = doc === null ? null : (JSON.parse(new TextDecoder().decode(doc.source)) as { n: number }).n;
        const allowed = [state, ...(pending.get(id) ?? [])];
        expect(allowed, `${id} holds ${got}`).toContain(got);
        if (got !== null) expect(Array.from(doc!.vector)).toEqual(vector(got));
      }
    } finally {
      await reopened.close();
    }
  }, 120_000);
});
