import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { VectorIndex } from '../api/types.js';
import { createApp, type PrescoreApp } from './app.js';
import { ShuttingDownError } from './errors.js';
import { resolveServerOptions, type ServerOptions } from './options.js';
import { ServerRuntime } from './ServerRuntime.js';

export interface CloseOptions {
  /** Abort whatever is still running now instead of waiting for the drain deadline. */
  readonly force?: boolean;
}

export interface RunningServer {
  /** `http://host:port`, with the actual port. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly app: PrescoreApp;
  readonly runtime: ServerRuntime;
  readonly server: Server;
  /**
   * Stops accepting connections, lets open requests (queued ones included) finish for up to
   * `drainTimeoutMs`, then aborts the rest (503) and closes every connection. Idempotent; a
   * second call with `{force: true}` cuts the wait short. Does not close the index.
   */
  close(options?: CloseOptions): Promise<void>;
}

export interface StartServerDeps {
  /** Where engine failures are reported. Default: console.error. */
  readonly log?: (line: string) => void;
}

/** Once the drain deadline passes and searches are aborted, how long their 503s may take to go out. */
const ABORT_GRACE_MS = 2_000;

export async function startServer(
  index: VectorIndex,
  options: Partial<ServerOptions> = {},
  deps: StartServerDeps = {},
): Promise<RunningServer> {
  const opts = resolveServerOptions(options);
  const runtime = new ServerRuntime(opts, deps.log);
  const app = createApp(index, opts, runtime);
  const server = createAdaptorServer({ fetch: app.fetch, hostname: opts.host }) as Server;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;

  let closing: Promise<void> | undefined;
  let forceNow: (() => void) | undefined;

  const close = (closeOptions: CloseOptions = {}): Promise<void> => {
    if (closing) {
      if (closeOptions.force) forceNow?.();
      return closing;
    }
    runtime.startDraining();
    const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Keep-alive connections with no request in progress would hold close() open.
    server.closeIdleConnections();
    closing = (async () => {
      const forced = new Promise<void>((resolve) => {
        forceNow = resolve;
        if (closeOptions.force) resolve();
      });
      const drained = await race(Promise.race([runtime.idle(), forced]), opts.drainTimeoutMs);
      if (!drained || runtime.open > 0) {
        runtime.abortAll(new ShuttingDownError('server is shutting down (drain deadline passed)'));
        await race(runtime.idle(), ABORT_GRACE_MS);
      }
      // Responses sent while draining carry `Connection: close`; give them a moment to flush.
      server.closeIdleConnections();
      if (!(await race(listenerClosed, ABORT_GRACE_MS))) server.closeAllConnections();
      await listenerClosed;
    })();
    return closing;
  };

  return { url, host: opts.host, port, app, runtime, server, close };
}

/** True if `p` settled within `ms`. */
async function race(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
