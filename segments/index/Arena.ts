import { HnswVectorsReader, entryNodeOf, hasGraph } from '../hnsw/HnswVectorsReader.js';
import { layOutGraph, residentGraphBytes } from '../hnsw/ResidentGraph.js';
import { MAX_WASM_PAGES, WASM_PAGE } from '../kernels/Kernels.js';
import { wasm, type WasmMemory } from '../kernels/wasmApi.js';
import { adviseHugePages } from '../store/native/libc.js';
import type { ArenaRef, ResidentSegment, SegmentHandle } from './SegmentHandle.js';

/**
 * Arenas: the shared WebAssembly memories that hold an open index's first-phase data once per
 * process. A segment's 1-bit records (as in its `.veq`) and its HNSW graph (ResidentGraph layout:
 * level 0 as 2M + 1 ints per node, upper levels with their sorted nodes) lie back to back in one
 * arena; a segment never straddles two. What is in an arena never changes, so readers of later
 * commits share the segments they keep (ResidentCores); the live-ords bitset, which a commit
 * with deletions changes, is each thread's own copy in its scratch (WorkerSegments). Every
 * executor worker imports the same memories (Kernels.attach) and claims a small scratch region
 * of its own at the end of each (visit stamps, heaps, query planes, live ords), so N workers cost
 * the data once plus N scratch regions. wasm32 addresses 4 GiB, so an index holds as many arenas
 * as it needs.
 *
 * Layout of an arena: [0, 64) never used (pointer 0 = none) | segment blocks, each 64-byte
 * aligned | workers' scratch regions (grown at first use).
 */

/** Queue slots a search may need (the HTTP API's limit on numCandidates); more grow the scratch. */
const PLANNED_QUEUE = 10_000;
const ARENA_BASE = 64;
const MAX_ARENA_BYTES = MAX_WASM_PAGES * WASM_PAGE;

export interface ArenaPlanOptions {
  /** Executor threads that will search the index (each claims scratch in every arena). */
  readonly threads: number;
  /**
   * At most this many bytes of segment data per arena (default: 4 GiB less the workers'
   * scratch). Small values spread a small index over several arenas (tests).
   */
  readonly arenaBytes?: number;
}

/** One segment's share of the plan: where its blocks go (arena ordinal, addresses). */
export interface SegmentPlacement extends Omit<ResidentSegment, 'arena'> {
  readonly arena: number;
}

export interface ArenaPlan {
  readonly arenas: readonly { readonly dataBytes: number; readonly scratchBytes: number }[];
  /** Per handle, in order; null for a segment with no vectors. */
  readonly placements: readonly (SegmentPlacement | null)[];
  /** What the index will hold, in bytes. */
  readonly bytes: ResidentBytes;
}

/** Memory an open index holds for its first phase. */
export interface ResidentBytes {
  /** 1-bit records (the `.veq` data). */
  readonly codes: number;
  /** Neighbour lists of every level and upper levels' node lists. */
  readonly graphs: number;
  /** Scratch one worker claims over all the arenas. */
  readonly scratchPerWorker: number;
  readonly arenas: number;
}

/**
 * Places every segment of an index in arenas, in segment order (reading each graph's `.vem`
 * for its shape; nothing else is read). Throws if one segment alone exceeds an arena.
 */
export function planArenas(handles: readonly SegmentHandle[], options: ArenaPlanOptions): ArenaPlan {
  const shapes = handles.map(segmentShape);
  let maxNodes = 0;
  let maxStride = 0;
  let segmentsWithData = 0;
  let liveBytes = 0;
  for (const s of shapes) {
    if (!s) continue;
    segmentsWithData++;
    maxNodes = Math.max(maxNodes, s.nodes);
    maxStride = Math.max(maxStride, s.stride);
    liveBytes += s.liveBytes;
  }
  const first = handles.find((h) => h.quantized !== null);
  const dims = first?.dims ?? 0;
  const codeBytes = first?.quantized?.codeBytes ?? 0;
  // Upper bound of one worker's scratch in an arena holding every segment (the estimate sizes
  // the first region; a worker that needs more grows the arena again).
  const scratch = pageCeil(scratchBytes(maxNodes, maxStride, dims, codeBytes, segmentsWithData) + liveBytes);
  const reserve = (Math.max(1, options.threads) + 2) * scratch;
  const budget = Math.min(options.arenaBytes ?? Infinity, MAX_ARENA_BYTES - reserve - ARENA_BASE);
  if (!(budget > 0)) throw new RangeError(`arena budget of ${options.arenaBytes} bytes leaves no room for segment data`);

  const arenas: { dataBytes: number; scratchBytes: number }[] = [];
  let codes = 0;
  let graphs = 0;
  let at = Infinity;
  const placements = shapes.map((s, i): SegmentPlacement | null => {
    if (!s) return null;
    if (s.bytes > budget) {
      throw new RangeError(`segment ${handles[i].name} needs ${s.bytes} bytes of codes and graph, more than an arena holds (${budget})`);
    }
    if (at + s.bytes > ARENA_BASE + budget) {
      arenas.push({ dataBytes: ARENA_BASE, scratchBytes: scratch });
      at = ARENA_BASE;
    }
    const arena = arenas.length - 1;
    const records = at;
    const graphAt = align64(records + s.codes);
    const graph = s.graph ? layOutGraph(graphAt, s.nodes, s.stride, s.graph.entryNode, s.graph.upper) : null;
    at = align64(graphAt + s.graphBytes);
    arenas[arena].dataBytes = at;
    codes += s.codes;
    graphs += s.graphBytes;
    return { arena, records, graph, bytes: { codes: s.codes, graph: s.graphBytes } };
  });
  return { arenas, placements, bytes: { codes, graphs, scratchPerWorker: scratch * arenas.length, arenas: arenas.length } };
}

/** Creates the plan's shared memories (released together under `releaseId`) and gives each handle its residency (nothing is read yet). */
export function createArenas(releaseId: number, handles: readonly SegmentHandle[], plan: ArenaPlan): { arenas: ArenaRef[]; handles: SegmentHandle[] } {
  const arenas = plan.arenas.map(
    (a, ordinal): ArenaRef => ({
      key: `${releaseId}.${ordinal}`,
      releaseId,
      memory: newArenaMemory(a.dataBytes),
      dataBytes: a.dataBytes,
      scratchBytes: a.scratchBytes,
    }),
  );
  return {
    arenas,
    handles: handles.map((h, i) => {
      const p = plan.placements[i];
      return p ? { ...h, resident: { ...p, arena: arenas[p.arena] } } : h;
    }),
  };
}

/** A single-segment arena of this thread's own (a worker searching a handle that no open index has loaded). */
export function privateArena(handle: SegmentHandle, key: string): SegmentHandle {
  const plan = planArenas([handle], { threads: 1 });
  const p = plan.placements[0];
  if (!p) return handle;
  const a = plan.arenas[0];
  const arena: ArenaRef = {
    key,
    releaseId: handle.indexId,
    memory: newArenaMemory(a.dataBytes),
    dataBytes: a.dataBytes,
    scratchBytes: a.scratchBytes,
  };
  return { ...handle, resident: { ...p, arena } };
}

/**
 * A shared memory for `dataBytes` of segments (growable to 4 GiB for the workers' scratch). The
 * data range is advised for transparent huge pages: codes are scored at random ords, and huge
 * pages cut TLB misses (measured ~20% on 1024-dim records); PRESCORE_HUGEPAGES=0 turns it off.
 */
function newArenaMemory(dataBytes: number): WasmMemory {
  const initial = pageCeil(dataBytes);
  const memory = new wasm.Memory({ shared: true, initial: initial / WASM_PAGE, maximum: MAX_WASM_PAGES });
  if (process.env.PRESCORE_HUGEPAGES !== '0') adviseHugePages(new Uint8Array(memory.buffer, 0, initial));
  return memory;
}

interface SegmentShape {
  readonly codes: number;
  readonly nodes: number;
  readonly stride: number;
  readonly graph: { readonly entryNode: number; readonly upper: { count: number; stride: number }[] } | null;
  readonly graphBytes: number;
  /** The live-ords copy each thread keeps in its scratch (0: every ord live). */
  readonly liveBytes: number;
  readonly bytes: number;
}

function segmentShape(handle: SegmentHandle): SegmentShape | null {
  const q = handle.quantized;
  if (!q || q.count === 0) return null;
  const codes = q.count * q.recordBytes;
  const liveBytes = handle.liveOrds ? align64(4 * handle.liveOrds.length) : 0;
  let graph: SegmentShape['graph'] = null;
  let nodes = 0;
  let stride = 0;
  let graphBytes = 0;
  if (handle.graph) {
    const g = handle.graph;
    const entry = HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix).field(g.fieldNumber);
    if (entry && hasGraph(entry)) {
      // The reader's capacity: Lucene decodes lists into 2M ints on every level.
      stride = 2 * entry.M + 1;
      nodes = entry.size;
      const upper = entry.nodesByLevel.slice(1).map((l) => ({ count: l!.length, stride }));
      graph = { entryNode: entryNodeOf(entry), upper };
      graphBytes = residentGraphBytes(nodes, stride, upper);
    }
  }
  return { codes, nodes, stride, graph, graphBytes, liveBytes, bytes: align64(codes) + graphBytes + 64 };
}

/**
 * One worker's scratch in an arena: the graph search's context, visit stamps and candidate heap
 * for the largest graph, neighbour buffers and a full results queue; per segment the query's
 * quantizer scratch and planes and the scorer's buffers; plus a quarter for fragmentation.
 */
export function scratchBytes(maxNodes: number, maxStride: number, dims: number, codeBytes: number, segments: number): number {
  const search = 128 + 12 * maxNodes + 8 * maxStride + 4 * ((codeBytes + 15) & ~15) + 16 * PLANNED_QUEUE;
  const perSegment = 4 * dims + 64 + 4 * codeBytes + 2 * 4 * 256 + 64;
  return Math.ceil(1.25 * (search + segments * perSegment)) + 4 * ((codeBytes + 15) & ~15) + 64;
}

function align64(x: number): number {
  return Math.ceil(x / 64) * 64;
}

function pageCeil(x: number): number {
  return Math.max(WASM_PAGE, Math.ceil(x / WASM_PAGE) * WASM_PAGE);
}
