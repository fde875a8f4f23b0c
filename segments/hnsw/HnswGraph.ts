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
