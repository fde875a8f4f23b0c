import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { diskStats, memoryCgroupSupport, MemoryCgroup, parseBytes } from '../src/bench/cgroup.js';

const support = memoryCgroupSupport();

describe('bench cgroup helpers', () => {
  it('parses byte sizes', () => {
    expect(parseBytes('4096')).toBe(4096);
    expect(parseBytes('512M')).toBe(512 * 2 ** 20);
    expect(parseBytes('1G')).toBe(2 ** 30);
    expect(parseBytes('1.5GiB')).toBe(1.5 * 2 ** 30);
    expect(() => parseBytes('lots')).toThrow(/not a byte size/);
  });

  it('reads disk counters', () => {
    const d = diskStats();
    expect(d.readsCompleted).toBeGreaterThan(0);
    expect(d.sectorsRead).toBeGreaterThan(0);
    expect(() => diskStats('nosuchdisk')).toThrow(/nosuchdisk/);
  });

  it('explains when memory cgroups are unavailable', () => {
    if (!support.ok) expect(support.reason.length).toBeGreaterThan(10);
    else expect(existsSync(support.parent)).toBe(true);
  });

  it.skipIf(!support.ok)('spawns a child inside a limited group and removes the group', async () => {
    const g = MemoryCgroup.create(`prescore-test-${process.pid}`, 64 * 2 ** 20);
    try {
      const child = g.spawn('/bin/sh', ['-c', 'cat /proc/self/cgroup; head -c 8000000 /dev/urandom > /dev/null'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      const code = await new Promise<number | null>((ok) => child.once('exit', ok));
      expect(code).toBe(0);
      const rel = g.path.replace('/sys/fs/cgroup/memory', '');
      expect(out).toMatch(new RegExp(`memory:${rel.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
      const st = g.stat();
      expect(st.limit).toBe(64 * 2 ** 20);
      expect(st.pgmajfault).toBeGreaterThanOrEqual(0);
    } finally {
      expect(g.remove()).toBe(true);
    }
    expect(existsSync(g.path)).toBe(false);
  });
});
