/**
 * The CPU reference of the benchmarks: how long one fixed piece of CPU work takes on this machine
 * in the same run, so a latency tail can be told apart from the machine's own (what the device
 * reference is for the disk). The work is the first phase's kind, wasm SIMD over data held in
 * memory (fp32 dot products over a fixed 256 KiB block: no I/O, no allocation, no GC), sized once
 * at start to about `targetMs`. On a quiet machine its p99/p50 is close to 1; when other tenants
 * of the host take the cores (a VM whose vCPUs are preempted: nothing shows in top or in the load
 * average), it rises with the search's own tail.
 *
 * Seen on this 2-core VM on 2026-12-01 within one hour, the load average under 1.1: a fixed JS
 * loop of ~3 ms at p50 ran p99 8-16 ms, max 38-59 ms, and its p50 drifted 3.0 -> 6.5 ms; this job's
 * p99/p50 was 2.8-7.4 across one bench:rescore run's six configurations.
 *
 * `node dist/src/bench/cpuReference.js --every-ms 50` samples it in a process of its own until
 * its stdin ends or SIGTERM, then prints one JSON line of the samples: bench:load runs one beside the
 * server for the length of each run (~2 ms every 50 ms: ~4% of one core taken from the run).
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Kernels } from '../../segments/kernels/Kernels.js';

const DIMS = 1024;
/** 64 vectors of 1024 floats: 256 KiB, in L2 on most machines, so the job measures the core, not memory. */
const VECTORS = 64;

export class CpuReference {
  private constructor(
    private readonly kernels: Kernels,
    private readonly base: number,
    /** Dot products per run, fixed after calibration. */
    readonly dots: number,
  ) {}

  /** A reference job of ~targetMs (sized on the fastest of 20 runs after a warm-up, so a busy moment at start does not shrink it). */
  static async create(targetMs = 2): Promise<CpuReference> {
    const kernels = await Kernels.load();
    const base = kernels.alloc(4 * DIMS * VECTORS, 16);
    const f = kernels.f32();
    for (let i = 0; i < DIMS * VECTORS; i++) f[(base >>> 2) + i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
    const probe = new CpuReference(kernels, base, 1000);
    for (let i = 0; i < 50; i++) probe.run(); // past the wasm tier-up
    let fastest = Infinity;
    for (let i = 0; i < 20; i++) fastest = Math.min(fastest, probe.run());
    return new CpuReference(kernels, base, Math.max(1, Math.round((1000 * targetMs) / fastest)));
  }

  /** Runs the job once; returns its wall time in milliseconds. */
  run(): number {
    const t0 = performance.now();
    const k = this.kernels;
    let sink = 0;
    for (let i = 0; i < this.dots; i++) {
      const a = this.base + 4 * DIMS * (i % VECTORS);
      const b = this.base + 4 * DIMS * ((i * 7 + 3) % VECTORS);
      sink += k.dot(a, b, DIMS);
    }
    const ms = performance.now() - t0;
    if (Number.isNaN(sink)) throw new Error('CpuReference: NaN from fixed data');
    return ms;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { 'every-ms': { type: 'string' }, 'target-ms': { type: 'string' } } });
  const every = Number(values['every-ms'] ?? 50);
  const ref = await CpuReference.create(Number(values['target-ms'] ?? 2));
  const ms: number[] = [];
  const timer = setInterval(() => ms.push(ref.run()), every);
  const finish = () => {
    clearInterval(timer);
    process.stdout.write(`${JSON.stringify({ dots: ref.dots, ms })}\n`, () => process.exit(0));
  };
  // Stopped by SIGTERM or by the end of stdin (the parent closed it, or went away).
  process.once('SIGTERM', finish);
  process.stdin.once('end', finish);
  process.stdin.resume();
  process.stdout.write('ready\n');
}
