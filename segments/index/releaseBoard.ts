import { workerData } from 'node:worker_threads';

/**
 * How the main thread tells every executor worker that an index was closed, without a broadcast
 * (piscina has none): a SharedArrayBuffer ring of closed index ids handed to each worker as
 * workerData. Before running a task, a worker applies the releases it has not seen yet (one
 * Atomics.load when there are none), so resources of a closed index are freed at the latest when
 * the worker next works, and in any case when the pool shuts down.
 */
const SLOTS = 256;
const COUNT = 0;

export function createReleaseBoard(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * (1 + SLOTS)));
}

export function publishRelease(board: Int32Array, indexId: number): void {
  const n = Atomics.load(board, COUNT);
  Atomics.store(board, 1 + (n % SLOTS), indexId);
  Atomics.store(board, COUNT, n + 1);
}

// ---- worker side ----

const listeners: ((indexId: number) => void)[] = [];
const board: Int32Array | undefined = (workerData as { releaseBoard?: Int32Array } | null)?.releaseBoard;
// A worker starting after some releases has nothing of those indexes: skip them.
let seen = board ? Atomics.load(board, COUNT) : 0;

/** Registers what a worker module frees when an index closes (mappings, codes, descriptors). */
export function onIndexReleased(listener: (indexId: number) => void): void {
  listeners.push(listener);
}

export function applyReleases(): void {
  if (!board) return;
  const count = Atomics.load(board, COUNT);
  for (; seen < count; seen++) {
    const id = Atomics.load(board, 1 + (seen % SLOTS));
    for (const l of listeners) l(id);
  }
}

/**
 * Frees this thread's own resources of a closed index at once: the main thread runs rescoring
 * itself when pages are resident (RescoreThread `adaptive`), holding mappings like a worker does.
 */
export function releaseInThisThread(indexId: number): void {
  for (const l of listeners) l(indexId);
}

let nextIndexId = 1;

/** A process-unique id for an opened index (never reused, so a late release cannot hit a new index). */
export function newIndexId(): number {
  return nextIndexId++;
}
