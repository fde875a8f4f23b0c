/**
 * Single-stream latency: `count` searches one after the other through the load tester's own
 * transport and request bodies, so a run's percentiles and this baseline differ only in the
 * concurrency (fetch() would add undici's per-request cost, ~0.3-0.5 ms here, to the baseline
 * alone). The bodies are built before the clock starts, as a run's are.
 */
import { BodyCache, type SearchParams } from './body.js';
import { realClock } from './clock.js';
import type { QuerySet } from './queries.js';
import { resolveTarget } from './target.js';
import { SocketTransport } from './SocketTransport.js';
import type { Outcome } from './transport.js';

/** One search at a time: each round trip and the server's took_ms. */
export interface SingleStream {
  /** Round-trip milliseconds of each search, in order. */
  readonly ms: Float64Array;
}

/**
 * Runs `count` searches (query i % queries.count) in sequence against `url`. Throws naming the
 * search and its outcome when one is not answered 2xx within `timeoutMs`.
 */
export async function singleStream(url: string, queries: QuerySet, params: SearchParams, count: number, timeoutMs = 10_000): Promise<SingleStream> {
  const target = await resolveTarget(url);
  const transport = new SocketTransport(target, 1, realClock);
  const bodies = new BodyCache(queries, params);
  bodies.prebuild(0, count);
  await transport.preconnect(1, timeoutMs);
  const ms = new Float64Array(count);
  try {
    for (let i = 0; i < count; i++) {
      const body = bodies.body(i % queries.count);
      const t0 = realClock.now();
      const outcome = await new Promise<Outcome>((done) => transport.post(body, t0 + timeoutMs, done));
      if (outcome.kind !== 'ok') throw new Error(`single-stream search ${i + 1} of ${count} was not answered: ${outcome.detail}`);
      ms[i] = outcome.doneAt - t0;
    }
  } finally {
    transport.close();
  }
  return { ms };
}
