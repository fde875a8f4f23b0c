/**
 * A server simulated behind the load tester's transport seam (`LoadOptions.transport`), on a
 * VirtualClock: each request is answered at the simulated time its handler says, so a test states
 * the server's behaviour (service times, a stall, a queue that sheds) exactly, with no HTTP and
 * no real timers.
 */
import type { Target } from '../../load/target.js';
import { classifyStatus, type Outcome, type OutcomeKind, type Transport, type TransportFactory } from '../../load/transport.js';
import type { ClockTimer } from '../../load/clock.js';
import type { VirtualClock } from './VirtualClock.js';

export const SIMULATED_HITS = JSON.stringify({ hits: [{ id: '1', doc: 1, score: 0.5 }], took_ms: 1.25, stats: {} });

/** When and how request `n` (0-based, in arrival order), arriving at `arrivedAt`, is answered; null: never. */
export type SimulatedHandler = (arrivedAt: number, n: number, body: Buffer) => { at: number; status?: number; body?: string } | null;

interface Pending {
  settled: boolean;
  timeout: ClockTimer | null;
  answer: ClockTimer | null;
  readonly done: (o: Outcome) => void;
}

class SimulatedTransport implements Transport {
  readonly resetRetries = 0;
  private readonly pending = new Set<Pending>();
  private n = 0;

  constructor(
    private readonly clock: VirtualClock,
    private readonly handler: SimulatedHandler,
  ) {}

  get inFlight(): number {
    return this.pending.size;
  }

  async preconnect(): Promise<void> {}

  post(body: Buffer, deadline: number, done: (o: Outcome) => void): void {
    const p: Pending = { settled: false, timeout: null, answer: null, done };
    this.pending.add(p);
    const now = this.clock.now();
    p.timeout = this.clock.after(deadline - now, () => this.finish(p, 'timeout', 0, null, 'client_timeout'));
    const reply = this.handler(now, this.n++, body);
    if (reply === null) return;
    p.answer = this.clock.after(reply.at - now, () => {
      const status = reply.status ?? 200;
      const c = classifyStatus(status);
      this.finish(p, c.kind, status, c.kind === 'ok' ? (reply.body ?? SIMULATED_HITS) : null, c.detail);
    });
  }

  private finish(p: Pending, kind: OutcomeKind, status: number, body: string | null, detail: string): void {
    if (p.settled) return;
    p.settled = true;
    this.pending.delete(p);
    if (p.timeout !== null) this.clock.cancel(p.timeout);
    if (p.answer !== null) this.clock.cancel(p.answer);
    p.done({ kind, status, doneAt: this.clock.now(), body, detail });
  }

  abortAll(): void {
    for (const p of [...this.pending]) this.finish(p, 'timeout', 0, null, 'deadline');
  }

  close(): void {
    this.abortAll();
  }
}

/** A transport factory whose every run talks to `handler` on `clock`. */
export function simulatedServer(clock: VirtualClock, handler: SimulatedHandler): TransportFactory {
  return (_target: Target) => new SimulatedTransport(clock, handler);
}
