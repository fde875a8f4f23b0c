/**
 * `prescore serve` as the load benchmarks run it: a child process on a cold index, inside a cgroup
 * v1 memory limit sized to what the server really holds plus a fixed page cache, watched while it
 * runs (memory, major faults, OOM kills, its exit), so a run that goes wrong can say why.
 *
 * The limit is sized after the open, not guessed before it: the server starts under a ceiling
 * (`anonCeilingBytes + cacheBytes`), and once it listens (index open, workers warm) the limit
 * becomes its anonymous memory + HEAP_SLACK + `cacheBytes`. A fixed guess went stale as the
 * resident first phase changed (per-worker copies, then shared arenas) and either let the fp32
 * vectors stay cached or starved the process of pages for its own code; an index whose resident
 * memory exceeds the ceiling is an explicit error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { evictFromPageCache } from '../../segments/store/native/PageCache.js';
import { MemoryCgroup, type CgroupSupport, type MemoryStat } from './cgroup.js';

/** Room above the anonymous memory at open for the heaps to grow under load (V8 young generation, sockets, buffers). */
const HEAP_SLACK = 64 * 2 ** 20;
const MIB = 2 ** 20;

export interface ColdServerOptions {
  /** `node bin/prescore.js serve ...` arguments after the script (index, port 0, read path, limits). */
  readonly argv: readonly string[];
  /** The fp32 files evicted before the run (and again after the probe). */
  readonly coldFiles: readonly string[];
  /** Page cache the server gets beyond its anonymous memory (bytes). */
  readonly cacheBytes: number;
  /** The most anonymous memory the server may hold after open (bytes); more fails the start. */
  readonly anonCeilingBytes: number;
  readonly cgroup: CgroupSupport;
  /** Unique cgroup name. */
  readonly name: string;
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

export class ColdServer {
  private exitInfo: ServerExit | null = null;
  private readonly exited: Promise<ServerExit>;
  private base: MemoryStat | null = null;
  private anonAtOpen = 0;
  private peakUsage = 0;
  private sampler: NodeJS.Timeout | null = null;

  private constructor(
    private readonly child: ChildProcess,
    private readonly group: MemoryCgroup | null,
    readonly url: string,
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
   * `listening on URL` (it does so only once the index is open and warm), then sizes the limit.
   * Throws with the server's own words when it exits first or holds more than the ceiling.
   */
  static async start(o: ColdServerOptions): Promise<ColdServer> {
    for (const f of o.coldFiles) evictFromPageCache(f);
    const group = o.cgroup.ok ? MemoryCgroup.create(o.name, o.anonCeilingBytes + o.cacheBytes) : null;
    const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
    const child = group ? group.spawn(process.execPath, o.argv, { stdio }) : spawn(process.execPath, o.argv, { stdio });
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
        child.once('exit', (code, signal) =>
          reject(new Error(`the server exited (${signal ?? `code ${code}`}) before listening${tail.length ? `:\n  ${tail.slice(-5).join('\n  ')}` : ''}`)),
        );
      });
    } catch (e) {
      group?.remove();
      throw e;
    }
    child.stdout!.resume();
    const server = new ColdServer(child, group, url, tail);
    try {
      if (group) server.sizeLimit(group, o);
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  private sizeLimit(group: MemoryCgroup, o: ColdServerOptions): void {
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
    this.base = this.group.stat();
    this.peakUsage = this.base.usage;
    this.sampler = setInterval(() => {
      if (this.exitInfo) return;
      try {
        this.peakUsage = Math.max(this.peakUsage, this.group!.stat().usage);
      } catch {
        // The group is being removed: nothing more to see.
      }
    }, 250);
    this.sampler.unref();
  }

  /** The cgroup's view since beginRun; null without a cgroup. */
  memory(): ServerMemory | null {
    if (!this.group || !this.base) return null;
    const now = this.group.stat();
    return {
      anonAtOpen: this.anonAtOpen,
      limit: now.limit,
      peakUsage: Math.max(this.peakUsage, now.usage),
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

  /** SIGTERM (the server drains), SIGKILL after 30 s; removes the cgroup. */
  async stop(): Promise<ServerExit> {
    if (this.sampler) clearInterval(this.sampler);
    if (!this.exitInfo) this.child.kill('SIGTERM');
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    const exit = await this.exited;
    clearTimeout(kill);
    this.group?.remove();
    return exit;
  }
}
