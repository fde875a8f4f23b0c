/**
 * Search requests the server sends itself, over loopback to a private listener on its own app,
 * before it listens on its port.
 *
 * The engine's open already runs warm-up searches (openIndex), but the request path around them
 * (the Node HTTP adaptor's request and response conversion, hono routing, body reading, validation
 * of a few thousand numbers, admission, the response's JSON) runs unoptimized until V8 has seen it
 * many times, and while it does a burst of traffic outruns the server. Measured (1M x 1024, 8
 * segments, 2 workers, fp32 cold, 100 requests/s at fixed intervals from the first second, 3 s,
 * load average 5-7 with 40% CPU steal, so noisy): with no warm-up requests each answer took
 * 0.4-1.3 s and 13-73 of 300 were shed; with these 100, 0.1-0.3 s for the first 1.25 s, then
 * 13-80 ms, none shed, in two runs of three (the third, at the run's highest load, shed 111). 100
 * real queries sent by a client over the same socket path beforehand gave 10-40 ms from the start
 * on a quieter machine; the same 100 handed to the app without a socket (app.request) still left
 * 0.2-1 s per answer. Requests run a few at a time, as under load, so the executor's placements
 * are exercised too; the server's metrics are reset after.
 */
import type { VectorIndex } from '../api/types.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { mulberry32 } from '../gen/Rng.js';
import type { PrescoreApp } from './app.js';

/** A warm-up search got a server error: the index cannot answer searches, so the server does not start. */
export class WarmUpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WarmUpError';
  }
}

/** Answers that do not fail the start: success, and the server's configured limits at work. */
const TOLERATED = new Set([200, 413, 429, 504]);

/** Requests in flight at once during the warm-up. */
const CONCURRENCY = 4;

/**
 * Sends `requests` searches (random unit vectors; every fourth on the Elasticsearch route, as
 * `/<name>/_search` with the name the app serves) to `app`. Throws a WarmUpError on an answer
 * that is a server error.
 */
export async function warmUpApp(app: PrescoreApp, index: VectorIndex, name: string, requests: number): Promise<void> {
  if (requests === 0) return;
  const { field } = await index.describe();
  const random = mulberry32(0x5eed);
  const body = (i: number): { path: string; json: string } => {
    const v = unitVector(index.dims, random);
    return i % 4 === 3
      ? { path: `/${encodeURIComponent(name)}/_search`, json: JSON.stringify({ knn: { field, query_vector: v, k: 10, num_candidates: 100 } }) }
      : { path: '/v1/search', json: JSON.stringify({ vector: v, k: 10 }) };
  };
  const server = createAdaptorServer({ fetch: app.fetch, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let next = 0;
  const lane = async () => {
    while (next < requests) {
      const { path, json } = body(next++);
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json });
      const text = await res.text();
      // 413/429/504 are the server's own limits at work (a small --max-body-bytes, --max-queue or
      // --timeout-ms); any other refusal or server error is a fault the first client would meet too.
      if (!TOLERATED.has(res.status)) throw new WarmUpError(`warm-up search ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, requests) }, lane));
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function unitVector(dims: number, random: () => number): number[] {
  const v = Array.from({ length: dims }, () => random() - 0.5);
  let sq = 0;
  for (const x of v) sq += x * x;
  const norm = Math.sqrt(sq) || 1;
  return v.map((x) => x / norm);
}
