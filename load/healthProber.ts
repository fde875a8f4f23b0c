/**
 * `GET /health` every `everyMs` from a process of its own, as a load balancer probes a node: the
 * load generator's event loop is busy with its own clients, and a prober inside it would charge
 * its own delays to the server. Started by `startHealthProber` (a forked child); it probes until
 * told to stop and answers with the round trips of the probes it timed, in ms.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { resolveTarget, type Target } from './target.js';
import { getHealth } from './transport.js';

interface Start {
  readonly url: string;
  readonly everyMs: number;
  readonly timeoutMs: number;
}

export interface HealthProber {
  /** Times the probes from now on. */
  measureFrom(): void;
  /** Stops probing; resolves the round trips timed since measureFrom(), ms. */
  stop(): Promise<number[]>;
  kill(): void;
}

/** Starts a prober and resolves once its first probe was answered (the process is up). */
export async function startHealthProber(url: string, everyMs: number, timeoutMs: number): Promise<HealthProber> {
  const child = fork(proberScript(), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the /health prober exited (code ${code}) before its first probe`)));
    child.send({ url, everyMs, timeoutMs } satisfies Start);
  });
  child.removeAllListeners('exit');
  return {
    measureFrom: () => void child.send('measure'),
    kill: () => void (child.connected && child.kill()),
    stop: () =>
      new Promise<number[]>((resolve) => {
        child.once('message', (ms) => {
          resolve(ms as number[]);
          child.disconnect();
        });
        child.send('stop');
      }),
  };
}

/** This module as Node can run it: itself once compiled, the compiled copy (`npm run build`) when loaded from source (tests). */
function proberScript(): string {
  const self = fileURLToPath(import.meta.url);
  return self.endsWith('.ts') ? fileURLToPath(new URL('../dist/load/healthProber.js', import.meta.url)) : self;
}

async function probeLoop(start: Start): Promise<void> {
  const target: Target = await resolveTarget(start.url);
  const ms: number[] = [];
  let measuring = false;
  let stopped = false;
  process.on('message', (m) => {
    if (m === 'measure') measuring = true;
    if (m === 'stop') stopped = true;
  });
  let first = true;
  while (!stopped) {
    const at = performance.now();
    try {
      await getHealth(target, start.timeoutMs);
      if (measuring) ms.push(performance.now() - at);
    } catch {
      if (measuring) ms.push(start.timeoutMs);
    }
    if (first) process.send!('ready');
    first = false;
    const wait = start.everyMs - (performance.now() - at);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  process.send!(ms);
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once('message', (m) => void probeLoop(m as Start));
}
