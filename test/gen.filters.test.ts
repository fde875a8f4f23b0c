import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readAllVectors } from '../segments/input/openVectorSource.js';
import { FvecsWriter } from '../segments/input/XvecsWriter.js';
import { Executor } from '../src/executor/Executor.js';
import type { GenSimilarity } from '../src/gen/DatasetSpec.js';
import { TAGS, TS_SPAN_MS, TS_START } from '../src/gen/DocFields.js';
import { filteredGroundTruthRange } from '../src/gen/filteredGroundTruthTask.js';
import { compileFilter } from '../src/gen/FilterDsl.js';
import { readFilteredGroundTruth } from '../src/gen/FilteredGroundTruth.js';
import { indexFilters } from '../src/gen/FilteredScorer.js';
import { FILTER_KINDS, PER_QUERY, SELECTIVITIES } from '../src/gen/FilterSet.js';
import { genCommand } from '../src/gen/genCommand.js';
import { generateBaseWithFields, generateDataset } from '../src/gen/generateDataset.js';
import { Rng } from '../src/gen/Rng.js';

// These run tasks on the executor, i.e. the compiled dist/ (npm test builds first).

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prescore-gen-filters-'));
});
afterAll(async () => {
  await Executor.shutdown();
  await rm(dir, { recursive: true, force: true });
});

const BASE_FILES = ['base.fvecs', 'query.fvecs', 'groundtruth.ivecs'];
const FILTER_FILES = ['fields.jsonl', 'mapping.json', 'filters.json', 'filtered_groundtruth.ivecs'];

interface Doc {
  cluster: string;
  u: number;
  tags: string[];
  ts: number;
}

interface Entry {
  row: number;
  query: number;
  name: string;
  correlation: string;
  selectivity: number;
  cardinality: number;
  truthLength: number;
  filter: Query;
}

type Query = Record<string, unknown>;

/**
 * A naive evaluator of the Query DSL over JSON documents (term, terms, range, bool with filter /
 * must / should / must_not, multi-valued fields as arrays): the specification the generator's own
 * compiled evaluator must meet. Each query becomes a predicate once.
 */
type Predicate = (doc: Record<string, unknown>) => boolean;

function predicate(query: Query): Predicate {
  const [kind, body] = Object.entries(query)[0] as [string, Record<string, unknown>];
  const values = (doc: Record<string, unknown>, field: string): unknown[] => {
    const v = doc[field];
    return Array.isArray(v) ? v : v === undefined ? [] : [v];
  };
  switch (kind) {
    case 'term': {
      const [field, value] = Object.entries(body)[0];
      return (doc) => values(doc, field).includes(value);
    }
    case 'terms': {
      const [field, list] = Object.entries(body)[0] as [string, unknown[]];
      const set = new Set(list);
      return (doc) => values(doc, field).some((v) => set.has(v));
    }
    case 'range': {
      const [field, bounds] = Object.entries(body)[0] as [string, Record<string, number>];
      const ops = Object.entries(bounds);
      const inRange = (n: number) => ops.every(([op, x]) => (op === 'lt' ? n < x : op === 'lte' ? n <= x : op === 'gt' ? n > x : op === 'gte' ? n >= x : false));
      return (doc) => values(doc, field).some((v) => inRange(v as number));
    }
    case 'bool': {
      const b = body as { filter?: Query[]; must?: Query[]; should?: Query[]; must_not?: Query[]; minimum_should_match?: number };
      const all = [...(b.filter ?? []), ...(b.must ?? [])].map(predicate);
      const none = (b.must_not ?? []).map(predicate);
      const some = (b.should ?? []).map(predicate);
      const need = some.length === 0 ? 0 : (b.minimum_should_match ?? (all.length > 0 ? 0 : 1));
      return (doc) => all.every((p) => p(doc)) && !none.some((p) => p(doc)) && some.filter((p) => p(doc)).length >= need;
    }
    default:
      throw new Error(`test evaluator: unknown query ${kind}`);
  }
}

const passingSets = new WeakMap<object, boolean[]>();

/** Which docs pass a filter (memoized per filter object). */
function passingDocs(filter: Query, docs: readonly object[]): boolean[] {
  let passing = passingSets.get(filter);
  if (!passing) {
    const p = predicate(filter);
    passingSets.set(filter, (passing = docs.map((d) => p(d as Record<string, unknown>))));
  }
  return passing;
}

/** Float64 similarity of two float32 rows, as the ground truth defines it (higher is nearer). */
function similarity(sim: GenSimilarity, a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let dot = 0,
    aa = 0,
    bb = 0,
    dist = 0;
  for (let i = 0; i < dim; i++) {
    const x = a[ao + i],
      y = b[bo + i];
    dot += x * y;
    aa += x * x;
    bb += y * y;
    dist += (x - y) * (x - y);
  }
  return sim === 'euclidean' ? -dist : sim === 'cosine' ? dot / Math.sqrt(aa * bb) : dot;
}

/** The exact top-k of the passing rows by brute force, ties to the lower row. */
function bruteForce(sim: GenSimilarity, base: Float32Array, query: Float32Array, q: number, dim: number, pass: (row: number) => boolean, k: number): number[] {
  const scored: { id: number; score: number }[] = [];
  for (let d = 0; d < base.length / dim; d++) if (pass(d)) scored.push({ id: d, score: similarity(sim, query, q * dim, base, d * dim, dim) });
  scored.sort((a, b) => (b.score === a.score ? 0 : b.score - a.score) || a.id - b.id);
  return scored.slice(0, k).map((s) => s.id);
}

interface Generated {
  out: string;
  base: Float32Array;
  queries: Float32Array;
  docs: Doc[];
  filters: { entries: Entry[]; emptyEntries: number; perQuery: number; kinds: { name: string; target: number }[] };
  truth: Int32Array[];
  info: Record<string, unknown> & { filters: Record<string, unknown> };
}

async function load(out: string): Promise<Generated> {
  const base = (await readAllVectors(join(out, 'base.fvecs'))).vectors;
  const queries = (await readAllVectors(join(out, 'query.fvecs'))).vectors;
  const docs = (await readFile(join(out, 'fields.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Doc);
  const filters = JSON.parse(await readFile(join(out, 'filters.json'), 'utf8'));
  const truth = await readFilteredGroundTruth(join(out, 'filtered_groundtruth.ivecs'));
  const info = JSON.parse(await readFile(join(out, 'dataset.json'), 'utf8'));
  return { out, base, queries, docs, filters, truth, info };
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

describe('prescore gen --filters', () => {
  const spec = { seed: '3', dim: 24, similarity: 'cosine' as const, n: 20_000, queries: 16, k: 20 };
  let g: Generated;

  beforeAll(async () => {
    await generateDataset({ ...spec, out: join(dir, 'main'), progress: false, filters: true });
    g = await load(join(dir, 'main'));
  });

  it('writes byte-identical files on 1 and 2 threads', async () => {
    const small = { seed: '5', dim: 16, similarity: 'euclidean' as const, n: 5000, queries: 9, k: 15 };
    await Executor.shutdown();
    const one = await generateDataset({ ...small, out: join(dir, 't1'), threads: 1, progress: false, filters: true });
    await Executor.shutdown();
    const two = await generateDataset({ ...small, out: join(dir, 't2'), threads: 2, progress: false, filters: true });
    expect(Executor.get().threads).toBe(2);
    for (const f of [...BASE_FILES, ...FILTER_FILES, 'dataset.json']) {
      const a = await readFile(join(one.dir, f));
      const b = await readFile(join(two.dir, f));
      expect(a.length, f).toBeGreaterThan(0);
      expect(a.equals(b), f).toBe(true);
    }
  });

  it('leaves the vectors, the ground truth and (without --filters) dataset.json unchanged', async () => {
    // Hashes of what the generator wrote before --filters existed (generator v4; n 3000, dim 24,
    // 7 queries, k 10, seed 9), for a run without --filters and one with it.
    const golden: Record<string, Record<string, string>> = {
      cosine: {
        'base.fvecs': 'abae4a0ff05e89e43cb7cbd5fb693cd9cad1eda8ffedc31af4f712a1b6072619',
        'query.fvecs': 'ea2e35862ac600f69021ff0a5873026b26fd7b92e17acc7fd110239ed453f28f',
        'groundtruth.ivecs': 'a6526072aa9bbe76f557784aa168d26085e85678e3818386bdfb440274222a88',
        'dataset.json': 'cb1ae389031ba2e399cc0d210f239c72b6dac1b91930a88547fd223a235158d9',
      },
      euclidean: {
        'base.fvecs': 'ae22e942c780867235ea48cc5253c6e146f30d3a1c35ab8e859f8643e2f72e61',
        'query.fvecs': 'b61546937b5a662abc2e6870b5fb860cc38ae9f2d862b12bd4f4f472fb88e364',
        'groundtruth.ivecs': '186cef539451cd56e1934c1b24280456a7e041ff71150888d72eebd58b7e1c76',
        'dataset.json': '5be8944e802c450298e1e361377861f6bf7e783aaf56c3a24148ce449c175e28',
      },
    };
    for (const similarity of ['cosine', 'euclidean'] as const) {
      const s = { seed: '9', dim: 24, similarity, n: 3000, queries: 7, k: 10 };
      const plain = join(dir, `golden-${similarity}`);
      const filtered = join(dir, `golden-${similarity}-filters`);
      await generateDataset({ ...s, out: plain, progress: false });
      await generateDataset({ ...s, out: filtered, progress: false, filters: true });
      for (const [file, hash] of Object.entries(golden[similarity])) expect(await sha256(join(plain, file)), `${similarity} ${file}`).toBe(hash);
      for (const file of BASE_FILES) expect(await sha256(join(filtered, file)), `${similarity} --filters ${file}`).toBe(golden[similarity][file]);
      for (const file of FILTER_FILES) await expect(readFile(join(plain, file)), file).rejects.toThrow(/ENOENT/);
      // dataset.json gains the filters block and nothing else.
      const info = JSON.parse(await readFile(join(filtered, 'dataset.json'), 'utf8'));
      expect(Object.keys(info.filters).sort()).toEqual(['correlations', 'files', 'groundTruth', 'k', 'names', 'order', 'perQuery', 'selectivities', 'version']);
      delete info.filters;
      expect(
        createHash('sha256')
          .update(`${JSON.stringify(info, null, 2)}\n`)
          .digest('hex'),
      ).toBe(golden[similarity]['dataset.json']);
    }
    // Regenerating without --filters removes the filter files of an earlier run.
    await generateDataset({ seed: '9', dim: 24, similarity: 'cosine', n: 3000, queries: 7, k: 10, out: join(dir, 'golden-euclidean-filters'), progress: false });
    for (const file of FILTER_FILES) await expect(readFile(join(dir, 'golden-euclidean-filters', file)), file).rejects.toThrow(/ENOENT/);
  });

  it('fields.jsonl: one doc per base row with the generating cluster, u, tags and ts', async () => {
    const { docs, base } = g;
    expect(docs).toHaveLength(spec.n);
    const local = generateBaseWithFields(spec, spec.n);
    expect(Buffer.from(local.vectors.buffer).equals(Buffer.from(base.buffer, base.byteOffset, base.byteLength))).toBe(true);
    const tagCounts = new Map<string, number>();
    const wrong: string[] = [];
    docs.forEach((doc, i) => {
      if (Object.keys(doc).join() !== 'cluster,u,tags,ts') wrong.push(`row ${i}: keys ${Object.keys(doc).join()}`);
      if (doc.cluster !== `c${local.columns.cluster[i]}`) wrong.push(`row ${i}: cluster ${doc.cluster}`);
      // u round-trips exactly through the file.
      if (doc.u !== local.columns.u[i] || !(doc.u >= 0 && doc.u < 1)) wrong.push(`row ${i}: u ${doc.u}`);
      if (!Number.isInteger(doc.ts) || doc.ts < TS_START || doc.ts >= TS_START + TS_SPAN_MS) wrong.push(`row ${i}: ts ${doc.ts}`);
      for (const t of doc.tags) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    // Rows of one cluster are nearer each other than rows of two clusters.
    const byCluster = new Map<string, number[]>();
    docs.forEach((d, i) => {
      const rows = byCluster.get(d.cluster);
      if (rows) rows.push(i);
      else byCluster.set(d.cluster, [i]);
    });
    const big = [...byCluster.values()].filter((rows) => rows.length >= 40).slice(0, 6);
    expect(big.length).toBeGreaterThan(3);
    let within = 0,
      across = 0;
    for (let a = 0; a < big.length; a++) {
      for (let j = 0; j < 20; j++) {
        within += similarity('cosine', base, big[a][j] * 24, base, big[a][j + 20] * 24, 24);
        across += similarity('cosine', base, big[a][j] * 24, base, big[(a + 1) % big.length][j] * 24, 24);
      }
    }
    expect(within).toBeGreaterThan(across);
    // Tag frequencies: binomial, within 5 sigma (+1 for the rarest).
    for (const tag of TAGS) {
      const expected = tag.probability * spec.n;
      const sd = Math.sqrt(expected * (1 - tag.probability));
      expect(Math.abs((tagCounts.get(tag.name) ?? 0) - expected), tag.name).toBeLessThanOrEqual(5 * sd + 1);
    }
  });

  it('mapping.json is the Elasticsearch mappings of the fields and the vector', async () => {
    const mapping = JSON.parse(await readFile(join(g.out, 'mapping.json'), 'utf8'));
    expect(mapping).toEqual({
      properties: {
        vector: { type: 'dense_vector', dims: 24, index: true, similarity: 'cosine' },
        cluster: { type: 'keyword' },
        tags: { type: 'keyword' },
        u: { type: 'double' },
        ts: { type: 'date' },
      },
    });
  });

  it('filters.json: every filter of every query, with its exact cardinality, within tolerance of s N', () => {
    const { filters, docs, info } = g;
    expect(filters.perQuery).toBe(PER_QUERY);
    expect(filters.entries).toHaveLength(spec.queries * PER_QUERY);
    expect(info.filters).toMatchObject({ k: spec.k, perQuery: PER_QUERY, selectivities: SELECTIVITIES, correlations: ['uniform', 'correlated', 'anti'] });
    expect(info.filters.names).toEqual(FILTER_KINDS.map((kind) => kind.name));
    filters.entries.forEach((e, i) => {
      const kind = FILTER_KINDS[i % PER_QUERY];
      expect(e).toMatchObject({ row: i, query: Math.floor(i / PER_QUERY), name: kind.name, correlation: kind.correlation, selectivity: kind.selectivity });
      // The cardinality recorded is what the DSL selects, by a naive evaluator over fields.jsonl.
      const cardinality = passingDocs(e.filter, docs).filter(Boolean).length;
      expect(e.cardinality, `${e.name} of query ${e.query}`).toBe(cardinality);
      expect(e.truthLength).toBe(Math.min(spec.k, cardinality));
      // Tolerances: correlated and anti are cut to round(s N) exactly; u-ranges are binomial (4 sigma + 1).
      const target = kind.selectivity * spec.n;
      if (kind.correlation === 'uniform') {
        expect(Math.abs(cardinality - target), e.name).toBeLessThanOrEqual(4 * Math.sqrt(target * (1 - kind.selectivity)) + 1);
      } else {
        expect(cardinality, e.name).toBe(Math.round(target));
      }
    });
    expect(filters.kinds.map((k) => k.target)).toEqual(FILTER_KINDS.map((k) => Math.round(k.selectivity * spec.n)));
    expect(filters.emptyEntries).toBe(filters.entries.filter((e) => e.cardinality === 0).length);
    // The DSL shapes emitted.
    const shapes = new Set(filters.entries.map((e) => shape(e.filter)));
    expect([...shapes].sort()).toEqual(
      [
        'range(u)',
        'bool.filter(term(tags),range(u))',
        'terms(cluster)',
        'bool.filter(term(cluster),range(u))',
        'bool.should(terms(cluster),bool.filter(term(cluster),range(u)))',
      ].sort(),
    );
  });

  it('correlated filters pass docs nearer to the query than uniform ones, uniform nearer than anti', () => {
    const { filters, docs, base, queries } = g;
    for (const s of SELECTIVITIES.filter((x) => x * spec.n >= 2)) {
      const mean: Record<string, number> = { uniform: 0, correlated: 0, anti: 0 };
      for (let q = 0; q < spec.queries; q++) {
        for (const correlation of ['uniform', 'correlated', 'anti']) {
          const e = filters.entries.find((x) => x.query === q && x.correlation === correlation && x.selectivity === s)!;
          let sum = 0,
            count = 0;
          passingDocs(e.filter, docs).forEach((pass, i) => {
            if (!pass) return;
            sum += similarity('cosine', queries, q * 24, base, i * 24, 24);
            count++;
          });
          if (count > 0) mean[correlation] += sum / count / spec.queries;
        }
      }
      expect(mean.correlated, `s = ${s}`).toBeGreaterThan(mean.uniform);
      expect(mean.uniform, `s = ${s}`).toBeGreaterThan(mean.anti);
    }
  });

  it('filtered_groundtruth.ivecs: the exact top-k of the passing docs, as a brute force finds it', () => {
    const { filters, docs, base, queries, truth } = g;
    expect(truth).toHaveLength(filters.entries.length);
    filters.entries.forEach((e, i) => {
      const passing = passingDocs(e.filter, docs);
      const want = bruteForce('cosine', base, queries, e.query, 24, (d) => passing[d], spec.k);
      expect(Array.from(truth[i]), `${e.name} of query ${e.query}`).toEqual(want);
      expect(truth[i].length).toBe(e.truthLength);
    });
  });

  it('filtered ground truth matches a brute force for every similarity', async () => {
    for (const sim of ['dot_product', 'euclidean', 'max_inner_product'] as const) {
      const out = join(dir, `sim-${sim}`);
      await generateDataset({ seed: '21', dim: 12, similarity: sim, n: 4000, queries: 5, k: 30, out, progress: false, filters: true });
      const h = await load(out);
      h.filters.entries.forEach((e, i) => {
        const passing = passingDocs(e.filter, h.docs);
        expect(Array.from(h.truth[i]), `${sim} ${e.name} q${e.query}`).toEqual(bruteForce(sim, h.base, h.queries, e.query, 12, (d) => passing[d], 30));
      });
      const mapping = JSON.parse(await readFile(join(out, 'mapping.json'), 'utf8'));
      expect(mapping.properties.vector.similarity).toBe(sim === 'euclidean' ? 'l2_norm' : sim);
    }
  });

  it('works at a tiny N: filters below one doc match none, say so, and have empty ground-truth rows', async () => {
    const out = join(dir, 'tiny');
    await generateDataset({ seed: '1', dim: 8, similarity: 'cosine', n: 300, queries: 3, k: 10, out, progress: false, filters: true });
    const h = await load(out);
    const empty = h.filters.entries.filter((e) => e.cardinality === 0);
    // round(0.001 * 300) = round(0.0001 * 300) = 0: correlated and anti 0.1 % and 0.01 % match no doc.
    expect(empty.filter((e) => e.correlation !== 'uniform').map((e) => e.name)).toEqual([0, 1, 2].flatMap(() => ['correlated-0.1', 'correlated-0.01', 'anti-0.1', 'anti-0.01']));
    expect(h.filters.emptyEntries).toBe(empty.length);
    expect((h.filters as unknown as { note: string }).note).toMatch(/cardinality 0/);
    h.filters.entries.forEach((e, i) => {
      expect(h.truth[i].length).toBe(Math.min(10, e.cardinality));
      const passing = passingDocs(e.filter, h.docs);
      expect(Array.from(h.truth[i])).toEqual(bruteForce('cosine', h.base, h.queries, e.query, 8, (d) => passing[d], 10));
    });
    // n = 1: every selectivity rounds to 0 or 1 doc.
    await generateDataset({ seed: '1', dim: 4, similarity: 'cosine', n: 1, queries: 2, k: 1, out: join(dir, 'one'), progress: false, filters: true });
    const one = await load(join(dir, 'one'));
    expect(one.truth).toHaveLength(2 * PER_QUERY);
    for (const [i, e] of one.filters.entries.entries()) expect(Array.from(one.truth[i])).toEqual(e.cardinality === 1 ? [0] : []);
  });

  it('the ground-truth task gives the same rows with the wasm prefilter and in pure JS, ties to the lower row', async () => {
    // Random vectors with duplicated rows (exact ties), a filter mix of every shape.
    const dim = 10,
      n = 3000,
      Q = 6;
    const rng = Rng.from(77n, 1);
    const base = new Float32Array(n * dim);
    for (let i = 0; i < base.length; i++) base[i] = rng.normal();
    for (let r = 0; r < 300; r++) base.copyWithin((2000 + r) * dim, (100 + r) * dim, (101 + r) * dim);
    const queries = new Float32Array(Q * dim);
    for (let i = 0; i < queries.length; i++) queries[i] = rng.normal();
    queries.set(base.subarray(150 * dim, 151 * dim), 2 * dim); // its two copies tie for the top
    const columns = {
      cluster: Uint16Array.from({ length: n }, (_, i) => i % 7),
      u: Float64Array.from({ length: n }, () => rng.nextDouble()),
      tags: Uint8Array.from({ length: n }, () => rng.nextInt(32)),
    };
    const perQuery: Query[] = [
      { range: { u: { lt: 0.5 } } },
      { terms: { cluster: ['c1', 'c3'] } },
      { bool: { filter: [{ term: { cluster: 'c2' } }, { range: { u: { lt: 0.3 } } }] } },
      { bool: { should: [{ terms: { cluster: ['c4'] } }, { bool: { filter: [{ term: { cluster: 'c5' } }, { range: { u: { lt: 0.1 } } }] } }], minimum_should_match: 1 } },
      { bool: { filter: [{ term: { tags: 's10' } }, { range: { u: { lt: 0.4 } } }] } },
      { range: { u: { lt: 0.002 } } },
    ];
    // Per-query filters too (different clusters per query), so not every filter is shared.
    const filters = Array.from({ length: Q }, (_, q) => [...perQuery, { terms: { cluster: [`c${q}`] } }]).flat();
    const path = join(dir, 'ties.fvecs');
    const w = await FvecsWriter.open(path, dim);
    await w.write(base);
    await w.close();
    const docs = Array.from({ length: n }, (_, i) => ({
      cluster: `c${columns.cluster[i]}`,
      u: columns.u[i],
      tags: TAGS.filter((_, t) => columns.tags[i] & (1 << t)).map((t) => t.name),
    }));
    for (const sim of ['cosine', 'dot_product', 'euclidean'] as const) {
      const index = indexFilters(filters, perQuery.length + 1);
      const args = { path, dim, firstRow: 0, rows: n, queries, filters: index, k: 25, similarity: sim, columns };
      const wasm = await filteredGroundTruthRange({ ...args, kernel: 'wasm' });
      const js = await filteredGroundTruthRange({ ...args, kernel: 'js' });
      expect(wasm.kernel).toBe('wasm');
      expect(wasm.ids).toEqual(js.ids);
      expect(wasm.counts).toEqual(js.counts);
      expect(wasm.rescored).toBeLessThan(js.rescored);
      filters.forEach((f, slot) => {
        const passing = passingDocs(f, docs);
        expect(wasm.counts[slot]).toBe(passing.filter(Boolean).length);
        const want = bruteForce(sim, base, queries, Math.floor(slot / (perQuery.length + 1)), dim, (d) => passing[d], 25);
        const got = Array.from(wasm.ids.subarray(slot * 25, slot * 25 + 25)).filter((id) => id >= 0);
        expect(got, `${sim} slot ${slot}`).toEqual(want);
      });
    }
  });

  it('the evaluator refuses shapes it does not evaluate, naming the clause', () => {
    const bad: [unknown, RegExp][] = [
      [{ match: { cluster: 'c1' } }, /filter\.match: unsupported query "match"/],
      [{ range: { ts: { lt: 5 } } }, /filter\.range: only "u" is supported, got "ts"/],
      [{ range: { u: { gte: 0.5 } } }, /filter\.range\.u: only \{"lt": <finite number>\}/],
      [{ term: { cluster: 'x9' } }, /filter\.term\.cluster: expected a cluster id "c0".."c1023", got "x9"/],
      [{ bool: { filter: [{ range: { u: { lt: 0.5 } } }, { term: { tags: 'nope' } }] } }, /filter\.bool\.filter\[1\]\.term\.tags: unknown tag "nope"/],
      [{ bool: { must_not: [{ range: { u: { lt: 0.5 } } }] } }, /filter\.bool: only \{"filter": \[\.\.\.\]\} or \{"should"/],
      [{ bool: { should: [{ term: { tags: 's1' } }, { range: { u: { lt: 0.5 } } }], minimum_should_match: 1 } }, /should\[1\]: should clauses requiring different tags/],
      [{ range: { u: { lt: 0.5 } }, term: { cluster: 'c1' } }, /filter: expected one key, got 2/],
    ];
    for (const [dsl, pattern] of bad) expect(() => compileFilter(dsl), JSON.stringify(dsl)).toThrow(pattern);
  });
});

describe('prescore gen --filters (CLI)', () => {
  it('documents the flag and its files, and reports the filters', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await genCommand(['--help'])).toBe(0);
      const help = String(out.mock.calls[0][0]);
      for (const s of ['--filters', 'fields.jsonl', 'mapping.json', 'filters.json', 'filtered_groundtruth.ivecs', 'correlated-P', 'anti-P', 'and-4']) expect(help).toContain(s);
      out.mockClear();
      const target = join(dir, 'cli');
      const code = await genCommand(['--n', '2000', '--dim', '8', '--queries', '4', '--k', '10', '--seed', '5', '--out', target, '--quiet', '--filters']);
      expect(code).toBe(0);
      const summary = out.mock.calls.map((c) => String(c[0])).join('');
      expect(summary).toMatch(/filters: 64 \(16 per query\), filtered ground truth in 1 pass over the base \((wasm|js)\); \d+ match no doc at N = 2000/);
      for (const f of FILTER_FILES) expect((await readFile(join(target, f))).length, f).toBeGreaterThan(0);
    } finally {
      out.mockRestore();
    }
  });
});

/** A filter's shape: query kinds and fields, without values. */
function shape(q: Query): string {
  const [kind, body] = Object.entries(q)[0] as [string, Record<string, unknown>];
  if (kind === 'bool') {
    const [clause, list] = Object.entries(body).find(([k]) => k !== 'minimum_should_match') as [string, Query[]];
    return `bool.${clause}(${list.map(shape).join(',')})`;
  }
  return `${kind}(${Object.keys(body)[0]})`;
}
