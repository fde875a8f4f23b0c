import { describe, expect, it } from 'vitest';
import { runClosedLoop } from '../load/closedLoop.js';
import { randomUnitQueries } from '../load/queries.js';
import { startServer } from '../src/http/server.js';
import { FakeIndex } from './support/FakeIndex.js';

describe('runClosedLoop', () => {
  it('keeps one request per client in flight, counts answers and 429s apart, and probes /health from a process of its own', async () => {
    const fake = new FakeIndex({ name: 'vectors', dims: 16, delayMs: 5 });
    const server = await startServer(fake, { host: '127.0.0.1', port: 0, maxInflight: 1, maxQueue: 0, warmUpRequests: 0 }, { log: () => {} });
    try {
      const seen: number[] = [];
      const r = await runClosedLoop({
        url: server.url,
        clients: 3,
        durationMs: 400,
        queries: randomUnitQueries(16, 50, 1),
        k: 3,
        healthEveryMs: 20,
        inspect: (query, _profiled, body) => {
          seen.push(query);
          expect(JSON.parse(body).hits).toHaveLength(3);
        },
      });
      // One slot, no queue, three clients: whoever finds the slot taken is shed.
      expect(r.answered).toBeGreaterThan(0);
      expect(r.shed).toBeGreaterThan(0);
      expect(r.errors + r.timeouts).toBe(0);
      expect(r.status_counts).toEqual({ '200': r.answered, '429': r.shed });
      expect(seen).toHaveLength(r.answered);
      expect(r.latency_ms.count).toBe(r.answered);
      expect(r.health_ms!.count).toBeGreaterThan(0);
      expect(fake.maxRunning).toBe(1);
    } finally {
      await server.close({ force: true });
    }
  });
});
