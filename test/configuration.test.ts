import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { packageRoot } from '../src/executor/packageRoot.js';
import { SERVE_SETTINGS } from '../src/http/serve.js';
import { esSchema, nativeSchema } from '../src/http/validation.js';
import { tableRows } from './support/markdown.js';

/**
 * docs/configuration.md against the code: every CLI flag of every command, every environment
 * variable the code reads and every HTTP request parameter is on the page, and the page has
 * nothing the code lacks. Each difference is named.
 */
const root = packageRoot();
const page = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
const source = (path: string) => readFileSync(join(root, path), 'utf8');

/** The option names of the `parseArgs` option objects in a source file (`name: { type: 'string' }`). */
function parseArgsOptions(path: string): string[] {
  return [...source(path).matchAll(/(?:^\s*|[{,]\s*)'?([a-z][\w-]*)'?:\s*\{\s*type:\s*'(?:string|boolean)'/gm)].map((m) => m[1]!);
}

/** `prescore <command> --flag` for every flag the code defines (`--help` is every command's, and said once on the page). */
function flagsInCode(): string[] {
  const commands: Record<string, string[]> = {
    gen: parseArgsOptions('src/gen/genCommand.ts'),
    build: parseArgsOptions('src/buildCommand.ts'),
    info: parseArgsOptions('src/inspectCommands.ts'),
    check: parseArgsOptions('src/inspectCommands.ts'),
    calibrate: parseArgsOptions('src/calibrateCommand.ts'),
    load: parseArgsOptions('load/command.ts'),
    serve: Object.values(SERVE_SETTINGS).map((s) => s.flag),
    // `start` reads its own flag by hand and passes the rest to `serve`.
    start: [...source('src/startCommand.ts').matchAll(/a === '--([a-z][\w-]*)'/g)].map((m) => m[1]!),
  };
  for (const [name, flags] of Object.entries(commands)) expect(flags.length, `no flags found for ${name}: has the parsing changed?`).toBeGreaterThan(0);
  return Object.entries(commands).flatMap(([command, flags]) => flags.filter((f) => f !== 'help').map((f) => `${command} --${f}`));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((f) => {
    const path = join(dir, f);
    if (statSync(join(root, path)).isDirectory()) return f === 'bench' && dir === 'src' ? [] : sourceFiles(path);
    return /\.(ts|js)$/.test(f) ? [path] : [];
  });
}

/** Every environment variable the service, the CLI and the load tester read (the benchmarks' own are theirs). */
function envInCode(): string[] {
  const found = new Set<string>(Object.values(SERVE_SETTINGS).map((s) => s.env));
  for (const file of ['src', 'segments', 'query', 'load', 'bin'].flatMap((d) => sourceFiles(d))) {
    for (const m of source(file).matchAll(/process\.env(?:\.([A-Z_][A-Z0-9_]*)|\[['"]([A-Z_][A-Z0-9_]*)['"]\])/g)) found.add(m[1] ?? m[2]!);
  }
  return [...found];
}

/** The leaf fields of a request schema, as dotted paths (`knn.rescore_vector.oversample`). */
function fieldPaths(schema: z.ZodType, prefix = ''): string[] {
  let s = schema;
  while (s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
  if (!(s instanceof z.ZodObject)) return [prefix];
  return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([key, child]) => fieldPaths(child, prefix ? `${prefix}.${key}` : key));
}

const strip = (cell: string) => cell.replace(/`/g, '').trim();

/** `prescore <command> --flag` and variable names from the page's table. */
function pageSettings(): { flags: string[]; env: string[]; serveEnv: Map<string, string> } {
  const flags: string[] = [];
  const env: string[] = [];
  const serveEnv = new Map<string, string>();
  for (const [command = '', flagCell = '', envCell = ''] of tableRows(page, 'command')) {
    const name = /^prescore (\w+)$/.exec(strip(command))?.[1];
    const flag = /--([a-z][\w-]*)/.exec(flagCell)?.[1];
    const vars = [...envCell.matchAll(/\b([A-Z][A-Z0-9_]{2,})\b/g)].map((m) => m[1]!);
    if (flag) {
      expect(name, `a flag row must name its command: ${command} | ${flagCell}`).toBeDefined();
      flags.push(`${name} --${flag}`);
      if (name === 'serve' && vars.length > 0) serveEnv.set(flag, vars[0]!);
    }
    env.push(...vars);
  }
  return { flags, env, serveEnv };
}

/** Names in `a` that `b` lacks. */
const missing = (a: readonly string[], b: readonly string[]) => [...new Set(a)].filter((x) => !b.includes(x)).sort();

describe('docs/configuration.md against the code', () => {
  const onPage = pageSettings();

  it('lists every CLI flag of every command, and no flag the code lacks', () => {
    const inCode = flagsInCode();
    expect(missing(inCode, onPage.flags), 'flags in the code but not on docs/configuration.md').toEqual([]);
    expect(missing(onPage.flags, inCode), 'flags on docs/configuration.md that no command has').toEqual([]);
    expect(onPage.flags.length, 'a flag listed twice').toBe(new Set(onPage.flags).size);
  });

  it('lists every environment variable the code reads, and none it does not', () => {
    const inCode = envInCode();
    expect(missing(inCode, onPage.env), 'variables read by the code but not on docs/configuration.md').toEqual([]);
    expect(missing(onPage.env, inCode), 'variables on docs/configuration.md that no code reads').toEqual([]);
  });

  it('pairs each serve flag with its own variable', () => {
    for (const s of Object.values(SERVE_SETTINGS)) expect(onPage.serveEnv.get(s.flag), `--${s.flag}`).toBe(s.env);
  });

  it('lists every HTTP request parameter of both search routes, and none they lack', () => {
    const shape = { dims: 4, field: 'vector', rejectZeroVector: true };
    const limits = { maxTimeoutMs: 60_000 };
    const inCode = [...fieldPaths(nativeSchema(shape, limits)).map((p) => `POST /v1/search ${p}`), ...fieldPaths(esSchema(shape, limits)).map((p) => `POST /:index/_search ${p}`)];
    const documented = tableRows(page, 'route').map(([route = '', parameter = '']) => `${strip(route)} ${strip(parameter)}`);
    expect(missing(inCode, documented), 'HTTP parameters in the schemas but not on docs/configuration.md').toEqual([]);
    expect(missing(documented, inCode), 'HTTP parameters on docs/configuration.md that no schema has').toEqual([]);
  });

  it('finds what it compares (the extraction itself works)', () => {
    expect(flagsInCode()).toEqual(expect.arrayContaining(['build --segment-docs', 'serve --max-inflight', 'load --find-max', 'start --data', 'info --index']));
    expect(envInCode()).toEqual(expect.arrayContaining(['PRESCORE_THREADS', 'PRESCORE_PORT', 'PRESCORE_HUGEPAGES']));
    expect(relative(root, join(root, 'docs', 'configuration.md'))).toBe('docs/configuration.md');
  });
});
