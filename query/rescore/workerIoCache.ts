import { MappedFile } from '../../segments/store/native/MappedFile.js';
import { IoBuffer, IoUring, closeFile, openForRead } from '../../segments/store/native/IoUring.js';
import { onIndexReleased } from '../../segments/index/releaseBoard.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';

/**
 * This worker's rescoring I/O resources, opened on first use and kept across queries: each
 * segment's `.vec` mapping and read descriptor (freed when their index closes, via the release
 * board) and one io_uring with its landing buffer (kept for the worker's life, grown on demand).
 */

/** The most reads one task keeps in flight on the ring (its buffer slots). */
export const MAX_RING_SLOTS = 256;
const RING_ENTRIES = 512;

const mappings = new Map<string, { indexId: number; file: MappedFile }>();
const fds = new Map<string, { indexId: number; fd: number }>();
let uring: IoUring | null = null;
let uringBuffer: IoBuffer | null = null;
/** Completion scratch for IoUring.reap, one entry per ring entry: reaping allocates nothing. */
export const reapUserData = new Uint32Array(RING_ENTRIES);
export const reapRes = new Int32Array(RING_ENTRIES);

/** The segment's fp32 vectors mapped read-only in this worker (opened once per segment). */
export function mappedVectors(h: SegmentHandle): MappedFile {
  let m = mappings.get(h.key);
  if (!m) {
    // RANDOM: a fault reads just the faulting page, as Lucene opens .vec (no 8 MiB read-around).
    const file = MappedFile.open(h.vectors.path, h.vectors.offset, Math.max(4, h.vectors.size * h.vectors.byteSize), { advice: 'random' });
    m = { indexId: h.indexId, file };
    mappings.set(h.key, m);
  }
  return m.file;
}

/** A (buffered) read descriptor of the segment's vector file in this worker. */
export function fdFor(h: SegmentHandle): number {
  let entry = fds.get(h.key);
  if (!entry) {
    entry = { indexId: h.indexId, fd: openForRead(h.vectors.path) };
    fds.set(h.key, entry);
  }
  return entry.fd;
}

/** This worker's ring and a page-aligned buffer of at least `slots` x `slotBytes` (at least 64 slots). */
export function ringResources(slots: number, slotBytes: number): { ring: IoUring; buffer: IoBuffer } {
  uring ??= IoUring.open(RING_ENTRIES);
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
