/**
 * The HNSW construction beam of the graphs prescore builds (its own segments and the sidecars of
 * Lucene indexes): 200, twice Lucene's default of 100 (HnswGraphBuilder.DEFAULT_BEAM_WIDTH). A
 * graph is built with its segment's own 1-bit estimator, as Lucene builds its binary-quantized
 * graphs, and with those noisy scores a beam of 100 leaves the graph short of what the codes can
 * find. Measured 2026-12-02 at the default search beam (200), recall@10 at oversample 5:
 * - 1M x 1024 from `prescore gen` (bench:scale --sweep, 1000 queries): 0.9673 -> 0.9744 on
 *   8 x 125,000 docs, 0.9603 -> 0.9678 on 2 x 500,000; CPU per search 4.03 -> 4.16 ms, visits
 *   8,908 -> 10,163; build 6.4 -> 9.3 min on 2 vCPUs;
 * - Fashion-MNIST cosine, one 60,000-doc graph (bench:recall --matrix lean): HNSW minus the
 *   exhaustive scan of the same codes -0.008 -> -0.004 (0.979 -> 0.982); MiniLM unchanged (1.000).
 */
export const DEFAULT_GRAPH_BEAM_WIDTH = 200;

/**
 * Level-0 lists that Lucene's diversity rule leaves shorter than this are filled up to it with
 * the best candidates the rule rejected (HnswGraphBuilderOptions.minLevel0Connections; the HNSW
 * paper's keepPrunedConnections): M / 2, 8 at the default M of 16. With 1-bit estimated scores
 * the rule keeps as few as one or two neighbours for a node in a dense cluster, and nothing links
 * back to it: such nodes are reachable only by luck, or not at all. Measured 2026-12-02, 200,000
 * x 768 from `prescore gen` in one segment, recall@10 at oversample 5, 1000 queries (exhaustive
 * scan of the same codes 0.9839):
 * - fill to 0 (Lucene's graph): 0.9807 at the default beam, 0.9830 at 400, 0.9835 at 3000; 96
 *   nodes nothing links to, 471 with at most 2 neighbours, 17.8 neighbours on average;
 * - fill to 8: 0.9823 / 0.9835 / 0.9837, 2 and 0 such nodes, 19.1 neighbours, the same search
 *   time (0.72 against 0.75 ms per search, interleaved); fill to 16: the same recall with 25.6
 *   neighbours; fill to 32 (full lists): 0.9176, since a full list must drop a neighbour for every
 *   reverse link it gets, and 7,544 nodes were left with no link to them.
 * On the 1M set's 500,000-doc segments the 1-bit graphs built by Lucene's rule missed 20 of the
 * exhaustive scan's true neighbours even at a search beam of 3000; 17 of them had at most three
 * neighbours of their own. Filled to 8, the 1M x 1024 set's 2 x 500,000 graphs went 0.9678 ->
 * 0.9707 at the default beam, 0.9728 -> 0.9736 at 400 (1.58-1.76 -> 1.45-1.47 ms per search),
 * 0.9733 -> 0.9741 at 3000 (scan 0.9753); its 8 x 125,000 graphs, already at their codes' 0.9748,
 * 0.9744 -> 0.9743 (docs/recall-and-tuning.md, "Filled neighbour lists").
 */
export function defaultMinConnections(m: number): number {
  return Math.floor(m / 2);
}
