import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The package root (the directory holding prescore's package.json), found by walking up from
 * this module. Works both from TypeScript sources (vitest) and from the compiled dist/ tree.
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'prescore') return (cached = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('prescore package root not found');
    dir = parent;
  }
}

/** Absolute path of a compiled module under dist/ (workers always run compiled JavaScript). */
export function distPath(...parts: string[]): string {
  return join(packageRoot(), 'dist', ...parts);
}

/** prescore's version (its package.json). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
