/**
 * HTTP/1.1 over raw sockets, for tests that need requests to reach a server in the same turn of
 * its event loop: every connection is opened and accepted first, then every request is written
 * in one synchronous loop, so all of them are readable when the server's next poll phase runs.
 * (A client library would write each request on a later tick, whenever its socket came up.)
 */
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface RawConnection {
  readonly socket: Socket;
  /** Writes raw bytes now (synchronously into the kernel's socket buffer on loopback). */
  write(text: string): void;
  /** The one response on this connection (requests ask for `Connection: close`), read to the socket's end. */
  readonly response: Promise<RawResponse>;
}

/** Opens `n` connections and resolves once the server has accepted every one of them. */
export async function openConnections(server: Server, host: string, port: number, n: number): Promise<RawConnection[]> {
  let accepted = 0;
  let onAllAccepted: () => void = () => {};
  const allAccepted = new Promise<void>((resolve) => (onAllAccepted = resolve));
  const onConnection = () => {
    if (++accepted === n) onAllAccepted();
  };
  server.on('connection', onConnection);
  try {
    const connections = await Promise.all(Array.from({ length: n }, () => openConnection(host, port)));
    await allAccepted;
    return connections;
  } finally {
    server.off('connection', onConnection);
  }
}

function openConnection(host: string, port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const response = new Promise<RawResponse>((resolveResponse, rejectResponse) => {
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('end', () => {
        try {
          resolveResponse(parseResponse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          rejectResponse(e);
        }
      });
      socket.on('error', rejectResponse);
    });
    response.catch(() => {});
    socket.once('connect', () => resolve({ socket, write: (text) => void socket.write(text), response }));
    socket.once('error', reject);
  });
}

/** A complete request asking the server to close the connection after its answer. */
export function rawRequest(method: string, path: string, body?: string): string {
  const head = [`${method} ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close'];
  if (body === undefined) return `${head.join('\r\n')}\r\n\r\n`;
  head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`incomplete HTTP response: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status, headers, body };
}

function unchunk(text: string): string {
  let out = '';
  for (let at = 0; ; ) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
