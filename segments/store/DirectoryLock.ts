import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';

/** The lock file in every index directory a writer uses (Lucene's name). */
export const WRITE_LOCK_NAME = 'write.lock';

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const EWOULDBLOCK = 11;

const flock = koffi.load('libc.so.6').func('int flock(int fd, int operation)') as (fd: number, operation: number) => number;

/** Who holds a lock: its pid and what it does (`build`, `cleanup`, ...). */
export interface LockHolder {
  readonly pid: number;
  readonly purpose: string;
}

/**
 * Readers take the lock only for a moment, to delete a killed build's orphans; a writer that
 * meets such a holder waits this long for it rather than failing.
 */
const CLEANUP_WAIT_MS = 2_000;
export const CLEANUP_PURPOSE = 'cleanup';

/** Another live process (or another writer in this one) holds the directory. */
export class LockObtainFailedException extends Error {
  constructor(
    readonly dir: string,
    /** The holder as written in the lock file; null when it could not be read. */
    readonly holder: LockHolder | null,
  ) {
    const who = holder ? `pid ${holder.pid} (${holder.purpose})` : 'another process';
    super(`${dir} is locked by ${who}; it is released when that process exits`);
    this.name = 'LockObtainFailedException';
  }
}

/**
 * An exclusive write lock on a directory, as Lucene's NativeFSLockFactory: an OS lock (flock)
 * on `write.lock`, so the kernel releases it when the holder dies, however it dies. A stale
 * lock file left by a killed process is therefore not a lock at all: the next writer takes it
 * over without guessing from pids (which could race, or name a reused pid). The file holds the
 * holder's pid and purpose only so that the error can name them; a clean release deletes it.
 *
 * flock conflicts between two open file descriptions even within one process, so two builds in
 * one process exclude each other too.
 */
export class DirectoryLock {
  private released = false;

  private constructor(
    readonly dir: string,
    private readonly fd: number,
    private readonly path: string,
  ) {}

  /**
   * Takes the lock, or throws LockObtainFailedException at once when another writer holds it
   * (waiting only, briefly, for a reader's orphan cleanup to finish).
   */
  static async obtain(dir: string, purpose: string): Promise<DirectoryLock> {
    const deadline = performance.now() + CLEANUP_WAIT_MS;
    for (;;) {
      const lock = DirectoryLock.tryObtain(dir, purpose);
      if (lock !== null) return lock;
      const holder = readHolder(dir);
      if (holder?.purpose !== CLEANUP_PURPOSE || performance.now() > deadline) throw new LockObtainFailedException(dir, holder);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Takes the lock, or returns null when someone holds it. */
  static tryObtain(dir: string, purpose: string): DirectoryLock | null {
    const path = join(dir, WRITE_LOCK_NAME);
    for (;;) {
      // Never truncate on open: the file may name the live holder.
      const fd = openSync(path, 'a+');
      if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
        const errno = koffi.errno();
        closeSync(fd);
        if (errno === EWOULDBLOCK) return null;
        throw new Error(`flock(${path}) failed with errno ${errno}`);
      }
      // The holder we waited on may have unlinked the file before unlocking (release() does):
      // then we locked a file nobody else will see. Only a lock on the file at `path` counts.
      if (sameFile(fd, path)) {
        ftruncateSync(fd, 0);
        writeSync(fd, `${process.pid} ${purpose}\n`, 0);
        return new DirectoryLock(dir, fd, path);
      }
      closeSync(fd);
    }
  }

  /**
   * Releases the lock and removes the file, so a finished writer leaves nothing behind. Unlinking
   * before unlocking is safe: whoever locks the unlinked file next sees it is no longer at the
   * path and tries again (see tryObtain). Idempotent.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone, or the directory went read-only: the lock is released all the same.
    }
    flock(this.fd, LOCK_UN);
    closeSync(this.fd);
  }
}

/** Runs `fn` holding the directory's write lock. */
export async function withDirectoryLock<T>(dir: string, purpose: string, fn: () => Promise<T>): Promise<T> {
  const lock = await DirectoryLock.obtain(dir, purpose);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

function sameFile(fd: number, path: string): boolean {
  try {
    const a = fstatSync(fd);
    const b = statSync(path);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

function readHolder(dir: string): LockHolder | null {
  try {
    const m = /^(\d+) ?(.*)$/.exec(readFileSync(join(dir, WRITE_LOCK_NAME), 'utf8').trim());
    return m ? { pid: Number(m[1]), purpose: m[2] || 'writer' } : null;
  } catch {
    return null;
  }
}
