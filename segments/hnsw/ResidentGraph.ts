import type { HnswGraph, HnswGraphLevel, SlotLookup } from './HnswGraph.js';
import type { OnHeapHnswGraph } from './OnHeapHnswGraph.js';

/**
 * Where an HNSW graph lies in a kernels memory (an arena, or a thread's own memory): byte
 * addresses and counts, plain data that crosses to worker threads with a task. Level 0 is
 * `size` lists of `stride` ints, `[count, ords...]`, node n at `level0 + 4 * n * stride`; upper
 * level l (1-based in `upper[l - 1]`) holds its nodes in ascending order (`count` ints at
 * `nodes`) and their lists in the same order at `adj` (slot = index in `nodes`, found by
 * binary search, as Lucene's off-heap graph does). With the reader's capacity of 2M per list,
 * level 0 costs 4 (2M + 1) bytes per node: 132 at M = 16.
 */
export interface ResidentGraphLayout {
  readonly size: number;
  readonly stride: number;
  readonly entryNode: number;
  readonly level0: number;
  readonly upper: readonly ResidentLevelLayout[];
}

export interface ResidentLevelLayout {
  readonly count: number;
  readonly stride: number;
  readonly nodes: number;
  readonly adj: number;
}

/** An upper level's shape: its node count and ints per list. */
export interface LevelShape {
  readonly count: number;
  readonly stride: number;
}

/** Bytes a graph of `size` nodes with these upper levels takes (each block 64-byte aligned). */
export function residentGraphBytes(size: number, stride: number, upper: readonly LevelShape[]): number {
  let bytes = align64(4 * size * stride);
  for (const l of upper) bytes += align64(4 * l.count) + align64(4 * l.count * l.stride);
  return bytes;
}

/** Assigns the addresses of a graph's blocks from `base` on (64-byte aligned), in residentGraphBytes' order. */
export function layOutGraph(base: number, size: number, stride: number, entryNode: number, upper: readonly LevelShape[]): ResidentGraphLayout {
  let at = align64(base);
  const level0 = at;
  at += align64(4 * size * stride);
  const levels = upper.map(({ count, stride: s }) => {
    const nodes = at;
    at += align64(4 * count);
    const adj = at;
    at += align64(4 * count * s);
    return { count, stride: s, nodes, adj };
  });
  return { size, stride, entryNode, level0, upper: levels };
}

function align64(x: number): number {
  return Math.ceil(x / 64) * 64;
}

/**
 * Copies an on-heap graph into a resident layout at `base` of `memory` (which must hold
 * residentGraphBytes from base on): level 0 as is, upper levels re-ordered by node.
 */
export function writeResidentGraph(memory: ArrayBufferLike, base: number, graph: OnHeapHnswGraph): ResidentGraphLayout {
  const stride = graph.store(0).stride;
  const shapes: LevelShape[] = [];
  for (let level = 1; level < graph.numLevels; level++) shapes.push({ count: graph.levelSize(level), stride: graph.store(level).stride });
  const layout = layOutGraph(base, graph.size(), stride, graph.entryNode, shapes);
  const i32 = new Int32Array(memory);
  i32.set(graph.store(0).adj.subarray(0, graph.size() * stride), layout.level0 >>> 2);
  layout.upper.forEach((l, i) => {
    const level = i + 1;
    const nodes = graph.getNodesOnLevel(level);
    const store = graph.store(level);
    i32.set(nodes, l.nodes >>> 2);
    for (let s = 0; s < nodes.length; s++) {
      const from = graph.slot(level, nodes[s]) * l.stride;
      i32.set(store.adj.subarray(from, from + l.stride), (l.adj >>> 2) + s * l.stride);
    }
  });
  return layout;
}

/**
 * A resident graph as the JS searcher sees it (HnswGraph over views of the memory). The views
 * are re-made by refresh() when the memory's buffer changed (growth).
 */
export class ResidentGraph implements HnswGraph {
  private buffer: ArrayBufferLike | null = null;
  private levels: HnswGraphLevel[] = [];

  constructor(
    readonly layout: ResidentGraphLayout,
    private readonly memory: { readonly buffer: ArrayBufferLike },
  ) {
    this.refresh();
  }

  get numLevels(): number {
    return this.layout.upper.length + 1;
  }

  get entryNode(): number {
    return this.layout.size === 0 ? -1 : this.layout.entryNode;
  }

  size(): number {
    return this.layout.size;
  }

  store(level: number): HnswGraphLevel {
    return this.levels[level];
  }

  /** Re-makes the views if the memory has grown since (call before a search). */
  refresh(): void {
    const buffer = this.memory.buffer;
    if (buffer === this.buffer) return;
    this.buffer = buffer;
    const { stride, size } = this.layout;
    const view = (ptr: number, ints: number) => new Int32Array(buffer, ptr, ints);
    this.levels = [
      { adj: view(this.layout.level0, size * stride), stride, capacity: stride - 1, slotOf: null },
      ...this.layout.upper.map((l) => ({ adj: view(l.adj, l.count * l.stride), stride: l.stride, capacity: l.stride - 1, slotOf: new SortedSlots(view(l.nodes, l.count)) })),
    ];
  }
}

/** node -> slot by binary search over a level's ascending nodes. */
class SortedSlots implements SlotLookup {
  constructor(private readonly nodes: Int32Array) {}

  get(node: number): number | undefined {
    const nodes = this.nodes;
    let lo = 0,
      hi = nodes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = nodes[mid];
      if (v === node) return mid;
      if (v < node) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}
