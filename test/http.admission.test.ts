import { Agent, request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Admission, QueueFullError } from '../src/http/Admission.js';
import { startServer, type RunningServer } from '../src/http/server.js';
import { openIndex } from '../src/api/openIndex.js';
import type { VectorIndex } from '../src/api/types.js';
import { FakeIndex } from './support/FakeIndex.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { openConnections, rawRequest, type RawResponse } from './support/rawHttp.js';

describe('Admission', () => {
  it('holds maxInflight + maxQueue places from arrival and sheds the next one', () => {
    const a = new Admission(2, 1);
    const tickets = [a.admit(), a.admit(), a.admit()];
    expect(() => a.admit()).toThrow(QueueFullError);
    expect(a.holding).toBe(3);
    // None has asked to run yet: all three are queued (still reading their bodies, say).
    expect(a.inflight).toBe(0);
    expect(a.queued).toBe(3);
    tickets[0]!.leave();
    expect(a.holding).toBe(2);
    expect(() => a.admit()).not.toThrow();
  });

  it('grants slots in the order tickets ask to run, handing a released slot to the next waiter', async () => {
    const a = new Admission(1, 2);
    const [t1, t2, t3] = [a.admit(), a.admit(), a.admit()];
    const order: number[] = [];
    const r1 = await t1.run();
    const p3 = t3.run().then((r) => (order.push(3), r));
    const p2 = t2.run().then((r) => (order.push(2), r));
    expect(a.inflight).toBe(1);
    expect(a.queued).toBe(2);
    r1();
    const r3 = await p3;
    expect(order).toEqual([3]);
    // The slot went straight to the waiter: a newcomer cannot overtake it.
    expect(a.inflight).toBe(1);
    r3();
    (await p2)();
    expect(order).toEqual([3, 2]);
    expect(a.holding).toBe(0);
    expect(a.inflight).toBe(0);
  });

  it('an aborted waiter leaves the queue without running; leave() then gives its place back', async () => {
    const a = new Admission(1, 1);
    const running = await a.admit().run();
    const waiting = a.admit();
    const controller = new AbortController();
    const granted = waiting.run(controller.signal);
    controller.abort(new Error('deadline'));
    await expect(granted).rejects.toThrow('deadline');
    expect(a.holding).toBe(2);
    waiting.leave();
    expect(a.holding).toBe(1);
    running();
    expect(a.holding).toBe(0);
    expect(a.inflight).toBe(0);
  });

  it('leave() after a grant does nothing: the Release owns the place', async () => {
    const a = new Admission(1, 0);
    const t = a.admit();
    const release = await t.run();
    t.leave();
    expect(a.inflight).toBe(1);
    expect(() => a.admit()).toThrow(QueueFullError);
    release();
    release();
    expect(a.holding).toBe(0);
  });
});

describe('a search request holds its place from arrival', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close({ force: true })));
  });

  it('two requests still sending their bodies fill max_inflight 1 + max_queue 1: the third is shed before its body is read', async () => {
    const fake = new FakeIndex({ name: 'vectors' });
    const server = await startServer(fake, { host: '127.0.0.1', port: 0, maxInflight: 1, maxQueue: 1, warmUpRequests: 0 }, { log: () => {} });
    servers.push(server);
    const vectors = [1, 2].map((seed) => fake.randomQuery(seed));
    const bodies = vectors.map((vector) => JSON.stringify({ vector, k: 3 }));
    const [a, b, c] = await openConnections(server.server, server.host, server.port, 3);
    // Headers only: the bodies are still on their way.
    a!.write(rawRequest('POST', '/v1/search', bodies[0]).slice(0, -bodies[0]!.length));
    b!.write(rawRequest('POST', '/v1/search', bodies[1]).slice(0, -bodies[1]!.length));
    await until(() => server.runtime.admission.holding === 2);
    c!.write(rawRequest('POST', '/v1/search', bodies[0]));
    const shed = await c!.response;
    expect(shed.status).toBe(429);
    expect(JSON.parse(shed.body).error.type).toBe('es_rejected_execution_exception');
    expect(fake.calls).toHaveLength(0);
    // The held requests lose nothing: once their bodies arrive they are answered in full.
    a!.write(bodies[0]!);
    b!.write(bodies[1]!);
    const answered = await Promise.all([a!.response, b!.response]);
    answered.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).hits.map((h: { id: string }) => h.id)).toEqual(fake.bruteForce(vectors[i]!, 3).map((h) => h.id));
    });
    expect(server.runtime.admission.holding).toBe(0);
  });
});

describe('shedding', () => {
  it("a shed request's unread body is discarded: the kept-alive connection serves the next request, and the metrics count the 429", async () => {
    const fake = new FakeIndex({ name: 'vectors', held: true });
    const server = await startServer(fake, { host: '127.0.0.1', port: 0, maxInflight: 1, maxQueue: 0, warmUpRequests: 0 }, { log: () => {} });
    try {
      const body = JSON.stringify({ vector: fake.randomQuery(1), k: 3 });
      const held = fetch(`${server.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await until(() => fake.running === 1);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await post(server, agent, '/vectors/_search', JSON.stringify({ knn: { field: 'embedding', query_vector: fake.randomQuery(2), k: 3 } }));
        expect(first.status).toBe(429);
        expect(first.headers['retry-after']).toMatch(/^\d+$/);
        expect(JSON.parse(first.body).error).toMatchObject({ type: 'es_rejected_execution_exception', max_inflight: 1, max_queue: 0 });
        const second = await post(server, agent, '/v1/search', body);
        expect(second.status).toBe(429);
        expect(second.socketReused).toBe(true);
      } finally {
        agent.destroy();
      }
      fake.release();
      expect((await held).status).toBe(200);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/^prescore_search_shed_total 2$/m);
      expect(metrics).toMatch(/^prescore_http_requests_total\{route="\/:index\/_search",method="POST",status="429"\} 1$/m);
    } finally {
      await server.close({ force: true });
    }
  });
});

function post(
  server: RunningServer,
  agent: Agent,
  path: string,
  body: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string; socketReused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: server.host, port: server.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, socketReused: req.reusedSocket }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('searches on the calling thread share it with the server', () => {
  const DIMS = 64;
  let t: TestIndex;
  let onCaller: VectorIndex;
  let adaptive: VectorIndex;

  beforeAll(async () => {
    t = await buildTestIndex({ n: 4000, dims: DIMS, segmentDocs: 1000, flatThreshold: 500, queries: 8 });
    // Every search's first phase and rescoring forced onto the calling thread (the server's event loop).
    onCaller = await openIndex(t.dir, { name: 'embeddings', knnThread: 'caller', rescoreThread: 'caller' });
    adaptive = await openIndex(t.dir, { name: 'embeddings' });
  });
  afterAll(async () => {
    await onCaller?.close();
    await adaptive?.close();
    t?.cleanup();
  });

  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close({ force: true })));
  });
  const query = (i: number) => [...t.queries.subarray(i * DIMS, (i + 1) * DIMS)];
  const searchBody = (i: number) => JSON.stringify({ vector: query(i), k: 5, oversample: 2, stats: true });
  async function serve(index: VectorIndex, maxInflight: number, maxQueue: number): Promise<RunningServer> {
    const server = await startServer(index, { host: '127.0.0.1', port: 0, maxInflight, maxQueue, warmUpRequests: 0 }, { log: () => {} });
    servers.push(server);
    return server;
  }
  /** Writes every request in one synchronous loop: the server reads them all in its next poll phase. */
  async function sendTogether(server: RunningServer, requests: readonly string[]): Promise<RawResponse[]> {
    const connections = await openConnections(server.server, server.host, server.port, requests.length);
    connections.forEach((c, i) => {
      c.write(requests[i]!);
    });
    return Promise.all(connections.map((c) => c.response));
  }

  it('admission counts a request whose search runs on the calling thread: the third of three at once is shed', async () => {
    const server = await serve(onCaller, 1, 1);
    const responses = await sendTogether(
      server,
      [0, 1, 2].map((i) => rawRequest('POST', '/v1/search', searchBody(i))),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 429]);
    for (const [i, res] of responses.entries()) {
      if (res.status !== 200) continue;
      const body = JSON.parse(res.body);
      expect(body.stats.searched_on).toBe('caller');
      expect(body.hits).toEqual((await onCaller.search(query(i), { k: 5, oversample: 2 })).hits);
    }
  });

  it('/health answers while a search is running on the calling thread', async () => {
    const server = await serve(onCaller, 2, 2);
    const [search, health] = await sendTogether(server, [rawRequest('POST', '/v1/search', searchBody(3)), rawRequest('GET', '/health')]);
    expect(health!.status).toBe(200);
    // Answered while the search held its slot, not after it.
    expect(JSON.parse(health!.body)).toMatchObject({ status: 'ok', inflight: 1 });
    expect(search!.status).toBe(200);
    expect(JSON.parse(search!.body).hits).toEqual((await onCaller.search(query(3), { k: 5, oversample: 2 })).hits);
  });

  it('with other requests held, adaptive placement runs no trial: each search is on the calling thread or one worker', async () => {
    const server = await serve(adaptive, 4, 4);
    const responses = await sendTogether(
      server,
      [4, 5, 6].map((i) => rawRequest('POST', '/v1/search', searchBody(i))),
    );
    const placements = responses.map((r) => JSON.parse(r.body).stats.searched_on as string);
    // Each search turns the event loop before it chooses, and by then all three hold places: the
    // calling thread is not free, so nothing is measured (a trial would put slices on both).
    for (const p of placements) expect(['caller', 'worker']).toContain(p);
    for (const [j, res] of responses.entries()) expect(JSON.parse(res.body).hits).toEqual((await adaptive.search(query(4 + j), { k: 5, oversample: 2 })).hits);
  });
});

/** Polls until `condition` holds (the state it waits for comes from sockets, not timers). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}
