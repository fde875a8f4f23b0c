import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { formatCount, formatDuration, Progress, type ProgressStream } from '../src/progress/Progress.js';

class FakeStream implements ProgressStream {
  readonly chunks: string[] = [];
  constructor(
    readonly isTTY: boolean,
    readonly columns = 200,
  ) {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  get text(): string {
    return this.chunks.join('');
  }
}

function clock(start = 1000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('Progress on a TTY', () => {
  it('redraws in place at most every 100 ms with percent, rate and ETA', () => {
    const stream = new FakeStream(true);
    const c = clock();
    const p = new Progress({ label: 'gen base', total: 1000, unit: 'vectors', stream, now: c.now });
    for (let i = 0; i < 50; i++) {
      c.advance(10); // 500 ms in 50 ticks of 10 ms
      p.tick(10);
    }
    // One draw per >= 100 ms: at 10, 110, 210, 310 and 410 ms.
    expect(stream.chunks.length).toBe(5);
    expect(stream.chunks.every((s) => s.startsWith('\r') && s.endsWith('\x1b[K'))).toBe(true);
    expect(stream.chunks[4]).toContain(' 41.0%  410/1,000 vectors');
    const last = p.render();
    expect(last).toContain('gen base: [############------------]   50.0%  500/1,000 vectors');
    expect(last).toContain('1,000/s'); // 10 per 10 ms
    expect(last).toContain('ETA 500ms');
    const summary = p.finish();
    expect(summary).toMatchObject({ done: 500, total: 1000, elapsedMs: 500, rate: 1000 });
    expect(stream.chunks[stream.chunks.length - 1]).toBe('\r\x1b[Kgen base: 500 vectors in 500ms (1,000 vectors/s)\n');
    p.tick(5); // ignored after finish
    expect(p.done).toBe(500);
  });

  it('truncates to the terminal width and clears the line on stop()', () => {
    const stream = new FakeStream(true, 30);
    const c = clock();
    const p = new Progress({ label: 'a very long label indeed', total: 10, stream, now: c.now });
    c.advance(200);
    p.tick();
    expect(stream.chunks[0].length).toBeLessThanOrEqual(1 + 29 + 3);
    p.stop();
    expect(stream.chunks[stream.chunks.length - 1]).toBe('\r\x1b[K');
  });
});

describe('Progress without a TTY', () => {
  it('prints a plain line every logEveryMs and a summary', () => {
    const stream = new FakeStream(false);
    const c = clock();
    const p = new Progress({ label: 'ground truth', total: 2_000_000, unit: 'rows', stream, now: c.now, logEveryMs: 5000 });
    for (let s = 0; s < 12; s++) {
      c.advance(1000);
      p.tick(100_000);
    }
    expect(stream.chunks.length).toBe(2); // at 5 s and 10 s
    expect(stream.chunks[0]).toBe('ground truth:  25.0%  500k/2.00M rows  100k/s  ETA 15.0s  elapsed 5.0s\n');
    expect(stream.chunks.every((s) => !s.includes('\r') && !s.includes('['))).toBe(true);
    p.finish('ok');
    expect(stream.chunks[2]).toBe('ground truth: 1.20M rows in 12.0s (100k rows/s), ok\n');
  });

  it('without a total shows count and rate only; disabled prints nothing', () => {
    const stream = new FakeStream(false);
    const c = clock();
    const p = new Progress({ label: 'read', stream, now: c.now, logEveryMs: 1000 });
    c.advance(2000);
    p.tick(42);
    expect(stream.text).toBe('read: 42  21/s  elapsed 2.0s\n');

    const quiet = new FakeStream(true);
    const q = new Progress({ label: 'x', total: 3, stream: quiet, enabled: false, now: c.now });
    c.advance(500);
    q.tick(3);
    q.finish();
    expect(quiet.chunks).toEqual([]);
    expect(q.done).toBe(3);
  });

  it('ETA follows the recent rate, not the average', () => {
    const c = clock();
    const p = new Progress({ label: 'x', total: 1000, stream: new FakeStream(false), now: c.now });
    // 20 s slow (1/s), then 20 s fast (10/s).
    for (let s = 0; s < 20; s++) {
      c.advance(1000);
      p.tick(1);
    }
    for (let s = 0; s < 20; s++) {
      c.advance(1000);
      p.tick(10);
    }
    expect(p.render(false)).toContain('  10/s  ETA 1m18s');
  });
});

describe('Progress fed from a shared counter', () => {
  it('polls a SharedArrayBuffer counter that a worker increments', async () => {
    const stream = new FakeStream(false);
    const p = new Progress({ label: 'workers', total: 3000, stream, logEveryMs: 1e9 });
    p.tick(100); // counted before attaching is kept
    const counter = Progress.counter();
    p.attach(counter, { intervalMs: 5 });
    const worker = new Worker(
      `const { workerData } = require('node:worker_threads');
       for (let i = 0; i < 100; i++) Atomics.add(workerData, 0, 29);`,
      { eval: true, workerData: counter },
    );
    await new Promise((resolve, reject) => worker.on('exit', resolve).on('error', reject));
    // The interval poller (not finish()) picks the worker's count up: wait for it, however late
    // the timer runs on a loaded machine, instead of sleeping a fixed time.
    await vi.waitFor(() => expect(p.done).toBe(3000), { timeout: 30_000, interval: 5 });
    const summary = p.finish();
    expect(summary.done).toBe(3000);
    expect(stream.text).toMatch(/^workers: 3,000 in \d/);
  });

  it('accepts a BigInt64Array counter', () => {
    const counter = new BigInt64Array(new SharedArrayBuffer(16));
    const p = new Progress({ label: 'big', stream: new FakeStream(false) });
    p.attach(counter, { index: 1, intervalMs: 1000 });
    Atomics.add(counter, 1, 5_000_000_000n);
    p.poll();
    expect(p.done).toBe(5_000_000_000);
    p.finish();
  });
});

describe('formatting', () => {
  it('formats counts and durations compactly', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(3.25)).toBe('3.3');
    expect(formatCount(99_999)).toBe('99,999');
    expect(formatCount(123_456)).toBe('123k');
    expect(formatCount(999_999)).toBe('1.00M');
    expect(formatCount(4_560_000)).toBe('4.56M');
    expect(formatCount(12_300_000_000)).toBe('12.3G');
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_340)).toBe('12.3s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(3_725_000)).toBe('1h02m');
    expect(formatDuration(Infinity)).toBe('?');
  });
});
