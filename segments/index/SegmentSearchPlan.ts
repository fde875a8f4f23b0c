/**
 * How one segment's first phase is searched: its HNSW graph, or a flat scan of every code.
 *
 * A graph search scores a few hundred to a few thousand records at random places (each visit
 * also costs its heap pushes and visit stamp), a flat scan every record, front to back, in
 * chunks. So the scan is the cheaper one when the segment has fewer docs than the graph would
 * visit times the cost of one visit in scanned docs: small segments, and a large beam (k x
 * oversample candidates need ef >= k x oversample). As Lucene does when a filter leaves fewer
 * docs than the graph search would visit, the plan (1) scans outright when the expected visits
 * already cost more than the scan, and (2) otherwise gives the graph search a visit limit of
 * what the scan costs and scans instead when the search reaches it, so a graph search never
 * costs much more than twice the scan. Both depend only on the segment's size and the query's
 * ef, so a query gets the same hits from every worker.
 */

/**
 * 'hnsw': the graph (with a filter: every visited node scored, the accepted ones collected, as
 * Lucene's filtered HNSW search); 'filtered-hnsw': the graph as a filtered traversal (accepted
 * nodes only, crossing rejected ones; HnswGraphSearcher's FilteredTraversal); 'exhaustive':
 * every (accepted) code scored.
 */
export const SEGMENT_STRATEGIES = ['hnsw', 'exhaustive', 'filtered-hnsw'] as const;
export type SegmentStrategy = (typeof SEGMENT_STRATEGIES)[number];

/** What a search may ask of every segment: the plan's choice (`auto`) or one strategy forced. */
export const SEGMENT_SEARCHES = ['auto', 'hnsw', 'exhaustive', 'filtered-hnsw'] as const satisfies readonly ('auto' | SegmentStrategy)[];
/** How a segment's first phase searches: its HNSW graph or a flat scan of every code. */
export type SegmentSearch = (typeof SEGMENT_SEARCHES)[number];

/**
 * One graph visit costs this many flat-scanned docs: a visit scores a random record (cache
 * misses) and pushes onto two heaps, a scanned doc is streamed. Measured by bench:recall's gap
 * table ("visit/doc cost": ms per visited doc of the HNSW row over ms per doc of the exhaustive
 * row, same codes, one process, oversample 5): 2.9-5.2 on Fashion-MNIST (60k x 784), 4.3-5.6 on the
 * built gen 1M x 1024 index (whole searches), 1.3-1.6 on MiniLM's 680 docs (all in cache).
 */
export const VISIT_COST_IN_SCANNED_DOCS = 4;

/**
 * Expected level-0 visits per unit of beam width, a deliberately low estimate so that doubtful
 * cases try the graph first (the visit limit catches the rest). Visits per query / ef at M = 16
 * (docs/building-indexes.md "Segment sizes" and bench:recall's visits column): 5-7 at ef 100 on 25k-125k-doc
 * segments of 1024-dim generated data, ~5.4 at ef 200.
 */
export const EXPECTED_VISITS_PER_EF = 4;

export interface SegmentSearchPlan {
  readonly strategy: SegmentStrategy;
  /**
   * For 'hnsw': stop the graph search once it has scored this many records (then scan instead);
   * Infinity when the segment is searched without the cost model.
   */
  readonly visitLimit: number;
}

const SCAN: SegmentSearchPlan = { strategy: 'exhaustive', visitLimit: Infinity };

/**
 * The plan for a segment of `docs` records searched with beam `ef` (>= k); `hasGraph` false means
 * the segment was built without one (at most the flat threshold's docs) and is always scanned.
 */
export function planSegmentSearch(docs: number, ef: number, hasGraph: boolean): SegmentSearchPlan {
  if (!hasGraph) return SCAN;
  const scanCostInVisits = docs / VISIT_COST_IN_SCANNED_DOCS;
  if (EXPECTED_VISITS_PER_EF * ef >= scanCostInVisits) return SCAN;
  return { strategy: 'hnsw', visitLimit: Math.floor(scanCostInVisits) };
}

/**
 * The plan for a segment of `docs` records of which a filter accepts `cardinality` (live and
 * passing), searched with beam `ef`, where `nearby` is the share of the query's graph
 * neighbourhood the filter accepts (ResidentGraphSearcher.nearbyAcceptance; the selectivity
 * itself when unknown). Lucene's rule bounds the cost: no plan costs much more than scoring every
 * accepted code, because a graph search is given the scan's cost as its visit limit and replaced
 * by the scan when it reaches it. Within that bound the cheapest expected strategy wins:
 * - the scan costs `cardinality` scanned docs (only passing codes are scored);
 * - the plain filtered graph scores about EXPECTED_VISITS_PER_EF x ef / nearby nodes (it must
 *   visit 1/nearby nodes per accepted one where it searches), each VISIT_COST_IN_SCANNED_DOCS;
 * - the filtered traversal scores accepted nodes only, about FILTERED_VISITS_PER_EF x ef, but
 *   reads the lists of the rejected neighbours it crosses: per scored node about
 *   (1 - nearby) x 2M checks of TWO_HOP_CHECK_COST scanned docs each. It is not planned where
 *   the filter's docs lie away from the query (nearby below FAR_FILTER x the selectivity): there
 *   it walks from the seeds to the nearest accepted region and stops, missing the others
 *   (measured on gen 1M x 1024 with a filter of the farthest clusters: recall@10 0.68 at 50 %,
 *   0.63 at 10 %, against 0.95-0.97 for the scan).
 */
export function planFilteredSearch(docs: number, cardinality: number, ef: number, hasGraph: boolean, maxConn: number, nearby = cardinality / docs): SegmentSearchPlan {
  if (!hasGraph || cardinality <= ef) return SCAN;
  const s = cardinality / docs;
  const scan = cardinality;
  const plain = nearby > 0 ? (EXPECTED_VISITS_PER_EF * ef * VISIT_COST_IN_SCANNED_DOCS) / nearby : Infinity;
  const filtered = nearby >= FAR_FILTER * s ? FILTERED_VISITS_PER_EF * ef * (VISIT_COST_IN_SCANNED_DOCS + (1 - nearby) * 2 * maxConn * TWO_HOP_CHECK_COST) : Infinity;
  const limit = Math.floor(scan / VISIT_COST_IN_SCANNED_DOCS);
  if (scan <= Math.min(plain, filtered)) return SCAN;
  return { strategy: filtered < plain ? 'filtered-hnsw' : 'hnsw', visitLimit: limit };
}

/**
 * A filter whose share of the query's neighbourhood is below this fraction of its selectivity is
 * "far" from the query (anti-correlated): no filtered traversal. A uniform filter's nearby share
 * is its selectivity give or take sampling noise (~1,000 ords checked), an anti-correlated one's 0.
 */
export const FAR_FILTER = 0.25;

/** Scored nodes per unit of beam width in a filtered traversal (more than unfiltered: two-hop hops land on fewer good nodes). */
export const FILTERED_VISITS_PER_EF = 6;

/** One neighbour check of a filtered traversal (a visit stamp and a filter bit, no scoring), in scanned docs. */
export const TWO_HOP_CHECK_COST = 0.05;
