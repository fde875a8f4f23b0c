import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { packageRoot } from '../../src/executor/packageRoot.js';

/** Index directories written by released Lucene 9.12 and 10.0 (ground truth; never copied into the repo). */
export const LUCENE_FIXTURE_ZIPS = ['index.9.12.3-cfs.zip', 'index.10.0.0-cfs.zip', 'int7_hnsw.9.12.3.zip'] as const;
export type LuceneFixtureZip = (typeof LUCENE_FIXTURE_ZIPS)[number];

/**
 * Where the Lucene fixtures are: $PRESCORE_LUCENE_FIXTURES, else `../shared/fixtures/lucene` next
 * to the checkout (the project's layout), else `/work/shared/fixtures/lucene`. Missing fixtures
 * fail the tests with this message rather than skip them silently.
 */
export function luceneFixturesDir(): string {
  const candidates = [process.env.PRESCORE_LUCENE_FIXTURES, resolve(packageRoot(), '..', 'shared', 'fixtures', 'lucene'), '/work/shared/fixtures/lucene'].filter(
    (d): d is string => !!d,
  );
  const found = candidates.find((d) => LUCENE_FIXTURE_ZIPS.every((z) => existsSync(join(d, z))));
  if (!found) {
    throw new Error(`Lucene fixtures (${LUCENE_FIXTURE_ZIPS.join(', ')}) not found in ${candidates.join(', ')}; set PRESCORE_LUCENE_FIXTURES`);
  }
  return found;
}

/** Unzips a fixture into `into` (default a new temp dir) and returns that directory. */
export function unzipLuceneFixture(zip: LuceneFixtureZip, into = mkdtempSync(join(tmpdir(), 'prescore-lucene-'))): string {
  execFileSync('unzip', ['-q', '-o', join(luceneFixturesDir(), zip), '-d', into]);
  return into;
}

const f = Math.fround;

/**
 * Doc i's vector in the Lucene fixtures, confirmed bit for bit on every vector of every fixture:
 * Lucene's test computes `0.1f + 0.1f * i` in float arithmetic, i.e.
 * fround(fround(0.1) + fround(fround(0.1) * i)). Rounding the double 0.1 + 0.1 * i once gives a
 * different float for 9 of the 35 docs (i = 6, 8, 12, 13, 17, 18, 23, 28, 33).
 */
export const fixtureVector = (i: number) => Float32Array.of(f(0.2), f(-0.1), f(f(0.1) + f(f(0.1) * i)));

/** Lucene's COSINE score, in double: max((1 + cos) / 2, 0). */
export function luceneCosine(q: Float32Array, v: Float32Array): number {
  let dot = 0,
    n1 = 0,
    n2 = 0;
  for (let i = 0; i < q.length; i++) {
    dot += q[i] * v[i];
    n1 += q[i] * q[i];
    n2 += v[i] * v[i];
  }
  return Math.max((1 + dot / Math.sqrt(n1 * n2)) / 2, 0);
}
