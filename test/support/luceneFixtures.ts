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
  const candidates = [
    process.env.PRESCORE_LUCENE_FIXTURES,
    resolve(packageRoot(), '..', 'shared', 'fixtures', 'lucene'),
    '/work/shared/fixtures/lucene',
  ].filter((d): d is string => !!d);
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
