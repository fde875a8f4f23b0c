import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/http/server.js';
import { resolveServerOptions } from '../src/http/options.js';
import { FakeIndex } from './support/FakeIndex.js';

/** The searches a server sends itself before it listens (src/http/warmUp.ts). */
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close({ force: true });
});

const metric = async (server: RunningServer, pattern: RegExp): Promise<string[]> =>
  (await (await fetch(server.url + '/metrics')).text()).split('\n').filter((l) => pattern.test(l));

describe('server warm-up', () => {
  it('answers its warm-up searches on both routes before it listens, then counts from zero', async () => {
    const fake = new FakeIndex({ name: 'vectors', dims: 64 });
    const server = await startServer(fake, { host: '127.0.0.1', port: 0, warmUpRequests: 8 }, { log: () => {} });
    servers.push(server);
    // All eight ran to completion before startServer resolved (that is, before the port was bound).
    expect(fake.completed).toBe(8);
    expect(fake.calls.every((c) => c.k === 10)).toBe(true);
    // Every fourth goes through the Elasticsearch route, which defaults num_candidates to 100 there.
    expect(fake.calls.filter((c) => c.numCandidates === 100)).toHaveLength(2);
    // No client sent them: the request and query counters start at zero.
    expect(await metric(server, /^prescore_http_requests_total\{route="\/(v1\/search|:index\/_search)"/)).toEqual([]);
    expect(await metric(server, /^prescore_queries_total\{/)).toEqual([]);
    const res = await fetch(server.url + '/v1/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: fake.randomQuery(1), k: 3 }),
    });
    expect(res.status).toBe(200);
    expect(await metric(server, /^prescore_http_requests_total\{route="\/v1\/search"/)).toEqual(['prescore_http_requests_total{route="/v1/search",method="POST",status="200"} 1']);
  });

  it('sends none with warmUpRequests 0, and defaults to 100', async () => {
    const fake = new FakeIndex({ dims: 16 });
    servers.push(await startServer(fake, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} }));
    expect(fake.started).toBe(0);
    expect(resolveServerOptions().warmUpRequests).toBe(100);
    expect(() => resolveServerOptions({ warmUpRequests: -1 })).toThrow(/warmUpRequests must be an integer in \[0, 100000\], got -1/);
  });

  it('fails the start, naming the route and the status, when a warm-up search is a server error', async () => {
    const fake = new FakeIndex({ dims: 16 });
    fake.failWith = new Error('segment _3 is unreadable');
    await expect(startServer(fake, { host: '127.0.0.1', port: 0, warmUpRequests: 4 }, { log: () => {} })).rejects.toThrow(
      /warm-up search \/v1\/search answered 500: .*segment _3 is unreadable/,
    );
  });

  it('takes the limits at work in its stride: searches shed with 429 do not fail the start', async () => {
    const fake = new FakeIndex({ dims: 16, delayMs: 5 });
    // One running and none queued: of four concurrent warm-up searches three are shed.
    const server = await startServer(fake, { host: '127.0.0.1', port: 0, warmUpRequests: 16, maxInflight: 1, maxQueue: 0 }, { log: () => {} });
    servers.push(server);
    expect(fake.completed).toBeGreaterThan(0);
    expect(fake.completed).toBeLessThan(16);
    expect(await metric(server, /^prescore_search_shed_total /)).toEqual(['prescore_search_shed_total 0']);
  });

  it('starts when a body cap smaller than a warm-up search refuses them all with 413', async () => {
    const fake = new FakeIndex({ dims: 1024 });
    servers.push(await startServer(fake, { host: '127.0.0.1', port: 0, warmUpRequests: 4, maxBodyBytes: 4096 }, { log: () => {} }));
    expect(fake.started).toBe(0);
  });
});
