import { describe, expect, it } from 'vitest';
import { EventLoopDelay } from '../src/http/EventLoopDelay.js';
import { DistributionHistogram } from '../src/http/metrics.js';
import { createApp } from '../src/http/app.js';
import { FakeIndex } from './support/FakeIndex.js';

/** Resolves once the monitor has recorded more samples than `count` (its timer fired again). */
async function nextSample(delay: EventLoopDelay, count: number): Promise<void> {
  while (delay.count <= count) await new Promise((resolve) => setImmediate(resolve));
}

describe('event-loop delay', () => {
  it('a stall of the loop is recorded at (at least) its length, less the monitor resolution', async () => {
    const delay = new EventLoopDelay(10);
    try {
      await nextSample(delay, 0);
      const before = delay.count;
      const until = performance.now() + 120;
      while (performance.now() < until); // the loop is blocked, as by a search run to its end
      await nextSample(delay, before);
      expect(delay.count - delay.countAtMost(0.1)).toBeGreaterThanOrEqual(1);
      expect(delay.percentile(100)).toBeGreaterThanOrEqual(0.11);
      expect(delay.countAtMost(1_000)).toBe(delay.count);
    } finally {
      delay.stop();
    }
  });

  it('renders as a cumulative Prometheus histogram', () => {
    const samples = [0.001, 0.004, 0.004, 0.2];
    const family = new DistributionHistogram('x_seconds', 'help', [0.002, 0.005, 0.1], () => ({
      count: samples.length,
      sum: 0.25,
      countAtMost: (v) => samples.filter((s) => s <= v).length,
    }));
    expect(family.render().split('\n').slice(2)).toEqual([
      'x_seconds_bucket{le="0.002"} 1',
      'x_seconds_bucket{le="0.005"} 3',
      'x_seconds_bucket{le="0.1"} 3',
      'x_seconds_bucket{le="+Inf"} 4',
      'x_seconds_sum 0.25',
      'x_seconds_count 4',
    ]);
  });

  it('/metrics exports the delay histogram and the process CPU time', async () => {
    const app = createApp(new FakeIndex({ name: 'vectors' }));
    const text = await (await app.request('/metrics')).text();
    expect(text).toContain('# TYPE prescore_event_loop_delay_seconds histogram');
    expect(text).toMatch(/^prescore_event_loop_delay_seconds_bucket\{le="0\.02"\} \d+$/m);
    expect(text).toContain('# TYPE process_cpu_seconds_total counter');
    const cpu = Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)![1]);
    expect(cpu).toBeGreaterThan(0);
  });
});
