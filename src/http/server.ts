import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { VectorIndex } from '../api/types.js';
import type { IndexWrites } from './IndexWrites.js';
import { isCatalog, type IndexCatalog } from './IndexCatalog.js';
import { createApp, searchRoute, type PrescoreApp } from './app.js';
import { ShuttingDownError } from './errors.js';
import { resolveServerOptions, type ServerOptions } from './options.js';
import { ServerRuntime } from './ServerRuntime.js';
import { warmUpApp } from './warmUp.js';

export interface CloseOptions {
  /** Abort whatever is still running now instead of waiting for the drain deadline. */
  readonly force?: boolean;
}

/** A listening server: its address, its app and how to stop it. */
export interface RunningServer {
  /** `http://host:port`, with the actual port. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly app: PrescoreApp;
  readonly runtime: ServerRuntime;
  readonly server: Server;
  /**
   * Stops accepting connections (after accepting what already waits in the kernel's backlog),
   * answers every request received (running, queued, still sending its body) for up to
   * `drainTimeoutMs`, then aborts the rest (503) and closes every connection. Idempotent; a
   * second call with `{force: true}` cuts the wait short. Does not close the index.
   */
  close(options?: CloseOptions): Promise<void>;
}

/** What startServer plugs in besides its settings: where failures are logged, and the index's writes. */
export interface StartServerDeps {
  /** Where engine failures are reported. Default: console.error. */
  readonly log?: (line: string) => void;
  /** The served index's writes (the document write API); absent: the index is served read-only. */
  readonly writes?: IndexWrites;
}

/** Once the drain deadline passes and searches are aborted, how long their 503s may take to go out. */
const ABORT_GRACE_MS = 2_000;

/**
 * Serves an index, or a catalog of them, over HTTP (the routes of {@link createApp}) and resolves
 * once listening.
 *
 * @example
 * ```ts
 * const index = await openIndex('data/demo/index');
 * const server = await startServer(index, { port: 0 });
 * console.log(server.url);
 * await server.close();
 * await index.close(); // close() leaves the index open
 * ```
 */
export async function startServer(indexes: VectorIndex | IndexCatalog, options: Partial<ServerOptions> = {}, deps: StartServerDeps = {}): Promise<RunningServer> {
  const opts = resolveServerOptions(options);
  const runtime = new ServerRuntime(opts, deps.log);
  const app = createApp(indexes, opts, runtime, deps.writes ?? null);
  if (isCatalog(indexes)) for (const s of indexes.list()) await warmUpApp(app, s.index, s.name, opts.warmUpRequests);
  else await warmUpApp(app, indexes, opts.name ?? indexes.name, opts.warmUpRequests);
  runtime.resetMetrics();
  const toApp = getRequestListener(app.fetch, { hostname: opts.host });
  const server = createServer(
    {
      headersTimeout: opts.headersTimeoutMs,
      requestTimeout: opts.requestTimeoutMs,
      // Node enforces both deadlines only when it checks its connections (default every 30 s).
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(opts.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (!shedWhenFull(runtime, req, res)) void toApp(req, res);
    },
  );

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;

  const connections = { accepted: 0 };
  server.on('connection', () => connections.accepted++);

  let closing: Promise<void> | undefined;
  let forceNow: (() => void) | undefined;

  const close = (closeOptions: CloseOptions = {}): Promise<void> => {
    if (closing) {
      if (closeOptions.force) forceNow?.();
      return closing;
    }
    runtime.startDraining();
    const deadline = performance.now() + opts.drainTimeoutMs;
    const forced = new Promise<void>((resolve) => {
      forceNow = resolve;
      if (closeOptions.force) resolve();
    });
    closing = (async () => {
      // Connections the kernel has completed but Node has not accepted yet would be reset by
      // closing the listener, and sockets accepted but not yet read look idle: let the event loop
      // accept the backlog and read what arrived before the listener goes.
      await acceptBacklog(connections);
      await loopTurns(2);
      // net's close stops accepting but, unlike http's, keeps every open connection and Node's
      // header/request deadlines; connections are closed below, once they are idle.
      const listenerClosed = new Promise<void>((resolve) => netClose.call(server, () => resolve()));
      const drained = await race(Promise.race([drainConnections(runtime, server, listenerClosed), forced]), Math.max(0, deadline - performance.now()));
      if (!drained || runtime.open > 0) {
        runtime.abortAll(new ShuttingDownError('server is shutting down (drain deadline passed)'));
        await race(runtime.idle(), ABORT_GRACE_MS);
      }
      server.closeIdleConnections();
      if (!(await race(listenerClosed, ABORT_GRACE_MS))) server.closeAllConnections();
      await listenerClosed;
      runtime.markStopped();
    })();
    return closing;
  };

  return { url, host: opts.host, port, app, runtime, server, close };
}

const netClose = NetServer.prototype.close;

/**
 * A search request that finds every admission place held is answered 429 here, before the app
 * sees it: the same answer and metrics as the admission middleware's (ServerRuntime.shed), minus
 * the app's request and response objects and its error path. Why: under overload shedding is
 * most of what the server thread does, and every request it sheds delays the next `/health`
 * (measured in-process, 768-dim bodies, one connection: 0.64 ms of server CPU per 429 through the
 * app). Node discards the unread body once the response is sent. Draining servers take the app's
 * path (its responses carry `Connection: close`).
 */
function shedWhenFull(runtime: ServerRuntime, req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'POST' || !runtime.admission.full || runtime.draining) return false;
  const route = searchRoute(req.url ?? '');
  if (route === null) return false;
  const t0 = performance.now();
  const e = runtime.shed();
  const body = JSON.stringify(e.body());
  res.writeHead(429, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...e.headers });
  res.end(body);
  runtime.metrics.observeRequest(route, 'POST', 429, (performance.now() - t0) / 1000);
  return true;
}

/**
 * Resolves once every connection has closed: each request is answered (responses while draining
 * carry `Connection: close`), and connections left idle are closed. A request that starts on a
 * connection meanwhile (its bytes were in flight) is waited for too.
 */
async function drainConnections(runtime: ServerRuntime, server: Server, listenerClosed: Promise<void>): Promise<void> {
  let closed = false;
  void listenerClosed.then(() => (closed = true));
  while (!closed) {
    await runtime.idle();
    // A socket read in the next turns may start a request: only then is "no open request" final.
    await loopTurns(2);
    if (runtime.open > 0) continue;
    server.closeIdleConnections();
    await race(listenerClosed, 10);
  }
}

/**
 * Turns the event loop until it accepts no new connection for a few turns in a row. libuv accepts
 * about one pending connection per turn (measured: 60 connections waiting at SIGTERM took 53
 * turns; with a fixed 3 turns, 50 of them were reset when the listener closed).
 */
async function acceptBacklog(connections: { readonly accepted: number }): Promise<void> {
  const QUIET_TURNS = 3;
  for (let quiet = 0, turns = 0; quiet < QUIET_TURNS && turns < 100_000; turns++) {
    const before = connections.accepted;
    await loopTurns(1);
    quiet = connections.accepted === before ? quiet + 1 : 0;
  }
}

/** Resolves after `n` turns of the event loop (each includes a poll phase: accepts and reads). */
async function loopTurns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
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
