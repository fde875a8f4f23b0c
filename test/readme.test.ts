import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { packageRoot } from '../src/executor/packageRoot.js';
import { Executor } from '../src/executor/Executor.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/** The README's library examples run as written (only the index path differs). */
let t: TestIndex;
let scratch: string;

beforeAll(async () => {
  t = await buildTestIndex({ n: 2000, dims: 384, segmentDocs: 1000, flatThreshold: 500 });
  await Executor.shutdown();
  // Inside the package, so `import ... from 'prescore'` resolves to the package itself.
  scratch = mkdtempSync(join(packageRoot(), 'test', '.readme-'));
});

afterAll(() => {
  t?.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const snippets = [...readFileSync(join(packageRoot(), 'README.md'), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

describe('README library examples', () => {
  it('has the facade and the Lucene-style example', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(2);
  });

  it.each(snippets.map((s, i) => [i, s]))('example %i runs as written', (i, snippet) => {
    const file = join(scratch, `example-${i}.mjs`);
    const code = (snippet as string).replaceAll("'data/demo/index'", JSON.stringify(t.dir));
    writeFileSync(file, `${code}\nprocess.stdout.write(JSON.stringify({ ok: true, hits: typeof hits !== 'undefined' ? hits : topDocs.scoreDocs }));\nprocess.exit(0);\n`);
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
    const last = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(last.ok).toBe(true);
    expect(last.hits.length).toBeGreaterThan(0);
  });
});
