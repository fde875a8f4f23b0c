import { READ_PATHS, type ReadPath } from '../api/types.js';

/** Server settings; every field has a default (see DEFAULT_SERVER_OPTIONS). */
export interface ServerOptions {
  /** The index name served at `/:index/_search`. Default: the index's own `name`. */
  readonly name: string | undefined;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Searches executing on the engine at once. */
  readonly maxInflight: number;
  /** Searches waiting (FIFO) for a slot; beyond this, 429. */
  readonly maxQueue: number;
  readonly maxBodyBytes: number;
  /** Cap of a `_bulk` body (Elasticsearch's http.max_content_length, 100 MiB). */
  readonly maxBulkBytes: number;
  /** Deadline of a search that names none (queue wait + engine time). */
  readonly defaultTimeoutMs: number;
  /** Upper bound for a request's own `timeout_ms`. */
  readonly maxTimeoutMs: number;
  /** How long close() waits for in-flight requests before aborting them (503). */
  readonly drainTimeoutMs: number;
  /** A client must send its complete request headers within this time, else 408 and the connection is closed. */
  readonly headersTimeoutMs: number;
  /** A client must send its complete request (headers and body) within this time, else 408. */
  readonly requestTimeoutMs: number;
  /** Read path for searches that name none; undefined = the index's configured default. */
  readonly readPath: ReadPath | undefined;
  /** Searches the server sends itself before it listens, so the first clients meet a compiled request path (see warmUp.ts); 0 = none. */
  readonly warmUpRequests: number;
}

export const DEFAULT_SERVER_OPTIONS: ServerOptions = {
  name: undefined,
  host: '127.0.0.1',
  port: 8080,
  maxInflight: 32,
  maxQueue: 32,
  // A 10k-dim vector is ~250 KB of JSON at worst (25 characters per element).
  maxBodyBytes: 1024 * 1024,
  maxBulkBytes: 100 * 1024 * 1024,
  defaultTimeoutMs: 10_000,
  maxTimeoutMs: 60_000,
  drainTimeoutMs: 30_000,
  // Node's defaults (60 s / 300 s, checked every 30 s) let a client that drips its headers hold a
  // connection for minutes; a search request is small, so seconds are plenty.
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  readPath: undefined,
  warmUpRequests: 100,
};

/** Fills defaults and checks ranges; throws a RangeError naming the option. */
export function resolveServerOptions(partial: Partial<ServerOptions> = {}): ServerOptions {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
  const o: ServerOptions = { ...DEFAULT_SERVER_OPTIONS, ...defined };
  intIn('port', o.port, 0, 65_535);
  intIn('maxInflight', o.maxInflight, 1, 100_000);
  intIn('maxQueue', o.maxQueue, 0, 1_000_000);
  intIn('warmUpRequests', o.warmUpRequests, 0, 100_000);
  intIn('maxBodyBytes', o.maxBodyBytes, 1024, 1024 ** 3);
  intIn('maxBulkBytes', o.maxBulkBytes, 1024, 1024 ** 3);
  intIn('maxTimeoutMs', o.maxTimeoutMs, 1, 24 * 3_600_000);
  intIn('defaultTimeoutMs', o.defaultTimeoutMs, 1, o.maxTimeoutMs);
  intIn('drainTimeoutMs', o.drainTimeoutMs, 0, 24 * 3_600_000);
  intIn('requestTimeoutMs', o.requestTimeoutMs, 1, 24 * 3_600_000);
  // Node refuses a header deadline beyond the whole request's.
  intIn('headersTimeoutMs', o.headersTimeoutMs, 1, o.requestTimeoutMs);
  if (typeof o.host !== 'string' || o.host === '') throw new RangeError('host must be a non-empty string');
  if (o.name !== undefined && !/^[^\s/\\*?"<>|,#]+$/.test(o.name)) {
    throw new RangeError(`name must be a non-empty index name without spaces or / \\ * ? " < > | , #, got ${JSON.stringify(o.name)}`);
  }
  if (o.readPath !== undefined && !(READ_PATHS as readonly string[]).includes(o.readPath)) {
    throw new RangeError(`readPath must be one of ${READ_PATHS.join(', ')}, got ${JSON.stringify(o.readPath)}`);
  }
  return o;
}

function intIn(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${v}`);
}
