import { Kernels } from '../kernels/Kernels.js';
import { threadKernels } from '../kernels/threadKernels.js';
import { ResidentGraphSearcher } from '../hnsw/ResidentGraphSearcher.js';
import { BinaryQuantizedScorer, type ResidentRecords } from '../quantized/BinaryQuantizedScorer.js';
import { QueryQuantizer } from '../quantized/QueryQuantizer.js';
import { privateArena } from './Arena.js';
import { onIndexReleased } from './releaseBoard.js';
import type { ArenaRef, SegmentHandle } from './SegmentHandle.js';
import { loadResidentSegment } from './SegmentLoader.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';

/**
 * A segment as one worker thread searches it: its codes and graph where the process holds them
 * (an arena shared by every worker), seen through this thread's kernels instance for that arena,
 * plus this thread's small per-segment state (query quantizer, planes, scorer buffers).
 */
export interface LoadedSegment {
  readonly handle: SegmentHandle;
  readonly kernels: Kernels;
  readonly planesPtr: number;
  /** This thread's copy of the live-ords bitset in its scratch (0: every ord live). */
  readonly livePtr: number;
  readonly quantizer: QueryQuantizer;
  readonly scorer: BinaryQuantizedScorer | null;
  /** The graph search (upper levels and level 0 in the arena); null: exhaustive scan. */
  readonly graph: ResidentGraphSearcher | null;
}

const loaded = new Map<string, Promise<LoadedSegment>>();
/** Every segment handle this thread was sent, by key: tasks then name segments by key alone. */
const known = new Map<string, SegmentHandle>();

/** Keeps handles sent to this thread (with their arena's memory), so later tasks can send keys only. */
export function rememberSegments(handles: readonly SegmentHandle[]): void {
  for (const h of handles) rememberSegment(h);
}

function rememberSegment(handle: SegmentHandle): void {
  if (!known.has(handle.key)) known.set(handle.key, handle);
}

/** A handle this thread was sent earlier (and whose index is still open), by key. */
export function knownSegment(key: string): SegmentHandle | undefined {
  return known.get(key);
}
/** This thread's kernels instance per arena it has searched. */
const arenaKernels = new Map<string, { readonly releaseId: number; readonly kernels: Promise<Kernels> }>();

/**
 * Opens a segment in this worker on first sight and keeps it. The data is the arena's (loaded
 * once per process when the index opened): nothing is read or copied here, only this thread's
 * kernels instance over the arena is made (once per arena) and a few KB of per-segment state. A
 * handle without an arena (a reader searched without openIndex) is loaded into an arena of this
 * thread's own, the same way.
 */
export function loadSegment(handle: SegmentHandle): Promise<LoadedSegment> {
  rememberSegment(handle); // no array per call: this runs for every segment of every task
  let p = loaded.get(handle.key);
  if (!p) {
    p = open(handle);
    loaded.set(handle.key, p);
    p.catch(() => loaded.delete(handle.key));
  }
  return p;
}

function kernelsFor(arena: ArenaRef): Promise<Kernels> {
  let entry = arenaKernels.get(arena.key);
  if (!entry) {
    const kernels = Kernels.attach(arena.memory, { scratchBytes: arena.scratchBytes });
    entry = { releaseId: arena.releaseId, kernels };
    arenaKernels.set(arena.key, entry);
    kernels.catch(() => arenaKernels.delete(arena.key));
  }
  return entry.kernels;
}

async function open(handle: SegmentHandle): Promise<LoadedSegment> {
  const q = handle.quantized;
  const sim = VectorSimilarityFunction.fromOrdinal(handle.similarity);
  if (!q || q.count === 0) {
    const k = await threadKernels();
    return { handle, kernels: k, planesPtr: 0, livePtr: 0, quantizer: new QueryQuantizer(sim, handle.dims), scorer: null, graph: null };
  }
  let seg = handle;
  if (!seg.resident) {
    seg = privateArena(handle, `private.${handle.key}`);
    loadResidentSegment(seg);
  }
  const r = seg.resident!;
  const k = await kernelsFor(r.arena);
  // Everything allocated in kernel memory is freed again if any later step fails.
  const undo: (() => void)[] = [];
  try {
    const quantizer = new QueryQuantizer(sim, handle.dims, k);
    undo.push(() => quantizer.release());
    const planesPtr = k.alloc(4 * q.codeBytes);
    undo.push(() => k.free(planesPtr));
    const records: ResidentRecords = { kernels: k, recordsPtr: r.records, count: q.count, codeBytes: q.codeBytes, recordBytes: q.recordBytes };
    const scorer = new BinaryQuantizedScorer(records, {
      planesPtr,
      lower: 0,
      upper: 0,
      additionalCorrection: 0,
      componentSum: 0,
      dims: handle.dims,
      similarity: handle.similarity,
      centroidDP: q.centroidDP,
    });
    undo.push(() => scorer.release());
    // The arena's data is shared by every reader of the segment; the live ords are this reader's.
    let livePtr = 0;
    if (handle.liveOrds && r.graph) {
      const live = handle.liveOrds;
      livePtr = k.alloc(4 * live.length, 64);
      undo.push(() => k.free(livePtr));
      k.i32().set(new Int32Array(live.buffer, live.byteOffset, live.length), livePtr >>> 2);
    }
    const graph = r.graph ? ResidentGraphSearcher.attach(k, records, r.graph, { bits: handle.liveOrds, ptr: livePtr }) : null;
    return { handle: seg, kernels: k, planesPtr, livePtr, quantizer, scorer, graph };
  } catch (e) {
    for (const step of undo.reverse()) step();
    throw e;
  }
}

/** Ids released lately, oldest first (a bounded window: a task naming one is at most this many releases late). */
const released = new Set<number>();
const RELEASED_WINDOW = 10_000;

/** Whether `indexId` (a reader's or an arena's) was released on this thread lately. */
export function wasReleased(indexId: number): boolean {
  return released.has(indexId);
}

// A closed index leaves this worker: its per-segment state out of the arenas' scratch, then this
// thread's instances over the arenas (the memories themselves go when no thread refers to them).
onIndexReleased((indexId) => {
  released.add(indexId);
  if (released.size > RELEASED_WINDOW) released.delete(released.values().next().value!);
  for (const [key, h] of known) if (h.indexId === indexId) known.delete(key);
  for (const [key, p] of loaded) {
    void p.then(
      (s) => {
        if (s.handle.indexId !== indexId) return;
        loaded.delete(key);
        s.graph?.release();
        if (s.livePtr !== 0) s.kernels.free(s.livePtr);
        s.quantizer.release();
        if (s.scorer) {
          s.scorer.release();
          s.kernels.free(s.planesPtr);
        }
      },
      () => {},
    );
  }
  for (const [key, entry] of arenaKernels) if (entry.releaseId === indexId) arenaKernels.delete(key);
});
