import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { readLatestCommit } from '../segments/index/CommitPoint.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';

/**
 * What a commit promises a power loss: every file it names was fsynced before the commit file was
 * renamed into place. The files a flush or a merge writes on the writer's thread are not synced
 * as they close (that would stop the server's event loop on the disk) but by the commit, off the
 * event loop, before it publishes (Lucene's Directory.sync at commit). Every create, fsync and
 * rename of this thread is recorded here. (Codes and graphs, and merged segments, are written and
 * synced by the executor's workers, which this does not see.)
 */
const io = vi.hoisted(() => ({
  created: new Set<string>(),
  synced: new Set<string>(),
  syncedOffThread: 0,
  /** Per commit file: what had been synced when it was renamed into place. */
  publishedWith: new Map<string, Set<string>>(),
  fds: new Map<number, string>(),
}));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const recorded = {
    ...fs,
    openSync: (path: string, flags?: import('node:fs').OpenMode, mode?: number) => {
      const fd = fs.openSync(path, flags ?? 'r', mode);
      io.fds.set(fd, String(path));
      if (flags === 'w' || flags === 'wx') io.created.add(basename(String(path)));
      return fd;
    },
    fsyncSync: (fd: number) => {
      fs.fsyncSync(fd);
      const path = io.fds.get(fd);
      if (path !== undefined) io.synced.add(basename(path));
    },
    renameSync: (from: string, to: string) => {
      fs.renameSync(from, to);
      if (io.synced.has(basename(String(from)))) io.synced.add(basename(String(to)));
      if (/^commit_/.test(basename(String(to)))) io.publishedWith.set(basename(String(to)), new Set(io.synced));
    },
  };
  return { ...recorded, default: recorded };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const recorded = {
    ...fsp,
    open: async (path: string, flags?: string) => {
      const handle = await fsp.open(path, flags);
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        await sync();
        io.synced.add(basename(String(path)));
        io.syncedOffThread++;
      };
      return handle;
    },
  };
  return { ...recorded, default: recorded };
});

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const DIMS = 8;
const vector = (i: number) => Array.from({ length: DIMS }, (_, j) => Math.cos(i * 0.37 + j * 1.3) + 1.1);

/** The files of `dir` that its newest commit names and this thread created, with the commit file's name. */
function namedByNewestCommit(dir: string): { commitFile: string; files: string[] } {
  const commit = readLatestCommit(dir);
  const files = readdirSync(dir).filter((f) => commit.segments.some((s) => f.startsWith(`${s.name}.`) || f.startsWith(`${s.name}_`)) && io.created.has(f));
  return { commitFile: `commit_${commit.generation.toString(36)}`, files };
}

describe('commit durability', () => {
  it('fsyncs every file a commit names before publishing it, off the event loop, and leaves merges to a worker', async () => {
    const root = mkdtempSync(join(tmpdir(), 'prescore-commit-sync-'));
    roots.push(root);
    const dir = join(root, 'index');
    const writer = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE }, ramBufferBytes: 4096, mergePolicy: null });
    for (let i = 0; i < 300; i++) writer.updateDocument(`d${i}`, { vector: vector(i), n: i });
    await writer.flush();
    await writer.commit();
    const flushed = namedByNewestCommit(dir);
    expect(flushed.files.length).toBeGreaterThan(5);
    for (const f of flushed.files) expect(io.publishedWith.get(flushed.commitFile), f).toContain(f);

    // A merge reads, writes and syncs its segment on an executor worker: this thread creates none of its files.
    await writer.forceMerge(1);
    const merged = namedByNewestCommit(dir);
    expect(readLatestCommit(dir).segments.length).toBe(1);
    for (const f of merged.files) expect(io.publishedWith.get(merged.commitFile), f).toContain(f);
    expect(merged.files).toEqual([]);
    await writer.close();
    // The segments' files were synced by the commits, not as they closed.
    expect(io.syncedOffThread).toBeGreaterThan(0);
  });
});
