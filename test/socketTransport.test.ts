import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../load/clock.js';
import { MalformedResponseError, ResponseParser, type ParsedResponse } from '../load/ResponseParser.js';
import { SocketTransport } from '../load/SocketTransport.js';
import { resolveTarget } from '../load/target.js';
import type { Outcome } from '../load/transport.js';
import { VirtualClock } from './support/VirtualClock.js';

const keep2xx = (status: number) => status >= 200 && status < 300;

function feedAll(parser: ResponseParser, text: string, pieceBytes: number): ParsedResponse | null {
  const bytes = Buffer.from(text, 'latin1');
  let out: ParsedResponse | null = null;
  for (let i = 0; i < bytes.length; i += pieceBytes) {
    const r = parser.feed(bytes.subarray(i, i + pieceBytes));
    if (r !== null) {
      expect(out).toBeNull();
      out = r;
    }
  }
  return out;
}

describe('ResponseParser', () => {
  it('reads a Content-Length body fed in pieces of any size', () => {
    const text = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"hits":[]}';
    for (const piece of [1, 2, 7, 1000]) {
      const r = feedAll(new ResponseParser(keep2xx), text, piece)!;
      expect(r.status).toBe(200);
      expect(r.body!.toString()).toBe('{"hits":[]}');
      expect(r.close).toBe(false);
    }
  });

  it('reads a chunked body with chunk extensions and trailers', () => {
    const text = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n';
    for (const piece of [1, 3, 1000]) {
      const r = feedAll(new ResponseParser(keep2xx), text, piece)!;
      expect(r.body!.toString()).toBe('hello world');
    }
  });

  it('keeps no body for a status it was told to drop, and reads Retry-After', () => {
    const r = feedAll(new ResponseParser(keep2xx), 'HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 4\r\n\r\nbusy', 1000)!;
    expect(r).toEqual({ status: 429, body: null, retryAfterS: 3, close: false });
  });

  it('ends a body without length at the connection close, and marks the connection as closing', () => {
    const parser = new ResponseParser(keep2xx);
    expect(parser.feed(Buffer.from('HTTP/1.0 200 OK\r\n\r\npartial'))).toBeNull();
    expect(parser.feed(Buffer.from(' body'))).toBeNull();
    const r = parser.end()!;
    expect(r.body!.toString()).toBe('partial body');
    expect(r.close).toBe(true);
  });

  it('has no body for 204 and honours Connection: close', () => {
    const r = feedAll(new ResponseParser(keep2xx), 'HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n', 1000)!;
    expect(r.status).toBe(204);
    expect(r.close).toBe(true);
  });

  it('refuses what is not an HTTP/1.x response, bad lengths and bytes after the body', () => {
    expect(() => new ResponseParser(keep2xx).feed(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow(MalformedResponseError);
    expect(() => new ResponseParser(keep2xx).feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n'))).toThrow(/Content-Length/);
    expect(() => new ResponseParser(keep2xx).feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabc'))).toThrow(/after the response body/);
    expect(() => new ResponseParser(keep2xx).feed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'))).toThrow(/chunk size/);
  });

  it('reports whether any byte of the current response has arrived', () => {
    const parser = new ResponseParser(keep2xx);
    expect(parser.started).toBe(false);
    parser.feed(Buffer.from('HTTP/1.1 200'));
    expect(parser.started).toBe(true);
    parser.feed(Buffer.from(' OK\r\nContent-Length: 0\r\n\r\n'));
    expect(parser.started).toBe(false);
  });
});

describe('SocketTransport', () => {
  const servers: (Server | NetServer)[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      (s as Server).closeAllConnections?.();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  async function httpServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; server: Server; connections: Socket[] }> {
    const connections: Socket[] = [];
    const server = createHttpServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => handler(req, res, Buffer.concat(parts).toString()));
    });
    server.on('connection', (s) => connections.push(s));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections };
  }

  const post = (t: SocketTransport, body: string, clock = realClock, timeoutMs = 5000) => new Promise<Outcome>((done) => t.post(Buffer.from(body), clock.now() + timeoutMs, done));

  it('posts the body to the search path over one kept-alive connection', async () => {
    const seen: string[] = [];
    const { url, connections } = await httpServer((req, res, body) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type']} ${body}`);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(`{"echo":${body}}`);
    });
    const t = new SocketTransport(await resolveTarget(url), 4, realClock);
    try {
      for (const n of [1, 2, 3]) {
        const out = await post(t, `{"n":${n}}`);
        expect(out).toMatchObject({ kind: 'ok', status: 200, body: `{"echo":{"n":${n}}}`, detail: 'ok' });
      }
      expect(seen).toEqual([1, 2, 3].map((n) => `POST /v1/search application/json {"n":${n}}`));
      expect(connections).toHaveLength(1);
      expect(t.inFlight).toBe(0);
    } finally {
      t.close();
    }
  });

  it('reads chunked answers and classifies a 429 as shed with its Retry-After', async () => {
    let calls = 0;
    const { url } = await httpServer((_req, res) => {
      if (++calls === 1) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"part":');
        res.end('1}');
      } else {
        res.writeHead(429, { 'Retry-After': '2', 'Content-Type': 'application/json' }).end('{"error":"full"}');
      }
    });
    const t = new SocketTransport(await resolveTarget(url), 1, realClock);
    try {
      expect(await post(t, '{}')).toMatchObject({ kind: 'ok', body: '{"part":1}' });
      expect(await post(t, '{}')).toMatchObject({ kind: 'shed', status: 429, detail: 'http_429', body: null, retryAfterS: 2 });
    } finally {
      t.close();
    }
  });

  it('holds at most maxSockets connections and sends queued requests in order as connections free up', async () => {
    const arrived: string[] = [];
    const held: ServerResponse[] = [];
    const { url, connections } = await httpServer((_req, res, body) => {
      arrived.push(body);
      if (arrived.length > 2) return void res.end(body);
      // The first two hold both connections until both are in: the other three must wait at the client.
      held.push(res);
      if (held.length === 2) for (const r of held.splice(0)) r.end('held');
    });
    const t = new SocketTransport(await resolveTarget(url), 2, realClock);
    try {
      const outs = await Promise.all(['"a"', '"b"', '"c"', '"d"', '"e"'].map((b) => post(t, b)));
      expect(outs.map((o) => o.kind)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(connections).toHaveLength(2);
      expect(arrived.slice(0, 2).sort()).toEqual(['"a"', '"b"']);
      expect(arrived.slice(2)).toEqual(['"c"', '"d"', '"e"']);
    } finally {
      t.close();
    }
  });

  it('does not reuse a connection the server asked to close', async () => {
    const { url, connections } = await httpServer((_req, res) => res.writeHead(200, { Connection: 'close', 'Content-Length': '2' }).end('{}'));
    const t = new SocketTransport(await resolveTarget(url), 1, realClock);
    try {
      expect(await post(t, '{}')).toMatchObject({ kind: 'ok' });
      expect(await post(t, '{}')).toMatchObject({ kind: 'ok' });
      expect(connections).toHaveLength(2);
    } finally {
      t.close();
    }
  });

  it('sends a request again once when its kept-alive connection was closed by the server, and counts it', async () => {
    // A raw server: answers the first request, then closes that connection without saying so
    // (as a server's keep-alive timeout does); the next connection answers normally.
    let connectionNo = 0;
    const server = createNetServer((socket) => {
      const no = ++connectionNo;
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
        if (no === 1) socket.once('data', () => socket.destroy());
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const t = new SocketTransport(await resolveTarget(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), 1, realClock);
    try {
      expect(await post(t, '{}')).toMatchObject({ kind: 'ok' });
      expect(await post(t, '{}')).toMatchObject({ kind: 'ok', body: '{}' });
      expect(t.resetRetries).toBe(1);
      expect(connectionNo).toBe(2);
    } finally {
      t.close();
    }
  });

  it('reports a malformed answer as an error, and a request nobody answers as a client timeout', async () => {
    const server = createNetServer((socket) =>
      socket.once('data', (d) => {
        if (d.toString().includes('"garbage"')) socket.write('NOT HTTP\r\n\r\n');
      }),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const target = await resolveTarget(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const malformed = new SocketTransport(target, 1, realClock);
    try {
      expect(await post(malformed, '"garbage"')).toMatchObject({ kind: 'error', status: 0, detail: 'malformed_response' });
    } finally {
      malformed.close();
    }
    // On a virtual clock the deadline passes at once: nobody answers before it.
    const clock = new VirtualClock();
    const t = new SocketTransport(target, 1, clock);
    try {
      const silent = await post(t, '"silence"', clock, 250);
      expect(silent).toMatchObject({ kind: 'timeout', detail: 'client_timeout' });
      expect(silent.doneAt).toBe(clock.now());
      expect(t.inFlight).toBe(0);
    } finally {
      t.close();
    }
  });

  it('opens connections ahead of a run and settles what is in flight on abortAll', async () => {
    const held: ServerResponse[] = [];
    const { url, connections } = await httpServer((req, res) => {
      if (req.method === 'GET') res.end('{"status":"ok"}');
      else held.push(res);
    });
    const t = new SocketTransport(await resolveTarget(url), 3, realClock);
    await t.preconnect(3, 2000);
    expect(connections).toHaveLength(3);
    const pending = post(t, '{}');
    await new Promise<void>((resolve) => {
      const poll = () => (held.length > 0 ? resolve() : setImmediate(poll));
      poll();
    });
    t.abortAll();
    expect(await pending).toMatchObject({ kind: 'timeout', detail: 'deadline' });
    t.close();
    expect(connections).toHaveLength(3);
  });
});
