import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openIndexWriter } from '../src/api/openIndexWriter.js';
import { DataDirectory, type ServedIndexDeps } from '../src/http/DataDirectory.js';
import { defaultIndexSettings } from '../src/http/IndexSettings.js';
import { startServer, type RunningServer } from '../src/http/server.js';

/**
 * Disk full, as Lucene's TestIndexWriterOnDiskFull asks of a writer: a served index on a small
 * tmpfs (8 MiB) filled by bulk writes until the device has no space left. Every failed write is
 * reported (429 with the reason, never an acknowledgement), searches and realtime gets keep
 * working while the disk is full, writes resume once space is freed, and after a restart every
 * acknowledged document is there, exactly. Mounting a tmpfs needs root (CAP_SYS_ADMIN); without
 * it the test is skipped and says so.
 */
const base = mkdtempSync(join(tmpdir(), 'prescore-disk-full-'));
const mountPoint = join(base, 'tmpfs');
const mounted = tryMount(mountPoint, '8m');
const DIMS = 64;
/** Doc i's vector: seeded pseudo-random, so no two docs are near duplicates. */
const vector = (i: number) => {
  let x = (i + 1) * 2654435761;
  return Array.from({ length: DIMS }, () => {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return x / 2 ** 32 + 0.05;
  });
};

function tryMount(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const deps: ServedIndexDeps = {
  openIndex: (dir, name) => openIndex(dir, { name }),
  // Small RAM buffer: flushes (segment writes) run while the disk fills, not only translog appends.
  openWriter: (dir, options) => openIndexWriter(dir, { ...options, ramBufferBytes: 64 * 1024 }),
  defaults: defaultIndexSettings(1_000),
  maxTimeoutMs: 30_000,
  log: () => {},
};
let data: DataDirectory;
let server: RunningServer;

async function start(): Promise<void> {
  data = await DataDirectory.open(join(mountPoint, 'data'), deps);
  server = await startServer(data, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} });
}

const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, any>) };
};

/** A _bulk of `n` new documents from `first`, each with a 600-byte text so the disk fills in a few hundred docs. */
const bulkOf = (first: number, n: number, refresh: boolean) => {
  const lines: string[] = [];
  for (let i = first; i < first + n; i++)
    lines.push(JSON.stringify({ index: { _index: 'full', _id: `d${i}` } }), JSON.stringify({ v: vector(i), n: i, text: `doc ${i} `.repeat(60) }));
  return call('POST', `/_bulk${refresh ? '?refresh=true' : ''}`, `${lines.join('\n')}\n`, 'application/x-ndjson');
};

beforeAll(async () => {
  if (!mounted) return;
  await start();
}, 60_000);

afterAll(async () => {
  await server?.close({ force: true }).catch(() => {});
  await data?.close().catch(() => {});
  if (mounted) execFileSync('umount', ['-l', mountPoint]);
  rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!mounted)('a disk that fills up (a small tmpfs; skipped without the root it takes to mount one)', () => {
  it('reports the failed writes, keeps serving, resumes when space returns and loses nothing acknowledged', async () => {
    expect((await call('PUT', '/full', { mappings: { properties: { v: { type: 'dense_vector', dims: DIMS }, n: { type: 'long' }, text: { type: 'text' } } } })).status).toBe(200);
    // Ballast: all but ~1.5 MiB of the device, freed later to give the space back.
    const ballast = join(mountPoint, 'ballast');
    const free = () => {
      const s = statfsSync(mountPoint);
      return s.bavail * s.bsize;
    };
    const fd = openSync(ballast, 'w');
    const chunk = new Uint8Array(64 * 1024);
    while (free() > 1.5 * 1024 * 1024) writeSync(fd, chunk);
    closeSync(fd);

    const acked = new Set<number>();
    const failures: { status: number; type: string; reason: string }[] = [];
    let next = 0;
    // Until ten bulks in a row acknowledge nothing while the disk is reported full. Rounds shed
    // only because flushes lag (the writer's background pool starting, a flush running) do not
    // count: a client that retries at once sends many of those.
    for (let round = 0, stalled = 0; stalled < 10 && round < 4_000; round++) {
      const before = acked.size;
      const reported = failures.length;
      const res = await bulkOf(next, 20, round % 5 === 4);
      if (res.status === 200) {
        for (const item of res.body!.items as { index: { _id: string; status: number; error?: { type: string; reason?: string } } }[]) {
          // An item is acknowledged, or shed while its documents pile up in RAM: because the disk
          // is full (their segment could not be written: reported as such), or flushes lag.
          if (item.index.status === 201) acked.add(Number(item.index._id.slice(1)));
          else if (item.index.error?.type === 'cluster_block_exception')
            failures.push({ status: item.index.status, type: item.index.error.type, reason: (item.index.error as { reason?: string }).reason ?? '' });
          else expect([item.index.status, item.index.error?.type]).toEqual([429, 'es_rejected_execution_exception']);
        }
      } else failures.push({ status: res.status, type: res.body!.error.type, reason: res.body!.error.reason });
      next += 20;
      stalled = acked.size > before ? 0 : failures.length > reported ? stalled + 1 : stalled;
    }
    expect(acked.size).toBeGreaterThan(100);
    expect(acked.size).toBeLessThan(400 * 20); // it did fill up
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(f.status).toBe(429);
      expect(f.type).toBe('cluster_block_exception');
      expect(f.reason).toMatch(/no space left on the device/);
    }

    // While full: searches and realtime gets are answered.
    const some = [...acked].slice(-3);
    for (const i of some) {
      const search = await call('POST', '/full/_search', { knn: { field: 'v', query_vector: vector(i), k: 3, num_candidates: 50 } });
      expect(search.status).toBe(200);
      expect((await call('GET', `/full/_doc/d${i}`)).body).toMatchObject({ found: true, _source: { n: i } });
    }

    // Space returns: writes are taken again once the documents held in RAM are flushed (a shed
    // write starts that flush; a client retrying at once meets 429s until it is done).
    rmSync(ballast);
    let resumed = false;
    for (let attempt = 0; attempt < 2_000 && !resumed; attempt++) {
      const res = await bulkOf(next, 20, true);
      if (res.status === 200) {
        for (const item of res.body!.items as { index: { _id: string; status: number } }[]) if (item.index.status === 201) acked.add(Number(item.index._id.slice(1)));
        resumed = res.body!.errors === false;
      }
      next += 20;
    }
    expect(resumed).toBe(true);

    // Restart: every acknowledged doc is there, exactly.
    await server.close();
    await data.close();
    await start();
    const ids = [...acked];
    const got = await call('POST', '/full/_mget', { ids: ids.map((i) => `d${i}`) });
    const missing = (got.body!.docs as { _id: string; found: boolean; _source?: { n: number } }[]).filter((d, k) => !d.found || d._source!.n !== ids[k]);
    expect(missing).toEqual([]);
    const top = await call('POST', '/full/_search', { knn: { field: 'v', query_vector: vector(ids[0]!), k: 1, num_candidates: 50 } });
    expect(top.body!.hits.hits[0]._id).toBe(`d${ids[0]}`);
  }, 120_000);
});
