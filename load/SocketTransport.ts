/**
 * The load tester's HTTP/1.1 client: keep-alive connections over plain sockets, one request at a
 * time per connection (no pipelining), at most `maxSockets` of them, requests beyond that waiting
 * in FIFO order for the next free connection (as node:http's Agent queues them). Each request goes
 * out as one write of a head prepared once per run plus the body; responses are read with
 * ResponseParser (Content-Length, chunked, or close-delimited bodies).
 *
 * Why a client of its own: the load generator runs on the machine it measures, and its CPU is
 * taken from the server. Single stream against `/v1/search` (768-dim bodies) on the project's
 * 2-core VM: 0.24 ms of client CPU per request against 0.70 ms through node:http's Agent
 * (HttpTransport, kept for comparison) and 0.53 ms through undici's `Pool.dispatch`; the round
 * trip's p50 1.82 ms against 2.41 and 2.16 ms.
 */
import { connect, type Socket } from 'node:net';
import type { Clock, ClockTimer } from './clock.js';
import { MalformedResponseError, ResponseParser, type ParsedResponse } from './ResponseParser.js';
import type { Target } from './target.js';
import { classifyStatus, type Outcome, type OutcomeKind, type Transport } from './transport.js';

interface Request {
  readonly head: Buffer;
  readonly body: Buffer | null;
  readonly done: (o: Outcome) => void;
  timer: ClockTimer | null;
  connection: Connection | null;
  settled: boolean;
  /** Sent again once after its reused connection turned out to be closed by the server. */
  retried: boolean;
}

export class SocketTransport implements Transport {
  private readonly idle: Connection[] = [];
  private readonly waiting: Request[] = [];
  private readonly pending = new Set<Request>();
  /** Connections open or opening. */
  private connections = 0;
  private closed = false;
  /** The request head up to the Content-Length value, the same for every search of a run. */
  private readonly postHead: string;
  private readonly healthHead: Buffer;
  resetRetries = 0;

  constructor(
    private readonly target: Target,
    readonly maxSockets: number,
    private readonly clock: Clock,
  ) {
    if (!(Number.isInteger(maxSockets) && maxSockets >= 1)) throw new RangeError(`maxSockets must be an integer >= 1, got ${maxSockets}`);
    this.postHead = `POST ${target.path} HTTP/1.1\r\nHost: ${target.hostHeader}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: `;
    this.healthHead = Buffer.from(`GET ${target.healthPath} HTTP/1.1\r\nHost: ${target.hostHeader}\r\n\r\n`, 'latin1');
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Opens `n` connections (each answers one `GET /health`) before the clock starts. */
  async preconnect(n: number, timeoutMs = 2000): Promise<void> {
    const count = Math.min(n, this.maxSockets - this.connections);
    const opened: Connection[] = [];
    await Promise.all(
      Array.from({ length: count }, () => {
        const c = this.openConnection();
        opened.push(c);
        return new Promise<void>((resolve) => {
          const r = this.request(this.healthHead, null, this.clock.now() + timeoutMs, () => resolve());
          c.send(r);
        });
      }),
    );
  }

  post(body: Buffer, deadline: number, done: (o: Outcome) => void): void {
    const r = this.request(Buffer.from(`${this.postHead}${body.length}\r\n\r\n`, 'latin1'), body, deadline, done);
    this.dispatch(r);
  }

  abortAll(): void {
    for (const r of [...this.pending]) this.finish(r, 'timeout', 0, null, 'deadline');
  }

  close(): void {
    this.closed = true;
    this.abortAll();
    for (const c of this.idle.splice(0)) c.destroy();
  }

  private request(head: Buffer, body: Buffer | null, deadline: number, done: (o: Outcome) => void): Request {
    const r: Request = { head, body, done, timer: null, connection: null, settled: false, retried: false };
    this.pending.add(r);
    r.timer = this.clock.after(deadline - this.clock.now(), () => this.finish(r, 'timeout', 0, null, 'client_timeout'));
    return r;
  }

  private dispatch(r: Request): void {
    if (this.closed) {
      this.finish(r, 'error', 0, null, 'transport_closed');
      return;
    }
    const c = this.idle.pop() ?? (this.connections < this.maxSockets ? this.openConnection() : null);
    if (c === null) this.waiting.push(r);
    else c.send(r);
  }

  private openConnection(): Connection {
    this.connections++;
    return new Connection(this.target, {
      response: (c, r, res) => this.answered(c, r, res),
      failed: (c, r, code, mayRetry) => this.failed(c, r, code, mayRetry),
      closed: (c) => this.connectionClosed(c),
    });
  }

  private answered(c: Connection, r: Request, res: ParsedResponse): void {
    const cls = classifyStatus(res.status);
    this.finish(r, cls.kind, res.status, res.body === null ? null : res.body.toString('utf8'), cls.detail, cls.kind === 'shed' ? res.retryAfterS : undefined);
    if (res.close) c.destroy();
    else this.release(c);
  }

  /** A free connection takes the oldest waiting request, or goes idle. */
  private release(c: Connection): void {
    const next = this.waiting.shift();
    if (next !== undefined) c.send(next);
    else if (this.closed) c.destroy();
    else this.idle.push(c);
  }

  private failed(_c: Connection, r: Request, code: string, mayRetry: boolean): void {
    if (r.settled) return;
    // A kept-alive connection the server closed while it was idle: a client artifact, not a server
    // failure. One retry on another connection; the latency still counts from the first send.
    if (mayRetry && !r.retried) {
      r.retried = true;
      this.resetRetries++;
      r.connection = null;
      this.dispatch(r);
      return;
    }
    this.finish(r, 'error', 0, null, code);
  }

  private connectionClosed(c: Connection): void {
    this.connections--;
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    // A request waiting for a free connection gets a new one.
    const next = this.waiting.shift();
    if (next !== undefined) this.dispatch(next);
  }

  private finish(r: Request, kind: OutcomeKind, status: number, body: string | null, detail: string, retryAfterS?: number): void {
    if (r.settled) return;
    r.settled = true;
    const doneAt = this.clock.now();
    this.pending.delete(r);
    if (r.timer !== null) this.clock.cancel(r.timer);
    if (r.connection === null) {
      const w = this.waiting.indexOf(r);
      if (w >= 0) this.waiting.splice(w, 1);
    } else if (kind === 'timeout' || detail === 'deadline') {
      // An abandoned request's connection is in an unknown state: close it rather than reuse it.
      r.connection.destroy();
    }
    r.done({ kind, status, doneAt, body, detail, ...(retryAfterS === undefined ? {} : { retryAfterS }) });
  }
}

interface ConnectionEvents {
  response(c: Connection, r: Request, res: ParsedResponse): void;
  /** The request could not be answered; `mayRetry` when the connection was reused and no byte of the answer came. */
  failed(c: Connection, r: Request, code: string, mayRetry: boolean): void;
  closed(c: Connection): void;
}

/** One keep-alive socket and the request it carries, if any. */
class Connection {
  private readonly socket: Socket;
  private readonly parser = new ResponseParser((status) => status >= 200 && status < 300);
  private current: Request | null = null;
  private answeredCount = 0;
  private error: string | null = null;
  private gone = false;

  constructor(
    target: Target,
    private readonly events: ConnectionEvents,
  ) {
    this.socket = connect({ host: target.address, port: target.port, family: target.family, noDelay: true });
    this.socket.on('data', (d: Buffer) => this.onData(d));
    this.socket.on('error', (e: NodeJS.ErrnoException) => (this.error ??= e.code ?? e.message));
    this.socket.on('close', () => this.onClose());
  }

  send(r: Request): void {
    this.current = r;
    r.connection = this;
    if (r.body === null) {
      this.socket.write(r.head);
    } else {
      this.socket.cork();
      this.socket.write(r.head);
      this.socket.write(r.body);
      this.socket.uncork();
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    const r = this.current;
    if (r === null) {
      // Bytes nobody asked for: the connection's state is unknown.
      this.socket.destroy();
      return;
    }
    let res: ParsedResponse | null;
    try {
      res = this.parser.feed(d);
    } catch (e) {
      this.error = e instanceof MalformedResponseError ? 'malformed_response' : String(e);
      this.socket.destroy();
      return;
    }
    if (res === null) return;
    this.current = null;
    this.answeredCount++;
    this.events.response(this, r, res);
  }

  private onClose(): void {
    if (this.gone) return;
    this.gone = true;
    const r = this.current;
    this.current = null;
    if (r !== null && !r.settled) {
      const res = this.parser.end();
      if (res !== null) this.events.response(this, r, res);
      else this.events.failed(this, r, this.error ?? 'socket_closed', this.answeredCount > 0 && !this.parser.started);
    }
    this.parser.reset();
    this.events.closed(this);
  }
}
