/**
 * cgroup v1 memory groups for benchmarks: confine a child process so its page cache cannot hold
 * the files under test (drop_caches is not writable on these machines), and read back what the
 * kernel charged (memory.stat) and what the disk really did (/proc/diskstats).
 *
 * Groups are created UNDER this process's own memory cgroup by default, not at the hierarchy
 * root: the child stays inside whatever limits and accounting the parent already runs under,
 * and the hierarchy (use_hierarchy=1) still reclaims at the child's own, smaller limit.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MEMORY_ROOT = '/sys/fs/cgroup/memory';

export type CgroupSupport = { readonly ok: true; readonly parent: string } | { readonly ok: false; readonly reason: string };

/** Whether memory cgroups can be created here, and under which directory; otherwise why not. */
export function memoryCgroupSupport(): CgroupSupport {
  if (process.platform !== 'linux') return { ok: false, reason: `cgroup v1 memory groups need Linux (this is ${process.platform})` };
  if (!existsSync(join(MEMORY_ROOT, 'memory.limit_in_bytes'))) {
    return { ok: false, reason: `no cgroup v1 memory controller at ${MEMORY_ROOT} (cgroup v2 only, or not mounted)` };
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return { ok: false, reason: `creating memory cgroups needs root (uid ${process.getuid()})` };
  }
  const parent = join(MEMORY_ROOT, ownMemoryCgroup());
  if (!existsSync(join(parent, 'cgroup.procs'))) return { ok: false, reason: `own memory cgroup ${parent} not found` };
  return { ok: true, parent };
}

/** This process's path in the memory hierarchy ("/" at the root), from /proc/self/cgroup. */
function ownMemoryCgroup(): string {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers?.split(',').includes('memory')) return path ?? '/';
  }
  return '/';
}

export interface MemoryStat {
  /** Page cache charged to the group, bytes. */
  readonly cache: number;
  /** Page cache mapped into the group's processes, bytes. */
  readonly mappedFile: number;
  readonly rss: number;
  /** Major faults (a page had to come from disk), cumulative. */
  readonly pgmajfault: number;
  readonly usage: number;
  /** The highest usage since the group was created or since resetMaxUsage() (memory.max_usage_in_bytes). */
  readonly maxUsage: number;
  readonly limit: number;
  /** Times the group hit its limit (memory.failcnt), cumulative. */
  readonly failcnt: number;
  /** Processes of the group the kernel's OOM killer killed (memory.oom_control oom_kill), cumulative. */
  readonly oomKills: number;
}

const live = new Set<MemoryCgroup>();
let hooksInstalled = false;

export class MemoryCgroup {
  readonly path: string;
  private limit: number;
  private removed = false;

  private constructor(path: string, limitBytes: number) {
    this.path = path;
    this.limit = limitBytes;
  }

  /** The limit last set (bytes). */
  get limitBytes(): number {
    return this.limit;
  }

  /**
   * Creates (or reuses) the group `name` with a memory limit. Throws with the support reason
   * when groups cannot be made; check memoryCgroupSupport() first to fall back gracefully.
   * The group is removed on remove(), process exit, SIGINT and SIGTERM.
   */
  static create(name: string, limitBytes: number, parent?: string): MemoryCgroup {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`cgroup name '${name}' must be [A-Za-z0-9._-]+`);
    let dir = parent;
    if (dir === undefined) {
      const support = memoryCgroupSupport();
      if (!support.ok) throw new Error(`cannot create memory cgroup '${name}': ${support.reason}`);
      dir = support.parent;
    }
    const path = join(dir, name);
    try {
      mkdirSync(path, { recursive: false });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`mkdir ${path}: ${(e as Error).message}`, { cause: e });
    }
    const group = new MemoryCgroup(path, limitBytes);
    try {
      writeFileSync(join(path, 'memory.limit_in_bytes'), String(limitBytes));
    } catch (e) {
      group.remove();
      throw new Error(`${path}/memory.limit_in_bytes <- ${limitBytes}: ${(e as Error).message}`, { cause: e });
    }
    live.add(group);
    installHooks();
    return group;
  }

  /**
   * Spawns `command args` inside the group. A shell wrapper moves itself into the group and then
   * execs the command, so even the child's first allocations and page faults are charged here.
   */
  spawn(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    this.check();
    const script = 'echo $$ > "$0" && exec "$@"';
    return spawn('/bin/sh', ['-c', script, join(this.path, 'cgroup.procs'), command, ...args], options);
  }

  /**
   * Changes the limit. Lowering it below the usage makes the kernel reclaim page cache first; when
   * it cannot get below (anonymous memory, no swap), the write fails (EBUSY) and this throws.
   */
  setLimit(bytes: number): void {
    this.check();
    try {
      writeFileSync(join(this.path, 'memory.limit_in_bytes'), String(bytes));
    } catch (e) {
      throw new Error(`${this.path}/memory.limit_in_bytes <- ${bytes}: ${(e as Error).message}`, { cause: e });
    }
    this.limit = bytes;
  }

  /** Moves an existing process (e.g. process.pid) into the group. */
  addProcess(pid: number): void {
    this.check();
    writeFileSync(join(this.path, 'cgroup.procs'), String(pid));
  }

  stat(): MemoryStat {
    this.check();
    const fields = new Map<string, number>();
    for (const line of readFileSync(join(this.path, 'memory.stat'), 'utf8').split('\n')) {
      const [k, v] = line.split(' ');
      if (k && v) fields.set(k, Number(v));
    }
    const num = (f: string) => Number(readFileSync(join(this.path, f), 'utf8').trim());
    return {
      cache: fields.get('cache') ?? 0,
      mappedFile: fields.get('mapped_file') ?? 0,
      rss: fields.get('rss') ?? 0,
      pgmajfault: fields.get('pgmajfault') ?? 0,
      usage: num('memory.usage_in_bytes'),
      maxUsage: num('memory.max_usage_in_bytes'),
      limit: num('memory.limit_in_bytes'),
      failcnt: num('memory.failcnt'),
      oomKills: Number(/^oom_kill (\d+)$/m.exec(readFileSync(join(this.path, 'memory.oom_control'), 'utf8'))?.[1] ?? 0),
    };
  }

  /** Starts memory.max_usage_in_bytes again from the current usage. */
  resetMaxUsage(): void {
    this.check();
    writeFileSync(join(this.path, 'memory.max_usage_in_bytes'), '0');
  }

  /**
   * Removes the group (it must have no processes left: wait for children to exit). Its
   * remaining page-cache charges move to the parent. Idempotent; never throws.
   */
  remove(): boolean {
    if (this.removed) return true;
    try {
      if (existsSync(this.path)) rmdirSync(this.path);
      this.removed = true;
      live.delete(this);
      return true;
    } catch {
      return false;
    }
  }

  private check(): void {
    if (this.removed) throw new Error(`cgroup ${this.path} was removed`);
  }
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const g of [...live]) g.remove();
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const g of [...live]) g.remove();
      // Re-raise so the exit status still says "killed by signal".
      process.kill(process.pid, sig);
    });
  }
}

export interface DiskStats {
  readonly readsCompleted: number;
  readonly sectorsRead: number;
}

/** Cumulative reads completed and 512-byte sectors read for a block device (/proc/diskstats). */
export function diskStats(device = 'vda'): DiskStats {
  for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[2] === device) return { readsCompleted: Number(f[3]), sectorsRead: Number(f[5]) };
  }
  throw new Error(`device ${device} not in /proc/diskstats`);
}

/** Parses "512M", "1G", "1.5GiB", "4096" into bytes. */
export function parseBytes(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(s.trim());
  if (!m) throw new Error(`not a byte size: '${s}'`);
  const mult = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.round(Number(m[1]) * mult);
}
