/**
 * `npm run bench:recall`: recall@10 after exact rescoring of k x oversample first-phase
 * candidates, by doc bits x rotation x centroid rule x oversample, for an exhaustive and an HNSW
 * first phase, on real data (Fashion-MNIST cosine and euclidean, MiniLM sentence vectors) and a
 * `prescore gen` set. Each row also gives the first phase's mean latency per query (one thread,
 * in process, the segment code the service runs) and the bytes per vector it keeps in memory.
 *
 *   npm run bench:recall -- [--sets fmnist-cosine,fmnist-euclidean,minilm,gen] [--queries 1000]
 *     [--gen-dir /work/bench/gen-1m-1024] [--gen-queries 1000] [--matrix full|default|lean|hnsw] [--bits 1,2]
 *     [--oversample 1,3,5] [--phase exhaustive] [--intervals lucene,unbiased] [--rotation on|off] [--json out.json]
 *     [--gen-index /work/bench/idx-1m-1024-scale]
 *
 * `--gen-index DIR`: the gen set's rows are instead the service's own search on DIR, a `prescore
 * build` of that set with the build's defaults (recallServed.ts): exhaustive and HNSW first phase,
 * each with the service's rescoring; their ms are whole searches. The in-process HNSW rows build
 * one graph over the whole set and stop at --gen-hnsw-docs (200k) docs.
 *
 * Candidates: the first phase keeps k' = k x oversample per query; HNSW searches with
 * ef = max(200, 4 k') (defaultBeam), as the service does by default.
 * Exact rescoring uses float64 similarities; recall is tie-aware (recallData.ts).
 *
 * `--matrix hnsw` is the graph-vs-exhaustive diagnostic: per set, the default 1-bit codes
 * exhaustive and by HNSW at the default beam, at ef = max(num_candidates, k') and 2 k' (num_candidates the default floor, 200), and on a graph built
 * on fp32 similarities instead of the 1-bit estimator; a last table gives every HNSW row minus
 * the exhaustive row of the same codes at equal candidates (the acceptance: within 0.01), with
 * the visits per query and the cost per visit against the cost per scanned doc.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { packageRoot } from '../executor/packageRoot.js';
import { Kernels } from '../../segments/kernels/Kernels.js';
import { quantizeField, quantizationSettings, type IntervalRule, type QuantizationSettings, type QuantizedField } from '../../segments/quantized/ScalarQuantizedVectorsWriter.js';
import type { DocBits } from '../../segments/quantized/ScalarEncodings.js';
import { QueryQuantizer } from '../../segments/quantized/QueryQuantizer.js';
import { BinaryQuantizedScorer } from '../../segments/quantized/BinaryQuantizedScorer.js';
import { EncodedQuantizedScorer } from '../../segments/quantized/EncodedVectorScorer.js';
import { graphBuildScorerSupplier } from '../../segments/quantized/graphBuildScorer.js';
import { RandomizedHadamard, DEFAULT_ROTATION_SEED } from '../../segments/quantization/RandomizedHadamard.js';
import { exactSearch } from '../../segments/hnsw/HnswGraphSearcher.js';
import { ResidentGraphSearcher, type KernelGraphScorer } from '../../segments/hnsw/ResidentGraphSearcher.js';
import type { ResidentRecords } from '../../segments/quantized/BinaryQuantizedScorer.js';
import { HnswGraphBuilder } from '../../segments/hnsw/HnswGraphBuilder.js';
import { DEFAULT_GRAPH_BEAM_WIDTH } from '../../segments/index/graphBuildPolicy.js';
import type { OnHeapHnswGraph } from '../../segments/hnsw/OnHeapHnswGraph.js';
import type { RandomVectorScorerSupplier } from '../../segments/hnsw/RandomVectorScorer.js';
import { Fp32ScorerSupplier } from '../../segments/hnsw/RandomVectorScorer.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { loadRecallSet, recallOf, type RecallSet } from './recallData.js';
import { servedRows } from './recallServed.js';
import { table } from './benchData.js';
import { loadavg } from 'node:os';
import { DEFAULT_NUM_CANDIDATES, defaultBeam } from '../api/openIndex.js';

const { values } = parseArgs({
  options: {
    sets: { type: 'string' },
    queries: { type: 'string' },
    'gen-dir': { type: 'string' },
    'gen-queries': { type: 'string' },
    'gen-hnsw-docs': { type: 'string' },
    /** A `prescore build` of the gen set: its rows are then the service's own search on it (recallServed.ts). */
    'gen-index': { type: 'string' },
    'multibit-queries': { type: 'string' },
    matrix: { type: 'string' },
    json: { type: 'string' },
    oversample: { type: 'string' },
    bits: { type: 'string' },
    /** Only rows with (on) or without (off) rotation. */
    rotation: { type: 'string' },
    /** Interval rules to compare on every row, e.g. lucene,unbiased (default: the build's default per row). */
    intervals: { type: 'string' },
    /** 'exhaustive': skip every HNSW row (no graph builds). */
    phase: { type: 'string' },
    /** HNSW construction beam of the in-process graphs (default: the index builder's). */
    'beam-width': { type: 'string' },
  },
});

const K = 10;
const NUM_CANDIDATES = DEFAULT_NUM_CANDIDATES;
const OVERSAMPLES = (values.oversample ?? '1,2,3,5,10,20').split(',').map(Number);
const QUERIES = Number(values.queries ?? 1000);
const BEAM_WIDTH = Number(values['beam-width'] ?? DEFAULT_GRAPH_BEAM_WIDTH);
/** Queries for the multi-bit rows (default: all). */
const MULTIBIT_QUERIES = Number(values['multibit-queries'] ?? QUERIES);
const CACHE = join(packageRoot(), '.bench', 'recall');
mkdirSync(CACHE, { recursive: true });

interface Config {
  readonly bits: DocBits;
  readonly rotate: boolean;
  readonly centroid: 'lucene' | 'mean';
  /** The doc interval rule; default: the build's (quantizationSettings). */
  readonly intervals?: IntervalRule;
  readonly hnsw: boolean;
  /** Build the graph on fp32 similarities instead of the quantized estimator (diagnostic). */
  readonly fp32Graph?: boolean;
  /** HNSW ef = max(num_candidates, efFactor x k') when set; default the service's defaultBeam(k'). */
  readonly efFactor?: number;
  /** Skip the exhaustive row (diagnostic matrices). */
  readonly hnswOnly?: boolean;
  /** The row is the service's search on this built index (recallServed.ts); its ms are whole searches. */
  readonly servedIndex?: string;
}

function matrix(set: RecallSet): Config[] {
  const cosine = set.similarity === VectorSimilarityFunction.COSINE;
  const centroids = cosine ? (['lucene', 'mean'] as const) : (['lucene'] as const);
  const out: Config[] = [];
  const full = values.matrix === 'full';
  if (values.matrix === 'lean') {
    // Big sets: Lucene's exact 1-bit format against the default build (rotated, plain mean).
    return [
      { bits: 1, rotate: false, centroid: 'lucene', hnsw: true },
      { bits: 1, rotate: true, centroid: cosine ? 'mean' : 'lucene', hnsw: true },
    ];
  }
  if (values.matrix === 'hnsw') {
    // Where the graph loses against the exhaustive scan at equal candidates (docs/recall-and-tuning.md).
    const c = cosine ? 'mean' : 'lucene';
    out.push({ bits: 1, rotate: true, centroid: c, hnsw: true });
    for (const efFactor of [1, 2]) out.push({ bits: 1, rotate: true, centroid: c, hnsw: true, hnswOnly: true, efFactor });
    for (const efFactor of [1, 4]) out.push({ bits: 1, rotate: true, centroid: c, hnsw: true, hnswOnly: true, fp32Graph: true, efFactor });
    return out;
  }
  for (const centroid of centroids) {
    for (const rotate of [false, true]) out.push({ bits: 1, rotate, centroid, hnsw: true });
  }
  const best = cosine ? 'mean' : 'lucene';
  for (const bits of [2, 4] as const) for (const rotate of [false, true]) out.push({ bits, rotate, centroid: best, hnsw: full });
  for (const bits of [7, 8] as const) out.push({ bits, rotate: false, centroid: best, hnsw: false });
  if (full) out.push({ bits: 1, rotate: true, centroid: best, hnsw: true, fp32Graph: true });
  return out;
}

interface Row {
  readonly set: string;
  readonly config: Config;
  readonly phase: 'exhaustive' | 'hnsw';
  readonly recall: Record<number, number>;
  /** Mean first-phase ms per query at each oversample. */
  readonly firstPhaseMs: Record<number, number>;
  /** Mean exact-rescoring ms per query at each oversample. */
  readonly rescoreMs: Record<number, number>;
  readonly bytesPerVector: number;
  readonly buildMs: number;
  /** Mean docs scored per query at each oversample (exhaustive: every doc). */
  readonly visited: Record<number, number>;
}

const kernels = await Kernels.load();

/** The scorer the first phase uses for one query (the wasm estimator of the codes' encoding), over records in kernel memory. */
interface PreparedField {
  readonly q: QuantizedField;
  readonly rotation: RandomizedHadamard | null;
  readonly scorer: KernelGraphScorer;
  readonly records: ResidentRecords;
  readonly supplier: RandomVectorScorerSupplier | null;
  setQuery(query: Float32Array): void;
  release(): void;
}

function prepare(set: RecallSet, cfg: Config): PreparedField {
  const settings: QuantizationSettings = quantizationSettings({
    bits: cfg.bits,
    centroid: cfg.centroid,
    rotation: cfg.rotate ? DEFAULT_ROTATION_SEED : false,
    intervals: cfg.intervals,
  });
  const q = quantizeField(set.base, set.similarity, { settings, withQueryRecords: cfg.hnsw && !cfg.fp32Graph });
  const rotation = cfg.rotate ? new RandomizedHadamard(set.dims, DEFAULT_ROTATION_SEED) : null;
  const enc = settings.encoding;
  const n = set.base.size;
  if (cfg.bits === 1) {
    const codeBytes = enc.docCodeBytes(set.dims);
    const recordBytes = codeBytes + 16;
    const recordsPtr = kernels.alloc(q.records.length);
    kernels.u8().set(q.records, recordsPtr);
    const planesPtr = kernels.alloc(4 * codeBytes);
    const records = { kernels, recordsPtr, count: n, codeBytes, recordBytes };
    const scorer = new BinaryQuantizedScorer(records, {
      planesPtr,
      lower: 0,
      upper: 0,
      additionalCorrection: 0,
      componentSum: 0,
      dims: set.dims,
      similarity: set.similarity.ordinal,
      centroidDP: q.centroidDP,
    });
    scorer.reserve(4096);
    const { queryRecordsPtr, supplier } = graphSupplier(set, q, records);
    const quantizer = new QueryQuantizer(set.similarity, set.dims, kernels);
    return {
      q,
      rotation,
      scorer,
      supplier,
      records,
      setQuery(query) {
        const planes = kernels.u8().subarray(planesPtr, planesPtr + 4 * codeBytes);
        const qq = quantizer.quantize(query, q.centroid, planes, enc, rotation);
        scorer.query = { ...scorer.query, lower: qq.lower, upper: qq.upper, additionalCorrection: qq.additionalCorrection, componentSum: qq.componentSum };
      },
      release() {
        scorer.release();
        quantizer.release();
        kernels.free(recordsPtr);
        kernels.free(planesPtr);
        if (queryRecordsPtr) kernels.free(queryRecordsPtr);
      },
    };
  }
  const code = new Uint8Array(enc.queryCodeBytes(set.dims));
  const codeBytes = enc.docCodeBytes(set.dims);
  const recordsPtr = kernels.alloc(q.records.length);
  kernels.u8().set(q.records, recordsPtr);
  const codePtr = kernels.alloc(code.length);
  const base = { codePtr, lower: 0, upper: 0, additionalCorrection: 0, componentSum: 0, dims: set.dims, similarity: set.similarity.ordinal, centroidDP: q.centroidDP };
  const records = { kernels, recordsPtr, count: n, codeBytes, recordBytes: codeBytes + 16 };
  const scorer = new EncodedQuantizedScorer(enc, records, base);
  scorer.reserve(4096);
  const quantizer = new QueryQuantizer(set.similarity, set.dims, kernels);
  const { queryRecordsPtr, supplier } = graphSupplier(set, q, records);
  return {
    q,
    rotation,
    scorer,
    supplier,
    records,
    setQuery(query) {
      const qq = quantizer.quantize(query, q.centroid, code, enc, rotation);
      kernels.u8().set(code, codePtr);
      scorer.query = { ...base, lower: qq.lower, upper: qq.upper, additionalCorrection: qq.additionalCorrection, componentSum: qq.componentSum };
    },
    release() {
      scorer.release();
      quantizer.release();
      kernels.free(recordsPtr);
      kernels.free(codePtr);
      if (queryRecordsPtr) kernels.free(queryRecordsPtr);
    },
  };
}

/**
 * The doc-vs-doc scorer for an in-process graph, as `prescore build` makes it: the docs' own query
 * records copied into the kernels' memory (freed by the caller; 0 when there are none).
 */
function graphSupplier(set: RecallSet, q: QuantizedField, records: ResidentRecords): { queryRecordsPtr: number; supplier: RandomVectorScorerSupplier | null } {
  if (!q.queryRecords) return { queryRecordsPtr: 0, supplier: null };
  const queryRecordsPtr = records.kernels.alloc(q.queryRecords.length);
  records.kernels.u8().set(q.queryRecords, queryRecordsPtr);
  const supplier = graphBuildScorerSupplier(q.settings.encoding, records, queryRecordsPtr, q.queryRecords, set.dims, set.similarity.ordinal, q.centroidDP);
  return { queryRecordsPtr, supplier };
}

function fp32Supplier(set: RecallSet): Fp32ScorerSupplier {
  const data = new Float32Array(set.base.size * set.dims);
  for (let o = 0; o < set.base.size; o++) data.set(set.base.vector(o), o * set.dims);
  return new Fp32ScorerSupplier(data, set.dims, set.similarity);
}

/** Top k by exact similarity among `cands` (ords). */
function rescore(set: RecallSet, qi: number, cands: Int32Array, n: number): Int32Array {
  const scored: { o: number; s: number }[] = [];
  for (let i = 0; i < n; i++) scored.push({ o: cands[i], s: set.exact(set.queries[qi], cands[i]) });
  scored.sort((a, b) => b.s - a.s || a.o - b.o);
  return Int32Array.from(scored.slice(0, K), (x) => x.o);
}

function runConfig(set: RecallSet, cfg: Config, hnswDocs: number): Row[] {
  const t0 = performance.now();
  const f = prepare(set, cfg);
  const quantizeMs = performance.now() - t0;
  const rows: Row[] = [];
  const codeBytes = f.q.records.length / set.base.size;
  try {
    if (cfg.hnswOnly) return [hnswRow(set, cfg, f, codeBytes)];
    // Exhaustive: one scan per query keeps the top k' for the largest oversample; a smaller
    // oversample's candidates are its prefix (the scan's order is total: score, then ord).
    const maxK = K * Math.max(...OVERSAMPLES);
    const recall: Record<number, number> = {};
    const rescoreMs: Record<number, number> = {};
    for (const os of OVERSAMPLES) recall[os] = rescoreMs[os] = 0;
    let fpMs = 0;
    const nq = cfg.bits === 1 ? set.queries.length : Math.min(MULTIBIT_QUERIES, set.queries.length);
    for (let qi = 0; qi < nq; qi++) {
      const s0 = performance.now();
      f.setQuery(set.queries[qi]);
      const r = exactSearch(f.scorer, maxK);
      fpMs += performance.now() - s0;
      for (const os of OVERSAMPLES) {
        const r0 = performance.now();
        const top = rescore(set, qi, r.ords, Math.min(r.ords.length, K * os));
        rescoreMs[os] += performance.now() - r0;
        recall[os] += recallOf(set, qi, top, K);
      }
    }
    const perQ = (rec: Record<number, number>) => Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, v / nq]));
    rows.push({
      set: set.name,
      config: cfg,
      phase: 'exhaustive',
      recall: perQ(recall),
      firstPhaseMs: Object.fromEntries(OVERSAMPLES.map((os) => [os, fpMs / nq])),
      rescoreMs: perQ(rescoreMs),
      bytesPerVector: codeBytes,
      buildMs: quantizeMs,
      visited: Object.fromEntries(OVERSAMPLES.map((os) => [os, set.base.size])),
    });
    if (cfg.hnsw && values.phase !== 'exhaustive' && set.base.size <= hnswDocs) rows.push(hnswRow(set, cfg, f, codeBytes));
  } finally {
    f.release();
  }
  return rows;
}

function hnswRow(set: RecallSet, cfg: Config, f: PreparedField, codeBytes: number): Row {
  const t0 = performance.now();
  const supplier = cfg.fp32Graph ? fp32Supplier(set) : f.supplier!;
  const graph: OnHeapHnswGraph = new HnswGraphBuilder(supplier, { M: 16, beamWidth: BEAM_WIDTH }).build();
  const buildMs = performance.now() - t0;
  // The service's searcher: upper levels in JS, level 0 in wasm (identical results to HnswGraphSearcher).
  const searcher = ResidentGraphSearcher.load(kernels, f.records, graph, null);
  const recall: Record<number, number> = {};
  const fpMs: Record<number, number> = {};
  const rescoreMs: Record<number, number> = {};
  const visited: Record<number, number> = {};
  const nq = cfg.bits === 1 ? set.queries.length : Math.min(MULTIBIT_QUERIES, set.queries.length);
  for (const os of OVERSAMPLES) {
    let rec = 0,
      ms = 0,
      rms = 0,
      vis = 0;
    const kPrime = K * os;
    for (let qi = 0; qi < nq; qi++) {
      const s0 = performance.now();
      f.setQuery(set.queries[qi]);
      const r = searcher.search(f.scorer, kPrime, cfg.efFactor ? Math.max(NUM_CANDIDATES, cfg.efFactor * kPrime) : defaultBeam(kPrime));
      ms += performance.now() - s0;
      vis += r.visited;
      const r0 = performance.now();
      const top = rescore(set, qi, r.ords, r.ords.length);
      rms += performance.now() - r0;
      rec += recallOf(set, qi, top, K);
    }
    recall[os] = rec / nq;
    fpMs[os] = ms / nq;
    rescoreMs[os] = rms / nq;
    visited[os] = vis / nq;
  }
  searcher.release();
  // Level 0 holds up to 2M = 32 neighbours plus a count per node (the resident layout).
  const graphBytes = 4 * (2 * 16 + 2);
  return { set: set.name, config: cfg, phase: 'hnsw', recall, firstPhaseMs: fpMs, rescoreMs, bytesPerVector: codeBytes + graphBytes, buildMs, visited };
}

function label(c: Config): string {
  return `${c.bits}-bit${c.rotate ? ' rot' : ''}${c.centroid === 'mean' ? ' mean-c' : ''}${c.intervals ? ` ${c.intervals}-iv` : ''}${c.fp32Graph ? ' fp32-graph' : ''}${c.efFactor ? ` ef=${c.efFactor}k'` : ''}${c.servedIndex ? ' built index' : ''}`;
}

const wanted = (values.sets ?? 'fmnist-cosine,fmnist-euclidean,minilm,gen').split(',');
const genDir = values['gen-dir'] ?? '/work/bench/gen-1m-1024';
const all: Row[] = [];
const loadBefore = loadavg();
const started = new Date();
for (const name of wanted) {
  const set = await loadRecallSet(name, { queryCount: name === 'gen' ? Number(values['gen-queries'] ?? QUERIES) : QUERIES, k: K, cacheDir: CACHE, genDir });
  if (set === null) continue;
  const hnswDocs = Number(values['gen-hnsw-docs'] ?? 200_000);
  process.stderr.write(`bench:recall: ${set.name}: ${set.base.size} x ${set.dims} ${set.similarity.userName}, ${set.queries.length} queries\n`);
  if (name === 'gen' && values['gen-index']) {
    const served = await servedRows(set, values['gen-index'], OVERSAMPLES, K);
    const config: Config = {
      bits: served.bits as DocBits,
      rotate: served.rotated,
      centroid: set.similarity === VectorSimilarityFunction.COSINE ? 'mean' : 'lucene',
      hnsw: true,
      servedIndex: values['gen-index'],
    };
    for (const r of served.rows) {
      const row: Row = {
        set: set.name,
        config,
        phase: r.phase,
        recall: r.recall,
        firstPhaseMs: r.searchMs,
        rescoreMs: {},
        bytesPerVector: served.bytesPerVector,
        buildMs: NaN,
        visited: r.visited,
      };
      all.push(row);
      process.stderr.write(`  ${label(config).padEnd(24)} ${r.phase.padEnd(10)} ${OVERSAMPLES.map((os) => `os${os} ${r.recall[os].toFixed(3)}`).join('  ')}\n`);
    }
    set.close();
    continue;
  }
  const bitsFilter = values.bits ? new Set(values.bits.split(',').map(Number)) : null;
  const intervalRules = values.intervals ? (values.intervals.split(',') as IntervalRule[]) : [undefined];
  const rotationFilter = values.rotation === undefined ? null : values.rotation === 'on';
  const configs = matrix(set)
    .filter((c) => (!bitsFilter || bitsFilter.has(c.bits)) && (rotationFilter === null || c.rotate === rotationFilter))
    .flatMap((c) => intervalRules.map((intervals) => ({ ...c, intervals })));
  for (const cfg of configs) {
    const rows = runConfig(set, cfg, hnswDocs);
    for (const r of rows) {
      all.push(r);
      process.stderr.write(
        `  ${label(cfg).padEnd(24)} ${r.phase.padEnd(10)} ${OVERSAMPLES.map((os) => `os${os} ${r.recall[os].toFixed(3)}`).join('  ')}  fp ${(r.firstPhaseMs[5] ?? r.firstPhaseMs[OVERSAMPLES[0]]).toFixed(2)} ms\n`,
      );
    }
  }
  set.close();
}

const header = ['set', 'codes', 'first phase', ...OVERSAMPLES.map((os) => `os${os}`), 'fp ms@os5', 'rescore ms@os5', 'visits/q@os5', 'B/vec'];
const out = [
  `bench:recall  k=${K}, num_candidates ${NUM_CANDIDATES} (HNSW ef = max(nc, 4 x k x oversample), the service's default), recall@10 after exact rescoring of k x oversample; ` +
    `${started.toISOString()}, load ${loadBefore.map((x) => x.toFixed(1)).join(' ')} -> ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  '',
  table(
    header,
    all.map((r) => [
      r.set,
      label(r.config),
      r.phase,
      ...OVERSAMPLES.map((os) => r.recall[os].toFixed(3)),
      r.firstPhaseMs[5] ?? NaN,
      r.rescoreMs[5] ?? '-',
      Math.round(r.visited[5] ?? NaN),
      r.bytesPerVector,
    ]),
  ),
  ...(all.some((r) => r.config.servedIndex)
    ? [
        '',
        "built index rows: the service's search on the index (recallServed.ts); their ms are whole searches (first phase + the service's rescoring), B/vec what the open index holds.",
      ]
    : []),
  ...gapTable(all),
].join('\n');
process.stdout.write(`${out}\n`);
if (values.json) writeFileSync(values.json, JSON.stringify(all, null, 2));

/**
 * Every HNSW row minus the exhaustive row of the same codes (bits, rotation, centroid) at equal
 * candidates, per oversample; and the first phase's cost per visited doc against the scan's cost
 * per doc (what SegmentSearchPlan's VISIT_COST_IN_SCANNED_DOCS models).
 */
function gapTable(rows: readonly Row[]): string[] {
  const key = (r: Row) => `${r.set}|${r.config.bits}|${r.config.rotate}|${r.config.centroid}|${r.config.intervals}|${r.config.servedIndex}`;
  const exhaustive = new Map(rows.filter((r) => r.phase === 'exhaustive').map((r) => [key(r), r]));
  const body: (string | number)[][] = [];
  for (const r of rows) {
    const ex = exhaustive.get(key(r));
    if (r.phase !== 'hnsw' || !ex) continue;
    const os = OVERSAMPLES.includes(5) ? 5 : OVERSAMPLES[0];
    const perVisit = r.firstPhaseMs[os] / r.visited[os];
    const perDoc = ex.firstPhaseMs[os] / ex.visited[os];
    body.push([r.set, label(r.config), ...OVERSAMPLES.map((o) => (r.recall[o] - ex.recall[o]).toFixed(3)), (perVisit / perDoc).toFixed(2)]);
  }
  if (body.length === 0) return [];
  return [
    '',
    'HNSW minus exhaustive at equal candidates (k x oversample), and ms per visit / ms per scanned doc:',
    '',
    table(['set', 'codes', ...OVERSAMPLES.map((o) => `os${o}`), 'visit/doc cost'], body),
  ];
}
