/**
 * The benchmarks' disk check (src/bench/deviceHealth.ts): it reads real pages of the files it is
 * given, O_DIRECT, and a load run's diagnosis names a throttled disk as the cause.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceReference } from '../src/bench/deviceReference.js';
import { probeDevice, probeDeviceUnderLoad, SLOW_DEVICE_QD1_PAGES_PER_S } from '../src/bench/deviceHealth.js';
import { diagnose } from '../src/bench/loadDiagnosis.js';

const dir = mkdtempSync(join(tmpdir(), 'prescore-device-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const files = [join(dir, 'a.vec'), join(dir, 'b.vec')];
writeFileSync(files[0]!, Buffer.alloc(40 * 4096, 1));
writeFileSync(files[1]!, Buffer.alloc(24 * 4096 + 100, 2));

describe('device health', () => {
  it("draws distinct whole pages from across the files, never past a file's last full page", () => {
    const device = new DeviceReference();
    try {
      let x = 0;
      const pages = device.randomPages(files, [40 * 4096, 24 * 4096 + 100], 64, () => ((x = (x * 5 + 3) % 64), x / 64));
      const keys = Array.from(pages.file, (f, i) => `${f}:${pages.offset[i]}`);
      expect(new Set(keys).size).toBe(64);
      expect(Array.from(pages.offset).every((o) => o % 4096 === 0)).toBe(true);
      const perFile = [0, 1].map((f) => Array.from(pages.file).filter((g) => g === f).length);
      expect(perFile).toEqual([40, 24]);
      expect(() => device.randomPages(files, [40 * 4096, 24 * 4096 + 100], 65, Math.random)).toThrow(/64 pages, fewer than the 65/);
      expect(device.read(pages)).toBeGreaterThan(0);
    } finally {
      device.close();
    }
  });

  it('reads at depth 1 and all in flight, and reports rates and the depth-1 tail', () => {
    const h = probeDevice(files, 16);
    expect(h.qd1PagesPerS).toBeGreaterThan(0);
    expect(h.allInFlightPagesPerS).toBeGreaterThan(0);
    expect(h.qd1P99Ms).toBeGreaterThanOrEqual(h.qd1P50Ms);
  });

  it('reads batches at a rate, as a load run would ask, and reports what the device delivered', async () => {
    const d = await probeDeviceUnderLoad(files, 50, 4, 100);
    expect(d).toMatchObject({ batchesPerS: 50, pagesPerBatch: 4 });
    expect(d.pagesPerS).toBeGreaterThan(0);
    expect(d.p99Ms).toBeGreaterThanOrEqual(d.p50Ms);
  });

  it('a load run that failed on a throttled disk says so', () => {
    const counts = { sent: 100, ok: 10, shed: 0, timeout: 90, timeout_client: 90, timeout_server: 0, timeout_deadline: 0, error: 0, errors_by_kind: {}, late: 0 };
    const report = { counts_all: counts, offered_rate: 100, wall_s: 1, client: { late: 0, max_lateness_ms: 0, event_loop_delay_ms: { p99: 1 } } } as unknown as Parameters<
      typeof diagnose
    >[0]['report'];
    const facts = { report, probeP50Ms: null, memory: null, exit: null, serverStderr: [], loadBefore: 0, loadAfter: 0, cores: 2 };
    const slow = { qd1PagesPerS: SLOW_DEVICE_QD1_PAGES_PER_S - 1, qd1P50Ms: 1.8, qd1P99Ms: 120, allInFlightPagesPerS: 150 };
    expect(diagnose({ ...facts, device: slow }).join('\n')).toMatch(/the disk is throttled/);
    expect(diagnose({ ...facts, device: { ...slow, qd1PagesPerS: 12_000 } }).join('\n')).not.toMatch(/throttled/);
    // A disk that passes the short burst but cannot keep up with the run's own demand.
    const atRate = { batchesPerS: 100, pagesPerBatch: 50, p50Ms: 93, p99Ms: 740, pagesPerS: 310 };
    expect(diagnose({ ...facts, deviceAtRate: atRate }).join('\n')).toMatch(/310 pages\/s of 5,000 asked.*\n.*the disk alone cannot deliver/);
    expect(diagnose({ ...facts, deviceAtRate: { ...atRate, pagesPerS: 5000 } }).join('\n')).not.toMatch(/cannot deliver/);
  });
});
