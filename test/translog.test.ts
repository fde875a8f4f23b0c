import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { readLatestCommit } from '../segments/index/CommitPoint.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { packageRoot } from '../src/executor/packageRoot.js';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { Translog, translogFileName, type TranslogOp } from '../segments/index/Translog.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';

/**
 * The translog (write-ahead log): what `sync()` acknowledged survives a crash and is replayed
 * when the index is opened again; a torn tail is cut, never replayed; concurrent syncs share
 * their fdatasyncs (group commit).
 */
const roots: string[] = [];
const temp = () => {
  const root = mkdtempSync(join(tmpdir(), 'prescore-translog-'));
  roots.push(root);
  return root;
};
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const indexOp = (seqNo: number): TranslogOp => ({
  kind: 'index',
  seqNo,
  version: 1,
  id: `d${seqNo}`,
  source: new TextEncoder().encode(`{"n":${seqNo}}`),
  vector: Float32Array.of(seqNo, 1, 2),
});

describe('Translog', () => {
  it('gives back every synced op in order, and continues in a new generation', async () => {
    const dir = temp();
    const log = Translog.create(dir);
    for (let i = 0; i < 10; i++) log.add(i % 3 === 2 ? { kind: 'delete', seqNo: i, version: 2, id: `d${i - 1}` } : indexOp(i));
    await log.sync();
    await log.close();
    const { translog, ops, cutBytes } = Translog.open(dir, log.uuid, 1);
    expect(cutBytes).toBe(0);
    expect(ops.map((o) => o.seqNo)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ops[2]).toEqual({ kind: 'delete', seqNo: 2, version: 2, id: 'd1' });
    expect(ops[4]).toEqual(indexOp(4));
    expect(translog.generation).toBe(2);
    await translog.close();
  });

  it.each([
    ['a last op cut short', (path: string) => writeFileSync(path, readFileSync(path).subarray(0, statSync(path).size - 5))],
    ['a flipped byte in the last op', (path: string) => flipByte(path, statSync(path).size - 12)],
    ['garbage after the last op', (path: string) => appendFileSync(path, Buffer.from([7, 0, 0, 0, 1, 2, 3]))],
  ])('cuts a torn tail (%s) and keeps every op before it', async (_name, damage) => {
    const dir = temp();
    const log = Translog.create(dir);
    for (let i = 0; i < 5; i++) log.add(indexOp(i));
    await log.sync();
    await log.close();
    const path = join(dir, translogFileName(1));
    const whole = statSync(path).size;
    damage(path);
    const { translog, ops, cutBytes } = Translog.open(dir, log.uuid, 1);
    expect(cutBytes).toBeGreaterThan(0);
    expect(ops.map((o) => o.seqNo)).toEqual(_name === 'garbage after the last op' ? [0, 1, 2, 3, 4] : [0, 1, 2, 3]);
    expect(statSync(path).size).toBeLessThanOrEqual(whole);
    await translog.close();
  });

  it('refuses a log of another index, naming the file', async () => {
    const dir = temp();
    const log = Translog.create(dir);
    log.add(indexOp(0));
    await log.close();
    expect(() => Translog.open(dir, new Uint8Array(16), 1)).toThrow(CorruptIndexException);
    expect(() => Translog.open(dir, new Uint8Array(16), 1)).toThrow(/translog-1\.tlog/);
  });

  it('covers many concurrent syncs with a few fdatasyncs (group commit)', async () => {
    const dir = temp();
    const log = Translog.create(dir);
    const syncs: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      log.add(indexOp(i));
      syncs.push(log.sync());
    }
    await Promise.all(syncs);
    expect(log.syncCalls).toBeLessThanOrEqual(3);
    await log.close();
    expect(Translog.open(dir, log.uuid, 1).ops).toHaveLength(200);
  });
});

describe('IndexWriter recovery', () => {
  const DIMS = 8;
  const cosine = { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE } };
  const vector = (n: number) => Array.from({ length: DIMS }, (_, j) => Math.cos(n * 0.7 + j) + 1.5);

  /** The child's op i: on id `d(i mod 40)`, a delete when i mod 9 = 4, else an index of `{ n: i }`. */
  const idOf = (i: number) => `d${i % 40}`;
  const isDelete = (i: number) => i % 9 === 4;

  /**
   * Crashes a writer (SIGKILL once `batches` acknowledgements are read), reopens the index and
   * checks it against the model: the index must hold exactly the state after every op up to
   * some point P at or past the last acknowledged op (each batch is acknowledged after its sync,
   * so P is at most one batch further: those ops may be durable without their acknowledgement
   * having been read). Returns the new model and what the reopening replayed.
   */
  async function crashAndCheck(dir: string, model: ReadonlyMap<string, number>, start: number, batches: number, powerLoss: number | null = null) {
    const child = spawnWriter(dir, start);
    await child.untilAcked(batches);
    child.kill();
    const { lines, durable } = await child.exited;
    const lastAcked = start + 5 * lines - 1;
    const damaged = powerLoss === null ? 0 : losePower(dir, durable, powerLoss);
    const writer = await openIndexWriter(dir, cosine);
    const recovered = writer.recovered;
    const actual = new Map<string, number>();
    for (let k = 0; k < 40; k++) {
      const got = writer.getDocument(`d${k}`);
      if (got !== null) actual.set(`d${k}`, (JSON.parse(new TextDecoder().decode(got.source)) as { n: number }).n);
    }
    await writer.close();
    const state = new Map(model);
    for (let i = start; i <= lastAcked; i++) isDelete(i) ? state.delete(idOf(i)) : state.set(idOf(i), i);
    const candidates = [new Map(state)];
    for (let i = lastAcked + 1; i <= lastAcked + 5; i++) {
      isDelete(i) ? state.delete(idOf(i)) : state.set(idOf(i), i);
      candidates.push(new Map(state));
    }
    const match = candidates.find((c) => c.size === actual.size && [...c].every(([id, n]) => actual.get(id) === n));
    expect(match, `recovered ${JSON.stringify([...actual].sort())} after ${lines} acknowledged batches`).toBeDefined();
    return { model: match!, recovered, damaged };
  }

  it('replays what was synced but not committed when the writer is opened again', async () => {
    const dir = join(temp(), 'index');
    const { model, recovered } = await crashAndCheck(dir, new Map(), 0, 25);
    expect(recovered.ops).toBeGreaterThan(0); // the child commits every 7 batches: the rest is replayed
    // Searches see the recovered docs, each with the vector written with it.
    const idx = await openIndex(dir);
    expect(await idx.count!()).toBe(model.size);
    for (const [id, n] of model) {
      const hits = (await idx.search(Float32Array.from(vector(n)), { k: 40 })).hits;
      expect(hits.find((h) => h.id === id)!.score).toBeCloseTo(1, 5);
    }
    await idx.close();
  }, 60_000);

  it('keeps every acknowledged write, exactly, across SIGKILLs at random moments (a short ledger run)', async () => {
    const dir = join(temp(), 'index');
    let model = new Map<string, number>();
    for (let round = 0; round < 5; round++) model = (await crashAndCheck(dir, model, round * 100_000, 5 + ((round * 37) % 50))).model;
  }, 120_000);

  it('keeps every acknowledged write when a power loss also damages what was never fsynced (a simulated-crash directory)', async () => {
    const dir = join(temp(), 'index');
    let model = new Map<string, number>();
    let damaged = 0;
    for (let round = 0; round < 5; round++) {
      const r = await crashAndCheck(dir, model, round * 100_000, 5 + ((round * 29) % 40), round + 1);
      model = r.model;
      damaged += r.damaged;
    }
    expect(damaged).toBeGreaterThan(0); // the damage happened (uncommitted segments, translog tails)
  }, 120_000);

  /**
   * What a power loss may do to a directory after a crash, as Lucene's MockDirectoryWrapper does
   * it: every file no commit names (segments of flushes and merges not yet committed, `.liv`
   * generations, temp files) was never promised durable, and each is deleted, zeroed, truncated or
   * has a byte flipped; so is each translog file past the bytes the last acknowledgement had
   * fdatasync'ed (a generation started after it entirely). Seeded: the same damage every run.
   */
  function losePower(dir: string, durable: readonly { file: string; bytes: number }[], seed: number): number {
    let damaged = 0;
    let state = seed * 2654435761;
    const random = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % Math.max(1, n);
    };
    const commit = readLatestCommit(dir);
    const kept = new Set([`commit_${commit.generation.toString(36)}`, 'write.lock']);
    for (const f of readdirSync(dir)) if (commit.segments.some((s) => f.startsWith(`${s.name}.`) || f.startsWith(`${s.name}_`))) kept.add(f);
    for (const seg of commit.segments)
      for (const f of readdirSync(dir)) if (f.endsWith('.liv') && f.startsWith(`${seg.name}_`) && f !== `${seg.name}_${seg.delGen.toString(36)}.liv`) kept.delete(f);
    for (const f of readdirSync(dir)) {
      if (kept.has(f)) continue;
      const path = join(dir, f);
      const size = statSync(path).size;
      const safe = f.startsWith('translog-') ? (durable.find((d) => d.file === f)?.bytes ?? 0) : 0;
      if (size <= safe) continue;
      damaged++;
      switch (random(4)) {
        case 0:
          if (safe === 0) rmSync(path);
          else truncateSync(path, safe);
          break;
        case 1: {
          const bytes = readFileSync(path);
          bytes.fill(0, safe);
          writeFileSync(path, bytes);
          break;
        }
        case 2:
          truncateSync(path, safe + random(size - safe));
          break;
        default:
          flipByte(path, safe + random(size - safe));
      }
    }
    return damaged;
  }

  /**
   * A child process writing to `dir` through the built package: the ops above in batches of 5,
   * each batch synced and then printed (its acknowledgement), small RAM buffer (flushes all the
   * time) and a commit every 7 batches, until it is killed. `exited` resolves with the number of
   * batches acknowledged, every line read.
   */
  function spawnWriter(dir: string, start: number) {
    const entry = join(packageRoot(), 'dist', 'src', 'index.js');
    const script = `
      import { openIndexWriter, VectorSimilarityFunction } from ${JSON.stringify(entry)};
      const DIMS = ${DIMS};
      const vector = (n) => Array.from({ length: DIMS }, (_, j) => Math.cos(n * 0.7 + j) + 1.5);
      const w = await openIndexWriter(process.argv[1], { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE }, ramBufferBytes: 2048 });
      for (let i = ${start}, batch = 0; ; batch++) {
        for (let j = 0; j < 5; j++, i++) {
          const id = 'd' + (i % 40);
          if (i % 9 === 4) w.deleteDocuments(id);
          else w.updateDocument(id, { vector: vector(i), n: i });
        }
        if (batch % 7 === 3) w.commit().catch(() => {});
        await w.sync();
        process.stdout.write(JSON.stringify(w.translogDurable) + '\\n');
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PRESCORE_THREADS: '1' } });
    let stderr = '';
    let lines = 0;
    let out = '';
    /** The translog's durable lengths as of the last acknowledgement read. */
    let durable: { file: string; bytes: number }[] = [];
    let waiting: { count: number; resolve: () => void } | null = null;
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        durable = JSON.parse(out.slice(0, nl)) as { file: string; bytes: number }[];
        out = out.slice(nl + 1);
        lines++;
      }
      if (waiting && lines >= waiting.count) waiting.resolve();
    });
    const exited = new Promise<{ lines: number; durable: { file: string; bytes: number }[] }>((resolve) => child.stdout.on('close', () => resolve({ lines, durable })));
    return {
      exited,
      untilAcked: (count: number) =>
        new Promise<void>((resolve, reject) => {
          waiting = { count, resolve };
          child.on('exit', (code, signal) => signal === null && reject(new Error(`writer exited ${code}: ${stderr}`)));
        }),
      kill: () => child.kill('SIGKILL'),
    };
  }
});

function flipByte(path: string, at: number): void {
  const bytes = readFileSync(path);
  bytes[at]! ^= 0x40;
  writeFileSync(path, bytes);
}
