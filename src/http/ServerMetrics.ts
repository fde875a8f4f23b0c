import type { IndexMemory, QueryStats } from '../api/types.js';
import { Counter, CounterReading, DistributionHistogram, Gauge, Histogram, Registry } from './metrics.js';
import { EventLoopDelay } from './EventLoopDelay.js';

/** Latency buckets in seconds: sub-millisecond warm hits up to cold multi-second tails. */
export const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** Event-loop delay buckets in seconds: an idle loop's ~0 up to the multi-second stalls of a blocked one. */
export const EVENT_LOOP_DELAY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

export interface LoadGauges {
  inflight(): number;
  queued(): number;
}

/** The server's metric families (names are part of the API; see src/http/README.md). */
export class ServerMetrics {
  readonly registry = new Registry();

  readonly requests: Counter;
  readonly latency: Histogram;
  readonly queueWait: Histogram;
  readonly shed: Counter;
  readonly timeouts: Counter;
  readonly cancelled: Counter;
  readonly engineErrors: Counter;

  readonly queries: Counter;
  readonly candidates: Counter;
  readonly visited: Counter;
  readonly pagesPrefetched: Counter;
  readonly pagesResident: Counter;
  readonly pagesReadAhead: Counter;
  readonly syscalls: Counter;
  readonly readsBeforePrefetch: Counter;
  readonly firstPhaseSeconds: Counter;
  readonly rescoreSeconds: Counter;
  readonly engineSeconds: Counter;
  /** The server thread's event-loop delay since these metrics started. */
  readonly eventLoopDelay = new EventLoopDelay();
  private memory: IndexMemory | null = null;

  constructor(load: LoadGauges) {
    const r = this.registry;
    r.register(
      new DistributionHistogram(
        'prescore_event_loop_delay_seconds',
        "How late the server thread's event loop ran a timer (Node's monitorEventLoopDelay, 10 ms resolution taken off): how long a request that just arrived may wait to be read.",
        EVENT_LOOP_DELAY_BUCKETS_SECONDS,
        () => this.eventLoopDelay,
      ),
    );
    // The whole process (every thread: the server's and the executor's workers), as Prometheus' client libraries name it.
    r.register(new CounterReading('process_cpu_seconds_total', 'User and system CPU time of the process (all threads), in seconds.', () => cpuSeconds('all')));
    r.register(new CounterReading('process_cpu_user_seconds_total', 'User CPU time of the process (all threads), in seconds.', () => cpuSeconds('user')));
    r.register(new CounterReading('process_cpu_system_seconds_total', 'System CPU time of the process (all threads), in seconds.', () => cpuSeconds('system')));
    this.requests = r.register(new Counter('prescore_http_requests_total', 'HTTP requests by route pattern, method and status code.', ['route', 'method', 'status']));
    this.latency = r.register(
      new Histogram('prescore_http_request_duration_seconds', 'HTTP request latency (handler start to response), by route.', ['route'], LATENCY_BUCKETS_SECONDS),
    );
    this.queueWait = r.register(new Histogram('prescore_search_queue_wait_seconds', 'Time admitted searches waited for an execution slot.', [], LATENCY_BUCKETS_SECONDS));
    r.register(new Gauge('prescore_search_inflight', 'Searches currently executing on the engine.', load.inflight));
    r.register(new Gauge('prescore_search_queued', 'Searches waiting for an execution slot.', load.queued));
    this.shed = r.register(new Counter('prescore_search_shed_total', 'Searches rejected with 429 because the queue was full.', []));
    this.timeouts = r.register(new Counter('prescore_search_timeouts_total', 'Searches answered 504 (deadline passed while queued or running).', ['stage']));
    this.cancelled = r.register(new Counter('prescore_search_cancelled_total', 'Searches abandoned because the client disconnected.', []));
    this.engineErrors = r.register(new Counter('prescore_search_errors_total', 'Searches that failed inside the engine (500).', []));

    const byPath = ['read_path'];
    this.queries = r.register(new Counter('prescore_queries_total', 'Completed engine queries, by read path.', byPath));
    this.candidates = r.register(new Counter('prescore_query_candidates_total', 'Candidates handed from the first phase to fp32 rescoring.', byPath));
    this.visited = r.register(new Counter('prescore_query_visited_total', 'Docs scored by the 1-bit first phase.', byPath));
    this.pagesPrefetched = r.register(new Counter('prescore_query_pages_prefetched_total', 'Pages for which a prefetch was issued.', byPath));
    this.pagesResident = r.register(new Counter('prescore_query_pages_resident_total', 'Pages found already resident by a residency check.', byPath));
    this.pagesReadAhead = r.register(new Counter('prescore_query_pages_read_ahead_total', "Pages the first phase prefetched for rescoring (each segment's leaders).", byPath));
    this.syscalls = r.register(new Counter('prescore_query_syscalls_total', 'libc I/O and residency calls made by queries.', byPath));
    this.readsBeforePrefetch = r.register(new Counter('prescore_query_reads_before_prefetch_total', 'fp32 vectors read before their prefetch was issued.', byPath));
    this.firstPhaseSeconds = r.register(new Counter('prescore_query_first_phase_seconds_total', 'Time spent in the first (1-bit) phase.', byPath));
    this.rescoreSeconds = r.register(new Counter('prescore_query_rescore_seconds_total', 'Time spent in fp32 rescoring.', byPath));
    this.engineSeconds = r.register(new Counter('prescore_query_seconds_total', 'Total engine time of completed queries.', byPath));

    const held = (read: (m: IndexMemory) => number) => () => (this.memory ? read(this.memory) : 0);
    r.register(
      new Gauge(
        'prescore_index_codes_bytes',
        "RAM held for the index's 1-bit codes (once per process).",
        held((m) => m.codes),
      ),
    );
    r.register(
      new Gauge(
        'prescore_index_graph_bytes',
        "RAM held for the index's HNSW graphs (once per process).",
        held((m) => m.graphs),
      ),
    );
    r.register(
      new Gauge(
        'prescore_index_scratch_bytes_per_worker',
        'Search scratch each executor worker holds for the index.',
        held((m) => m.scratchPerWorker),
      ),
    );
    r.register(
      new Gauge(
        'prescore_index_memory_bytes',
        'All RAM the first phase holds: codes + graphs + workers x scratch.',
        held((m) => m.total),
      ),
    );
  }

  /** The index's first-phase memory (IndexDescription.memory), exported by the prescore_index_* gauges. */
  setIndexMemory(memory: IndexMemory): void {
    this.memory = memory;
  }

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.requests.inc({ route, method, status: String(status) });
    this.latency.observe({ route }, seconds);
  }

  observeQuery(stats: QueryStats): void {
    const l = { read_path: stats.readPath };
    this.queries.inc(l);
    this.candidates.inc(l, nonNegative(stats.candidates));
    this.visited.inc(l, nonNegative(stats.visited));
    this.pagesPrefetched.inc(l, nonNegative(stats.pagesPrefetched));
    this.pagesResident.inc(l, nonNegative(stats.pagesResident));
    this.pagesReadAhead.inc(l, nonNegative(stats.pagesReadAhead));
    this.syscalls.inc(l, nonNegative(stats.syscalls));
    this.readsBeforePrefetch.inc(l, nonNegative(stats.readsBeforePrefetch));
    this.firstPhaseSeconds.inc(l, nonNegative(stats.timings.firstPhaseMs) / 1000);
    this.rescoreSeconds.inc(l, nonNegative(stats.timings.rescoreMs) / 1000);
    this.engineSeconds.inc(l, nonNegative(stats.timings.totalMs) / 1000);
  }

  render(): string {
    return this.registry.render();
  }

  /** Stops the event-loop monitor (these metrics are replaced or the server has stopped). */
  stop(): void {
    this.eventLoopDelay.stop();
  }
}

function cpuSeconds(which: 'all' | 'user' | 'system'): number {
  const { user, system } = process.cpuUsage();
  return (which === 'user' ? user : which === 'system' ? system : user + system) / 1e6;
}

/** Engine stats are trusted but a bad value must not throw inside the response path. */
function nonNegative(v: number): number {
  return Number.isFinite(v) && v > 0 ? v : 0;
}
