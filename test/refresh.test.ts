import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCommand, type ServeIo } from '../src/http/serve.js';
import type { RunningServer } from '../src/http/server.js';
import { openIndex } from '../src/api/openIndex.js';
import { indexOpener } from '../src/indexOpener.js';
import { buildIndex } from '../src/api/buildIndex.js';
import { generateVectors } from '../src/gen/generateDataset.js';
import { writeFvecs } from '../segments/input/index.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';

/**
 * Rebuilding an index in place while it is served: the served reader keeps its (deleted) files
 * until it is closed, so searches and `GET /v1/indexes` never fail; `POST /:index/_refresh` or
 * SIGHUP swaps in the new commit without failing a query.
 */
const DIMS = 48;
let t: TestIndex;
let server: RunningServer;
let exit: Promise<number>;
const signals = new EventEmitter();
const stderr: string[] = [];
let nextInput: string;

beforeAll(async () => {
  t = await buildTestIndex({ n: 3000, dims: DIMS, segmentDocs: 1000, flatThreshold: 500, queries: 20 });
  nextInput = join(t.root, 'next.fvecs');
  await writeFvecs(nextInput, generateVectors({ seed: '99', dim: DIMS, similarity: 'cosine' }, 'base', 2500), DIMS);
  const io: ServeIo = {
    env: {},
    stdout: () => {},
    stderr: (l) => stderr.push(l),
    signals: signals as unknown as ServeIo['signals'],
    onListening: (s) => (listening(s), undefined),
  };
  let listening!: (s: RunningServer) => void;
  const up = new Promise<RunningServer>((ok) => (listening = ok));
  exit = serveCommand(['--index', t.dir, '--name', 'live', '--port', '0'], indexOpener(openIndex), io);
  server = await up;
});

afterAll(async () => {
  signals.emit('SIGTERM');
  await exit;
  t?.cleanup();
});

const query = (i: number) => [...t.queries.subarray(i * DIMS, (i + 1) * DIMS)];
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
const search = async (i: number): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${server.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ vector: query(i), k: 10 }) });
  return { status: res.status, body: await res.json() };
};
const ids = (body: { hits: { id: string }[] }) => body.hits.map((h) => h.id);
const describeIndex = async () => {
  const res = await fetch(`${server.url}/v1/indexes`);
  return { status: res.status, body: (await res.json()) as { indexes: { docs: number; residentFraction: number }[] } };
};

describe('rebuild in place while serving', () => {
  it('serves the old commit, consistently and with only 200s, while and after it is rebuilt; _refresh swaps in the new one', async () => {
    const before = await Promise.all(Array.from({ length: 20 }, (_, i) => search(i)));
    expect(before.map((r) => r.status)).toEqual(before.map(() => 200));

    // Search continuously while the directory is rebuilt under the server (and its files deleted).
    let rebuilding = true;
    const during: { i: number; status: number; ids: string[] }[] = [];
    const describes: number[] = [];
    const searching = (async () => {
      for (let round = 0; rebuilding || round < 1; round++) {
        for (let i = 0; i < 20; i++) {
          const r = await search(i);
          during.push({ i, status: r.status, ids: r.status === 200 ? ids(r.body) : [] });
        }
        describes.push((await describeIndex()).status);
      }
    })();
    await buildIndex({ input: nextInput, out: t.dir, similarity: VectorSimilarityFunction.COSINE, segmentDocs: 1000, flatThreshold: 500, progress: false });
    rebuilding = false;
    await searching;
    // The old commit's files are gone from the directory...
    expect(readdirSync(t.dir).filter((f) => f.startsWith('_0'))).toEqual([]);
    // ...yet every search answered 200 with exactly the old commit's hits, and describe kept working.
    expect(during.every((d) => d.status === 200)).toBe(true);
    for (const d of during) expect(d.ids).toEqual(ids(before[d.i]!.body));
    expect(describes.every((s) => s === 200)).toBe(true);
    const stale = await describeIndex();
    expect(stale.status).toBe(200);
    expect(stale.body.indexes[0]!.docs).toBe(3000);

    // An explicit refresh, with searches in flight across it: none fails.
    const inFlight = Array.from({ length: 20 }, (_, i) => search(i));
    const refreshed = await fetch(`${server.url}/live/_refresh`, { method: 'POST' });
    expect(refreshed.status).toBe(200);
    expect(await refreshed.json()).toMatchObject({ refreshed: true, docs: 2500 });
    expect((await Promise.all(inFlight)).every((r) => r.status === 200)).toBe(true);

    expect((await describeIndex()).body.indexes[0]!.docs).toBe(2500);
    const expected = await openIndex(t.dir);
    try {
      for (let i = 0; i < 5; i++) {
        const r = await search(i);
        expect(r.status).toBe(200);
        expect(ids(r.body)).toEqual((await expected.search(query(i), { k: 10 })).hits.map((h) => h.id));
      }
    } finally {
      await expected.close();
    }
    // Nothing new: a refresh is a no-op.
    expect(await (await fetch(`${server.url}/live/_refresh`, { method: 'POST' })).json()).toMatchObject({ refreshed: false, docs: 2500 });
  });

  it('SIGHUP reopens the index at its newest commit', async () => {
    await buildIndex({ input: t.input, out: t.dir, similarity: VectorSimilarityFunction.COSINE, segmentDocs: 1000, flatThreshold: 500, progress: false });
    const reopened = new Promise<void>((ok) => {
      const poll = () => (stderr.some((l) => l.includes('SIGHUP: reopened')) ? ok() : setImmediate(poll));
      poll();
    });
    signals.emit('SIGHUP');
    await reopened;
    expect((await describeIndex()).body.indexes[0]!.docs).toBe(3000);
    expect((await search(0)).status).toBe(200);
  });

  it('a refresh that would change the served dims is refused and the old reader keeps serving', async () => {
    const other = join(t.root, 'other.fvecs');
    await writeFvecs(other, generateVectors({ seed: '5', dim: 16, similarity: 'cosine' }, 'base', 100), 16);
    await buildIndex({ input: other, out: t.dir, similarity: VectorSimilarityFunction.COSINE, progress: false });
    const res = await fetch(`${server.url}/live/_refresh`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { reason: string } }).error.reason).toMatch(/dims 48 -> 16/);
    expect((await search(0)).status).toBe(200);
  });
});
