import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/executor/packageRoot.js';

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
  readonly cycle?: readonly { readonly name: string }[];
}

/** Runs dependency-cruiser with the project's layering rules over `dirs` of `cwd`. */
function cruise(cwd: string, dirs: readonly string[]): Violation[] {
  const bin = join(packageRoot(), 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const config = join(packageRoot(), '.dependency-cruiser.cjs');
  const r = spawnSync(process.execPath, [bin, ...dirs, '--config', config, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0 && !r.stdout) throw new Error(`dependency-cruiser failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const describeViolation = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`;

describe('architecture: imports flow one way (src -> query -> segments; load standalone)', () => {
  it('has no upward import and no import cycle', () => {
    const violations = cruise(packageRoot(), ['segments', 'query', 'src', 'load']);
    expect(violations.map(describeViolation)).toEqual([]);
  }, 300_000); // dependency-cruiser parses the whole tree: ~3 s idle, over a minute on a loaded machine

  describe('the rules catch what they forbid', () => {
    const root = mkdtempSync(join(tmpdir(), 'prescore-arch-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const file = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    file('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    file('segments/Low.ts', "import { high } from '../query/High.js';\nexport const low = high + 1;\n");
    file('query/High.ts', "import { top } from '../src/Top.js';\nexport const high = top + 1;\n");
    file('src/Top.ts', 'export const top = 1;\n');
    file('segments/a/A.ts', "import type { B } from '../b/B.js';\nexport interface A { b?: B }\n");
    file('segments/b/B.ts', "import type { A } from '../a/A.js';\nexport interface B { a?: A }\n");
    file('load/Client.ts', "import { low } from '../segments/Low.js';\nexport const client = low;\n");

    it('reports segments -> query, query -> src, load -> segments and a type-only cycle', () => {
      const found = cruise(root, ['segments', 'query', 'src', 'load']).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
      expect(found).toEqual(
        expect.arrayContaining([
          'segments-is-the-bottom-layer: segments/Low.ts -> query/High.ts',
          'query-imports-only-segments: query/High.ts -> src/Top.ts',
          'load-is-standalone: load/Client.ts -> segments/Low.ts',
          expect.stringMatching(/^no-cycles: segments\/(a\/A|b\/B)\.ts -> segments\/(a\/A|b\/B)\.ts$/),
        ]),
      );
    }, 300_000);
  });
});
