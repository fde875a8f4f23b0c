#!/usr/bin/env node
// The CLI lives in TypeScript; `npm install` compiles it to dist/ (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/src/cli.js', import.meta.url);
process.env.PRESCORE_CLI = '1';
if (!existsSync(fileURLToPath(cli))) {
  console.error('prescore: dist/ is missing; run `npm install` (or `npm run build`) first.');
  process.exit(1);
}
await import(cli.href);
