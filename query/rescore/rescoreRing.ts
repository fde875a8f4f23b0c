import { threadId } from 'node:worker_threads';
import { MappedFile } from '../../src/native/MappedFile.js';
import { IoBuffer, IoUring, openForRead } from '../../src/native/IoUring.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import { PrefetchDistance, runPrefetchRing } from '../prefetch/PrefetchDistance.js';
import { prefetchPolicy } from '../prefetch/PrefetchPolicy.js';
import { newCounters, type RescoreCounters } from '../prefetch/RescoreCounters.js';
import { compileSpec } from './compileSpec.js';
import { threadKernels } from '../../src/executor/threadKernels.js';
import type { RescoreTaskArgs, RescoreTaskResult } from './RescoreTask.js';

/**
 * The worker side of rescoring (executor task `rescore.ring`). Vectors are read in place: through
 * this worker's own read-only mapping of the segment's `.vec` (mmap paths, zero copy), or into a
 * page-aligned buffer by io_uring (pread path). Mappings, file descriptors and the ring are opened
 * once per worker and reused by every query.
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
  const prefetched = new Uint8Array(n);

  const valueOf = (i: number, vectors: Float32Array, off: number) => {
    scores[i] = compiled.evaluate(vectors, off, firstPhase ? firstPhase[i] : 0);
    hasValue[i] = 1;
    counters.scored++;
    if (trace) trace.push(-(i + 1));
  };
  const noVector = (i: number) => {
    if (compiled.needsVector) {
      hasValue[i] = 0;
      if (trace) trace.push(-(i + 1));
    } else valueOf(i, EMPTY, 0);
  };

  try {
    readVectors(args, counters, prefetched, trace, valueOf, noVector);
  } finally {
    compiled.release();
  }
  return { scores, hasValue, counters, trace: trace ? Int32Array.from(trace) : null, threadId };
}

function readVectors(
  args: RescoreTaskArgs,
  counters: RescoreCounters,
  prefetched: Uint8Array,
  trace: number[] | null,
  valueOf: (i: number, v: Float32Array, off: number) => void,
  noVector: (i: number) => void,
): void {
  const n = args.ords.length;
  if (args.io === 'mmap') {
    const files = args.segments.map(mappedVectors);
    const views = files.map((f) => f.floats());
    const policy = args.prefetch === 'none' ? null : prefetchPolicy(args.prefetch);
    const score = (i: number) => {
      const ord = args.ords[i];
      if (ord < 0) return noVector(i);
      const s = args.seg[i];
      if (!prefetched[i]) counters.readsBeforePrefetch++;
      valueOf(i, views[s], (ord * args.segments[s].vectors.byteSize) >>> 2);
    };
    if (args.mode === 'inOrder' || policy === null) {
      for (let i = 0; i < n; i++) score(i);
    } else {
      const distance = new PrefetchDistance(args.distance.initial, args.distance.cap);
      runPrefetchRing(
        n,
        distance,
        (i) => {
          prefetched[i] = 1;
          const ord = args.ords[i];
          if (ord < 0) return false;
          const s = args.seg[i];
          const h = args.segments[s];
          const issued = policy.prefetch(files[s], ord * h.vectors.byteSize, h.vectors.byteSize, args.policyState, args.policySlots[s], counters);
          if (trace) trace.push(i + 1);
          return issued;
        },
        score,
      );
      counters.maxDistance = distance.reached;
    }
  } else {
    readThroughUring(args, counters, prefetched, trace, valueOf, noVector);
  }
}

const EMPTY = new Float32Array(0);

// ---- per-worker resources, opened on first use and kept for the life of the worker ----

const mappings = new Map<string, MappedFile>();

function mappedVectors(h: SegmentHandle): MappedFile {
  let m = mappings.get(h.key);
  if (!m) {
    // RANDOM: a fault reads just the faulting page, as Lucene opens .vec (no 8 MiB read-around).
    m = MappedFile.open(h.vectors.path, h.vectors.offset, Math.max(4, h.vectors.size * h.vectors.byteSize), { advice: 'random' });
    mappings.set(h.key, m);
  }
  return m;
}

/** Releases this worker's resources for segments no longer open (called when an index closes). */
export function releaseSegments(keys: readonly string[]): void {
  for (const k of keys) {
    mappings.get(k)?.close();
    mappings.delete(k);
    const fd = fds.get(k);
    if (fd !== undefined) {
      fds.delete(k);
      closeFd(fd);
    }
  }
}

const fds = new Map<string, number>();
let uring: IoUring | null = null;
let uringBuffer: IoBuffer | null = null;
import { closeFile as closeFd } from '../../src/native/IoUring.js';

function fdFor(h: SegmentHandle, direct: boolean): number {
  const key = direct ? `${h.key}#direct` : h.key;
  let fd = fds.get(key);
  if (fd === undefined) {
    fd = openForRead(h.vectors.path, direct);
    fds.set(key, fd);
  }
  return fd;
}

function ringResources(slots: number, slotBytes: number): { ring: IoUring; buffer: IoBuffer } {
  if (!uring) uring = IoUring.open(512);
  if (!uringBuffer || uringBuffer.slots < slots || uringBuffer.slotBytes < slotBytes) {
    uringBuffer?.free();
    uringBuffer = IoBuffer.alloc(Math.max(slots, 64), slotBytes);
  }
  return { ring: uring, buffer: uringBuffer };
}

const reapUserData = new Uint32Array(512);
const reapRes = new Int32Array(512);

/**
 * The pread path: each entry entering the ring queues an IORING_OP_READ into its own buffer slot;
 * queued reads are submitted together when the ring needs its oldest entry, so up to `distance`
 * reads are in flight at once. O_DIRECT ('uring-direct') reads the entry's whole pages.
 */
function readThroughUring(
  args: RescoreTaskArgs,
  counters: RescoreCounters,
  prefetched: Uint8Array,
  trace: number[] | null,
  valueOf: (i: number, v: Float32Array, off: number) => void,
  noVector: (i: number) => void,
): void {
  const n = args.ords.length;
  const direct = args.io === 'uring-direct';
  const byteSize = args.segments[0].vectors.byteSize;
  const slotBytes = direct ? pageCeil(byteSize) + 4096 : pageCeil(byteSize);
  const ringDepth = args.mode === 'inOrder' ? 1 : Math.min(args.distance.cap, 256);
  const { ring, buffer } = ringResources(ringDepth, slotBytes);
  const slots = Math.min(buffer.slots, 256);
  // Per slot: entry index in flight (or -1), bytes received, and the entry's start within the slot.
  const slotEntry = new Int32Array(slots).fill(-1);
  const slotGot = new Int32Array(slots);
  const slotSkew = new Int32Array(slots);
  const done = new Uint8Array(n);

  const issue = (i: number): boolean => {
    prefetched[i] = 1;
    const ord = args.ords[i];
    if (ord < 0) {
      done[i] = 1;
      return false;
    }
    const s = args.seg[i];
    const h = args.segments[s];
    const slot = i % slots;
    const fileOffset = h.vectors.offset + ord * h.vectors.byteSize;
    const start = direct ? fileOffset - (fileOffset % 4096) : fileOffset;
    const length = direct ? pageCeil(fileOffset + h.vectors.byteSize) - start : h.vectors.byteSize;
    slotEntry[slot] = i;
    slotGot[slot] = 0;
    slotSkew[slot] = fileOffset - start;
    while (!ring.prepRead(fdFor(h, direct), start, buffer.slotAddress(slot), length, slot)) {
      counters.syscalls++;
      ring.submit(0);
    }
    counters.pagesPrefetched += length / 4096 > 1 ? Math.ceil(length / 4096) : 1;
    if (trace) trace.push(i + 1);
    return true;
  };

  const waitFor = (i: number) => {
    while (!done[i]) {
      counters.syscalls++;
      ring.submit(1);
      let got: number;
      while ((got = ring.reap(reapUserData, reapRes)) > 0) {
        for (let j = 0; j < got; j++) {
          const slot = reapUserData[j];
          const res = reapRes[j];
          const e = slotEntry[slot];
          if (res < 0) throw new Error(`io_uring read of ${args.segments[args.seg[e]].vectors.path} failed: errno ${-res}`);
          const s = args.seg[e];
          const h = args.segments[s];
          const fileOffset = h.vectors.offset + args.ords[e] * h.vectors.byteSize;
          const start = direct ? fileOffset - (fileOffset % 4096) : fileOffset;
          const length = direct ? pageCeil(fileOffset + h.vectors.byteSize) - start : h.vectors.byteSize;
          slotGot[slot] += res;
          if (res === 0) throw new Error(`io_uring read of ${h.vectors.path}: unexpected end of file at ${start + slotGot[slot]}`);
          if (slotGot[slot] < length) {
            const got2 = slotGot[slot];
            while (!ring.prepRead(fdFor(h, direct), start + got2, buffer.slotAddress(slot) + got2, length - got2, slot)) ring.submit(0);
          } else {
            done[e] = 1;
          }
        }
      }
    }
  };

  const score = (i: number) => {
    if (args.ords[i] < 0) return noVector(i);
    if (!prefetched[i]) counters.readsBeforePrefetch++;
    waitFor(i);
    const slot = i % slots;
    valueOf(i, buffer.floats, buffer.slotFloat(slot) + (slotSkew[slot] >>> 2));
  };

  if (args.mode === 'inOrder') {
    for (let i = 0; i < n; i++) {
      // Scored in order, one read at a time: nothing is read ahead of need.
      if (args.ords[i] >= 0) issue(i);
      score(i);
    }
    return;
  }
  const distance = new PrefetchDistance(Math.min(args.distance.initial, slots), Math.min(args.distance.cap, slots));
  runPrefetchRing(n, distance, issue, score);
  counters.maxDistance = distance.reached;
}

function pageCeil(x: number): number {
  return Math.ceil(x / 4096) * 4096;
}
