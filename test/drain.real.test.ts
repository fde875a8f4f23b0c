import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

/**
 * SIGTERM to a real `prescore serve` with 60 requests open: the ones still queued behind one
 * search slot, the ones still sending their bodies, and the ones whose connections the server
 * has not even accepted yet. Every request written before the signal gets a full response.
 */
const BIN = resolve('bin/prescore.js');
const DIMS = 64;
let t: TestIndex;

beforeAll(async () => {
  t = await buildTestIndex({ n: 2000, dims: DIMS, segmentDocs: 1000, flatThreshold: 100_000, queries: 60 });
});

afterAll(() => t?.cleanup());

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  readonly exit: Promise<number | null>;
  waitForStderr(text: string): Promise<void>;
  stderr(): string;
}

async function serve(args: string[]): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'serve', '--index', t.dir, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PRESCORE_THREADS: '1' },
  });
  const exit = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  let out = '';
  let err = '';
  const errWaiters: { text: string; ok: () => void }[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of errWaiters.filter((w) => err.includes(w.text))) {
      errWaiters.splice(errWaiters.indexOf(w), 1);
      w.ok();
    }
  });
  const port = await new Promise<number>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) ok(Number(m[1]));
    });
    void exit.then(() => fail(new Error(`server exited before listening:\n${err}`)));
  });
  return {
    child,
    port,
    exit,
    stderr: () => err,
    waitForStderr: (text) => new Promise<void>((ok) => (err.includes(text) ? ok() : errWaiters.push({ text, ok }))),
  };
}

/** One request on its own connection, written by hand so that part of it can be held back. */
interface RawRequest {
  /** Resolves once the bytes given so far are handed to the kernel. */
  readonly written: Promise<void>;
  /** Sends the held-back rest of the body. */
  finish(): void;
  /** The whole response (status line, headers, body), or the socket error. */
  readonly response: Promise<{ status: number; body: string }>;
}

function rawRequest(port: number, body: string, holdBack: number): RawRequest {
  const socket: Socket = connect(port, '127.0.0.1');
  const head = `POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  const first = head + body.slice(0, body.length - holdBack);
  const written = new Promise<void>((ok, fail) => socket.write(first, (e) => (e ? fail(e) : ok())));
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  const response = new Promise<{ status: number; body: string }>((ok, fail) => {
    socket.once('error', fail);
    socket.once('end', () => {
      const text = Buffer.concat(chunks).toString();
      const [headers, ...rest] = text.split('\r\n\r\n');
      ok({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(headers ?? '')?.[1]), body: rest.join('\r\n\r\n') });
    });
  });
  return { written, response, finish: () => (holdBack > 0 ? void socket.write(body.slice(body.length - holdBack)) : undefined) };
}

const query = (i: number) => [...t.queries.subarray(i * DIMS, (i + 1) * DIMS)];

describe('graceful shutdown of a real server', () => {
  it('SIGTERM with 60 open requests: every request sent before the signal gets a full 200, none is reset', async () => {
    const server = await serve(['--max-inflight', '1', '--max-queue', '100']);
    const requests: RawRequest[] = [];
    for (let i = 0; i < 60; i++) {
      const body = JSON.stringify({ vector: query(i), k: 10, oversample: 10, num_candidates: 500 });
      // A third hold back the end of their bodies until the drain has begun.
      requests.push(rawRequest(server.port, body, i % 3 === 0 ? 10 : 0));
    }
    await Promise.all(requests.map((r) => r.written));
    server.child.kill('SIGTERM');
    await server.waitForStderr('SIGTERM: draining');
    for (const r of requests) r.finish();

    const responses = await Promise.all(requests.map((r) => r.response));
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    for (const [i, r] of responses.entries()) {
      const parsed = JSON.parse(r.body) as { hits: { score: number }[] };
      expect(parsed.hits, `request ${i}`).toHaveLength(10);
    }
    expect(await server.exit).toBe(0);
  });

  it('after the drain the listener is closed: a new connection is refused', async () => {
    const server = await serve([]);
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
    const refused = await new Promise<string>((ok) =>
      connect(server.port, '127.0.0.1')
        .once('error', (e: NodeJS.ErrnoException) => ok(e.code ?? ''))
        .once('connect', () => ok('connected')),
    );
    expect(refused).toBe('ECONNREFUSED');
  });
});
