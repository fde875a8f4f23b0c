import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { Executor } from '../src/executor/Executor.js';
import { packageRoot } from '../src/executor/packageRoot.js';
import { DataDirectory } from '../src/http/DataDirectory.js';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../src/http/IndexWrites.js';
import { defaultIndexSettings } from '../src/http/IndexSettings.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { startServer, type RunningServer } from '../src/http/server.js';
import { unzipLuceneFixture } from './support/luceneFixtures.js';
import { codeBlocks, type Block } from './support/markdown.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { Mapping } from '../segments/document/Mapping.js';
import { demoMapping, writeDemoFields } from '../src/gen/DemoDocuments.js';
import { serveHelp } from '../src/cli.js';
import { SERVE_EXAMPLES } from '../src/serveHelp.js';

/**
 * The README's and docs/*.md's code blocks run as written, page by page, in order, each page in
 * a scratch directory of its own where `data/demo/index` is a small 384-dim index like the demo's
 * (its documents' fields too: title, category, year, in_stock, as `prescore start` builds them),
 * `data/lucene` a Lucene 10 index (when the page names it), `bin/prescore.js` the CLI, and
 * `localhost:8080` a server of indexes (`--data`) holding the demo index, taking writes and
 * index creation (the port is substituted):
 *   - ```js blocks run as ES modules (`import ... from 'prescore'` is the package itself); a block
 *     that defines `hits` or `topDocs` must find some;
 *   - ```sh / ```bash blocks run in bash -euo pipefail, and must not print an error body;
 *   - ```json blocks must parse.
 * A shell block's output must not hold an empty `"hits": []` either: an example's search must
 * find something to show. `prescore serve --help`'s examples (src/serveHelp.ts) run the same way.
 * A block whose info string says `no-run` is shown, not run: commands that serve until stopped,
 * benchmarks, installs, and builds of millions of vectors. `errors-ok` lets a shell block print
 * error bodies (the error examples).
 */
let t: TestIndex;
let server: RunningServer;
let data: DataDirectory;
let fieldsDir: string;
const root = packageRoot();

beforeAll(async () => {
  fieldsDir = mkdtempSync(join(tmpdir(), 'prescore-docs-fields-'));
  const fields = join(fieldsDir, 'fields.jsonl');
  await writeDemoFields(fields, 2000);
  t = await buildTestIndex({ n: 2000, dims: 384, segmentDocs: 1000, flatThreshold: 500, extra: { fields, mapping: Mapping.parse(demoMapping()) } });
  // The demo index is linked into a data directory, where the pages' examples may create more.
  mkdirSync(join(fieldsDir, 'indexes'));
  symlinkSync(t.dir, join(fieldsDir, 'indexes', 'demo'));
  data = await DataDirectory.open(join(fieldsDir, 'indexes'), {
    openIndex: (dir, name) => openIndex(dir, { name }),
    openWriter: openIndexWriter,
    defaults: defaultIndexSettings(DEFAULT_REFRESH_INTERVAL_MS),
    maxTimeoutMs: 60_000,
    log: () => {},
  });
  server = await startServer(data, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} });
});

afterAll(async () => {
  await server?.close({ force: true });
  await data?.close();
  await Executor.shutdown();
  t?.cleanup();
  if (fieldsDir) rmSync(fieldsDir, { recursive: true, force: true });
});

const PAGES = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

const run = promisify(execFile);

const runnable = (b: Block) => !b.flags.includes('no-run') && ['js', 'sh', 'bash', 'json'].includes(b.lang);

/** A scratch directory laid out as the blocks expect (see the comment at the top). */
function makeScratch(name: string, withLucene: boolean): string {
  // Inside the package, so `import ... from 'prescore'` resolves to the package itself.
  const scratch = mkdtempSync(join(root, 'test', `.docs-${name.replace(/\W+/g, '-')}-`));
  mkdirSync(join(scratch, 'data', 'demo'), { recursive: true });
  symlinkSync(t.dir, join(scratch, 'data', 'demo', 'index'));
  symlinkSync(join(root, 'bin'), join(scratch, 'bin'));
  if (withLucene) unzipLuceneFixture('index.10.0.0-cfs.zip', join(scratch, 'data', 'lucene'));
  return scratch;
}

/** Runs one block as written in `scratch`, with the checks the comment at the top describes. */
async function runBlock(block: Pick<Block, 'lang' | 'flags' | 'code' | 'line'>, scratch: string): Promise<void> {
  const env = { ...process.env, XDG_CACHE_HOME: join(scratch, '.cache'), PRESCORE_PROGRESS: '0', PRESCORE_THREADS: '2' };
  if (block.lang === 'json') {
    expect(() => JSON.parse(block.code)).not.toThrow();
    return;
  }
  const code = block.code.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `127.0.0.1:${server.port}`);
  if (block.lang === 'js') {
    const file = join(scratch, `block-${block.line}.mjs`);
    writeFileSync(
      file,
      `${code}\n;process.stdout.write('\\n' + JSON.stringify({ ok: true, hits: typeof hits !== 'undefined' ? hits : typeof topDocs !== 'undefined' ? topDocs.scoreDocs : null }));\nprocess.exit(0);\n`,
    );
    const { stdout: out } = await run(process.execPath, [file], { cwd: scratch, env, encoding: 'utf8', timeout: 120_000 });
    const last = JSON.parse(out.trim().split('\n').at(-1)!) as { ok: boolean; hits: unknown[] | null };
    expect(last.ok).toBe(true);
    if (last.hits !== null) expect(last.hits.length).toBeGreaterThan(0);
    return;
  }
  const r = await run('bash', ['-euo', 'pipefail', '-c', code], { cwd: scratch, env, encoding: 'utf8', timeout: 120_000 }).then(
    (o) => ({ status: 0, ...o }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ status: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
  expect(r.status, `exit ${r.status}\n${r.stdout}\n${r.stderr}`).toBe(0);
  if (!block.flags.includes('errors-ok')) expect(r.stdout, r.stdout).not.toMatch(/"error":\s*\{/);
  // A search block must find documents: an empty hits list means the example shows nothing.
  expect(r.stdout, r.stdout).not.toMatch(/"hits":\s*\[\]/);
}

describe.each(PAGES)('%s', (page) => {
  const text = readFileSync(join(root, page), 'utf8');
  const blocks = codeBlocks(text).filter(runnable);
  let scratch: string;

  beforeAll(() => {
    scratch = makeScratch(page, text.includes('data/lucene'));
  });

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  if (blocks.length === 0) {
    it('has no block to run', () => {
      expect(blocks).toEqual([]);
    });
    return;
  }

  // Asynchronous children: the server these blocks query runs on this process's event loop.
  it.each(blocks.map((b) => [`${b.lang} at line ${b.line}`, b] as const))('%s runs as written', (_name, block) => runBlock(block, scratch), 180_000);
});

describe('prescore serve --help', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = makeScratch('serve-help', false);
  });
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('prints its examples after the options', () => {
    const help = serveHelp();
    expect(help).toContain('--max-inflight');
    for (const e of SERVE_EXAMPLES) expect(help).toContain(e.code.split('\n')[0]);
  });

  it.each(SERVE_EXAMPLES.map((e, i) => [`${e.lang} example ${i + 1}`, e, i + 1] as const))(
    '%s runs as written',
    (_name, e, line) => runBlock({ lang: e.lang, flags: [], code: e.code, line }, scratch),
    180_000,
  );
});

describe('the pages', () => {
  it('README stays a front door (at most 300 lines)', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('link only to files that exist', () => {
    const missing: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(root, page), 'utf8');
      for (const m of text.matchAll(/\]\((?!https?:|#|mailto:)([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = join(root, page.includes('/') ? page.slice(0, page.lastIndexOf('/')) : '', m[1]!);
        if (!existsSync(target)) missing.push(`${page}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
