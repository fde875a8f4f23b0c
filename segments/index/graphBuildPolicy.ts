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
