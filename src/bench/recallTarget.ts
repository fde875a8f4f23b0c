/**
 * `npm run bench:recall-target`: does a search with `recallTarget` reach its target on held-out
 * queries, and at what cost against the fastest fixed setting that reaches it?
 *
 * Per set (Fashion-MNIST cosine and euclidean, MiniLM, a `prescore gen` set), the set is built
 * with `prescore build`'s defaults (cached under .bench/recall-target, or `--gen-index` for the gen
 * set), calibrated on its own documents as the build does (its time beside the build's), and
 * then every held-out query is searched, one at a time, by every variant in turn (the order
 * shuffled per query, so the variants share the machine's drift): `recallTarget` 0.90 / 0.95 /
 * 0.99, and each fixed oversample of the calibration's grid at the default beam and (to
 * oversample 16) at the smaller beams a calibration measures. Per target: the setting the
 * calibration chose, the recall@10 reached on the held-out queries (ok when >= the target), its
 * p50, the fastest fixed setting whose held-out recall reaches the target and its p50, and the
 * ratio of the two p50s (asked: <= 1.2). A last table: the default search (no knobs), its
 * setting and held-out recall (asked: >= 0.95).
 *
 *   npm run bench:recall-target -- [--sets fmnist-cosine,fmnist-euclidean,minilm,gen]
 *     [--queries 1000] [--gen-dir .bench/gen-200k-768] [--gen-index DIR] [--json out.json]
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultBeam, openIndex } from '../api/openIndex.js';
import type { VectorIndex } from '../api/types.js';
import { CALIBRATION_BEAM_FRACTIONS, CALIBRATION_OVERSAMPLES } from '../calibration/calibrateRecall.js';
import { Executor } from '../executor/Executor.js';
import { packageRoot } from '../executor/packageRoot.js';
import { sampleQuantile, seededShuffle, table } from './benchData.js';
import { defaultIndexOf, loadRecallSet, recallOf, type RecallSet } from './recallData.js';

const { values } = parseArgs({
  options: {
    sets: { type: 'string' },
    queries: { type: 'string' },
    'gen-dir': { type: 'string' },
    'gen-index': { type: 'string' },
    targets: { type: 'string' },
    json: { type: 'string' },
  },
});

const K = 10;
const CACHE = join(packageRoot(), '.bench', 'recall-target');
const sets = (values.sets ?? 'fmnist-cosine,fmnist-euclidean,minilm,gen').split(',');
const queryCount = Number(values.queries ?? 1000);
const targets = (values.targets ?? '0.9,0.95,0.99').split(',').map(Number);

interface TargetRow {
  readonly set: string;
  readonly target: number;
  /** The setting the target ran (`os O, nc B`), null when refused. */
  readonly chosen: string | null;
  readonly recall: number;
  readonly p50: number;
  /** The fixed setting with the lowest p50 whose held-out recall reaches the target. */
  readonly cheapest: string | null;
  readonly cheapestRecall: number;
  readonly cheapestP50: number;
}

/** The set's index: `--gen-index` for the gen set when given, else the build's defaults (cached). */
async function indexFor(set: RecallSet): Promise<{ dir: string; buildMs: number | null }> {
  if (set.name.startsWith('gen') && values['gen-index']) return { dir: values['gen-index'], buildMs: null };
  return defaultIndexOf(set, CACHE);
}

const p50 = (xs: readonly number[]) => sampleQuantile(xs, 0.5);

async function runSet(set: RecallSet): Promise<TargetRow[]> {
  const { dir, buildMs } = await indexFor(set);
  const index: VectorIndex = await openIndex(dir, { calibrate: 'never' });
  try {
    const t0 = performance.now();
    const calibration = await index.calibrate!();
    const calibrateMs = performance.now() - t0;
    console.log(
      `${set.name}: calibrated in ${(calibrateMs / 1000).toFixed(1)} s${buildMs !== null ? ` (build ${(buildMs / 1000).toFixed(1)} s: ${((100 * calibrateMs) / buildMs).toFixed(1)}%)` : ''}; ` +
        calibration.points.map((p) => `os${p.oversample} ${p.recall.toFixed(3)}/${p.lowerBound.toFixed(3)}`).join(', '),
    );
    const oversamples = CALIBRATION_OVERSAMPLES.filter((o) => o <= (calibration.points.at(-1)?.oversample ?? 100) * 2);
    type Variant = { readonly key: string; readonly options: Record<string, number> };
    const variants: Variant[] = [
      // The default search: no knobs (the default recall target on a calibrated index).
      { key: 'default', options: {} },
      ...targets.map((t) => ({ key: `t${t}`, options: { recallTarget: t } })),
      // Each oversample at the default beam and at the smaller beams a calibration measures.
      ...oversamples.flatMap((o) => {
        const candidates = Math.ceil(K * o);
        const beams = [...new Set(CALIBRATION_BEAM_FRACTIONS.slice(1).map((f) => Math.round(defaultBeam(candidates) * f)))].filter((b) => b > candidates);
        return [{ key: `os ${o}`, options: { oversample: o } }, ...(o <= 16 ? beams.map((b) => ({ key: `os ${o}, nc ${b}`, options: { oversample: o, numCandidates: b } })) : [])];
      }),
    ];
    const ms = new Map<string, number[]>(variants.map((v) => [v.key, []]));
    const recall = new Map<string, number>(variants.map((v) => [v.key, 0]));
    const chosen = new Map<string, string>();
    const refused = new Set<string>();
    // Warm-up: each variant once.
    for (const v of variants) await index.search(set.queries[0]!, { k: K, ...v.options }).catch(() => {});
    // A new random order per query (seeded): a variant run right after a large oversample pays for
    // its garbage and cache misses, and a fixed rotation always put the same neighbour first.
    const shuffle = seededShuffle(12345);
    const order = variants.slice();
    for (let qi = 0; qi < set.queries.length; qi++) {
      shuffle(order);
      for (const v of order) {
        if (refused.has(v.key)) continue;
        const s0 = performance.now();
        const r = await index.search(set.queries[qi]!, { k: K, ...v.options }).catch((e: unknown) => {
          refused.add(v.key);
          console.log(`${set.name} ${v.key}: ${(e as Error).message}`);
          return null;
        });
        if (r === null) continue;
        ms.get(v.key)!.push(performance.now() - s0);
        recall.set(
          v.key,
          recall.get(v.key)! +
            recallOf(
              set,
              qi,
              r.hits.map((h) => Number(h.id)),
              K,
            ),
        );
        if (r.stats.recall) chosen.set(v.key, `os ${r.stats.recall.oversample}, nc ${r.stats.recall.numCandidates}`);
      }
    }
    const n = set.queries.length;
    const meanRecall = (key: string) => recall.get(key)! / n;
    defaults.push({ set: set.name, chosen: chosen.get('default') ?? null, recall: meanRecall('default'), p50: p50(ms.get('default')!) });
    return targets.map((t) => {
      const key = `t${t}`;
      const fixed = variants.filter((v) => v.key.startsWith('os') && !refused.has(v.key) && meanRecall(v.key) >= t).map((v) => ({ key: v.key, p50: p50(ms.get(v.key)!) }));
      const cheapest = fixed.sort((a, b) => a.p50 - b.p50)[0]?.key ?? null;
      return {
        set: set.name,
        target: t,
        chosen: refused.has(key) ? null : (chosen.get(key) ?? null),
        recall: refused.has(key) ? NaN : meanRecall(key),
        p50: refused.has(key) ? NaN : p50(ms.get(key)!),
        cheapest,
        cheapestRecall: cheapest === null ? NaN : meanRecall(cheapest),
        cheapestP50: cheapest === null ? NaN : p50(ms.get(cheapest)!),
      };
    });
  } finally {
    await index.close();
  }
}

const rows: TargetRow[] = [];
const defaults: { set: string; chosen: string | null; recall: number; p50: number }[] = [];
console.log(
  `load average at start ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
for (const name of sets) {
  const set = await loadRecallSet(name, { queryCount, k: K, cacheDir: join(CACHE, 'truth'), genDir: values['gen-dir'] ?? join(packageRoot(), '.bench', 'gen-200k-768') });
  if (set === null) continue;
  try {
    rows.push(...(await runSet(set)));
  } finally {
    set.close();
  }
}
console.log(
  `load average at end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
const f = (x: number, d = 3) => (Number.isNaN(x) ? '-' : x.toFixed(d));
console.log(
  table(
    ['set', 'recall_target', 'chose', 'held-out recall@10', 'ok', 'p50 ms', 'fastest fixed setting', 'its recall', 'its p50 ms', 'p50 ratio'],
    rows.map((r) => [
      r.set,
      String(r.target),
      r.chosen ?? 'refused',
      f(r.recall, 4),
      r.recall >= r.target ? 'ok' : 'MISS',
      f(r.p50),
      r.cheapest ?? '-',
      f(r.cheapestRecall, 4),
      f(r.cheapestP50),
      f(r.p50 / r.cheapestP50, 2),
    ]),
  ),
);
console.log(
  table(
    ['set', 'default search', 'held-out recall@10', '>= 0.95', 'p50 ms'],
    defaults.map((d) => [d.set, d.chosen ?? 'uncalibrated', f(d.recall, 4), d.recall >= 0.95 ? 'ok' : 'MISS', f(d.p50)]),
  ),
);
if (values.json) writeFileSync(values.json, JSON.stringify({ targets: rows, defaults }, null, 2));
await Executor.shutdown();
