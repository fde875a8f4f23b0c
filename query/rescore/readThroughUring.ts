import { PrefetchDistance, runPrefetchRing } from '../prefetch/PrefetchDistance.js';
import type { RescoreRun } from './RescoreRun.js';
import { MAX_RING_SLOTS, fdFor, reapRes, reapUserData, ringResources } from './workerIoCache.js';

/**
 * The pread path: each entry entering the ring queues an IORING_OP_READ (buffered) into its own
 * buffer slot; queued reads are submitted together when the ring needs its oldest entry, so up to
 * `distance` reads are in flight at once. In order (needsScores) there is no ring: each entry is
 * read when it is scored.
 *
 * A slot machine over typed arrays: slot `i % slots` holds entry i from its submission until it
 * is scored (the ring never holds more entries than slots), short reads are resubmitted for the
 * rest, and nothing is allocated per entry.
 */
export function readThroughUring(run: RescoreRun): void {
  const { args, counters, prefetched, trace, scorer } = run;
  const n = args.ords.length;
  const byteSize = args.segments[0].vectors.byteSize;
  const slotBytes = pageCeil(byteSize);
  const { ring, buffer } = ringResources(args.mode === 'inOrder' ? 1 : Math.min(args.distance.cap, MAX_RING_SLOTS), slotBytes);
  const slots = Math.min(buffer.slots, MAX_RING_SLOTS);
  // Per slot: the entry in flight, its read range and descriptor, and bytes received so far.
  const slotEntry = new Int32Array(slots).fill(-1);
  const slotStart = new Float64Array(slots);
  const slotLength = new Int32Array(slots);
  const slotGot = new Int32Array(slots);
  const slotFd = new Int32Array(slots);
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
    slotEntry[slot] = i;
    slotStart[slot] = h.vectors.offset + ord * h.vectors.byteSize;
    slotLength[slot] = h.vectors.byteSize;
    slotGot[slot] = 0;
    slotFd[slot] = fdFor(h);
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
          if (slotGot[slot] < slotLength[slot])
            submitRead(slot, slotGot[slot]); // short read: ask for the rest
          else done[e] = 1;
        }
      }
    }
  };

  const read = (i: number) => {
    if (args.ords[i] < 0) return scorer.noVector(i);
    if (!prefetched[i]) counters.readsBeforePrefetch++;
    waitFor(i);
    const slot = i % slots;
    scorer.score(i, buffer.floats, buffer.slotFloat(slot));
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
