import type { HnswGraph } from './HnswGraph.js';

/**
 * An HNSW graph held in typed arrays (Lucene's OnHeapHnswGraph, without an object per node).
 *
 * Every level stores neighbour lists in one Int32Array with a fixed stride: slot s occupies
 * `adj[s*stride .. s*stride + stride)`, the first int being the neighbour count and the rest the
 * neighbour ordinals (level-0 ordinals on every level). Level 0 holds every node with slot == node;
 * an upper level maps node -> slot through a Map and keeps its own smaller arrays.
 *
 * While building, each list also has a parallel score array (same indices) and a "sorted prefix"
 * length, as Lucene's NeighborArray does: the first `sorted` entries are in descending score order
 * and diversity-checked; entries appended by reverse links are unchecked until the list overflows.
 * `freeze()` drops the scores once the graph is complete. Capacity per list is maxConn + 1 (the
 * extra slot holds the overflowing neighbour until it is pruned), as in Lucene.
 *
 * Memory at M = 16: level 0 is (2M + 2) ints + (2M + 2) floats + 1 byte per node while building
 * (~272 B, 34 MB for 125k nodes) and half that once frozen.
 */
export class LevelStore {
  /** Node ordinal of each slot (slot order = insertion order). */
  nodes: Int32Array;
  adj: Int32Array;
  scores: Float32Array | null;
  sorted: Uint8Array | null;
  count = 0;
  /** node -> slot; null on level 0 (slot == node). */
  readonly slotOf: Map<number, number> | null;

  constructor(
    readonly level: number,
    /** Max neighbours a list can hold (maxConn + 1 while building). */
    readonly capacity: number,
    initialSlots: number,
    withScores: boolean,
  ) {
    const stride = capacity + 1;
    const slots = Math.max(1, initialSlots);
    this.nodes = new Int32Array(level === 0 ? 0 : slots);
    this.adj = new Int32Array(slots * stride);
    this.scores = withScores ? new Float32Array(slots * stride) : null;
    this.sorted = withScores ? new Uint8Array(slots) : null;
    this.slotOf = level === 0 ? null : new Map();
  }

  get stride(): number {
    return this.capacity + 1;
  }

  ensureSlots(slots: number): void {
    const cur = this.adj.length / this.stride;
    if (slots <= cur) return;
    const next = Math.max(slots, Math.ceil(cur * 1.5));
    const stride = this.stride;
    const adj = new Int32Array(next * stride);
    adj.set(this.adj);
    this.adj = adj;
    if (this.scores) {
      const s = new Float32Array(next * stride);
      s.set(this.scores);
      this.scores = s;
    }
    if (this.sorted) {
      const s = new Uint8Array(next);
      s.set(this.sorted);
      this.sorted = s;
    }
    if (this.level > 0) {
      const n = new Int32Array(next);
      n.set(this.nodes);
      this.nodes = n;
    }
  }
}

export interface OnHeapHnswGraphOptions {
  /** M: max neighbours on upper levels; level 0 allows 2*M. */
  readonly maxConn: number;
  /** Expected node count (level-0 storage is allocated up front; it still grows if exceeded). */
  readonly expectedSize?: number;
  /** Keep per-neighbour scores and sorted-prefix lengths (needed while building). Default true. */
  readonly withScores?: boolean;
  /** Override the list capacities (a reader holding a foreign graph may allow 2*M on every level). */
  readonly capacity0?: number;
  readonly capacityUpper?: number;
}

export class OnHeapHnswGraph implements HnswGraph {
  readonly maxConn: number;
  readonly maxConn0: number;
  private readonly withScores: boolean;
  private readonly capUpper: number;
  /** levels[0] is level 0; upper levels are created on first addNode. */
  private readonly levels: LevelStore[];
  private _size = 0;
  private _numLevels = 1;
  private _entryNode = -1;

  constructor(opts: OnHeapHnswGraphOptions) {
    if (!(opts.maxConn > 0)) throw new RangeError('maxConn must be positive');
    this.maxConn = opts.maxConn;
    this.maxConn0 = 2 * opts.maxConn;
    this.withScores = opts.withScores ?? true;
    this.capUpper = opts.capacityUpper ?? this.maxConn + 1;
    const cap0 = opts.capacity0 ?? this.maxConn0 + 1;
    this.levels = [new LevelStore(0, cap0, opts.expectedSize ?? 1024, this.withScores)];
  }

  /** Number of nodes on level 0 (max node id + 1). */
  size(): number {
    return this._size;
  }

  get numLevels(): number {
    return this._numLevels;
  }

  /** The entry node on the top level, or -1 for an empty graph. */
  get entryNode(): number {
    return this._entryNode;
  }

  /** Sets the entry node and the number of levels (top level = level). */
  setEntryNode(node: number, level: number): void {
    this._entryNode = node;
    this._numLevels = level + 1;
  }

  /**
   * Adds `node` to `level` with an empty neighbour list. Level 0 grows to cover every ordinal up to
   * node. Does not touch the entry node or numLevels (see setEntryNode).
   */
  addNode(level: number, node: number): void {
    if (level === 0) {
      if (node >= this._size) {
        const l0 = this.levels[0];
        l0.ensureSlots(node + 1);
        this._size = node + 1;
      }
      return;
    }
    while (this.levels.length <= level) {
      this.levels.push(new LevelStore(this.levels.length, this.capUpper, 16, this.withScores));
    }
    const l = this.levels[level];
    const slotOf = l.slotOf!;
    if (slotOf.has(node)) return;
    l.ensureSlots(l.count + 1);
    const slot = l.count++;
    l.nodes[slot] = node;
    slotOf.set(node, slot);
    l.adj[slot * l.stride] = 0;
    if (l.sorted) l.sorted[slot] = 0;
  }

  /** Storage of a level (hot-path access for the builder and searcher). */
  store(level: number): LevelStore {
    return this.levels[level];
  }

  /** Slot of a node on a level, or -1 when the node is not on it. */
  slot(level: number, node: number): number {
    if (level === 0) return node >= 0 && node < this._size ? node : -1;
    const l = this.levels[level];
    if (!l) return -1;
    const s = l.slotOf!.get(node);
    return s === undefined ? -1 : s;
  }

  /** The highest level `node` is on (-1 when not in the graph). */
  nodeLevel(node: number): number {
    if (node < 0 || node >= this._size) return -1;
    for (let level = this.levels.length - 1; level > 0; level--) if (this.levels[level].slotOf!.has(node)) return level;
    return 0;
  }

  /** Number of nodes on a level. */
  levelSize(level: number): number {
    if (level === 0) return this._size;
    return this.levels[level]?.count ?? 0;
  }

  /** The nodes of a level in ascending order. */
  getNodesOnLevel(level: number): Int32Array {
    if (level === 0) {
      const out = new Int32Array(this._size);
      for (let i = 0; i < out.length; i++) out[i] = i;
      return out;
    }
    const l = this.levels[level];
    if (!l) return new Int32Array(0);
    return l.nodes.slice(0, l.count).sort();
  }

  /** A copy of a node's neighbour list, in stored order. */
  getNeighbors(level: number, node: number): Int32Array {
    const s = this.slot(level, node);
    if (s < 0) throw new RangeError(`node ${node} is not on level ${level}`);
    const l = this.levels[level];
    const base = s * l.stride;
    return l.adj.slice(base + 1, base + 1 + l.adj[base]);
  }

  /** A copy of a node's neighbour scores (building graphs only). */
  getNeighborScores(level: number, node: number): Float32Array {
    const s = this.slot(level, node);
    const l = this.levels[level];
    if (s < 0 || !l.scores) throw new RangeError(`no scores for node ${node} on level ${level}`);
    const base = s * l.stride;
    return l.scores.slice(base + 1, base + 1 + l.adj[base]);
  }

  /** Replaces a node's neighbour list (readers). The node must already be on the level. */
  setNeighbors(level: number, node: number, neighbors: ArrayLike<number>, n = neighbors.length): void {
    const s = this.slot(level, node);
    if (s < 0) throw new RangeError(`node ${node} is not on level ${level}`);
    const l = this.levels[level];
    if (n > l.capacity) throw new RangeError(`${n} neighbours exceed the capacity ${l.capacity} of level ${level}`);
    const base = s * l.stride;
    l.adj[base] = n;
    for (let i = 0; i < n; i++) l.adj[base + 1 + i] = neighbors[i];
    if (l.sorted) l.sorted[s] = n;
  }

  /** Drops build-only state (scores, sorted prefixes) and trims upper-level storage. */
  freeze(): void {
    for (const l of this.levels) {
      l.scores = null;
      l.sorted = null;
    }
    const l0 = this.levels[0];
    const need = Math.max(1, this._size) * l0.stride;
    if (l0.adj.length > need) l0.adj = l0.adj.slice(0, need);
  }

  /** Total neighbour links across all levels. */
  edgeCount(): number {
    let total = 0;
    for (let level = 0; level < this.levels.length; level++) {
      const l = this.levels[level];
      const slots = level === 0 ? this._size : l.count;
      for (let s = 0; s < slots; s++) total += l.adj[s * l.stride];
    }
    return total;
  }

  ramBytesUsed(): number {
    let total = 0;
    for (const l of this.levels) {
      total += l.adj.byteLength + l.nodes.byteLength;
      if (l.scores) total += l.scores.byteLength;
      if (l.sorted) total += l.sorted.byteLength;
      if (l.slotOf) total += l.slotOf.size * 40; // rough Map entry cost
    }
    return total;
  }
}
