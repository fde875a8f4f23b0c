/**
 * Why a load run went wrong, in words: a benchmark that answered nothing must say so and name the
 * likely cause (the server died or was OOM-killed, its cgroup thrashed, the offered rate exceeds
 * what the server can do at all on this machine right now, or the load generator itself fell
 * behind), not print a row of NaN.
 */
import type { LoadReport } from '../../load/report.js';
import type { ServerExit, ServerMemory } from './coldServer.js';
import { formatDeviceHealth, SLOW_DEVICE_QD1_PAGES_PER_S, type DeviceHealth, type DeviceUnderLoad } from './deviceHealth.js';

export interface RunFacts {
  readonly report: LoadReport;
  /** Single-stream latency of the server just before the run (ms), when probed. */
  readonly probeP50Ms: number | null;
  readonly memory: ServerMemory | null;
  /** Set when the server exited during the run. */
  readonly exit: ServerExit | null;
  readonly serverStderr: readonly string[];
  /** 1-minute load average before and after the run. */
  readonly loadBefore: number;
  readonly loadAfter: number;
  readonly cores: number;
  /** The disk probed just before the run (deviceHealth.ts), when it was. */
  readonly device?: DeviceHealth;
  /** The device read at the run's own demand just before it (probeDeviceUnderLoad), when it was. */
  readonly deviceAtRate?: DeviceUnderLoad;
}

const MIB = 2 ** 20;
/** Major faults per second of the steady window beyond which the cgroup is taken to be thrashing. */
const THRASH_FAULTS_PER_S = 2000;

/** Lines explaining an unhealthy run (fewer than 90% of requests answered ok); empty when it was healthy. */
export function diagnose(f: RunFacts): string[] {
  const r = f.report;
  const c = r.counts_all;
  const okShare = c.sent > 0 ? c.ok / c.sent : 0;
  if (okShare >= 0.9 && !f.exit) return [];
  const lines = [
    `${c.ok} of ${c.sent} requests answered ok (${(100 * okShare).toFixed(1)}%): ${c.shed} shed, ${c.timeout} timed out ` +
      `(client ${c.timeout_client}, server 504 ${c.timeout_server}, run deadline ${c.timeout_deadline}), ${c.error} errors` +
      (Object.keys(c.errors_by_kind).length
        ? ` [${Object.entries(c.errors_by_kind)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}]`
        : ''),
  ];
  if (f.exit) {
    lines.push(
      `the server exited during the run (${f.exit.signal ?? `code ${f.exit.code}`})` +
        (f.memory && f.memory.oomKills > 0 ? `: the OOM killer killed it (${f.memory.oomKills}x): the memory cap is too small for the index` : ''),
    );
    if (f.serverStderr.length) lines.push(`  server stderr: ${f.serverStderr.slice(-3).join(' | ')}`);
  }
  const m = f.memory;
  if (m) {
    const faultsPerS = m.majorFaults / Math.max(1, r.wall_s);
    lines.push(
      `server memory: ${(m.anonAtOpen / MIB).toFixed(0)} MiB anonymous at open, cap ${(m.limit / MIB).toFixed(0)} MiB, peak ${(m.peakUsage / MIB).toFixed(0)} MiB, ` +
        `${m.majorFaults} major faults (${faultsPerS.toFixed(0)}/s), limit hit ${m.limitHits}x`,
    );
    if (faultsPerS > THRASH_FAULTS_PER_S && m.peakUsage >= 0.95 * m.limit) {
      lines.push(`  -> the server thrashed at its cap (${faultsPerS.toFixed(0)} major faults/s): its own code and heap pages compete with the fp32 page cache; raise --cache-mib`);
    }
  }
  if (f.probeP50Ms !== null) {
    // A search keeps every worker busy for about its single-stream latency (the first phase and
    // rescoring run in parallel across the workers), so rate x latency is the machine's utilisation.
    const utilisation = (r.offered_rate * f.probeP50Ms) / 1000;
    lines.push(`single-stream p50 just before the run: ${f.probeP50Ms.toFixed(1)} ms, so ${r.offered_rate}/s needs ~${utilisation.toFixed(2)} of the server's capacity`);
    if (utilisation >= 1) lines.push(`  -> overloaded: the offered rate is beyond what the server can do at all on this machine now; lower --rate or run on a quiet machine`);
  }
  if (f.device) {
    lines.push(`device just before the run: ${formatDeviceHealth(f.device)}`);
    if (f.device.qd1PagesPerS < SLOW_DEVICE_QD1_PAGES_PER_S) {
      lines.push(
        `  -> the disk is throttled (under ${SLOW_DEVICE_QD1_PAGES_PER_S.toLocaleString()} pages/s at depth 1, a tenth of its usual rate): every cold read waits on it; rerun when it recovers`,
      );
    }
  }
  const dr = f.deviceAtRate;
  if (dr) {
    const asked = dr.batchesPerS * dr.pagesPerBatch;
    lines.push(
      `device at the run's demand (${dr.batchesPerS} batches/s of ${dr.pagesPerBatch} pages): ${dr.pagesPerS.toLocaleString()} pages/s of ${asked.toLocaleString()} asked, batch p50 ${dr.p50Ms.toFixed(1)} ms, p99 ${dr.p99Ms.toFixed(1)} ms`,
    );
    if (dr.pagesPerS < 0.9 * asked) lines.push(`  -> the disk alone cannot deliver this run's cold reads now: no read path can; rerun when it recovers`);
  }
  const cl = r.client;
  if (c.sent > 0 && (c.late / c.sent > 0.05 || cl.event_loop_delay_ms.p99 > 20)) {
    lines.push(
      `the load generator fell behind: ${((100 * c.late) / c.sent).toFixed(0)}% of requests left late (max ${cl.max_lateness_ms.toFixed(0)} ms), ` +
        `its event-loop delay p99 ${cl.event_loop_delay_ms.p99.toFixed(0)} ms: the latencies include the client's own delay`,
    );
  }
  lines.push(
    `machine load average ${f.loadBefore.toFixed(1)} before, ${f.loadAfter.toFixed(1)} after, on ${f.cores} cores` +
      (Math.max(f.loadBefore, f.loadAfter) > 1.5 * f.cores ? ': other work competes for the CPU, numbers from this run do not describe prescore' : ''),
  );
  return lines;
}
