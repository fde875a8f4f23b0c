import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateVectors } from '../src/gen/generateDataset.js';
import { writeFvecs } from '../segments/input/index.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { DirectoryLock, LockObtainFailedException, WRITE_LOCK_NAME } from '../segments/store/DirectoryLock.js';
import { deleteUnreferencedFiles } from '../segments/index/IndexFileDeleter.js';

/** `prescore build` and `prescore start` hold the index directory's write lock; a killed build leaves nothing behind for long. */
const BIN = resolve('bin/prescore.js');
const DIMS = 32;
let root: string;
let input: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'prescore-lock-'));
  input = join(root, 'base.fvecs');
  await writeFvecs(input, generateVectors({ seed: '3', dim: DIMS, similarity: 'cosine' }, 'base', 20_000), DIMS);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Run {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly exit: Promise<number | null>;
  /** Resolves when stderr has printed `text`. */
  waitFor(text: string): Promise<void>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PRESCORE_THREADS: '1' } });
  let err = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of waiters.filter((w) => err.includes(w.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  child.stdout!.resume();
  const exit = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return {
    child,
    stderr: () => err,
    exit,
    waitFor: (text) =>
      new Promise<void>((ok, fail) => {
        if (err.includes(text)) return ok();
        waiters.push({ text, resolve: ok });
        void exit.then(() => (err.includes(text) ? ok() : fail(new Error(`exited before printing "${text}":\n${err}`))));
      }),
  };
}

const build = (out: string, extra: string[] = []) =>
  run(['build', '--input', input, '--out', out, '--similarity', 'cosine', '--segment-docs', '5000', '--flat-threshold', '1000', ...extra]);

/** Every file of `dir` that is not the newest commit's (what a killed build would leave). */
function segmentFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('_'))
    .sort();
}

describe('the index directory write lock', () => {
  it("a second build into the same --out fails at once naming the first one's pid, and touches nothing", async () => {
    const out = join(root, 'concurrent');
    const first = build(out);
    await first.waitFor('write vectors');
    const second = build(out);
    const secondCode = await second.exit;
    expect(secondCode).not.toBe(0);
    expect(second.stderr()).toContain(`locked by pid ${first.child.pid} (build)`);
    expect(await first.exit).toBe(0);
    const reader = DirectoryReader.open(out);
    try {
      expect(reader.maxDoc).toBe(20_000);
      expect(reader.commit.generation).toBe(1);
      reader.checkIntegrity();
    } finally {
      reader.close();
    }
    // A finished build leaves no lock file behind.
    expect(existsSync(join(out, WRITE_LOCK_NAME))).toBe(false);
  });

  it('a stale lock file (its process is dead) is taken over', async () => {
    const out = join(root, 'stale');
    mkdirSync(out, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(out, WRITE_LOCK_NAME), `${dead.stdout} build\n`);
    const r = build(out, ['--flat-threshold', '100000']);
    expect(await r.exit).toBe(0);
    expect(DirectoryReader.open(out).maxDoc).toBe(20_000);
  });

  it('two holders exclude each other within one process too, and release lets the next one in', async () => {
    const dir = join(root, 'inproc');
    mkdirSync(dir, { recursive: true });
    const a = await DirectoryLock.obtain(dir, 'build');
    await expect(DirectoryLock.obtain(dir, 'build')).rejects.toThrow(LockObtainFailedException);
    await expect(DirectoryLock.obtain(dir, 'build')).rejects.toThrow(`locked by pid ${process.pid} (build)`);
    expect(DirectoryLock.tryObtain(dir, 'cleanup')).toBeNull();
    a.release();
    const b = DirectoryLock.tryObtain(dir, 'cleanup');
    expect(b).not.toBeNull();
    b!.release();
  });

  it('two `prescore start` on one data directory: the second fails at once instead of building over the first', async () => {
    const data = join(root, 'demo');
    const first = run(['start', '--data', data, '--port', '0']);
    await first.waitFor('building the demo');
    const second = run(['start', '--data', data, '--port', '0']);
    expect(await second.exit).toBe(1);
    expect(second.stderr()).toContain(`locked by pid ${first.child.pid} (demo build)`);
    first.child.kill('SIGKILL');
    await first.exit;
  });
});

describe('files of a killed build', () => {
  it('kill -9 during a rebuild: the next open deletes its orphans and serves the previous commit', async () => {
    const out = join(root, 'killed');
    expect(await build(out, ['--flat-threshold', '100000']).exit).toBe(0);
    const committed = segmentFiles(out);

    const victim = build(out);
    // Every fp32 file is on disk once the first stage is done; graphs are being built.
    await victim.waitFor('write vectors:');
    victim.child.kill('SIGKILL');
    await victim.exit;
    const orphans = segmentFiles(out).filter((f) => !committed.includes(f));
    expect(orphans.length).toBeGreaterThan(0);

    const reader = DirectoryReader.open(out);
    try {
      expect(segmentFiles(out)).toEqual(committed);
      expect(reader.commit.generation).toBe(1);
      reader.checkIntegrity();
    } finally {
      reader.close();
    }
  });

  it('kill -9 during a first build (no commit yet): opening cleans nothing it cannot prove is an index, the next build cleans it all', async () => {
    const out = join(root, 'killed-first');
    const victim = build(out);
    await victim.waitFor('write vectors:');
    victim.child.kill('SIGKILL');
    await victim.exit;
    const orphans = segmentFiles(out);
    expect(orphans.length).toBeGreaterThan(0);
    expect(() => DirectoryReader.open(out)).toThrow(/no prescore index/);
    expect(segmentFiles(out)).toEqual(orphans);

    expect(await build(out, ['--flat-threshold', '100000']).exit).toBe(0);
    const reader = DirectoryReader.open(out);
    try {
      const live = new Set(reader.leaves.map((l) => l.reader.name));
      expect(segmentFiles(out).every((f) => live.has(/^_[0-9a-z]+/.exec(f)![0]))).toBe(true);
      expect(segmentFiles(out).some((f) => orphans.includes(f))).toBe(false);
    } finally {
      reader.close();
    }
  });

  it('never deletes files it did not write, nor anything while a writer holds the lock', async () => {
    const dir = join(root, 'foreign');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '_notes.txt'), 'mine');
    writeFileSync(join(dir, '_0_Lucene104HnswScalarQuantizedVectorsFormat_0.vec'), 'orphan');
    expect(deleteUnreferencedFiles(dir, { onlyWithCommit: true })).toEqual([]);
    expect(deleteUnreferencedFiles(dir)).toEqual(['_0_Lucene104HnswScalarQuantizedVectorsFormat_0.vec']);
    expect(readdirSync(dir)).toEqual(['_notes.txt']);
  });
});
