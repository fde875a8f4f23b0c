import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { deferSync } from './DeferredSync.js';

/** Creates `path` (failing if it exists), writes `bytes`, fsyncs (unless a deferringSync scope defers it) and closes. */
export function writeFileAtomicallyNoReplace(path: string, bytes: Uint8Array): void {
  writeNoReplace(path, bytes, true);
}

function writeNoReplace(path: string, bytes: Uint8Array, mayDefer: boolean): void {
  const fd = openSync(path, 'wx');
  try {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
    if (!(mayDefer && deferSync(path))) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsyncs a directory so that entries created or renamed in it are durable. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Publishes `bytes` as `dir/name` atomically: readers see either no file or the whole file.
 * Write a temp file, fsync it, rename it into place, fsync the directory.
 */
export function publishAtomically(dir: string, name: string, bytes: Uint8Array): void {
  const tmp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeNoReplace(tmp, bytes, false); // synced before it is renamed into place, always
    renameSync(tmp, join(dir, name));
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDirectory(dirname(join(dir, name)));
}
