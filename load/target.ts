/**
 * Where the load goes. The load tester only ever talks to loopback addresses: a load test is a
 * (mild) denial-of-service tool, so a typo in --url must not aim it at another machine.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export const SEARCH_PATH = '/v1/search';

/** A resolved loopback endpoint. */
export interface Target {
  /** The search endpoint as given/derived, for reports. */
  readonly endpoint: string;
  /** Base URL of the server (endpoint minus `/v1/search`), for `/health`. */
  readonly base: string;
  /** A loopback IP literal to connect to (resolved once, so the check holds for every request). */
  readonly address: string;
  readonly family: 4 | 6;
  readonly port: number;
  readonly path: string;
  readonly healthPath: string;
  /** The Host header (the name the user gave). */
  readonly hostHeader: string;
}

/** Thrown for a target that is not on this machine: the load tester sends to loopback addresses only. */
export class NotLoopbackError extends Error {
  constructor(url: string, detail: string) {
    super(`--url ${url}: refusing to send load to a non-loopback address (${detail}); ` + 'only 127.0.0.0/8, ::1 and localhost are allowed');
    this.name = 'NotLoopbackError';
  }
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped 127.x (::ffff:127.x.y.z). */
export function isLoopbackIp(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) return ip.split('.')[0] === '127';
  if (v === 6) {
    const s = ip.toLowerCase();
    if (s === '::1' || s === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
    return mapped !== null && isIP(mapped[1]) === 4 && mapped[1].split('.')[0] === '127';
  }
  return false;
}

/**
 * Parses --url (server base or full endpoint) and checks it is loopback. `localhost` is
 * resolved and every address it maps to must be loopback. Any other host name is refused
 * without a DNS query.
 */
export async function resolveTarget(url: string): Promise<Target> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--url ${url}: not a valid URL (expected e.g. http://127.0.0.1:8080)`);
  }
  if (u.protocol !== 'http:') {
    throw new Error(`--url ${url}: only http:// is supported (got ${u.protocol})`);
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let address: string;
  if (isIP(host) !== 0) {
    if (!isLoopbackIp(host)) throw new NotLoopbackError(url, `${host} is not loopback`);
    address = host;
  } else if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost')) {
    let all: Array<{ address: string }>;
    try {
      all = await lookup(host, { all: true, verbatim: false });
    } catch (e) {
      throw new Error(`--url ${url}: cannot resolve ${host} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    const bad = all.filter((a) => !isLoopbackIp(a.address));
    if (all.length === 0 || bad.length > 0) {
      throw new NotLoopbackError(url, `${host} resolves to ${all.map((a) => a.address).join(', ') || 'nothing'}`);
    }
    address = all[0].address;
  } else {
    throw new NotLoopbackError(url, `host name "${host}" is not localhost`);
  }
  const port = u.port === '' ? 80 : Number(u.port);
  let path = u.pathname.replace(/\/+$/, '');
  let basePath: string;
  if (path.endsWith(SEARCH_PATH)) {
    basePath = path.slice(0, -SEARCH_PATH.length);
  } else {
    basePath = path;
    path = path + SEARCH_PATH;
  }
  const origin = `http://${u.host}`;
  return {
    endpoint: origin + path + u.search,
    base: origin + basePath,
    address,
    family: isIP(address) === 6 ? 6 : 4,
    port,
    path: path + u.search,
    healthPath: basePath + '/health',
    hostHeader: u.host,
  };
}
