/**
 * What the graph searcher reads of an HNSW graph (Lucene's HnswGraph): levels of fixed-stride
 * neighbour lists, `[count, ords...]` per slot. Level 0 has a slot per node (slot == node); an
 * upper level maps node -> slot. OnHeapHnswGraph (build, tests) and ResidentGraph (a graph laid
 * out in a kernels memory, shared by the workers) both implement it.
 */
export interface SlotLookup {
  get(node: number): number | undefined;
}

export interface HnswGraphLevel {
  readonly adj: Int32Array;
  /** Ints per slot: 1 (the count) + the list capacity. */
  readonly stride: number;
  /** Max neighbours a list holds. */
  readonly capacity: number;
  /** node -> slot; null on level 0. */
  readonly slotOf: SlotLookup | null;
}

export interface HnswGraph {
  /** Number of nodes on level 0. */
  size(): number;
  readonly numLevels: number;
  /** The entry node on the top level, or -1 for an empty graph. */
  readonly entryNode: number;
  store(level: number): HnswGraphLevel;
}

/**
 * What HnswGraphSearcher reads of a graph, wherever its lists lie (Lucene's HnswGraph seek +
 * neighbours): a node's list on a level as `[count, ord_1 .. ord_count]` ints in `lists`. A graph
 * held in typed arrays points into its own arrays (StoredNeighborLists: no copy); a graph read in
 * place from `.vex` (OffHeapHnswGraph) decodes the list into a scratch each time.
 */
export interface NeighborLists {
  /** Number of nodes on level 0. */
  readonly size: number;
  readonly numLevels: number;
  /** The entry node on the top level, or -1 for an empty graph. */
  readonly entryNode: number;
  /** The longest list on any level (the searcher's buffer size). */
  readonly maxListLength: number;
  /** The ints seek() points into; re-read after every seek(), valid until the next. */
  readonly lists: Int32Array;
  /** Makes `node`'s list on `level` readable: returns the offset in `lists` of its count. */
  seek(level: number, node: number): number;
}

const NO_INTS: Int32Array = new Int32Array(0);

/**
 * An HnswGraph's fixed-stride lists as NeighborLists, zero copy. reset() per search: a graph
 * being built may have grown its arrays since the last one.
 */
export class StoredNeighborLists implements NeighborLists {
  size = 0;
  numLevels = 0;
  entryNode = -1;
  maxListLength = 0;
  lists = NO_INTS;
  private graph: HnswGraph | null = null;
  private level = -1;
  private stride = 0;
  private slotOf: SlotLookup | null = null;

  reset(graph: HnswGraph): this {
    this.graph = graph;
    this.size = graph.size();
    this.numLevels = graph.numLevels;
    this.entryNode = graph.entryNode;
    let max = 0;
    for (let level = 0; level < graph.numLevels; level++) max = Math.max(max, graph.store(level).capacity);
    this.maxListLength = max;
    this.level = -1;
    return this;
  }

  seek(level: number, node: number): number {
    if (level !== this.level) {
      const store = this.graph!.store(level);
      this.lists = store.adj;
      this.stride = store.stride;
      this.slotOf = store.slotOf;
      this.level = level;
    }
    return (this.slotOf === null ? node : this.slotOf.get(node)!) * this.stride;
  }
}
