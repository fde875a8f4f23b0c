import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import type { VectorIndex } from '../src/api/types.js';
import { parseServeArgs, serveCommand, type OpenIndexRequest, type ServeIo } from '../src/http/serve.js';
import type { RunningServer } from '../src/http/server.js';
import { FakeIndex } from './support/FakeIndex.js';

interface Run {
  readonly exit: Promise<number>;
  readonly out: string[];
  readonly err: string[];
  readonly signals: EventEmitter;
  readonly opened: [string, OpenIndexRequest][];
  readonly fake: FakeIndex;
  listening(): Promise<RunningServer>;
}

function run(argv: string[], env: Record<string, string> = {}, fake = new FakeIndex({ delayMs: 200 })): Run {
  const out: string[] = [];
  const err: string[] = [];
  const signals = new EventEmitter();
  const opened: [string, OpenIndexRequest][] = [];
  let resolveListening!: (s: RunningServer) => void;
  const listening = new Promise<RunningServer>((r) => (resolveListening = r));
  const io: ServeIo = {
    env,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    signals: signals as unknown as ServeIo['signals'],
    onListening: resolveListening,
  };
  const opener = async (dir: string, request: OpenIndexRequest): Promise<VectorIndex> => {
    opened.push([dir, request]);
    return fake;
  };
  const exit = serveCommand(argv, opener, io);
  return { exit, out, err, signals, opened, fake, listening: () => Promise.race([listening, exit.then(() => Promise.reject(new Error(err.join('\n'))))]) };
}

describe('prescore serve', () => {
  it('opens the index through the opener, prints the URL and a curl example, drains on SIGTERM', async () => {
    const r = run(['--index', '/data/indexes/wiki-384', '--port', '0', '--max-queue', '7'], { PRESCORE_MAX_INFLIGHT: '3', PRESCORE_MAX_QUEUE: '99' });
    const server = await r.listening();
    expect(r.opened).toEqual([['/data/indexes/wiki-384', { format: 'prescore', name: 'wiki-384', readPath: undefined, field: undefined }]]);
    const text = r.out.join('\n');
    expect(text).toContain(`listening on http://127.0.0.1:${server.port}`);
    expect(text).toContain(`curl -sS -H 'content-type: application/json' --data-binary @- http://127.0.0.1:${server.port}/v1/search`);
    expect(text).toContain(`/wiki-384/_search`);
    expect(text).toContain('Array(384).fill(0.1)');

    // Flags beat the environment; the environment beats defaults.
    const health = (await (await fetch(`${server.url}/health`)).json()) as any;
    expect(health).toMatchObject({ index: 'wiki-384', max_inflight: 3, max_queue: 7 });

    const vector = r.fake.randomQuery(1);
    const pending = fetch(`${server.url}/wiki-384/_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ knn: { field: 'embedding', query_vector: vector, k: 5 } }),
    });
    while (r.fake.running === 0) await new Promise((res) => setTimeout(res, 5));
    r.signals.emit('SIGTERM');
    const res = await pending;
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.hits.hits.map((h: any) => h._id)).toEqual(r.fake.bruteForce(vector, 5).map((h) => h.id));
    expect(await r.exit).toBe(0);
    expect(r.fake.closed).toBe(true);
    expect(r.err.join('\n')).toMatch(/SIGTERM: draining 1 open request/);
    expect(r.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('the printed curl example works as printed', async () => {
    const { execFile } = await import('node:child_process');
    const r = run(['--index', 'idx', '--port', '0'], {}, new FakeIndex({ dims: 16 }));
    await r.listening();
    const lines = r.out.join('\n').split('\n');
    for (const path of ['/v1/search', '/idx/_search']) {
      const example = lines.find((l) => l.includes(path))!.trim();
      const stdout = await new Promise<string | undefined>((resolve, reject) =>
        // Exit status 127: curl (or node) is not installed here; nothing to check.
        execFile('sh', ['-c', example], (e, so) => (e ? ((e as { code?: number }).code === 127 ? resolve(undefined) : reject(e)) : resolve(so))),
      );
      if (stdout === undefined) continue;
      const body = JSON.parse(stdout) as any;
      expect(path === '/v1/search' ? body.hits : body.hits.hits).toHaveLength(10);
    }
    r.signals.emit('SIGINT');
    expect(await r.exit).toBe(0);
  });

  it('--lucene DIR --field NAME reaches the opener; env configures host and read path', async () => {
    const r = run(['--lucene', '/var/lucene/idx', '--field', 'emb', '--port', '0'], { PRESCORE_HOST: '127.0.0.1', PRESCORE_READ_PATH: 'pread' });
    await r.listening();
    expect(r.opened[0]).toEqual(['/var/lucene/idx', { format: 'lucene', name: 'idx', readPath: 'pread', field: 'emb' }]);
    r.signals.emit('SIGINT');
    expect(await r.exit).toBe(0);
  });

  it('a second signal aborts a long drain', async () => {
    // Every search takes 30 s here, so no warm-up searches (the variable switches them off).
    const r = run(['--index', 'x', '--port', '0'], { PRESCORE_WARM_UP_REQUESTS: '0' }, new FakeIndex({ delayMs: 30_000 }));
    const server = await r.listening();
    expect(r.fake.started).toBe(0);
    const pending = fetch(`${server.url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: r.fake.randomQuery(1), k: 1 }),
    });
    while (r.fake.running === 0) await new Promise((res) => setTimeout(res, 5));
    r.signals.emit('SIGTERM');
    // The second signal comes once the drain has begun (logged right before it starts).
    await vi.waitFor(() => expect(r.err.join('\n')).toMatch(/SIGTERM: draining 1 open request/), { timeout: 30_000, interval: 5 });
    r.signals.emit('SIGTERM');
    expect(await r.exit).toBe(0);
    expect((await pending).status).toBe(503);
    expect(r.fake.closed).toBe(true);
  });

  it('usage errors exit 2 with a message naming the flag', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], {}, /--index DIR \(or --lucene DIR, or --data DIR\) is required/],
      [['--index', 'a', '--lucene', 'b'], {}, /not both/],
      [['--index', 'a', '--port', 'http'], {}, /--port \(or PRESCORE_PORT\) must be a non-negative integer/],
      [['--index', 'a', '--warm-up-requests', 'many'], {}, /--warm-up-requests \(or PRESCORE_WARM_UP_REQUESTS\) must be a non-negative integer/],
      [['--index', 'a'], { PRESCORE_PORT: '70000' }, /--port \(or PRESCORE_PORT\) must be an integer in \[0, 65535\]/],
      [['--index', 'a', '--max-inflight', '0'], {}, /--max-inflight .* must be an integer in \[1,/],
      [['--index', 'a', '--read-path', 'mmap+magic'], {}, /--read-path .* must be one of/],
      [['--index', 'a', '--timeout-ms', '90000'], {}, /--timeout-ms .* \[1, 60000\]/],
      [['--index', 'a', '--bogus'], {}, /bogus/],
      [['--index', 'a', 'extra'], {}, /extra/],
    ];
    for (const [argv, env, message] of cases) {
      const r = run(argv, env);
      expect(await r.exit, argv.join(' ')).toBe(2);
      expect(r.err.join('\n')).toMatch(message);
      expect(r.err.join('\n')).toContain('usage: prescore serve');
      expect(r.opened).toHaveLength(0);
    }
  });

  it('--help prints the flags with their environment variables', async () => {
    const r = run(['--help']);
    expect(await r.exit).toBe(0);
    const text = r.out.join('\n');
    for (const s of ['--index', '--lucene', '--field', '--max-inflight', 'PRESCORE_MAX_QUEUE', 'PRESCORE_TIMEOUT_MS', '--drain-timeout-ms']) {
      expect(text).toContain(s);
    }
  });

  it('an opener failure or a busy port exits 1', async () => {
    const err: string[] = [];
    const code = await serveCommand(
      ['--index', 'broken'],
      async () => {
        throw new Error('commit_3: checksum failed');
      },
      { stderr: (l) => err.push(l), stdout: () => {}, env: {}, signals: new EventEmitter() as any },
    );
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(/cannot open prescore index broken: commit_3: checksum failed/);

    const blocker = createServer();
    await new Promise<void>((res) => blocker.listen(0, '127.0.0.1', res));
    const port = (blocker.address() as import('node:net').AddressInfo).port;
    try {
      const r = run(['--index', 'x', '--port', String(port)]);
      expect(await r.exit).toBe(1);
      expect(r.err.join('\n')).toMatch(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
      expect(r.fake.closed).toBe(true);
    } finally {
      blocker.close();
    }
  });

  it('binds the port and says "listening" only once the index is open, so the first request is answered at once', async () => {
    const port = await freePort();
    const out: string[] = [];
    let finishOpen!: (index: VectorIndex) => void;
    const fake = new FakeIndex();
    let listening = false;
    const signals = new EventEmitter();
    const exit = serveCommand(['--index', '/data/slow', '--port', String(port)], () => new Promise<VectorIndex>((resolve) => (finishOpen = resolve)), {
      env: {},
      stdout: (l) => out.push(l),
      stderr: () => {},
      signals: signals as unknown as ServeIo['signals'],
      onListening: () => (listening = true),
    });
    // While the index opens: nothing printed, nothing bound (a client is refused, not queued).
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.join('\n')).not.toContain('listening');
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    finishOpen(fake);
    while (!listening) await new Promise((resolve) => setImmediate(resolve));
    expect(out.join('\n')).toContain(`listening on http://127.0.0.1:${port}`);
    const res = await fetch(`http://127.0.0.1:${port}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: fake.randomQuery(1), k: 3 }),
    });
    expect(res.status).toBe(200);
    signals.emit('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('parseServeArgs accepts a leading "serve" and defaults the name to the directory base name', () => {
    const c = parseServeArgs(['serve', '--index', './data/my-index/'], {});
    expect(c).not.toBe('help');
    if (c === 'help') return;
    expect(c.dir).toBe('./data/my-index/');
    expect(c.server).toMatchObject({ name: 'my-index', host: '127.0.0.1', port: 8080, maxInflight: 32, maxQueue: 32, maxBodyBytes: 1048576, defaultTimeoutMs: 10000 });
  });

  it('--mapping gives a Lucene directory the mapping its files lack, and is refused for a prescore index', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prescore-serve-mapping-'));
    const good = join(dir, 'mapping.json');
    writeFileSync(good, JSON.stringify({ properties: { year: { type: 'integer' }, category: { type: 'keyword' } } }));
    const c = parseServeArgs(['--lucene', '/idx', '--mapping', good], {});
    if (c === 'help') throw new Error('unexpected help');
    expect(c.open.mapping?.fieldPaths).toEqual(['category', 'year']);
    // The environment variable works too; the flag wins over it.
    const viaEnv = parseServeArgs(['--lucene', '/idx'], { PRESCORE_MAPPING: good });
    if (viaEnv === 'help') throw new Error('unexpected help');
    expect(viaEnv.open.mapping?.field('year')?.type).toBe('integer');

    expect(() => parseServeArgs(['--index', '/idx', '--mapping', good], {})).toThrow(/--mapping \(or PRESCORE_MAPPING\) is for --lucene directories/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ properties: { year: { type: 'integr' } } }));
    expect(() => parseServeArgs(['--lucene', '/idx', '--mapping', bad], {})).toThrow(new RegExp(`--mapping ${bad}: .*year`));
    expect(() => parseServeArgs(['--lucene', '/idx', '--mapping', join(dir, 'missing.json')], {})).toThrow(/--mapping .*missing\.json: ENOENT/);
  });
});

/** A port nothing listens on (bound and released by the OS). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((res) => probe.listen(0, '127.0.0.1', res));
  const port = (probe.address() as import('node:net').AddressInfo).port;
  await new Promise<void>((res) => probe.close(() => res()));
  return port;
}
