import { threadId } from 'node:worker_threads';
import { MappedFile } from '../../segments/store/native/MappedFile.js';
import { IoBuffer, IoUring, closeFile, openForRead } from '../../segments/store/native/IoUring.js';
import { threadKernels } from '../../segments/kernels/threadKernels.js';
import { onIndexReleased } from '../../segments/index/releaseBoard.js';
import { openablePath, type SegmentHandle } from '../../segments/index/SegmentHandle.js';
import { PrefetchDistance, runPrefetchRing } from '../prefetch/PrefetchDistance.js';
import { prefetchPolicy } from '../prefetch/PrefetchPolicy.js';
import { newCounters, type RescoreCounters } from '../prefetch/RescoreCounters.js';
import { compileSpec } from './compileSpec.js';
import type { RescoreTaskArgs, RescoreTaskResult } from './RescoreTask.js';

/** Where scoring finds an entry's vector: a float view and the index of its first component. */
type Score = (i: number, vectors: Float32Array, off: number) => void;

/** The shared state of one task: which entries were prefetched, counters, the optional trace. */
interface Task {
  readonly args: RescoreTaskArgs;
  readonly counters: RescoreCounters;
  readonly prefetched: Uint8Array;
  readonly trace: number[] | null;
  readonly score: Score;
  readonly noVector: (i: number) => void;
}

/**
 * The worker side of rescoring (executor task `rescore.ring`). Vectors are read in place: through
 * this worker's own read-only mapping of the segment's `.vec` (mmap paths, zero copy), or into a
 * page-aligned buffer by io_uring (pread path). Mappings, descriptors and the ring are opened once
 * per worker and reused by every query until the index is closed.
 */
export async function rescoreRing(args: RescoreTaskArgs): Promise<RescoreTaskResult> {
  const n = args.ords.length;
  const scores = new Float32Array(n);
  const hasValue = new Uint8Array(n);
  const counters = newCounters();
  const trace: number[] | null = args.trace ? [] : null;
  const first = args.segments[0];
  const compiled = compileSpec(args.spec, first.similarity, first.dims, await threadKernels());
  const firstPhase = args.firstPhase;
  const score: Score = (i, vectors, off) => {
    scores[i] = compiled.evaluate(vectors, off, firstPhase ? firstPhase[i] : 0);
    hasValue[i] = 1;
    counters.scored++;
    if (trace) trace.push(-(i + 1));
  };
  const noVector = (i: number) => {
    if (compiled.needsVector) {
      if (trace) trace.push(-(i + 1)); // no value: Lucene scores it 0
    } else score(i, EMPTY, 0);
  };
  const task: Task = { args, counters, prefetched: new Uint8Array(n), trace, score, noVector };
  try {
    if (args.io === 'mmap') readMapped(task);
    else readThroughUring(task);
  } finally {
    compiled.release();
  }
  return { scores, hasValue, counters, trace: trace ? Int32Array.from(trace) : null, threadId };
}

const EMPTY = new Float32Array(0);

/** mmap paths: prefetch per the policy (madvise WILLNEED) as entries enter the ring, fault on scoring. */
function readMapped(task: Task): void {
  const { args, counters, prefetched, trace } = task;
  const n = args.ords.length;
  const files = args.segments.map(mappedVectors);
  const read = (i: number) => {
    const ord = args.ords[i];
    if (ord < 0) return task.noVector(i);
    const s = args.seg[i];
    if (!prefetched[i]) counters.readsBeforePrefetch++;
    const file = files[s];
    const rel = ord * args.segments[s].vectors.byteSize;
    // One view covers files up to 4 GiB; beyond, overlapping 1 GiB chunk views (a vector never straddles two).
    const c = file.chunkCount === 1 ? 0 : file.chunkIndex(rel);
    task.score(i, file.chunkFloats(c), (rel - file.chunkStart(c)) >>> 2);
  };
  const policy = args.prefetch === 'none' || args.mode === 'inOrder' ? null : prefetchPolicy(args.prefetch);
  if (policy === null) {
    for (let i = 0; i < n; i++) read(i);
    return;
  }
  const distance = new PrefetchDistance(args.distance.initial, args.distance.cap);
  runPrefetchRing(
    n,
    distance,
    (i) => {
      prefetched[i] = 1;
      const ord = args.ords[i];
      if (ord < 0) return false;
      const s = args.seg[i];
      const size = args.segments[s].vectors.byteSize;
      const issued = policy.prefetch(files[s], ord * size, size, args.policyState, args.policySlots[s], counters);
      if (trace) trace.push(i + 1);
      return issued;
    },
    read,
  );
  counters.maxDistance = distance.reached;
}

/**
 * The pread path: each entry entering the ring queues an IORING_OP_READ into its own buffer slot;
 * queued reads are submitted together when the ring needs its oldest entry, so up to `distance`
 * reads are in flight at once. O_DIRECT ('uring-direct') reads the entry's whole pages. In order
 * (needsScores) there is no ring: each entry is read when it is scored.
 */
function readThroughUring(task: Task): void {
  const { args, counters, prefetched, trace } = task;
  const n = args.ords.length;
  const direct = args.io === 'uring-direct';
  const byteSize = args.segments[0].vectors.byteSize;
  const slotBytes = pageCeil(byteSize) + (direct ? 4096 : 0);
  const { ring, buffer } = ringResources(args.mode === 'inOrder' ? 1 : Math.min(args.distance.cap, MAX_SLOTS), slotBytes);
  const slots = Math.min(buffer.slots, MAX_SLOTS);
  // Per slot: the entry in flight, its read range, bytes received so far, and where the vector starts in the slot.
  const slotEntry = new Int32Array(slots).fill(-1);
  const slotStart = new Float64Array(slots);
  const slotLength = new Int32Array(slots);
  const slotGot = new Int32Array(slots);
  const slotFd = new Int32Array(slots);
  const slotSkew = new Int32Array(slots);
  const done = new Uint8Array(n);

  const submitRead = (slot: number, from: number) => {
    while (!ring.prepRead(slotFd[slot], slotStart[slot] + from, buffer.slotAddress(slot) + from, slotLength[slot] - from, slot)) {
      counters.syscalls++;
      ring.submit(0);
    }
  };

  const issue = (i: number, ahead: boolean): boolean => {
    if (ahead) prefetched[i] = 1;
    const ord = args.ords[i];
    if (ord < 0) {
      done[i] = 1;
      return false;
    }
    const h = args.segments[args.seg[i]];
    const slot = i % slots;
    const fileOffset = h.vectors.offset + ord * h.vectors.byteSize;
    const start = direct ? fileOffset - (fileOffset % 4096) : fileOffset;
    slotEntry[slot] = i;
    slotStart[slot] = start;
    slotLength[slot] = direct ? pageCeil(fileOffset + h.vectors.byteSize) - start : h.vectors.byteSize;
    slotGot[slot] = 0;
    slotFd[slot] = fdFor(h, direct);
    slotSkew[slot] = fileOffset - start;
    submitRead(slot, 0);
    if (ahead) {
      counters.pagesPrefetched += Math.ceil(slotLength[slot] / 4096);
      if (trace) trace.push(i + 1);
    }
    return true;
  };

  const waitFor = (i: number) => {
    while (!done[i]) {
      counters.syscalls++;
      ring.submit(1);
      for (let got = ring.reap(reapUserData, reapRes); got > 0; got = ring.reap(reapUserData, reapRes)) {
        for (let j = 0; j < got; j++) {
          const slot = reapUserData[j];
          const res = reapRes[j];
          const e = slotEntry[slot];
          const path = args.segments[args.seg[e]].vectors.path;
          if (res < 0) throw new Error(`io_uring read of ${path} failed: errno ${-res}`);
          if (res === 0) throw new Error(`io_uring read of ${path}: unexpected end of file at ${slotStart[slot] + slotGot[slot]}`);
          slotGot[slot] += res;
          if (slotGot[slot] < slotLength[slot]) submitRead(slot, slotGot[slot]); // short read: ask for the rest
          else done[e] = 1;
        }
      }
    }
  };

  const read = (i: number) => {
    if (args.ords[i] < 0) return task.noVector(i);
    if (!prefetched[i]) counters.readsBeforePrefetch++;
    waitFor(i);
    const slot = i % slots;
    task.score(i, buffer.floats, buffer.slotFloat(slot) + (slotSkew[slot] >>> 2));
  };

  if (args.mode === 'inOrder') {
    for (let i = 0; i < n; i++) {
      issue(i, false);
      read(i);
    }
    return;
  }
  const distance = new PrefetchDistance(Math.min(args.distance.initial, slots), Math.min(args.distance.cap, slots));
  runPrefetchRing(n, distance, (i) => issue(i, true), read);
  counters.maxDistance = distance.reached;
}

function pageCeil(x: number): number {
  return Math.ceil(x / 4096) * 4096;
}

// ---- per-worker resources, opened on first use, released when their index closes ----

const MAX_SLOTS = 256;
const mappings = new Map<string, { indexId: number; file: MappedFile }>();
const fds = new Map<string, { indexId: number; fd: number }>();
let uring: IoUring | null = null;
let uringBuffer: IoBuffer | null = null;
const reapUserData = new Uint32Array(512);
const reapRes = new Int32Array(512);

function mappedVectors(h: SegmentHandle): MappedFile {
  let m = mappings.get(h.key);
  if (!m) {
    // RANDOM: a fault reads just the faulting page, as Lucene opens .vec (no 8 MiB read-around).
    const file = MappedFile.open(openablePath(h.vectors), h.vectors.offset, Math.max(4, h.vectors.size * h.vectors.byteSize), { advice: 'random' });
    m = { indexId: h.indexId, file };
    mappings.set(h.key, m);
  }
  return m.file;
}

function fdFor(h: SegmentHandle, direct: boolean): number {
  const key = direct ? `${h.key}#direct` : h.key;
  let entry = fds.get(key);
  if (!entry) {
    entry = { indexId: h.indexId, fd: openForRead(openablePath(h.vectors), direct) };
    fds.set(key, entry);
  }
  return entry.fd;
}

function ringResources(slots: number, slotBytes: number): { ring: IoUring; buffer: IoBuffer } {
  uring ??= IoUring.open(512);
  if (!uringBuffer || uringBuffer.slots < slots || uringBuffer.slotBytes < slotBytes) {
    uringBuffer?.free();
    uringBuffer = IoBuffer.alloc(Math.max(slots, 64), slotBytes);
  }
  return { ring: uring, buffer: uringBuffer };
}

onIndexReleased((indexId) => {
  for (const [key, m] of mappings) {
    if (m.indexId !== indexId) continue;
    m.file.close();
    mappings.delete(key);
  }
  for (const [key, f] of fds) {
    if (f.indexId !== indexId) continue;
    closeFile(f.fd);
    fds.delete(key);
  }
});
