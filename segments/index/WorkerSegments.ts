import { closeSync, openSync, readSync } from 'node:fs';
import { threadKernels } from '../kernels/threadKernels.js';
import { onIndexReleased } from './releaseBoard.js';
import { openablePath, type SegmentHandle } from './SegmentHandle.js';
import { HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import { ResidentGraphSearcher } from '../hnsw/ResidentGraphSearcher.js';
import type { OnHeapHnswGraph } from '../hnsw/OnHeapHnswGraph.js';
import type { Kernels } from '../kernels/Kernels.js';
import { BinaryQuantizedScorer } from '../quantized/BinaryQuantizedScorer.js';
import { QueryQuantizer } from '../quantized/QueryQuantizer.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';

/** A segment as one worker thread holds it for the first phase: codes and graph level 0 in wasm memory. */
export interface LoadedSegment {
  readonly handle: SegmentHandle;
  readonly kernels: Kernels;
  readonly recordsPtr: number;
  readonly planesPtr: number;
  readonly quantizer: QueryQuantizer;
  readonly scorer: BinaryQuantizedScorer | null;
  /** The graph search (upper levels on the heap, level 0 in kernel memory); null: exhaustive scan. */
  readonly graph: ResidentGraphSearcher | null;
}

const loaded = new Map<string, Promise<LoadedSegment>>();

/**
 * Opens a segment in this worker on first sight and keeps it: the 1-bit records are read with
 * one positioned read straight into the kernels' memory (O(files) I/O, not O(vectors)), the graph
 * is decoded once. Later tasks find it by key.
 */
export function loadSegment(handle: SegmentHandle): Promise<LoadedSegment> {
  let p = loaded.get(handle.key);
  if (!p) {
    p = open(handle);
    loaded.set(handle.key, p);
    p.catch(() => loaded.delete(handle.key));
  }
  return p;
}

async function open(handle: SegmentHandle): Promise<LoadedSegment> {
  const k = await threadKernels();
  const q = handle.quantized;
  // Everything allocated in kernel memory is freed again if any later step fails.
  const undo: (() => void)[] = [];
  try {
    const quantizer = new QueryQuantizer(VectorSimilarityFunction.fromOrdinal(handle.similarity), handle.dims, k);
    undo.push(() => quantizer.release());
    if (!q || q.count === 0) {
      return { handle, kernels: k, recordsPtr: 0, planesPtr: 0, quantizer, scorer: null, graph: null };
    }
    const bytes = q.count * q.recordBytes;
    const recordsPtr = k.alloc(bytes);
    undo.push(() => k.free(recordsPtr));
    const planesPtr = k.alloc(4 * q.codeBytes);
    undo.push(() => k.free(planesPtr));
    readInto(openablePath(q), q.offset, k.u8().subarray(recordsPtr, recordsPtr + bytes));
    let graph: OnHeapHnswGraph | null = null;
    if (handle.graph) {
      const g = handle.graph;
      graph = HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix).graph(g.fieldNumber);
    }
    const records = { kernels: k, recordsPtr, count: q.count, codeBytes: q.codeBytes, recordBytes: q.recordBytes };
    const scorer = new BinaryQuantizedScorer(records, {
      planesPtr, lower: 0, upper: 0, additionalCorrection: 0, componentSum: 0, dims: handle.dims, similarity: handle.similarity, centroidDP: q.centroidDP,
    });
    undo.push(() => scorer.release());
    const search = graph ? ResidentGraphSearcher.load(k, records, graph, handle.liveOrds) : null;
    return { handle, kernels: k, recordsPtr, planesPtr, quantizer, scorer, graph: search };
  } catch (e) {
    for (const step of undo.reverse()) step();
    throw e;
  }
}

// A closed index's segments leave this worker: codes out of wasm memory, graphs to the GC.
onIndexReleased((indexId) => {
  for (const [key, p] of loaded) {
    void p.then((s) => {
      if (s.handle.indexId !== indexId) return;
      loaded.delete(key);
      s.graph?.release();
      s.quantizer.release();
      if (s.scorer) {
        s.scorer.release();
        s.kernels.free(s.recordsPtr);
        s.kernels.free(s.planesPtr);
      }
    }, () => {});
  }
});

function readInto(path: string, offset: number, into: Uint8Array): void {
  const fd = openSync(path, 'r');
  try {
    for (let done = 0; done < into.length; ) {
      const n = readSync(fd, into, done, Math.min(into.length - done, 1 << 30), offset + done);
      if (n <= 0) throw new Error(`${path}: unexpected end of file reading ${into.length} bytes at ${offset}`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
}
