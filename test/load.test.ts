/**
 * The load tester against stub servers on 127.0.0.1 (random ports) and, where a test is about
 * time (rates, stalls, lateness, find-max), against a simulated server on a simulated clock
 * (test/support/VirtualClock.ts, SimulatedServer.ts): those runs take no wall-clock time and give
 * the same result on an idle or an overloaded machine.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findMax } from '../load/findMax.js';
import { renderHtml } from '../load/html.js';
import { loadCommand } from '../load/command.js';
import { parseDuration } from '../load/duration.js';
import { randomUnitQueries } from '../load/queries.js';
import { Rng } from '../load/rng.js';
import { runLoad } from '../load/runLoad.js';
import { isLoopbackIp, resolveTarget } from '../load/target.js';
import { readFvecs, readIvecs } from '../load/vecfile.js';
import { percentile } from '../load/percentile.js';
import { singleStream } from '../load/singleStream.js';
import { VirtualClock } from './support/VirtualClock.js';
import { simulatedServer } from './support/SimulatedServer.js';

interface Stub {
  readonly url: string;
  readonly server: Server;
  /** POSTs received so far. */
  posts: number;
  close(): Promise<void>;
}

type Handler = (res: ServerResponse, body: string, n: number, req: IncomingMessage) => void;

const HITS = JSON.stringify({ hits: [{ id: '1', doc: 1, score: 0.5 }], took_ms: 1.25, stats: {} });

function answer(res: ServerResponse, status = 200, body = HITS, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

async function startStub(handle: Handler): Promise<Stub> {
  const stub: Stub = {
    url: '',
    server: createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'GET') return answer(res, 200, '{"status":"ok"}');
        handle(res, Buffer.concat(chunks).toString('utf8'), stub.posts++, req);
      });
    }),
    posts: 0,
    close: () =>
      new Promise<void>((resolve) => {
        stub.server.closeAllConnections();
        stub.server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve) => stub.server.listen(0, '127.0.0.1', resolve));
  const addr = stub.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  (stub as { url: string }).url = `http://127.0.0.1:${addr.port}`;
  return stub;
}

/** Runs on a simulated server still name a (loopback) target; nothing is sent to it. */
const LOOPBACK = 'http://127.0.0.1:9';

const stubs: Stub[] = [];
async function stub(handle: Handler): Promise<Stub> {
  const s = await startStub(handle);
  stubs.push(s);
  return s;
}
const tmp = mkdtempSync(join(tmpdir(), 'prescore-load-'));
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  rmSync(tmp, { recursive: true, force: true });
});

describe('open loop: coordinated-omission-free latency', () => {
  it('a 500 ms server stall shows in p99 while the achieved rate holds', async () => {
    const clock = new VirtualClock();
    // Responses take 2 ms, except during the stall: from 3 s to 3.5 s every request arriving is
    // held until its end.
    const stallStart = clock.now() + 3000;
    const stallEnd = stallStart + 500;
    const transport = simulatedServer(clock, (at) => ({ at: at >= stallStart && at < stallEnd ? stallEnd : at + 2 }));
    const r = await runLoad({ url: LOOPBACK, rate: 100, warmupMs: 500, durationMs: 5500, timeoutMs: 5000, dim: 16, seed: 1, clock, transport });
    console.log(
      `stall test: p50 ${r.latency_ms.p50} p90 ${r.latency_ms.p90} p99 ${r.latency_ms.p99} max ${r.latency_ms.max} ms; ` +
        `offered ${r.offered_rate}/s sent ${r.sent_rate}/s achieved ${r.achieved_rate}/s; late ${r.counts.late}`,
    );
    expect(r.counts.error + r.counts.shed + r.counts.timeout).toBe(0);
    expect(r.counts.ok).toBe(r.counts.sent);
    // ~50 of ~550 requests were intended during the stall: they sit at the top of the distribution.
    expect(r.latency_ms.p99).toBeGreaterThanOrEqual(300);
    expect(r.latency_ms.max).toBeGreaterThanOrEqual(450);
    expect(r.latency_ms.p50).toBeLessThan(100);
    expect(Math.abs(r.achieved_rate - 100)).toBeLessThanOrEqual(5);
    // The stall is visible in the per-second series, not smeared over the run.
    const worst = Math.max(...r.time_series.map((b) => b.p99_ms ?? 0));
    expect(worst).toBeGreaterThanOrEqual(300);
    expect(r.server_took_ms?.p50).toBeCloseTo(1.25, 1);
  });

  it('measures from the intended send time when the generator itself is held up', async () => {
    const clock = new VirtualClock();
    const transport = simulatedServer(clock, (at) => ({ at: at + 1 }));
    // Block the process (client and server alike) for 250 ms at t = 1 s: requests due during the
    // block leave late, and a closed-loop (send-time) measurement would see only ~1 ms for them.
    clock.after(1000, () => clock.block(250));
    const r = await runLoad({ url: LOOPBACK, rate: 100, durationMs: 2500, timeoutMs: 5000, dim: 8, seed: 3, clock, transport });
    console.log(`held generator: late ${r.counts.late}, max lateness ${r.client.max_lateness_ms} ms, p99 ${r.latency_ms.p99} max ${r.latency_ms.max} ms`);
    expect(r.counts.ok).toBe(r.counts.sent);
    expect(r.counts.late).toBeGreaterThanOrEqual(10);
    expect(r.client.max_lateness_ms).toBeGreaterThanOrEqual(200);
    expect(r.latency_ms.max).toBeGreaterThanOrEqual(200);
    expect(r.latency_ms.p99).toBeGreaterThanOrEqual(100);
  });

  it('Poisson arrivals have the configured mean gap and are reproducible', () => {
    const a = new Rng(7, 1);
    const b = new Rng(7, 1);
    let sum = 0;
    let sq = 0;
    const n = 50_000;
    let same = true;
    for (let i = 0; i < n; i++) {
      const x = a.exponential(10);
      same &&= x === b.exponential(10);
      sum += x;
      sq += x * x;
    }
    expect(same).toBe(true);
    const mean = sum / n;
    expect(mean).toBeGreaterThan(9.7);
    expect(mean).toBeLessThan(10.3);
    // Exponential: standard deviation equals the mean.
    expect(Math.sqrt(sq / n - mean * mean)).toBeGreaterThan(9.5);
  });
});

describe('outcome accounting', () => {
  it('counts 429 as shed, 504 as timeout, other statuses and bad bodies as errors', async () => {
    const s = await stub((res, _body, n) => {
      switch (n % 5) {
        case 0:
          return answer(res);
        case 1:
          return answer(res, 429, '{"error":"overloaded"}', { 'retry-after': '1' });
        case 2:
          return answer(res, 504, '{"error":"timeout"}');
        case 3:
          return answer(res, 500, '{"error":"boom"}');
        default:
          return answer(res, 200, 'not json');
      }
    });
    // A generous client timeout: this test is about classification, so no answer may time out
    // even on a stalled machine.
    const r = await runLoad({ url: s.url, rate: 200, durationMs: 1000, timeoutMs: 30_000, dim: 4, arrivals: 'constant' });
    const c = r.counts;
    expect(c.ok + c.shed + c.timeout + c.error).toBe(c.sent);
    const fifth = c.sent / 5;
    expect(Math.abs(c.ok - fifth)).toBeLessThanOrEqual(1);
    expect(Math.abs(c.shed - fifth)).toBeLessThanOrEqual(1);
    expect(c.timeout).toBe(c.timeout_server);
    expect(Math.abs(c.timeout - fifth)).toBeLessThanOrEqual(1);
    expect(c.errors_by_kind.http_500).toBeGreaterThan(0);
    expect(c.errors_by_kind.bad_response).toBeGreaterThan(0);
    expect(c.status_counts['429']).toBe(c.shed);
    expect(r.latency_ms.count).toBe(c.ok);
  });

  it('aborts at the client timeout and counts it as a timeout, not a dropped sample', async () => {
    const s = await stub(() => {
      /* never answers */
    });
    // Real HTTP on the simulated clock: nothing but the client's own timers can end a request.
    const r = await runLoad({ url: s.url, rate: 50, durationMs: 1000, timeoutMs: 200, dim: 4, clock: new VirtualClock() });
    expect(r.counts.sent).toBeGreaterThan(20);
    expect(r.counts.timeout).toBe(r.counts.sent);
    expect(r.counts.timeout_client).toBe(r.counts.sent);
    expect(r.counts.ok).toBe(0);
    expect(r.latency_ms.count).toBe(0);
    expect(r.latency_incl_timeouts_ms.count).toBe(r.counts.sent);
    expect(r.latency_incl_timeouts_ms.p50).toBeGreaterThanOrEqual(199);
    // The run ends with the last request's timeout (intended < 1 s, + 200 ms), not at its hard deadline.
    expect(r.counts_all.timeout_deadline).toBe(0);
    expect(r.wall_s).toBeLessThanOrEqual(1.2);
    expect(r.wall_s).toBeLessThan(r.config.hard_deadline_s);
  });

  it('counts connection refused as an error', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const r = await runLoad({ url: `http://127.0.0.1:${port}`, rate: 50, durationMs: 500, dim: 4 });
    expect(r.counts.sent).toBeGreaterThan(5);
    expect(r.counts.error).toBe(r.counts.sent);
    expect(r.counts.errors_by_kind.ECONNREFUSED).toBe(r.counts.sent);
    expect(r.completed_rate).toBe(0);
  });
});

describe('loopback only', () => {
  it('refuses non-loopback targets before sending anything', async () => {
    for (const url of ['http://10.0.0.1:8080', 'http://192.168.1.2', 'http://example.com/v1/search', 'http://[::2]:80', 'http://0.0.0.0:80', 'http://127.0.0.1.nip.io']) {
      await expect(runLoad({ url, rate: 10, durationMs: 100, dim: 2 }), url).rejects.toThrow(/non-loopback/);
    }
    await expect(resolveTarget('https://127.0.0.1:8443')).rejects.toThrow(/only http/);
    await expect(resolveTarget('not a url')).rejects.toThrow(/not a valid URL/);
    expect(isLoopbackIp('127.3.2.1')).toBe(true);
    expect(isLoopbackIp('::1')).toBe(true);
    expect(isLoopbackIp('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackIp('::ffff:10.0.0.1')).toBe(false);
    expect(isLoopbackIp('128.0.0.1')).toBe(false);
    const err: string[] = [];
    const code = await loadCommand(['--url', 'http://8.8.8.8', '--rate', '5', '--dim', '3'], {
      stdout: sink([]),
      stderr: sink(err),
    });
    expect(code).toBe(2);
    expect(err.join('')).toMatch(/refusing to send load to a non-loopback address/);
  });

  it('takes a base URL or the full endpoint', async () => {
    const a = await resolveTarget('http://127.0.0.1:8080');
    expect(a.path).toBe('/v1/search');
    expect(a.healthPath).toBe('/health');
    const b = await resolveTarget('http://localhost:8080/v1/search');
    expect(b.path).toBe('/v1/search');
    expect(isLoopbackIp(b.address)).toBe(true);
    const c = await resolveTarget('http://[::1]:9000/api/');
    expect(c.path).toBe('/api/v1/search');
    expect(c.healthPath).toBe('/api/health');
  });
});

function sink(into: string[]): NodeJS.WritableStream {
  return { write: (s: string) => (into.push(String(s)), true) } as unknown as NodeJS.WritableStream;
}

describe('reports', () => {
  it('writes a JSON report with the required fields and a self-contained HTML file', async () => {
    // Query i has vector[0] = i; the stub answers ids i..i+4 plus five misses, so recall@10 = 0.5
    // against ground truth rows i..i+9.
    const nq = 20;
    const dim = 4;
    const fv = Buffer.alloc(nq * (4 + 4 * dim));
    const iv = Buffer.alloc(nq * (4 + 4 * 10));
    for (let q = 0; q < nq; q++) {
      fv.writeInt32LE(dim, q * (4 + 4 * dim));
      for (let j = 0; j < dim; j++) fv.writeFloatLE(j === 0 ? q : 0.5, q * (4 + 4 * dim) + 4 + 4 * j);
      iv.writeInt32LE(10, q * 44);
      for (let j = 0; j < 10; j++) iv.writeInt32LE(q + j, q * 44 + 4 + 4 * j);
    }
    writeFileSync(join(tmp, 'q.fvecs'), fv);
    writeFileSync(join(tmp, 'gt.ivecs'), iv);
    const s = await stub((res, body) => {
      const q = Math.round((JSON.parse(body) as { vector: number[] }).vector[0]);
      const hits = [...Array(5).keys()].map((j) => ({ id: String(q + j), doc: q + j, score: 1 })).concat([...Array(5).keys()].map((j) => ({ id: `x${j}`, doc: -1, score: 0 })));
      setTimeout(() => answer(res, 200, JSON.stringify({ hits, took_ms: 0.5, stats: {} })), 1);
    });
    const jsonPath = join(tmp, 'out', 'r.json');
    const htmlPath = join(tmp, 'out', 'r.html');
    const out: string[] = [];
    const code = await loadCommand(
      [
        '--url',
        s.url + '/v1/search',
        '--rate',
        '100',
        '--duration',
        '1500ms',
        '--warmup',
        '500ms',
        '--queries',
        join(tmp, 'q.fvecs'),
        '--groundtruth',
        join(tmp, 'gt.ivecs'),
        '--k',
        '10',
        '--oversample',
        '3',
        '--read-path',
        'pread',
        '--json',
        jsonPath,
        '--html',
        htmlPath,
        '--quiet',
      ],
      { stdout: sink(out), stderr: sink([]) },
    );
    expect(code).toBe(0);
    expect(out.join('')).toMatch(/p99/);
    const j = JSON.parse(readFileSync(jsonPath, 'utf8'));
    expect(j.offered_rate).toBe(100);
    expect(typeof j.achieved_rate).toBe('number');
    expect(typeof j.sent_rate).toBe('number');
    for (const f of ['p50', 'p90', 'p99', 'p999', 'max']) expect(typeof j.latency_ms[f]).toBe('number');
    for (const f of ['ok', 'shed', 'timeout', 'error', 'late']) expect(typeof j.counts[f]).toBe('number');
    expect(j.config.k).toBe(10);
    expect(j.config.oversample).toBe(3);
    expect(j.config.read_path).toBe('pread');
    expect(j.config.queries.count).toBe(nq);
    expect(j.recall).toEqual({ k: 10, mean: 0.5, queries: j.counts.ok });
    expect(j.server_took_ms.p50).toBeCloseTo(0.5, 1);
    expect(j.time_series.length).toBeGreaterThanOrEqual(2);
    for (const f of ['t', 'phase', 'span_s', 'sent', 'ok', 'shed', 'timeout', 'error', 'late', 'completed', 'p50_ms', 'p99_ms', 'max_ms']) {
      expect(j.time_series[0]).toHaveProperty(f);
    }
    expect(j.time_series[0].phase).toBe('warmup');
    expect(j.latency_basis).toMatch(/intended send time/);

    const html = readFileSync(htmlPath, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect((html.match(/<svg/g) ?? []).length).toBeGreaterThanOrEqual(3);
    expect(html).not.toMatch(/\b(src|href|xlink:href)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/<link\b|<script[^>]*\bsrc=|@import|url\(\s*["']?https?:/i);
    expect(html).toMatch(/recall@10/);
  });

  it('renders the HTML for a run with failures without external resources', async () => {
    const s = await stub((res, _b, n) => (n % 3 === 0 ? answer(res, 429, '{}') : answer(res)));
    const r = await runLoad({ url: s.url, rate: 100, durationMs: 800, dim: 4 });
    expect(r.counts.shed).toBeGreaterThan(0);
    const html = renderHtml(r);
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).toMatch(/shed/);
  });
});

describe('find-max', () => {
  it('ramps until shedding or the SLO breaks and reports the highest passing rate', async () => {
    // One request at a time, 10 ms each (100/s capacity), first come first served; a request
    // finding 10 already waiting is shed.
    const clock = new VirtualClock();
    let busyUntil = -Infinity;
    const waitingStarts: number[] = [];
    const transport = simulatedServer(clock, (at) => {
      while (waitingStarts.length > 0 && waitingStarts[0] <= at) waitingStarts.shift();
      if (waitingStarts.length >= 10) return { at, status: 429, body: '{}' };
      const start = Math.max(at, busyUntil);
      busyUntil = start + 10;
      if (start > at) waitingStarts.push(start);
      return { at: busyUntil };
    });
    const rows: string[] = [];
    const f = await findMax({
      clock,
      transport,
      url: LOOPBACK,
      dim: 4,
      sloP99Ms: 150,
      startRate: 20,
      stepDurationMs: 1000,
      warmupMs: 300,
      cooldownMs: 100,
      maxSteps: 6,
      maxLateFraction: 1,
      onStep: (st) => rows.push(`${st.rate}/s ${st.pass ? 'pass' : 'fail'} p99=${st.p99_ms} shed=${st.shed}`),
    });
    console.log(`find-max: ${rows.join(' | ')} => ${f.max_sustainable_rate}/s (${f.limited_by})`);
    expect(f.steps.length).toBeLessThanOrEqual(6);
    expect(f.steps[0].pass).toBe(true);
    expect(f.steps.some((st) => !st.pass)).toBe(true);
    expect(f.max_sustainable_rate).not.toBeNull();
    expect(f.max_sustainable_rate as number).toBeGreaterThanOrEqual(20);
    expect(f.max_sustainable_rate as number).toBeLessThan(160);
    const firstFail = f.steps.find((st) => !st.pass);
    expect(firstFail?.reasons.join(' ')).toMatch(/shed|p99|timeouts/);
  });
});

describe('a cold workload: queries are not sent again while their pages could be cached', () => {
  /** A query set whose vector[0] is the query's index, so a server can tell which one it got. */
  function indexedQueries(count: number) {
    const data = new Float32Array(count * 2);
    for (let i = 0; i < count; i++) data[i * 2] = i;
    return { dim: 2, count, data, source: 'indexed' };
  }
  const queryOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { vector: number[] }).vector[0]!;

  it('find-max starts each step at the query after the last one the previous step sent', async () => {
    const clock = new VirtualClock();
    const seen: number[] = [];
    const transport = simulatedServer(clock, (at, _n, body) => {
      seen.push(queryOf(body));
      return { at: at + 1 };
    });
    const queries = indexedQueries(100_000);
    const f = await findMax({
      clock,
      transport,
      url: LOOPBACK,
      queries,
      sloP99Ms: 50,
      startRate: 20,
      stepDurationMs: 1000,
      warmupMs: 200,
      cooldownMs: 100,
      maxSteps: 3,
      maxLateFraction: 1,
    });
    expect(f.steps.length).toBe(3);
    // One stream through the pool across all three steps: 0, 1, 2, ... with no restart.
    expect(seen).toEqual(seen.map((_, i) => i));
    expect(f.steps.map((st) => st.report.config.queries.first)).toEqual([
      0,
      f.steps[0]!.report.counts_all.sent,
      f.steps[0]!.report.counts_all.sent + f.steps[1]!.report.counts_all.sent,
    ]);
  });

  it('measures recall on the queries the ground truth covers, a prefix of a larger pool', async () => {
    const clock = new VirtualClock();
    // The server answers query i with ids i and i+1; ground truth says query i's top-2 is i, 1000.
    const transport = simulatedServer(clock, (at, _n, body) => {
      const q = queryOf(body);
      return { at: at + 1, body: JSON.stringify({ hits: [{ id: String(q) }, { id: String(q + 1) }], took_ms: 1 }) };
    });
    const queries = indexedQueries(50);
    const gt = { dim: 2, count: 10, rowsInFile: 10, data: Int32Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? i / 2 : 1000)) };
    const r = await runLoad({ clock, transport, url: LOOPBACK, rate: 100, durationMs: 2000, queries, groundTruth: gt, k: 2, arrivals: 'constant', lateThresholdMs: 1000 });
    expect(r.counts.ok).toBeGreaterThan(150);
    // Half of each covered query's top-2 found; the other 40 of every 50 queries count nowhere.
    expect(r.recall?.mean).toBe(0.5);
    expect(r.recall?.queries).toBeLessThan(r.counts.ok);
    expect(r.recall?.queries).toBeGreaterThanOrEqual(Math.floor(r.counts.ok / 5) - 10);
  });
});

describe('single stream (the baseline a run is compared with)', () => {
  it("sends the searches one at a time, query i % count, through the run's client and bodies", async () => {
    let inFlight = 0;
    let most = 0;
    const bodies: string[] = [];
    const s = await stub((res, body) => {
      inFlight++;
      most = Math.max(most, inFlight);
      bodies.push(body);
      setImmediate(() => {
        inFlight--;
        answer(res);
      });
    });
    const queries = randomUnitQueries(4, 3, 7);
    const { ms } = await singleStream(s.url, queries, { k: 10, oversample: 5 }, 5);
    expect(ms.length).toBe(5);
    expect(Array.from(ms).every((t) => t > 0)).toBe(true);
    expect(most).toBe(1);
    const sent = bodies.map((b) => JSON.parse(b) as { vector: number[]; k: number; oversample: number });
    expect(sent.map((b) => [b.k, b.oversample])).toEqual(Array(5).fill([10, 5]));
    const query = (i: number) => Array.from(queries.data.subarray(i * 4, i * 4 + 4));
    sent.forEach((b, i) => {
      b.vector.forEach((x, j) => {
        expect(x).toBeCloseTo(query(i % 3)[j]!, 6);
      });
    });
  });

  it('names the search that was not answered and why', async () => {
    const s = await stub((res, _body, n) => (n === 2 ? answer(res, 429, '{"error":{}}') : answer(res)));
    await expect(singleStream(s.url, randomUnitQueries(4, 3, 7), { k: 10 }, 5)).rejects.toThrow('single-stream search 3 of 5 was not answered: http_429');
  });
});

describe('package entry point', () => {
  it('exposes the load tester as the `prescore/load` subpath export, with types', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.exports['./load']).toEqual({ types: './dist/load/index.d.ts', default: './dist/load/index.js' });
    expect(existsSync(join(root, pkg.exports['./load'].types))).toBe(true);
    // Resolved by name from inside the package, as a dependant would import it.
    const names = execFileSync(process.execPath, ['--input-type=module', '-e', "process.stdout.write(Object.keys(await import('prescore/load')).join(' '))"], {
      cwd: root,
      encoding: 'utf8',
    }).split(' ');
    for (const name of ['runLoad', 'findMax', 'loadCommand', 'renderHtml', 'renderFindMaxHtml', 'formatReport', 'realClock', 'percentile']) {
      expect(names).toContain(name);
    }
  });
});

describe('percentile', () => {
  it('is the nearest rank: the smallest sample with at least p% of the samples at or below it', () => {
    const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(ten, 50)).toBe(5);
    expect(percentile(ten, 51)).toBe(6);
    expect(percentile(ten, 99)).toBe(10);
    expect(percentile(ten, 100)).toBe(10);
    expect(percentile(ten, 0)).toBe(1);
    expect(percentile(Float64Array.of(0.5), 99)).toBe(0.5);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('inputs and arguments', () => {
  it('parses durations with units and rejects bare numbers', () => {
    expect(parseDuration('60s')).toBe(60_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('1.5s')).toBe(1500);
    for (const bad of ['60', 'abc', '-5s', '5x', '', '1s2']) expect(() => parseDuration(bad, '--duration')).toThrow(/--duration/);
  });

  it('reads .fvecs/.ivecs rows and names the file and row on corruption', () => {
    const rows = 3;
    const dim = 2;
    const buf = Buffer.alloc(rows * (4 + 4 * dim));
    for (let r = 0; r < rows; r++) {
      buf.writeInt32LE(dim, r * 12);
      buf.writeFloatLE(r + 0.25, r * 12 + 4);
      buf.writeFloatLE(-r, r * 12 + 8);
    }
    const p = join(tmp, 'v.fvecs');
    writeFileSync(p, buf);
    const v = readFvecs(p);
    expect([v.dim, v.count]).toEqual([2, 3]);
    expect(Array.from(v.data)).toEqual([0.25, -0, 1.25, -1, 2.25, -2]);
    expect(readFvecs(p, 2).count).toBe(2);
    expect(Array.from(readIvecs(p).data.subarray(0, 1))).toEqual([buf.readInt32LE(4)]);
    writeFileSync(p, buf.subarray(0, buf.length - 2));
    expect(() => readFvecs(p)).toThrow(/v\.fvecs.*not a multiple/);
    buf.writeInt32LE(5, 12);
    writeFileSync(p, buf);
    expect(() => readFvecs(p)).toThrow(/row 1 declares dimension 5/);
  });

  it('makes deterministic unit vectors for --dim', () => {
    const a = randomUnitQueries(8, 3, 42);
    const b = randomUnitQueries(8, 3, 42);
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
    let norm = 0;
    for (let i = 0; i < 8; i++) norm += a.data[i] * a.data[i];
    expect(norm).toBeCloseTo(1, 5);
  });

  it('rejects bad arguments with a clear message and exit code 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--rate', '10', '--dim', '4'], /--url is required/],
      [['--url', 'http://127.0.0.1:1', '--dim', '4'], /--rate is required/],
      [['--url', 'http://127.0.0.1:1', '--rate', '10', '--dim', '4', '--duration', '60'], /cannot parse duration "60"/],
      [['--url', 'http://127.0.0.1:1', '--rate', 'fast', '--dim', '4'], /--rate: expected a number/],
      [['--url', 'http://127.0.0.1:1', '--rate', '10'], /--queries FILE.fvecs or --dim/],
      [['--url', 'http://127.0.0.1:1', '--find-max', '--dim', '4'], /--slo-p99/],
      [['--url', 'http://127.0.0.1:1', '--rate', '10', '--dim', '4', '--slo-p99', '5ms'], /only applies with --find-max/],
      [['--url', 'http://127.0.0.1:1', '--rate', '10', '--queries', join(tmp, 'missing.fvecs')], /missing\.fvecs: cannot open/],
      [['--nope'], /Unknown option/],
    ];
    for (const [argv, re] of cases) {
      const err: string[] = [];
      const code = await loadCommand(argv, { stdout: sink([]), stderr: sink(err) });
      expect(code, argv.join(' ')).toBe(2);
      expect(err.join(''), argv.join(' ')).toMatch(re);
    }
    const out: string[] = [];
    expect(await loadCommand(['--help'], { stdout: sink(out), stderr: sink([]) })).toBe(0);
    expect(out.join('')).toMatch(/Usage: prescore load/);
  });

  it('fails fast with exit code 1 when the server is not reachable', async () => {
    const err: string[] = [];
    const code = await loadCommand(['--url', 'http://127.0.0.1:1', '--rate', '10', '--dim', '4', '--duration', '1s'], {
      stdout: sink([]),
      stderr: sink(err),
    });
    expect(code).toBe(1);
    expect(err.join('')).toMatch(/not reachable.*ECONNREFUSED/);
  });
});
