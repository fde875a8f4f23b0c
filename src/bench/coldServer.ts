/**
 * `prescore serve` as the benchmarks run it: a child process on a cold index, inside a cgroup v1
 * memory limit, watched while it runs (memory, major faults, OOM kills, its exit), so a run that
 * goes wrong can say why.
 *
 * bench:load sizes the limit after the open (`after-open`), not guessed before it: the server
 * starts under a ceiling (`anonCeilingBytes + cacheBytes`), and once it listens (index open,
 * workers warm) the limit becomes its anonymous memory + HEAP_SLACK + `cacheBytes`. A fixed guess
 * went stale as the resident first phase changed (per-worker copies, then shared arenas) and
 * either let the fp32 vectors stay cached or starved the process of pages for its own code; an
 * index whose resident memory exceeds the ceiling is an explicit error. bench:scale's cap is the
 * claim under test (codes + graphs + headroom), so it is `fixed` from the start, the open included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';
import { MemoryCgroup, type CgroupSupport, type MemoryStat } from './cgroup.js';

/** Room above the anonymous memory at open for the heaps to grow under load (V8 young generation, sockets, buffers). */
const HEAP_SLACK = 64 * 2 ** 20;
const MIB = 2 ** 20;

/** How the server's cgroup memory limit is set. */
export type ServerLimit =
  /**
   * Sized once the server listens: its anonymous memory then + HEAP_SLACK + `cacheBytes` of page
   * cache. More than `anonCeilingBytes` at that point fails the start.
   */
  | { readonly kind: 'after-open'; readonly cacheBytes: number; readonly anonCeilingBytes: number }
  /** `bytes` for the server's whole life, its open included. */
  | { readonly kind: 'fixed'; readonly bytes: number };

export interface ColdServerOptions {
  /** `node bin/prescore.js serve ...` arguments after the script (index, port 0, read path, limits). */
  readonly argv: readonly string[];
  /** Extra environment for the server (e.g. PRESCORE_THREADS). */
  readonly env?: Readonly<Record<string, string>>;
  /** The fp32 files evicted before the run (and again after the probe). */
  readonly coldFiles: readonly string[];
  readonly limit: ServerLimit;
  readonly cgroup: CgroupSupport;
  /** Unique cgroup name. */
  readonly name: string;
}

/** The server exited before it listened; `outOfMemory` when the cgroup's OOM killer or the server's own memory check stopped it. */
export class ServerStartError extends Error {
  constructor(
    message: string,
    readonly outOfMemory: boolean,
  ) {
    super(message);
    this.name = 'ServerStartError';
  }
}

/** What the server's cgroup saw, from the open to now. */
export interface ServerMemory {
  /** Anonymous memory right after the open (cgroup rss), bytes. */
  readonly anonAtOpen: number;
  readonly limit: number;
  readonly peakUsage: number;
  /** Major faults (pages read from disk) since the run started. */
  readonly majorFaults: number;
  /** Times the group hit its limit since the run started. */
  readonly limitHits: number;
  readonly oomKills: number;
}

export interface ServerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The server's refusal to open an index that cannot fit (MemoryBudget). */
const REFUSED_FOR_MEMORY = /needs \d+ bytes .* of memory/;

export class ColdServer {
  private exitInfo: ServerExit | null = null;
  private readonly exited: Promise<ServerExit>;
  private base: MemoryStat | null = null;
  private anonAtOpen = 0;

  private constructor(
    private readonly child: ChildProcess,
    private readonly group: MemoryCgroup | null,
    readonly url: string,
    /** Seconds from the spawn to the listening line (the index open). */
    readonly openSeconds: number,
    private readonly tail: readonly string[],
  ) {
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => resolve((this.exitInfo = { code, signal }));
      if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode, child.signalCode);
      else child.once('exit', done);
    });
  }

  /**
   * Evicts the fp32 files, starts the server in its cgroup and waits until it prints
   * `listening on URL` (it does so only once the index is open and warm), then sizes an
   * `after-open` limit. Throws a ServerStartError with the server's own words when it exits first,
   * or an Error when it holds more than the ceiling.
   */
  static async start(o: ColdServerOptions): Promise<ColdServer> {
    for (const f of o.coldFiles) evictFromPageCache(f);
    const initialLimit = o.limit.kind === 'fixed' ? o.limit.bytes : o.limit.anonCeilingBytes + o.limit.cacheBytes;
    const group = o.cgroup.ok ? MemoryCgroup.create(o.name, initialLimit) : null;
    const options = { stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env } };
    const started = performance.now();
    const child = group ? group.spawn(process.execPath, o.argv, options) : spawn(process.execPath, o.argv, options);
    const tail: string[] = [];
    child.stderr!.on('data', (d: Buffer) => {
      process.stderr.write(d);
      for (const line of d.toString('utf8').split('\n')) if (line.trim() !== '') tail.push(line);
      if (tail.length > 20) tail.splice(0, tail.length - 20);
    });
    let url: string;
    try {
      url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString('utf8');
          // A whole line: a chunk may end inside the URL.
          const m = /listening on (http:\/\/\S+)\n/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code, signal) => {
          const oomKilled = group !== null && group.stat().oomKills > 0;
          const words = tail.length ? `:\n  ${tail.slice(-5).join('\n  ')}` : '';
          reject(
            new ServerStartError(
              `the server exited (${signal ?? `code ${code}`}) before listening${words}`,
              oomKilled || signal === 'SIGKILL' || tail.some((l) => REFUSED_FOR_MEMORY.test(l)),
            ),
          );
        });
      });
    } catch (e) {
      group?.remove();
      throw e;
    }
    child.stdout!.resume();
    const server = new ColdServer(child, group, url, (performance.now() - started) / 1000, tail);
    try {
      if (group && o.limit.kind === 'after-open') server.sizeLimit(group, o.limit);
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  private sizeLimit(group: MemoryCgroup, o: Extract<ServerLimit, { kind: 'after-open' }>): void {
    const st = group.stat();
    this.anonAtOpen = st.rss;
    if (st.rss > o.anonCeilingBytes) {
      throw new Error(
        `the server holds ${(st.rss / MIB).toFixed(0)} MiB of anonymous memory after opening the index, more than the ` +
          `${(o.anonCeilingBytes / MIB).toFixed(0)} MiB allowed (--anon-mib): a cap that small leaves no page cache and the server thrashes; raise --anon-mib`,
      );
    }
    group.setLimit(st.rss + HEAP_SLACK + o.cacheBytes);
  }

  /** Evicts the fp32 files again (after a probe) and starts watching the cgroup for the run. */
  beginRun(coldFiles: readonly string[]): void {
    for (const f of coldFiles) evictFromPageCache(f);
    if (!this.group) return;
    this.group.resetMaxUsage();
    this.base = this.group.stat();
  }

  /** The cgroup's view since beginRun; null without a cgroup. */
  memory(): ServerMemory | null {
    if (!this.group || !this.base) return null;
    const now = this.group.stat();
    return {
      anonAtOpen: this.anonAtOpen,
      limit: now.limit,
      peakUsage: now.maxUsage,
      majorFaults: now.pgmajfault - this.base.pgmajfault,
      limitHits: now.failcnt - this.base.failcnt,
      oomKills: now.oomKills - this.base.oomKills,
    };
  }

  /** How the server exited, if it has. */
  get exit(): ServerExit | null {
    return this.exitInfo;
  }

  /** The server's last lines on stderr. */
  stderrTail(): readonly string[] {
    return this.tail;
  }

  /** The server's process id. */
  get pid(): number {
    return this.child.pid!;
  }

  /** SIGTERM (the server drains), SIGKILL after 30 s; removes the cgroup. `oomKilled`: the group's OOM killer killed it. */
  async stop(): Promise<ServerExit & { readonly oomKilled: boolean }> {
    if (!this.exitInfo) this.child.kill('SIGTERM');
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    const exit = await this.exited;
    clearTimeout(kill);
    const oomKilled = this.group !== null && this.group.stat().oomKills > 0;
    this.group?.remove();
    return { ...exit, oomKilled };
  }
}
