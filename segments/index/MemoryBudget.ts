import { existsSync, readFileSync } from 'node:fs';
import { freemem, totalmem } from 'node:os';

/** How much memory this process may use, as far as Linux says. */
export interface MemoryBudget {
  /** Physical memory, or the memory cgroup's limit when lower. */
  readonly limit: number;
  /** What can still be allocated: MemAvailable (or free memory), or the cgroup's headroom when lower. */
  readonly available: number;
  /** Where `limit` came from. */
  readonly source: 'physical' | 'cgroup v1' | 'cgroup v2';
}

/**
 * Reads the budget: /proc/meminfo's MemAvailable (page cache counts as available, as the kernel
 * reclaims it) and the process's memory cgroup (v2 memory.max, or v1 memory.limit_in_bytes),
 * whose headroom is its limit minus usage plus the group's page cache (the kernel reclaims it
 * before it fails an allocation; the fp32 files read in place are most of it).
 */
export function memoryBudget(): MemoryBudget {
  const physical = totalmem();
  let available = memAvailable() ?? freemem();
  let limit = physical;
  let source: MemoryBudget['source'] = 'physical';
  const group = cgroupMemory();
  if (group && group.limit < limit) {
    limit = group.limit;
    source = group.version;
  }
  if (group) available = Math.min(available, Math.max(0, group.limit - group.usage + group.reclaimable));
  return { limit, available, source };
}

/**
 * Throws when `bytes` more cannot fit: more than the limit, or more than is available now, with
 * a message that gives the bytes needed and what there is (`what` says what needs them).
 */
export function checkFits(bytes: number, what: string, budget: MemoryBudget = memoryBudget()): void {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
  if (bytes > budget.available) {
    const limit = budget.source === 'physical' ? `${gib(budget.limit)} of RAM` : `a ${budget.source} memory limit of ${gib(budget.limit)}`;
    throw new RangeError(`${what} needs ${bytes} bytes (${gib(bytes)}) of memory, but only ${budget.available} bytes (${gib(budget.available)}) are available (${limit})`);
  }
}

function memAvailable(): number | undefined {
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface CgroupMemory {
  readonly version: 'cgroup v1' | 'cgroup v2';
  readonly limit: number;
  readonly usage: number;
  readonly reclaimable: number;
}

function cgroupMemory(): CgroupMemory | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const num = (path: string): number | undefined => {
    if (!existsSync(path)) return undefined;
    const text = readFileSync(path, 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  };
  const stat = (path: string, key: string): number => {
    if (!existsSync(path)) return 0;
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(path, 'utf8'));
    return m ? Number(m[1]) : 0;
  };
  for (const line of lines) {
    const [, controllers, path] = line.split(':');
    if (path === undefined) continue;
    if (controllers.split(',').includes('memory')) {
      const dir = `/sys/fs/cgroup/memory${path}`;
      const limit = num(`${dir}/memory.limit_in_bytes`);
      const usage = num(`${dir}/memory.usage_in_bytes`);
      // v1 reports "no limit" as a huge page-rounded number.
      if (limit === undefined || usage === undefined || limit >= 2 ** 60) return undefined;
      return { version: 'cgroup v1', limit, usage, reclaimable: stat(`${dir}/memory.stat`, 'total_cache') };
    }
    if (controllers === '') {
      const dir = `/sys/fs/cgroup${path}`;
      const limit = num(`${dir}/memory.max`);
      const usage = num(`${dir}/memory.current`);
      if (limit === undefined || usage === undefined) return undefined;
      return { version: 'cgroup v2', limit, usage, reclaimable: stat(`${dir}/memory.stat`, 'file') };
    }
  }
  return undefined;
}
