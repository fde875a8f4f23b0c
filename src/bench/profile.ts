/**
 * `npm run bench:profile`: where a warm query's time goes, and which rescoring placement wins,
 * measured side by side in one process: every query runs on every variant in rotating order
 * (read path x rescoring placement), twice; the second pass is reported. Each search asks for
 * its profile, so the table splits the latency into the executor hops (queue wait + argument
 * clone, run, result clone + return), the per-segment work and the calling thread's phases.
 *
 *   npm run bench:profile -- [--n 200000] [--dim 768] [--queries 500] [--k 10] [--oversample 5]
 *     [--variants mmap+parallel#adaptive,mmap+parallel#executor,...] [--threads 2] [--no-profile]
 *     [--num-candidates N] (default: the service's default beam, max(200, 4 x k x oversample))
 *
 * A variant is `readPath[@policy][#rescorePlacement][~knnPlacement]` (each adaptive | executor |
 * caller; absent: the default, adaptive).
 * `--no-profile` measures latency without profiles (the profile's own cost is a few clock reads
 * and one setImmediate per search).
 */
import { parseArgs } from 'node:util';
import { openIndex } from '../api/openIndex.js';
import type { KnnThread, QueryProfile, ReadPath, RescoreThread } from '../api/types.js';
import type { PrefetchPolicyName } from '../../query/prefetch/PrefetchPolicy.js';
import { benchDataset, ensureIndex, loadQueries, recallAt, summarize, table } from './benchData.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string' },
    dim: { type: 'string' },
    queries: { type: 'string' },
    k: { type: 'string' },
    oversample: { type: 'string' },
    variants: { type: 'string' },
    threads: { type: 'string' },
    'num-candidates': { type: 'string' },
    'no-profile': { type: 'boolean' },
  },
});
const ds = benchDataset(Number(values.n ?? 200_000), Number(values.dim ?? 768), Number(values.queries ?? 500));
ensureIndex(ds);
const k = Number(values.k ?? 10);
const oversample = Number(values.oversample ?? 5);
const profile = values['no-profile'] !== true;
const variants = (values.variants ?? 'mmap+parallel,mmap+parallel#executor~executor,mmap+prefetch,mmap,pread').split(',');
const { vectors, truth } = await loadQueries(ds, Number(values.queries ?? 500));
const index = await openIndex(ds.indexDir, { calibrate: 'first-use', threads: values.threads ? Number(values.threads) : undefined });
const numCandidates = values['num-candidates'] ? Number(values['num-candidates']) : undefined;

interface Variant {
  readonly label: string;
  readonly readPath: ReadPath;
  readonly policy: PrefetchPolicyName | undefined;
  readonly placement: RescoreThread | undefined;
  readonly knn: KnnThread | undefined;
}
const parsed: Variant[] = variants.map((label) => {
  const [rest, knn] = label.split('~');
  const [pathPolicy, placement] = rest!.split('#');
  const [readPath, policy] = pathPolicy!.split('@');
  return {
    label,
    readPath: readPath as ReadPath,
    policy: policy as PrefetchPolicyName | undefined,
    placement: placement as RescoreThread | undefined,
    knn: knn as KnnThread | undefined,
  };
});

interface Sample {
  latency: number[];
  recall: number;
  caller: number;
  knnCaller: number;
  parts: Map<string, number[]>;
  /** Per query (same order as latency): its parts, to see what the slowest queries spent their time on. */
  perQuery: Map<string, number>[];
}
const samples = new Map<string, Sample>(parsed.map((v) => [v.label, { latency: [], recall: 0, caller: 0, knnCaller: 0, parts: new Map(), perQuery: [] }]));
const add = (s: Sample, part: string, ms: number) => {
  let a = s.parts.get(part);
  if (!a) s.parts.set(part, (a = []));
  a.push(ms);
  const q = s.perQuery[s.perQuery.length - 1]!;
  q.set(part, (q.get(part) ?? 0) + ms);
};

/** Splits one profile into summed parts (per query: the slowest hop of a parallel phase is the one that counts). */
function breakdown(s: Sample, p: QueryProfile): void {
  const knn = p.hops.filter((h) => h.task === 'knn.slice');
  const rescore = p.hops.filter((h) => h.task === 'rescore.ring');
  const slowest = (hops: typeof knn) => hops.reduce((a, h) => (h.queueMs + h.runMs + h.returnMs > a.queueMs + a.runMs + a.returnMs ? h : a));
  if (knn.length) {
    const h = slowest(knn);
    add(s, 'knn hop queue', h.queueMs);
    add(s, 'knn hop run', h.runMs);
    add(s, 'knn hop return', h.returnMs);
    const together = p.phases.find((ph) => ph.name === 'knn.callerAndExecutor');
    if (together) add(s, 'knn caller+executor', together.durationMs);
  } else add(s, 'knn on caller', p.phases.find((ph) => ph.name === 'knn.onCaller')?.durationMs ?? 0);
  add(
    s,
    'quantize (sum)',
    p.segments.reduce((a, x) => a + x.quantizeMs, 0),
  );
  if (rescore.length) {
    const h = slowest(rescore);
    add(s, 'rescore hop queue', h.queueMs);
    add(s, 'rescore hop run', h.runMs);
    add(s, 'rescore hop return', h.returnMs);
  } else
    add(
      s,
      'rescore on caller',
      p.rescore.reduce((a, x) => a + x.runMs, 0),
    );
  for (const ph of p.phases) if (!/^(rescore|knn)\.(executor|onCaller|callerAndExecutor|worker)/.test(ph.name)) add(s, ph.name, ph.durationMs);
  add(
    s,
    'gc pauses',
    p.gc.reduce((a, g) => a + g.durationMs, 0),
  );
}

for (let pass = 0; pass < 2; pass++) {
  for (let i = 0; i < vectors.length; i++) {
    for (let j = 0; j < parsed.length; j++) {
      const v = parsed[(i + j) % parsed.length]!;
      const t0 = performance.now();
      const r = await index.search(vectors[i]!, {
        k,
        oversample,
        numCandidates,
        readPath: v.readPath,
        prefetchPolicy: v.policy,
        rescoreThread: v.placement,
        knnThread: v.knn,
        profile,
      });
      const ms = performance.now() - t0;
      if (pass === 0) continue;
      const s = samples.get(v.label)!;
      s.latency.push(ms);
      s.recall += recallAt(k, r.hits, truth[i]!) / vectors.length;
      if (r.stats.rescoredOn === 'caller') s.caller++;
      if (r.stats.searchedOn === 'caller') s.knnCaller++;
      s.perQuery.push(new Map([['latency', ms]]));
      if (r.stats.profile) breakdown(s, r.stats.profile);
    }
  }
}
await index.close();

const rows = parsed.map((v) => {
  const s = samples.get(v.label)!;
  const l = summarize(s.latency);
  const share = (n: number) => `${((100 * n) / s.latency.length).toFixed(0)}%`;
  return [v.label, l.p50, l.p90, l.p99, l.mean, s.recall.toFixed(4), share(s.knnCaller), share(s.caller)] as (string | number)[];
});
const fastest = Math.min(...rows.map((r) => r[1] as number));
const lines = [
  `bench:profile  ${ds.n.toLocaleString()} x ${ds.dim}, k=${k}, oversample ${oversample}, ${numCandidates === undefined ? 'default beam' : `num_candidates ${numCandidates}`}, warm, single stream, ${vectors.length} queries x ${parsed.length} variants interleaved${profile ? ', profiled' : ''}`,
  table(['variant', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms', `recall@${k}`, 'searched on caller', 'rescored on caller'], rows),
  `p50 vs fastest: ${rows.map((r) => `${r[0]} +${(((r[1] as number) / fastest - 1) * 100).toFixed(1)}%`).join(', ')}`,
];
if (profile) {
  const parts = [...new Set(parsed.flatMap((v) => [...samples.get(v.label)!.parts.keys()]))];
  const partRows = parts.map((part) => [
    part,
    ...parsed.map((v) => {
      const a = samples.get(v.label)!.parts.get(part);
      return a ? summarize(a).mean : NaN;
    }),
  ]);
  lines.push('', 'mean ms per query by part (hops: the slowest hop of the phase)', table(['part', ...parsed.map((v) => v.label)], partRows));
  // The tail: the same parts over the slowest 1% of each variant's queries (where p99 comes from).
  const slowest = parsed.map((v) => {
    const q = samples.get(v.label)!.perQuery;
    return [...q].sort((a, b) => b.get('latency')! - a.get('latency')!).slice(0, Math.max(1, Math.ceil(q.length / 100)));
  });
  const tailRows = ['latency', ...parts].map((part) => [part, ...slowest.map((qs) => qs.reduce((a, q) => a + (q.get(part) ?? 0), 0) / qs.length)]);
  lines.push('', 'the slowest 1% of queries: mean ms by part', table(['part', ...parsed.map((v) => v.label)], tailRows));
}
process.stdout.write(`${lines.join('\n')}\n`);
