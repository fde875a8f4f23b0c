import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/executor/packageRoot.js';

/**
 * A short run of the crash ledger (`npm run bench:crash`, src/bench/crash.ts) through the real
 * server: `prescore serve` takes `_bulk` writes, refreshes and force-merges from concurrent
 * clients, is SIGKILLed at a random moment, restarted and checked against every acknowledged
 * write (source, vector, `_version`, `_seq_no`), three times. The bench's exit code is its verdict.
 */
describe('the crash ledger, short', () => {
  it('keeps every acknowledged _bulk write across three SIGKILLs of the server', async () => {
    const bench = join(packageRoot(), 'dist', 'src', 'bench', 'crash.js');
    const { stdout } = await promisify(execFile)(process.execPath, [bench, '--kills', '3', '--seed', '11'], { maxBuffer: 16 * 1024 * 1024 }).catch(
      (e: { stdout?: string; stderr?: string }) => {
        throw new Error(`bench:crash failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
      },
    );
    const figures = JSON.parse(stdout.split('\n').find((l) => l.startsWith('{"bench":"crash"'))!) as Record<string, number>;
    expect(figures).toMatchObject({ kills: 3, mismatches: 0, unexpectedAnswers: 0, staleReadsBeforeWrite: 0, staleVersionsBeforeWrite: 0 });
    expect(figures.ackedOps).toBeGreaterThan(0);
  }, 120_000);
});
