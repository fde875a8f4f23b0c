/**
 * How fast the disk is right now, before a cold benchmark trusts it: random 4 KiB O_DIRECT reads
 * of the index's own fp32 files, one at a time (queue depth 1, what a lone page fault waits for)
 * and all in flight at once (what a prefetched rescoring ring can get). This machine kind's disk
 * does about 12,000 pages/s at depth 1 and 140,000 at depth 64; after many gigabytes written
 * (building the 1M indexes) it was seen throttled to ~150 pages/s at depth 1 with a p99 of 120 ms
 * for minutes, when every cold figure measures the throttle, not the read path.
 */
import { statSync } from 'node:fs';
import { DeviceReference } from './deviceReference.js';
import { percentile } from '../../load/percentile.js';
import { mulberry32 } from '../gen/Rng.js';

export interface DeviceHealth {
  /** Depth 1: pages per second, and the p50 / p99 of one read, ms. */
  readonly qd1PagesPerS: number;
  readonly qd1P50Ms: number;
  readonly qd1P99Ms: number;
  /** All `pages` in flight at once: pages per second. */
  readonly allInFlightPagesPerS: number;
}

/** Depth-1 reads below this rate mean the disk is not in its usual state (a tenth of the usual ~12,000/s). */
export const SLOW_DEVICE_QD1_PAGES_PER_S = 1200;

/** Reads `pages` random pages of `files` at depth 1, then `pages` others all in flight (~0.1 s when healthy). */
export function probeDevice(files: readonly string[], pages = 256, seed = 1): DeviceHealth {
  // Reproducible picks, so two probes of one run read comparable pages.
  const random = mulberry32(seed);
  const device = new DeviceReference();
  try {
    const sizes = files.map((f) => statSync(f).size);
    const one = device.randomPages(files, sizes, pages, random);
    const ms: number[] = [];
    for (let i = 0; i < pages; i++) ms.push(device.read({ file: one.file.subarray(i, i + 1), offset: one.offset.subarray(i, i + 1) }));
    const qd1Total = ms.reduce((a, b) => a + b, 0);
    ms.sort((a, b) => a - b);
    const all = device.randomPages(files, sizes, pages, random);
    const allMs = device.read(all);
    return {
      qd1PagesPerS: Math.round((pages * 1000) / qd1Total),
      qd1P50Ms: percentile(ms, 50),
      qd1P99Ms: percentile(ms, 99),
      allInFlightPagesPerS: Math.round((pages * 1000) / allMs),
    };
  } finally {
    device.close();
  }
}

export interface DeviceUnderLoad {
  readonly batchesPerS: number;
  readonly pagesPerBatch: number;
  /** Batch latency from its intended start (a late start counts), ms. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Pages the device delivered per second over the probe (asked: batchesPerS x pagesPerBatch). */
  readonly pagesPerS: number;
}

/**
 * The device under a load run's own demand: `batchesPerS` batches a second of `pagesPerBatch`
 * random pages of `files` (what that many cold searches' rescoring reads), each batch all in
 * flight (io_uring, O_DIRECT, one thread), for `durationMs`. A throttled disk passes probeDevice's
 * short burst and fails here: seen 2026-12-02, 256 pages at 60,000/s, then 100 batches/s of 50
 * sustained only 310 pages/s (batch p50 93 ms, p99 740 ms).
 */
export async function probeDeviceUnderLoad(files: readonly string[], batchesPerS: number, pagesPerBatch: number, durationMs: number): Promise<DeviceUnderLoad> {
  const device = new DeviceReference();
  try {
    const sizes = files.map((f) => statSync(f).size);
    const ms: number[] = [];
    const interval = 1000 / batchesPerS;
    const t0 = performance.now();
    let intended = t0;
    let pages = 0;
    while (intended - t0 < durationMs) {
      const wait = intended - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      device.read(device.randomPages(files, sizes, pagesPerBatch, Math.random));
      ms.push(performance.now() - intended);
      pages += pagesPerBatch;
      intended += interval;
    }
    const elapsed = performance.now() - t0;
    ms.sort((a, b) => a - b);
    return { batchesPerS, pagesPerBatch, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), pagesPerS: Math.round((pages * 1000) / elapsed) };
  } finally {
    device.close();
  }
}

/**
 * The device's sustained random-read rate: batches of `depth` random 4 KiB pages of `files`, all
 * in flight (io_uring, O_DIRECT), back to back for `durationMs`; pages per second over the whole
 * stretch. Long enough to drain a burst budget that probeDevice's 256 pages do not touch.
 */
export function probeDeviceSustained(files: readonly string[], durationMs: number, depth = 64, seed = 2): number {
  const random = mulberry32(seed);
  const device = new DeviceReference();
  try {
    const sizes = files.map((f) => statSync(f).size);
    const t0 = performance.now();
    let pages = 0;
    while (performance.now() - t0 < durationMs) {
      device.read(device.randomPages(files, sizes, depth, random));
      pages += depth;
    }
    return Math.round((pages * 1000) / (performance.now() - t0));
  } finally {
    device.close();
  }
}

/** One line for a report: `QD1 12,345 pages/s (p50 0.08, p99 0.21 ms), all in flight 140,000 pages/s`. */
export function formatDeviceHealth(d: DeviceHealth): string {
  return `QD1 ${d.qd1PagesPerS.toLocaleString()} pages/s (p50 ${d.qd1P50Ms.toFixed(2)}, p99 ${d.qd1P99Ms.toFixed(2)} ms), all in flight ${d.allInFlightPagesPerS.toLocaleString()} pages/s`;
}
