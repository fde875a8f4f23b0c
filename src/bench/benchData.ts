import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../executor/packageRoot.js';
import { readIvecs } from '../../segments/input/index.js';
import { readAllVectors } from '../../segments/input/index.js';
import { listCommitGenerations } from '../../segments/index/CommitPoint.js';
import { percentile } from '../../load/percentile.js';

/** The benchmark dataset and index (generated with the project's own generator; git-ignored). */
export interface BenchDataset {
  readonly name: string;
  readonly n: number;
  readonly dim: number;
  readonly queries: number;
  readonly dir: string;
  readonly indexDir: string;
  readonly segmentDocs: number;
  /** Build without --segment-docs: the builder's default segment-size policy decides. */
  readonly defaultPolicy?: boolean;
  /** Doc bits per dimension of the build (`prescore build --bits`); default the builder's (1). */
  readonly bits?: number;
  /** HNSW construction beam of the build (`prescore build --beam-width`); default the builder's (200). */
  readonly beamWidth?: number;
}

export function benchDataset(n = 1_000_000, dim = 1024, queries = 200, segmentDocs = 125_000): BenchDataset {
  const root = join(packageRoot(), '.bench');
  const tag = `${n >= 1e6 ? `${n / 1e6}m` : `${n / 1e3}k`}-${dim}`;
  return { name: tag, n, dim, queries, dir: join(root, `gen-${tag}`), indexDir: join(root, `idx-${tag}`), segmentDocs };
}

function cli(args: string[]): { stdout: string; status: number } {
  const r = spawnSync(process.execPath, [join(packageRoot(), 'bin', 'prescore.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`prescore ${args.join(' ')} failed (exit ${r.status})`);
  return { stdout: r.stdout, status: r.status ?? 0 };
}

/**
 * The same data, indexed into another directory (`idx-<tag>-<variant>`): with `segmentDocs`
 * docs per segment, or with the builder's default policy when it is undefined.
 */
export function benchIndexVariant(ds: BenchDataset, variant: string, segmentDocs?: number, bits?: number, beamWidth?: number): BenchDataset {
  return { ...ds, indexDir: `${ds.indexDir}-${variant}`, segmentDocs: segmentDocs ?? ds.segmentDocs, defaultPolicy: segmentDocs === undefined, bits, beamWidth };
}

/**
 * Generates the dataset with `prescore gen` unless a complete one (dataset.json) is there. With
 * `needBase`, a dataset whose base.fvecs was deleted after its index was built (bench:scale
 * --delete-base) is generated again: the generator is deterministic, so queries and ground truth
 * come out byte-identical.
 */
export function ensureDataset(ds: BenchDataset, needBase = true): void {
  const info = join(ds.dir, 'dataset.json');
  if (existsSync(info) && (!needBase || existsSync(join(ds.dir, 'base.fvecs')))) {
    const spec = JSON.parse(readFileSync(info, 'utf8'));
    if (spec.n === ds.n && spec.dim === ds.dim && spec.queries >= ds.queries) return;
  }
  process.stderr.write(`bench: generating ${ds.n} x ${ds.dim} (${ds.queries} queries) into ${ds.dir}\n`);
  cli(['gen', '--n', String(ds.n), '--dim', String(ds.dim), '--queries', String(ds.queries), '--out', ds.dir]);
}

export interface BuildFacts {
  readonly seconds: number;
  readonly peakRssGiB: number;
  readonly summary: string;
}

/** Builds the index with `prescore build` (in a child, so its peak RSS is the build's alone) unless it exists. */
export function ensureIndex(ds: BenchDataset): BuildFacts | null {
  const factsFile = `${ds.indexDir}.build.json`;
  if (existsSync(ds.indexDir) && listCommitGenerations(ds.indexDir).length > 0) {
    return existsSync(factsFile) ? (JSON.parse(readFileSync(factsFile, 'utf8')) as BuildFacts) : null;
  }
  ensureDataset(ds);
  process.stderr.write(`bench: building ${ds.indexDir}\n`);
  const started = performance.now();
  const segmentArgs = ds.defaultPolicy ? [] : ['--segment-docs', String(ds.segmentDocs)];
  const bitsArgs = ds.bits === undefined ? [] : ['--bits', String(ds.bits)];
  const beamArgs = ds.beamWidth === undefined ? [] : ['--beam-width', String(ds.beamWidth)];
  const { stdout } = cli(['build', '--input', join(ds.dir, 'base.fvecs'), '--out', ds.indexDir, '--similarity', 'cosine', ...segmentArgs, ...bitsArgs, ...beamArgs]);
  const peak = /peak RSS ([\d.]+) GiB/.exec(stdout);
  const facts: BuildFacts = { seconds: (performance.now() - started) / 1000, peakRssGiB: peak ? Number(peak[1]) : NaN, summary: stdout.trim() };
  writeFileSync(factsFile, JSON.stringify(facts, null, 2));
  return facts;
}

export interface QuerySet {
  readonly vectors: Float32Array[];
  /** Ground-truth ids per query (top 100, as strings: the index's ids are base row numbers). */
  readonly truth: string[][];
}

export async function loadQueries(ds: BenchDataset, count = ds.queries): Promise<QuerySet> {
  const q = await readAllVectors(join(ds.dir, 'query.fvecs'));
  const gt = await readIvecs(join(ds.dir, 'groundtruth.ivecs'));
  const vectors: Float32Array[] = [];
  const truth: string[][] = [];
  for (let i = 0; i < Math.min(count, q.count); i++) {
    vectors.push(q.vectors.slice(i * q.dims, (i + 1) * q.dims));
    truth.push([...gt.data.subarray(i * gt.dims, (i + 1) * gt.dims)].map(String));
  }
  return { vectors, truth };
}

export function recallAt(k: number, hits: readonly { id: string }[], truth: readonly string[]): number {
  const want = new Set(truth.slice(0, k));
  let found = 0;
  for (const h of hits.slice(0, k)) if (want.has(h.id)) found++;
  return found / k;
}

export function summarize(ms: number[]): { p50: number; p90: number; p99: number; max: number; mean: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
}

/** A fixed-width text table. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** The q-quantile of `xs` (0..1) as the sorted sample at floor(q x (n - 1)): a value that was measured, never interpolated. */
export function sampleQuantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))]!;
}

/**
 * A seeded in-place shuffle (Fisher-Yates over a 32-bit LCG), the same sequence on every run: the
 * benches that interleave variants query by query give each query a new order, so that no
 * variant always runs right after the same (e.g. the most expensive) one.
 */
export function seededShuffle(seed: number): <T>(items: T[]) => void {
  let state = seed >>> 0;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  return (items) => {
    for (let j = items.length - 1; j > 0; j--) {
      const r = Math.floor(random() * (j + 1));
      [items[j], items[r]] = [items[r]!, items[j]!];
    }
  };
}
