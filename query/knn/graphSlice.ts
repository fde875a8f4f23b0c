import { threadId } from 'node:worker_threads';
import { exactSearch, HnswGraphSearcher } from '../../segments/hnsw/HnswGraphSearcher.js';
import { HnswVectorsReader } from '../../segments/hnsw/HnswVectorsReader.js';
import { OffHeapHnswGraph } from '../../segments/hnsw/OffHeapHnswGraph.js';
import { MappedFloatVectors, UringFloatVectors, type OffHeapFloatVectors } from '../../segments/flat/OffHeapFloatVectors.js';
import { OffHeapFp32Scorer } from '../../segments/flat/OffHeapFp32Scorer.js';
import { onIndexReleased } from '../../segments/index/releaseBoard.js';
import type { SegmentHandle } from '../../segments/index/SegmentHandle.js';
import type { SegmentKnnResult } from '../../segments/index/searchSegment.js';
import { Fp32Similarity } from '../../segments/kernels/Fp32Similarity.js';
import { threadKernels } from '../../segments/kernels/threadKernels.js';
import { IoUring, closeFile, openForRead } from '../../segments/store/native/IoUring.js';
import { POSIX_FADV_RANDOM, posixFadvise } from '../../segments/store/native/libc.js';
import { MappedFile } from '../../segments/store/native/MappedFile.js';
import { MappedBytes, PreadBytes } from '../../segments/store/RandomAccessBytes.js';
import { defineTask } from '../executor/Task.js';
import { GraphPrefetcher, newGraphCounters, policyReads, ResidencyStreak, type GraphIoCounters, type VectorReadStarter } from '../prefetch/GraphPrefetcher.js';
import { noteColdRead, POLICY_STATE_INTS, prefetchPolicy, type PrefetchPolicyName } from '../prefetch/PrefetchPolicy.js';

/**
 * How the disk-resident first phase reads: through mappings (page faults; prefetch by madvise),
 * through mappings with the prefetch issued as io_uring reads that fill the page cache
 * ('mmap+uring'), or io_uring reads into buffers and no mapping ('uring').
 */
export type GraphIo = 'mmap' | 'mmap+uring' | 'uring';

export interface GraphSliceArgs {
  readonly segments: readonly SegmentHandle[];
  readonly target: Float32Array;
  /** Hits per segment. */
  readonly k: number;
  /** Level-0 beam width (HNSW ef). */
  readonly ef: number;
  readonly io: GraphIo;
  /** The neighbour-prefetch policy; 'none': vectors are read when scored, one at a time. */
  readonly prefetch: PrefetchPolicyName | 'none';
  /** Next candidates whose neighbours are read ahead with what the hop leaves of the distance (0: none). */
  readonly lookahead: number;
  /** Prefetch distance: first value and this task's share of the I/O budget. */
  readonly distance: { readonly initial: number; readonly cap: number };
  /** Shared per-leaf policy state (the rescoring one: the same `.vec` files) and each segment's slot in it. */
  readonly policyState: Int32Array;
  readonly policySlots: Int32Array;
}

export interface GraphSliceResult {
  readonly segments: SegmentKnnResult[];
  readonly counters: GraphIoCounters;
  readonly threadId: number;
}

export const KNN_GRAPH = defineTask<GraphSliceArgs, GraphSliceResult>('knn.graph');

/**
 * Executor task `knn.graph`: the first phase over a slice of segments with the graph and the
 * fp32 vectors read in place (no codes, nothing decoded onto the heap): HNSW search over the
 * segment's `.vex` with the field's exact similarity on `.vec`, neighbour reads prefetched; an
 * exhaustive fp32 scan for segments without a graph. Scores are exact fp32 similarities.
 */
export async function graphSlice(args: GraphSliceArgs): Promise<GraphSliceResult> {
  const counters = newGraphCounters();
  const out: SegmentKnnResult[] = [];
  const kernels = await threadKernels();
  const first = args.segments[0];
  const similarity = first ? new Fp32Similarity(kernels, first.similarity, args.target, first.dims) : null;
  try {
    args.segments.forEach((handle, s) => {
      out.push(searchOne(handle, args, args.policySlots[s], counters, similarity!));
    });
  } finally {
    similarity?.release();
  }
  return { segments: out, counters, threadId };
}

function searchOne(handle: SegmentHandle, args: GraphSliceArgs, policySlot: number, counters: GraphIoCounters, similarity: Fp32Similarity): SegmentKnnResult {
  if (handle.vectors.size === 0) return { docs: new Int32Array(0), scores: new Float32Array(0), visited: 0, strategy: 'exhaustive' };
  const seg = open(handle, args.io);
  const scorer = new OffHeapFp32Scorer(seg.vectors, similarity);
  let result;
  try {
    if (seg.graph === null) {
      result = exactSearch(scorer, args.k, handle.liveOrds);
      counters.readsBeforePrefetch += result.visited;
    } else {
      const prefetch = args.prefetch === 'none' ? null : prefetcher(seg, args, policySlot, counters);
      result = searcher.searchLists(scorer, seg.graph, args.k, { ef: args.ef, acceptOrds: handle.liveOrds, prefetch, lookahead: args.lookahead });
      if (prefetch === null) counters.readsBeforePrefetch += result.visited;
    }
    counters.scored += result.visited;
  } finally {
    const ring = seg.uring ?? seg.populator;
    if (ring) {
      ring.quiesce();
      counters.syscalls += ring.syscalls;
      ring.syscalls = 0;
    }
  }
  const table = handle.vectors.ordToDoc;
  const docs = table ? Int32Array.from(result.ords, (o) => table[o]) : result.ords;
  return { docs, scores: result.scores, visited: result.visited, strategy: seg.graph === null ? 'exhaustive' : 'hnsw' };
}

function prefetcher(seg: OpenSegment, args: GraphSliceArgs, policySlot: number, counters: GraphIoCounters): GraphPrefetcher {
  if (++seg.gen === 2 ** 29) {
    seg.stamps.fill(0);
    seg.gen = 1;
  }
  let reads: VectorReadStarter;
  let adjacency: ((ord: number) => boolean) | null = null;
  let probe: ((ord: number) => boolean) | null = null;
  if (seg.uring) {
    const uring = seg.uring;
    reads = {
      start: (ord) => {
        const issued = uring.read(ord);
        if (issued) counters.pagesPrefetched += Math.ceil(uring.byteSize / 4096);
        return issued;
      },
      flush: () => uring.submit(),
    };
  } else {
    const policy = prefetchPolicy(args.prefetch as PrefetchPolicyName);
    const file = seg.mapped!;
    const byteSize = seg.vectors.byteSize;
    const populator = seg.populator;
    if (populator) {
      // The policy decides as on `mmap+prefetch`; its advice is an io_uring read of the vector
      // (into a scratch slot: only the page cache keeps it), submitted once per hop.
      const access = { isResident: (offset: number, length: number) => file.isResident(offset, length), prefetch: (offset: number) => void populator.read(offset / byteSize) };
      const starter = policyReads(policy, access, byteSize, args.policyState, policySlot, counters);
      reads = { start: starter.start, flush: () => populator.submit() };
    } else {
      reads = policyReads(policy, file, byteSize, args.policyState, policySlot, counters);
    }
    const vex = seg.graphMapping;
    const graph = seg.graph!;
    const range = seg.range;
    if (vex) {
      adjacency = (ord) => {
        graph.listRange(0, ord, range);
        return policy.prefetch(vex, range[0], range[1], seg.adjacencyState, 0, counters);
      };
    }
    // Only a policy that probes can find a segment resident; `always` prefetches every vector.
    if (policy.name !== 'always') {
      probe = (ord) => {
        if (file.isResident(ord * byteSize, byteSize)) return true;
        noteColdRead(args.policyState, policySlot);
        return false;
      };
    }
  }
  // The uring ring of slots must hold what is in flight plus what was read ahead.
  const slots = (seg.uring ?? seg.populator)?.slots;
  const cap = slots ? Math.max(1, Math.min(args.distance.cap, slots >>> 1)) : args.distance.cap;
  const distance = { initial: Math.min(args.distance.initial, cap), cap };
  return new GraphPrefetcher(reads, seg.stamps, seg.gen, distance, counters, adjacency, probe && seg.residency, probe);
}

// ---- per-worker state: one searcher, segments opened on first use, released with their index ----

const searcher = new HnswGraphSearcher();
const URING_SLOTS = 512;

interface OpenSegment {
  readonly indexId: number;
  readonly graph: OffHeapHnswGraph | null;
  /** The `.vex` mapping (mmap reads), for adjacency prefetch. */
  readonly graphMapping: MappedFile | null;
  readonly vectors: OffHeapFloatVectors;
  readonly mapped: MappedFile | null;
  /** io 'uring': the vectors are read into these buffers and scored there. */
  readonly uring: UringFloatVectors | null;
  /** io 'mmap+uring': prefetch reads that fill the page cache for the mapping. */
  readonly populator: UringFloatVectors | null;
  readonly fd: number;
  /** Per-ord stamps of the prefetcher (see GraphPrefetcher) and the current search's generation. */
  readonly stamps: Int32Array;
  gen: number;
  /** Residency history of this worker's `.vex` reads (adjacency prefetch policy). */
  readonly adjacencyState: Int32Array;
  /** How long this worker's reads of the segment's vectors have been resident (GraphPrefetcher's sampling mode). */
  readonly residency: ResidencyStreak;
  /** Scratch for a neighbour list's byte range. */
  readonly range: Float64Array;
}

const opened = new Map<string, OpenSegment>();
let ring: IoUring | null = null;

function open(handle: SegmentHandle, io: GraphIo): OpenSegment {
  const key = `${handle.key}#${io}`;
  let seg = opened.get(key);
  if (seg) return seg;
  const v = handle.vectors;
  const undo: (() => void)[] = [];
  try {
    let graph: OffHeapHnswGraph | null = null;
    let graphMapping: MappedFile | null = null;
    if (handle.graph) {
      const g = handle.graph;
      const reader = HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix);
      const bytes = io === 'uring' ? new PreadBytes(g.vex) : new MappedBytes(g.vex);
      undo.push(() => bytes.close());
      graph = OffHeapHnswGraph.open(reader, g.fieldNumber, bytes);
      graphMapping = bytes.mapping;
    }
    let vectors: OffHeapFloatVectors;
    let mapped: MappedFile | null = null;
    let uring: UringFloatVectors | null = null;
    let populator: UringFloatVectors | null = null;
    let fd = -1;
    if (io !== 'uring') {
      // RANDOM: a fault reads just the faulting page, as Lucene opens .vec (no read-around).
      mapped = MappedFile.open(v.path, v.offset, v.size * v.byteSize, { advice: 'random' });
      const m = mapped;
      undo.push(() => m.close());
      vectors = new MappedFloatVectors(m, handle.dims, v.size);
    }
    if (io !== 'mmap') {
      fd = openForRead(v.path, false);
      const f = fd;
      undo.push(() => closeFile(f));
      // No kernel read-ahead on these reads either: each is one vector (a buffered read would
      // otherwise grow a read-ahead window and read pages nobody scores).
      posixFadvise(fd, 0, 0, POSIX_FADV_RANDOM, v.path);
      ring ??= IoUring.open(512);
      const reads = new UringFloatVectors(ring, fd, v.path, v.offset, handle.dims, v.size, URING_SLOTS);
      if (io === 'uring') uring = reads;
      else populator = reads;
    }
    vectors ??= uring!;
    seg = {
      indexId: handle.indexId,
      graph,
      graphMapping,
      vectors,
      mapped,
      uring,
      populator,
      fd,
      stamps: new Int32Array(v.size),
      gen: 0,
      adjacencyState: new Int32Array(POLICY_STATE_INTS),
      residency: new ResidencyStreak(),
      range: new Float64Array(2),
    };
    opened.set(key, seg);
    return seg;
  } catch (e) {
    for (const step of undo.reverse()) step();
    throw e;
  }
}

onIndexReleased((indexId) => {
  for (const [key, seg] of opened) {
    if (seg.indexId !== indexId) continue;
    opened.delete(key);
    seg.graph?.close();
    seg.mapped?.close();
    seg.uring?.close();
    seg.populator?.close();
    if (seg.fd >= 0) closeFile(seg.fd);
  }
});
