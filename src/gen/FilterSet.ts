import type { GenSimilarity } from './DatasetSpec.js';
import { clusterName, type FieldColumns, TAGS } from './DocFields.js';
import { CLUSTERS, type EmbeddingModel } from './EmbeddingModel.js';
import type { FilterDsl } from './FilterDsl.js';
import { keyMode, squaredNorms, toKey } from './GroundTruth.js';

/**
 * The filter set of `prescore gen --filters` (filters.json): for every query, PER_QUERY filters
 * in this order (FILTER_KINDS), for each correlation and each selectivity s in SELECTIVITIES:
 *
 * - uniform-P (P = 100 s, e.g. uniform-0.1 for s = 0.001): {"range": {"u": {"lt": s}}}, the same
 *   for every query; its cardinality is binomial around s N (u is uniform).
 * - correlated-P: docs of the clusters nearest to the query. Clusters with docs are ranked by the
 *   dataset's similarity between the query and their centre (EmbeddingModel.centreImage; ties to
 *   the lower cluster id); whole clusters are taken, nearest first, while their docs fit in
 *   T = round(s N), and the next cluster is cut to the docs still missing by a bound on u (the
 *   u of its (T - taken + 1)-th doc by u, exclusive). So the cardinality is T exactly (ties in u,
 *   53 random bits, could only lower it), and every doc is from the nearest clusters:
 *     {"bool": {"should": [{"terms": {"cluster": [nearest first...]}},
 *                          {"bool": {"filter": [{"term": {"cluster": "c9"}}, {"range": {"u": {"lt": x}}}]}}],
 *               "minimum_should_match": 1}}
 *   or just the terms (no cut needed), or just the cut cluster's bool.filter (T fits in the
 *   nearest cluster; T = 0 gives that with u < 0: no doc).
 * - anti-P: the same from the farthest clusters.
 * - and-4, after those 15: {"bool": {"filter": [{"term": {"tags": "s10"}}, {"range": {"u": {"lt": 0.4}}}]}},
 *   about 4 % (tags and u are drawn independently), the two-clause AND.
 */
export const SELECTIVITIES: readonly number[] = [0.5, 0.1, 0.01, 0.001, 0.0001];
export type Correlation = 'uniform' | 'correlated' | 'anti';
export const CORRELATIONS: readonly Correlation[] = ['uniform', 'correlated', 'anti'];

/** The two-clause AND: tags contains AND_TAG and u < AND_U_BELOW. */
const AND_TAG = 's10';
const AND_U_BELOW = 0.4;

export interface FilterKind {
  readonly name: string;
  readonly correlation: Correlation;
  /** Target fraction of the base. */
  readonly selectivity: number;
  /** Set on and-4 only: the two-clause AND (the others are one range, or a cluster selection). */
  readonly clauses?: number;
}

function percent(s: number): string {
  return String(Number((s * 100).toPrecision(12)));
}

export const FILTER_KINDS: readonly FilterKind[] = [
  ...CORRELATIONS.flatMap((correlation) => SELECTIVITIES.map((selectivity) => ({ name: `${correlation}-${percent(selectivity)}`, correlation, selectivity }))),
  {
    name: `and-${percent(TAGS.find((t) => t.name === AND_TAG)!.probability * AND_U_BELOW)}`,
    correlation: 'uniform',
    selectivity: Number((TAGS.find((t) => t.name === AND_TAG)!.probability * AND_U_BELOW).toPrecision(12)),
    clauses: 2,
  },
];
export const PER_QUERY = FILTER_KINDS.length;

/** One (query, filter) of filters.json: entries[q * PER_QUERY + f] is row q * PER_QUERY + f of the filtered ground truth. */
export interface FilterEntry {
  readonly query: number;
  readonly name: string;
  readonly correlation: Correlation;
  readonly selectivity: number;
  /** Docs that pass, exactly. */
  readonly cardinality: number;
  /** Ids in the ground-truth row: min(k, cardinality). */
  readonly truthLength: number;
  readonly filter: FilterDsl;
}

/** What the builder knows of the base: per-cluster counts and each cluster's u values, sorted. */
class ClusterIndex {
  readonly counts = new Int32Array(CLUSTERS);
  readonly offsets = new Int32Array(CLUSTERS + 1);
  /** u of every doc, grouped by cluster (offsets), ascending within a cluster. */
  readonly sortedU: Float64Array;

  constructor(columns: FieldColumns, n: number) {
    const { cluster, u } = columns;
    for (let d = 0; d < n; d++) this.counts[cluster[d]]++;
    for (let c = 0; c < CLUSTERS; c++) this.offsets[c + 1] = this.offsets[c] + this.counts[c];
    this.sortedU = new Float64Array(n);
    const at = this.offsets.slice(0, CLUSTERS);
    for (let d = 0; d < n; d++) this.sortedU[at[cluster[d]]++] = u[d];
    for (let c = 0; c < CLUSTERS; c++) this.sortedU.subarray(this.offsets[c], this.offsets[c + 1]).sort();
  }

  /** Docs of cluster c with u < x. */
  below(c: number, x: number): number {
    let lo = this.offsets[c];
    let hi = this.offsets[c + 1];
    const first = lo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sortedU[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo - first;
  }
}

export interface FilterSetInput {
  readonly n: number;
  readonly k: number;
  readonly dim: number;
  readonly similarity: GenSimilarity;
  /** queries x dim. */
  readonly queries: Float32Array;
  readonly columns: FieldColumns;
  readonly model: EmbeddingModel;
}

/** Builds every query's filters (query-major, FILTER_KINDS order) with their exact cardinalities. */
export function buildFilterSet(input: FilterSetInput): FilterEntry[] {
  const { n, k, dim: D, similarity, queries, columns, model } = input;
  const Q = Math.floor(queries.length / D);
  const index = new ClusterIndex(columns, n);
  const live: number[] = [];
  for (let c = 0; c < CLUSTERS; c++) if (index.counts[c] > 0) live.push(c);

  // Query-independent cardinalities.
  const uniformCount = SELECTIVITIES.map(() => 0);
  let andCount = 0;
  const andBit = 1 << TAGS.findIndex((t) => t.name === AND_TAG);
  for (let d = 0; d < n; d++) {
    const u = columns.u[d];
    for (let i = 0; i < SELECTIVITIES.length; i++) if (u < SELECTIVITIES[i]) uniformCount[i]++;
    if (columns.tags[d] & andBit && u < AND_U_BELOW) andCount++;
  }

  // Cluster centres as the model emits them, and their squared norms.
  const centres = new Float64Array(live.length * D);
  for (let i = 0; i < live.length; i++) model.centreImage(live[i], centres.subarray(i * D, (i + 1) * D));
  const centreNorms = new Float64Array(live.length);
  for (let i = 0; i < live.length; i++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += centres[i * D + j] * centres[i * D + j];
    centreNorms[i] = s;
  }
  const queryNorms = new Float64Array(Q);
  squaredNorms(queries, 0, D, Q, D, queryNorms);
  const mode = keyMode(similarity);

  const entries: FilterEntry[] = [];
  const keys = new Float64Array(live.length);
  const order = live.map((_, i) => i);
  for (let q = 0; q < Q; q++) {
    for (let i = 0; i < live.length; i++) {
      let dot = 0;
      for (let j = 0; j < D; j++) dot += queries[q * D + j] * centres[i * D + j];
      keys[i] = toKey(mode, dot, queryNorms[q], centreNorms[i]);
    }
    // Nearest first: higher key; ties to the lower cluster id (live is ascending).
    order.sort((a, b) => keys[b] - keys[a] || a - b);
    const nearest = order.map((i) => live[i]);
    const farthest = order
      .slice()
      .sort((a, b) => keys[a] - keys[b] || a - b)
      .map((i) => live[i]);
    for (const kind of FILTER_KINDS) {
      let filter: FilterDsl;
      let cardinality: number;
      if (kind.clauses === 2) {
        filter = { bool: { filter: [{ term: { tags: AND_TAG } }, { range: { u: { lt: AND_U_BELOW } } }] } };
        cardinality = andCount;
      } else if (kind.correlation === 'uniform') {
        filter = { range: { u: { lt: kind.selectivity } } };
        cardinality = uniformCount[SELECTIVITIES.indexOf(kind.selectivity)];
      } else {
        ({ filter, cardinality } = nearestDocs(kind.correlation === 'correlated' ? nearest : farthest, Math.round(kind.selectivity * n), index));
      }
      entries.push({
        query: q,
        name: kind.name,
        correlation: kind.correlation,
        selectivity: kind.selectivity,
        cardinality,
        truthLength: Math.min(k, cardinality),
        filter,
      });
    }
  }
  return entries;
}

/** The first `target` docs along a cluster order: whole clusters, then a u-cut of the next one. */
function nearestDocs(order: readonly number[], target: number, index: ClusterIndex): { filter: FilterDsl; cardinality: number } {
  const whole: string[] = [];
  let taken = 0;
  for (const c of order) {
    const count = index.counts[c];
    if (taken + count <= target) {
      whole.push(clusterName(c));
      taken += count;
      if (taken === target) return { filter: { terms: { cluster: whole } }, cardinality: taken };
      continue;
    }
    // The (target - taken + 1)-th smallest u of the cluster, exclusive; 0 (plainly no doc) for none.
    const x = target === taken ? 0 : index.sortedU[index.offsets[c] + (target - taken)];
    const cut: FilterDsl = { bool: { filter: [{ term: { cluster: clusterName(c) } }, { range: { u: { lt: x } } }] } };
    const cardinality = taken + index.below(c, x);
    if (whole.length === 0) return { filter: cut, cardinality };
    return { filter: { bool: { should: [{ terms: { cluster: whole } }, cut], minimum_should_match: 1 } }, cardinality };
  }
  // Only when target exceeds the docs of all clusters (s N > N), which selectivities <= 1 never ask.
  return { filter: { terms: { cluster: whole } }, cardinality: taken };
}

/** Version of the metadata fields and filter definitions: bump when they change for the same arguments. */
export const FILTERS_VERSION = 1;

/**
 * filters.json: a header and the entries, one per line (query-major, FILTER_KINDS order within a
 * query), so entries[i] describes row i of filtered_groundtruth.ivecs:
 *
 *   {"version": 1, "n": N, "queries": Q, "k": K, "perQuery": 16,
 *    "order": "...", "kinds": [{"name": "uniform-50", "correlation": "uniform", "selectivity": 0.5, "target": 5000}, ...],
 *    "emptyEntries": E, "note": "...",
 *    "entries": [
 *     {"row": 0, "query": 0, "name": "uniform-50", "correlation": "uniform", "selectivity": 0.5, "cardinality": 4987, "truthLength": 100, "filter": {...}},
 *     ...]}
 *
 * `target` is round(s N); `cardinality` the exact number of docs that pass; `truthLength` the
 * ids in the ground-truth row (min(k, cardinality), 0 when no doc passes).
 */
export function filtersJson(entries: readonly FilterEntry[], spec: { n: number; queries: number; k: number }): string {
  const empty = entries.reduce((s, e) => s + (e.cardinality === 0 ? 1 : 0), 0);
  const header = {
    version: FILTERS_VERSION,
    n: spec.n,
    queries: spec.queries,
    k: spec.k,
    perQuery: PER_QUERY,
    order: FILTER_ORDER,
    kinds: FILTER_KINDS.map((kind) => ({
      name: kind.name,
      correlation: kind.correlation,
      selectivity: kind.selectivity,
      ...(kind.clauses ? { clauses: kind.clauses } : {}),
      target: Math.round(kind.selectivity * spec.n),
    })),
    emptyEntries: empty,
    note:
      empty > 0
        ? `${empty} entries have cardinality 0 (at N = ${spec.n}, a selectivity below 1/N can match no doc): their ground-truth rows are empty`
        : 'every filter matches at least one doc',
  };
  const head = JSON.stringify(header);
  const lines = entries.map((e, row) => JSON.stringify({ row, ...e }));
  return `${head.slice(0, -1)},"entries":[\n${lines.join(',\n')}\n]}\n`;
}

export const FILTER_ORDER = `query-major: entry / ground-truth row q * ${PER_QUERY} + f is query q (row q of query.fvecs) with filter f of "kinds"`;
