import { open } from 'node:fs/promises';

/**
 * Files whose fsync waits for the commit that names them, as Lucene's IndexOutput never syncs
 * and its Directory syncs a commit's files when it commits. A file closed while `deferringSync`
 * runs is not fsynced on close: its path joins the caller's set, and the caller syncs the set
 * (`syncFiles`, on libuv's threads) before its next commit names those files. Outside such a
 * scope (builds, workers) a file is fsynced as it closes.
 *
 * Why: an IndexWriter writes a flushed segment's `.vec`, stored fields, doc values and ids on
 * the server's thread, and each fsync there stopped the event loop for as long as the disk took,
 * which is longest exactly while writes keep it busy (a search's answer waited up to 130 ms more
 * than the search took while 40k x 768 docs went in through `_bulk`).
 */
let deferred: Set<string> | null = null;

/** Runs `write` (synchronous) with every file it closes left unsynced and recorded in `into`. */
export function deferringSync<T>(into: Set<string>, write: () => T): T {
  const outer = deferred;
  deferred = into;
  try {
    return write();
  } finally {
    deferred = outer;
  }
}

/** For a file being closed: true when its fsync is deferred (recorded), false when the caller must fsync it now. */
export function deferSync(path: string): boolean {
  if (deferred === null) return false;
  deferred.add(path);
  return true;
}

/**
 * fsyncs every file of `paths` off the event loop and removes it from the set; a file deleted
 * meanwhile (a merge's inputs, an aborted segment) needs no sync, since no commit will name it.
 */
export async function syncFiles(paths: Set<string>): Promise<void> {
  await Promise.all(
    [...paths].map(async (path) => {
      try {
        const file = await open(path, 'r');
        try {
          await file.sync();
        } finally {
          await file.close();
        }
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      paths.delete(path);
    }),
  );
}
