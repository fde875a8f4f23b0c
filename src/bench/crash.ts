/**
 * `npm run bench:crash`: the crash ledger. A served index is written to over HTTP, SIGKILLed at
 * random moments, restarted and checked against a ledger of every acknowledged write.
 *
 *   npm run bench:crash -- [--kills 1000] [--seed S] [--clients 4]
 *
 * One empty index (16 dims, cosine, a keyword, a long and an object field) is created once and
 * served by `prescore serve --index DIR --port 0` (a child process). Each round:
 * 1. the server starts; the time from the spawn to its first answer is the recovery time;
 * 2. the parent checks it against the ledger: first the reads a restarted server gives before any
 *    write (`_mget`; counted apart, as stale reads: a server that opens its writer, which replays
 *    the translog, only at the first write serves the last commit until then), then the realtime
 *    `_mget` of every id once a write that changes no document (a delete of an id never written)
 *    has opened the writer, then, after a refresh, every live doc's vector (a search with
 *    `exclude_vectors: false`) and a kNN search. An id must be exactly its last acknowledged
 *    state (`_source`, every float32 of its vector, `_version` and `_seq_no`), or, when writes
 *    to it were in flight at the kill, one of the states those writes lead to, applied in order
 *    and whole;
 * 3. `--clients` clients send `_bulk` bodies of 1-40 index / partial update / delete items over
 *    200 ids (some with `?refresh=true`, which commits and may start a merge), and another sends
 *    `_forcemerge` and `_refresh` now and then; the parent records, per id, the state every
 *    acknowledged item (HTTP 200, item status 200/201) leaves. No two requests in flight touch the
 *    same id, so the order of the writes to an id is the order the parent sent them;
 * 4. the server is SIGKILLed 50-800 ms (uniform) into the writes; the items of the requests
 *    still unanswered are the unacknowledged ones.
 * After the last kill the server starts once more, is checked, and stops (SIGTERM). A mismatch
 * prints the id, the expected and the actual states, and ends the run after its round with exit
 * code 1, keeping the index directory; stale reads before the first write, or an answer the
 * ledger did not predict, also end it with exit code 1, after the last round.
 * Figures: kills, acknowledged and unacknowledged items, what was in flight at each kill, segments
 * at the end, mismatches, recovery (spawn to first answer: a server replays the translog before it
 * answers) and the first write after the restart p50/p99, wall time; a JSON line and a table.
 */
import { cpSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openIndexWriter } from '../api/openIndexWriter.js';
import { Executor } from '../executor/Executor.js';
import { packageRoot } from '../executor/packageRoot.js';
import { Mapping } from '../../segments/document/Mapping.js';
import { VectorSimilarityFunction } from '../../segments/index/VectorSimilarityFunction.js';
import { shortestFloat32 } from '../../query/fetch/FetchPhase.js';
import { summarize } from './benchData.js';
import { mulberry32 } from '../gen/Rng.js';
import { ColdServer } from './coldServer.js';

const { values } = parseArgs({
  options: {
    kills: { type: 'string' },
    seed: { type: 'string' },
    clients: { type: 'string' },
  },
});
const positiveInt = (name: string, raw: string | undefined, fallback: number) => {
  const v = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name}: expected a non-negative integer, got ${raw}`);
  return v;
};
const KILLS = positiveInt('kills', values.kills, 1000);
const SEED = positiveInt('seed', values.seed, Math.floor(Math.random() * 2 ** 31));
const CLIENTS = Math.max(1, positiveInt('clients', values.clients, 4));
const IDS = 200;
const DIMS = 16;
const INDEX = 'crash';
const MAX_ITEMS = 40;
const KILL_MIN_MS = 50;
const KILL_MAX_MS = 800;
const PROGRESS_EVERY = 50;
/** The fields of the documents: `_source` matters (a keyword, a long, an object merged key by key). */
const MAPPING = {
  properties: {
    vector: { type: 'dense_vector', dims: DIMS, index: true, similarity: 'cosine' },
    tag: { type: 'keyword' },
    n: { type: 'long' },
    meta: { properties: { color: { type: 'keyword' }, w: { type: 'long' } } },
  },
};
const TAGS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
const COLORS = ['red', 'green', 'blue', 'black'];

type Source = Record<string, unknown>;
/** A document as the index must hold it: its `_source` (the server keeps the vector apart from it) and its vector. */
interface Content {
  readonly source: Source;
  readonly vector: Float32Array;
}
/** An id in the ledger: its last acknowledged content (null: absent) with that write's `_version` and `_seq_no`. */
interface Entry {
  readonly content: Content | null;
  readonly version: number;
  readonly seqNo: number;
}
/** One bulk item: what it does and what the parent expects of it (the state before it is the ledger's, or the previous item's on that id). */
interface Item {
  readonly id: number;
  readonly lines: string;
  readonly action: 'index' | 'update' | 'delete';
  readonly status: number;
  readonly result: string | null;
  readonly errorType: string | null;
  readonly before: Content | null;
  readonly after: Content | null;
}
interface Flight {
  readonly kind: 'bulk' | 'refresh' | 'forcemerge';
  readonly refresh: boolean;
  readonly items: readonly Item[];
}
/** What the server gave for an id. */
interface Actual {
  readonly found: boolean;
  readonly source?: Source;
  readonly version?: number;
  readonly seqNo?: number;
  readonly vector?: Float32Array;
}

const random = mulberry32(SEED);
const randInt = (n: number) => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[randInt(xs.length)]!;

const ledger: Entry[] = Array.from({ length: IDS }, () => ({ content: null, version: 0, seqNo: -1 }));
/** Ids written by requests that got no answer: the states their items lead to, in order, after the ledger's. */
const pending = new Map<number, (Content | null)[]>();
const figures = {
  ackedOps: 0,
  unackedAtKill: 0,
  unackedOther: 0,
  bulkRequests: 0,
  killsDuringBulk: 0,
  killsDuringRefresh: 0,
  killsDuringForceMerge: 0,
  killsDuringNothing: 0,
  forceMerges: 0,
  refreshes: 0,
  mismatches: 0,
  unexpectedAnswers: 0,
  staleReadsBeforeWrite: 0,
  staleVersionsBeforeWrite: 0,
  roundsWithStaleReads: 0,
  knnSearches: 0,
  maxSegments: 0,
};
const firstAnswerMs: number[] = [];
const writerOpenMs: number[] = [];
const unackedIds: number[] = [];
let failedRound = -1;
let staleExamplesShown = false;
/** The last writes to each id (acknowledged or not) and what each check found, for a mismatch report. */
const history: string[][] = Array.from({ length: IDS }, () => []);
const HISTORY = 16;
const note = (id: number, line: string) => {
  const h = history[id]!;
  h.push(line);
  if (h.length > HISTORY) h.shift();
};
/** What was in flight at the last kill, for a mismatch report. */
let lastKill = '';
let currentRound = 0;

const dir = join(packageRoot(), '.bench', 'crash-ledger');
/** The directory as the last kill left it (before the restart recovers it): what a failed check is to be reproduced from. */
const atKill = `${dir}-at-kill`;
rmSync(dir, { recursive: true, force: true });
rmSync(atKill, { recursive: true, force: true });
const creator = await openIndexWriter(dir, { create: { dims: DIMS, similarity: VectorSimilarityFunction.COSINE, mapping: Mapping.parse(MAPPING) } });
await creator.close();
await Executor.shutdown();

process.stderr.write(
  `bench:crash: ${KILLS} kills, seed ${SEED}, ${CLIENTS} clients, ${IDS} ids x ${DIMS} dims in ${dir}; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}\n`,
);
const t0 = performance.now();
let segmentsAtEnd = 0;
let kills = 0;
for (let round = 0; round <= KILLS; round++) {
  const last = round === KILLS;
  currentRound = round;
  const spawned = performance.now();
  const server = await ColdServer.start({
    argv: [join(packageRoot(), 'bin', 'prescore.js'), 'serve', '--index', dir, '--port', '0', '--name', INDEX],
    coldFiles: [],
    limit: { kind: 'fixed', bytes: 0 },
    cgroup: { ok: false, reason: 'warm' },
    name: 'crash',
  });
  try {
    const url = server.url;
    const root = await fetch(`${url}/`);
    await root.arrayBuffer();
    if (root.status !== 200) throw new Error(`GET / answered ${root.status} after the restart`);
    firstAnswerMs.push(performance.now() - spawned);
    const segments = await check(url, round);
    figures.maxSegments = Math.max(figures.maxSegments, segments);
    if (failedRound >= 0 || last) {
      segmentsAtEnd = segments;
      await server.stop();
      break;
    }
    await writeUntilKilled(url, server);
    kills++;
    if (kills % PROGRESS_EVERY === 0) {
      const r = summarize(firstAnswerMs);
      process.stderr.write(
        `  ${kills} / ${KILLS} kills, ${figures.ackedOps} ops acknowledged, ${figures.unackedAtKill} in flight at kills, ${figures.mismatches} mismatches, ` +
          `${figures.roundsWithStaleReads} rounds with stale reads before the first write, recovery p50 ${r.p50.toFixed(0)} ms, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
      );
    }
  } catch (e) {
    await server.stop();
    throw e;
  }
}
const wallSeconds = (performance.now() - t0) / 1000;

const recovery = summarize(firstAnswerMs);
const replay = summarize(writerOpenMs);
const out = {
  bench: 'crash',
  seed: SEED,
  clients: CLIENTS,
  ids: IDS,
  dims: DIMS,
  kills,
  ...figures,
  unackedIdsPerKill: unackedIds.length ? unackedIds.reduce((a, b) => a + b, 0) / unackedIds.length : 0,
  segmentsAtEnd,
  recoveryP50Ms: recovery.p50,
  recoveryP99Ms: recovery.p99,
  writerOpenP50Ms: replay.p50,
  writerOpenP99Ms: replay.p99,
  wallSeconds,
  loadAverage: loadavg(),
};
console.log(JSON.stringify(out));
console.log(
  '\n| kills | acked ops | unacked in flight | kills during _bulk / refresh / forcemerge / none | segments at end | mismatches | stale reads before the first write (ids) | recovery p50 / p99 ms | first write p50 / p99 ms | wall |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
console.log(
  `| ${kills} | ${figures.ackedOps} | ${figures.unackedAtKill} | ${figures.killsDuringBulk} / ${figures.killsDuringRefresh} / ${figures.killsDuringForceMerge} / ${figures.killsDuringNothing} | ${segmentsAtEnd} | ${figures.mismatches} | ${figures.staleReadsBeforeWrite} (${figures.roundsWithStaleReads} rounds) | ${recovery.p50.toFixed(0)} / ${recovery.p99.toFixed(0)} | ${replay.p50.toFixed(0)} / ${replay.p99.toFixed(0)} | ${(wallSeconds / 60).toFixed(1)} min |`,
);
console.log('\nchecks:');
const check_ = (ok: boolean, what: string) => console.log(`  ${ok ? 'ok  ' : 'MISS'} ${what}`);
check_(kills >= KILLS, `${kills} kills (asked ${KILLS})`);
check_(figures.mismatches === 0, `every acknowledged write there exactly after each restart (${figures.mismatches} mismatches)`);
check_(figures.unexpectedAnswers === 0, `every answer as the ledger predicts (${figures.unexpectedAnswers} unexpected)`);
check_(
  figures.staleReadsBeforeWrite === 0 && figures.staleVersionsBeforeWrite === 0,
  `reads right after a restart, before any write, see the acknowledged writes (${figures.staleReadsBeforeWrite} ids stale, ${figures.staleVersionsBeforeWrite} wrong _version, in ${figures.roundsWithStaleReads} rounds)`,
);
console.log(
  `load average at the end: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
const failed = figures.mismatches > 0 || figures.unexpectedAnswers > 0 || figures.staleReadsBeforeWrite > 0 || figures.staleVersionsBeforeWrite > 0;
if (failed) {
  console.log(
    `index directory kept for inspection: ${dir}, and as the last kill left it: ${atKill} (seed ${SEED}${failedRound >= 0 ? `, the check after kill ${failedRound} failed` : ''})`,
  );
  process.exitCode = 1;
} else {
  rmSync(dir, { recursive: true, force: true });
  rmSync(atKill, { recursive: true, force: true });
}

/**
 * Checks the restarted server against the ledger, resolves the ids writes in flight at the kill
 * touched, and returns the number of segments. Mismatches are printed and counted.
 */
async function check(url: string, round: number): Promise<number> {
  const ids = Array.from({ length: IDS }, (_, i) => String(i));
  const candidatesOf = (id: number) => [ledger[id]!.content, ...(pending.get(id) ?? [])];

  // 1. What a restarted server reads before any write opened its writer.
  const before = await mget(url, ids);
  let stale = 0;
  let staleVersions = 0;
  for (let id = 0; id < IDS; id++) {
    const got = before[id]!;
    if (!candidatesOf(id).some((c) => sameContent(c, got, false))) {
      stale++;
      if (!staleExamplesShown && stale <= 3)
        process.stderr.write(
          `bench:crash: after kill ${round}, before the first write: id ${id} expected ${describe(candidatesOf(id))}, got ${JSON.stringify(got)} (the served commit, not the translog)\n`,
        );
    } else if (got.found && !pending.has(id) && got.version !== ledger[id]!.version) staleVersions++;
  }
  if (stale > 0) staleExamplesShown = true;
  figures.staleReadsBeforeWrite += stale;
  figures.staleVersionsBeforeWrite += staleVersions;
  if (stale > 0 || staleVersions > 0) figures.roundsWithStaleReads++;

  // 2. A write that changes no document (a delete of an id never written: not_found): it opens the
  // writer where the server has not (an index never written before), which replays the translog.
  const w0 = performance.now();
  const opened = await request(url, `/${INDEX}/_bulk`, 'POST', '{"delete":{"_id":"never-written"}}\n', 'application/x-ndjson');
  writerOpenMs.push(performance.now() - w0);
  if (opened.status !== 200) throw new Error(`the write that opens the writer answered ${opened.status}: ${JSON.stringify(opened.body).slice(0, 300)}`);

  // 3. Realtime gets (`_source`, `_version`, `_seq_no`), then every live doc's vector from a search of the refreshed index.
  const realtime = await mget(url, ids);
  const refreshed = await request(url, `/${INDEX}/_refresh`, 'POST', '{}');
  if (refreshed.status !== 200) throw new Error(`_refresh answered ${refreshed.status}`);
  const all = await request(url, `/${INDEX}/_search`, 'POST', JSON.stringify({ query: { match_all: {} }, size: 2 * IDS, _source: { exclude_vectors: false } }));
  if (all.status !== 200) throw new Error(`match_all search answered ${all.status}: ${JSON.stringify(all.body).slice(0, 300)}`);
  const searched = new Map<string, Source>();
  for (const h of (all.body as { hits: { hits: { _id: string; _source: Source }[] } }).hits.hits) {
    if (searched.has(h._id)) mismatch(round, Number(h._id), 'the id once', `two hits for id ${h._id}`);
    searched.set(h._id, h._source);
  }
  for (let id = 0; id < IDS; id++) {
    const rt = realtime[id]!;
    const hit = searched.get(String(id));
    let got: Actual = rt;
    if (rt.found !== (hit !== undefined)) {
      mismatch(round, id, `realtime get and search to agree`, `realtime found=${rt.found}, search ${hit ? 'has it' : 'has not'}`);
      continue;
    }
    if (hit) {
      const { vector, ...rest } = hit;
      if (JSON.stringify(rest) !== JSON.stringify(rt.source)) mismatch(round, id, `search _source ${JSON.stringify(rt.source)} (the realtime get's)`, JSON.stringify(rest));
      got = { ...rt, vector: Float32Array.from(vector as number[]) };
    }
    const entry = ledger[id]!;
    const touched = pending.has(id);
    const candidates = candidatesOf(id);
    const matches = candidates.flatMap((c, k) => (sameContent(c, got, true) ? [k] : []));
    if (matches.length === 0) {
      mismatch(round, id, describe(candidates), describeActual(got));
      continue;
    }
    // `_version` and `_seq_no`: the acknowledged ones when no write in flight touched the id; else
    // at least those (the version restarts at 1 when the doc was deleted on the way: no tombstones).
    const versionOk = (k: number) => {
      if (!got.found || entry.content === null) return true;
      if (!touched) return got.version === entry.version && got.seqNo === entry.seqNo;
      const deletedOnTheWay = candidates.slice(1, k + 1).some((c) => c === null);
      return got.seqNo! >= entry.seqNo && (deletedOnTheWay || got.version! >= entry.version);
    };
    const match = matches.find(versionOk);
    if (match === undefined) {
      mismatch(
        round,
        id,
        touched ? `_version >= ${entry.version} and _seq_no >= ${entry.seqNo}` : `_version ${entry.version} _seq_no ${entry.seqNo}`,
        `_version ${got.version} _seq_no ${got.seqNo}`,
      );
      continue;
    }
    ledger[id] = got.found ? { content: candidates[match]!, version: got.version!, seqNo: got.seqNo! } : { ...entry, content: null };
    if (touched || round % 10 === 0)
      note(id, `check after kill ${round}: ${got.found ? `_version ${got.version} _seq_no ${got.seqNo}` : 'absent'}${touched ? `, state ${match} of ${candidates.length}` : ''}`);
  }
  pending.clear();

  // 4. A kNN search: the nearest doc to a live doc's own vector is that doc.
  const live = ledger.flatMap((e, id) => (e.content ? [id] : []));
  const target = live.length ? pick(live) : -1;
  const query = target >= 0 ? ledger[target]!.content!.vector : randomVector();
  const knn = await request(
    url,
    `/${INDEX}/_search`,
    'POST',
    JSON.stringify({ knn: { field: 'vector', query_vector: vectorValues(query), k: 10, num_candidates: 50 }, _source: false }),
  );
  figures.knnSearches++;
  const hits = knn.status === 200 ? (knn.body as { hits: { hits: { _id: string; _score: number }[] } }).hits.hits : null;
  if (hits === null || hits.length !== Math.min(10, live.length) || (target >= 0 && hits[0]!._id !== String(target) && Math.abs(hits[0]!._score - 1) > 1e-6))
    mismatch(round, target, `a kNN search answering ${Math.min(10, live.length)} hits, id ${target} first`, `${knn.status} ${JSON.stringify(knn.body).slice(0, 300)}`);

  const indexes = await request(url, '/v1/indexes', 'GET');
  return (indexes.body as { indexes: { segments: unknown[] }[] }).indexes[0]!.segments.length;
}

/** Writes from CLIENTS clients and a maintenance loop until the server is SIGKILLed, 50-800 ms in. */
async function writeUntilKilled(url: string, server: ColdServer): Promise<void> {
  const inFlight = new Set<Flight>();
  /** Ids a request in flight writes (no other request may touch them) or that a request left uncertain. */
  const locked = new Set<number>();
  for (const id of pending.keys()) locked.add(id);
  let killed = false;
  const unacked = (f: Flight) => {
    for (const it of f.items) {
      note(it.id, `round ${currentRound}: ${it.action} -> ${describe([it.after])} (unacknowledged${killed ? ', in flight at the kill' : ''})`);
      const list = pending.get(it.id) ?? [];
      list.push(it.after);
      pending.set(it.id, list);
      locked.add(it.id);
    }
    if (killed) figures.unackedAtKill += f.items.length;
    else figures.unackedOther += f.items.length;
  };
  const send = async (f: Flight, path: string, body?: string) => {
    inFlight.add(f);
    try {
      for (;;) {
        let answer: { status: number; body: unknown };
        try {
          answer = await request(url, path, 'POST', body ?? '{}', body === undefined ? 'application/json' : 'application/x-ndjson');
        } catch (e) {
          if (!killed) {
            figures.unexpectedAnswers++;
            process.stderr.write(`bench:crash: ${path} failed before the kill: ${(e as Error).message}\n`);
          }
          unacked(f);
          return;
        }
        if (answer.status === 429) {
          // Rejected before any item ran (indexing pressure): send it again, unless the server is gone by then.
          await sleep(50);
          if (!killed) continue;
          unacked(f);
          return;
        }
        if (answer.status !== 200) {
          figures.unexpectedAnswers++;
          process.stderr.write(`bench:crash: ${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}\n`);
          unacked(f);
          return;
        }
        if (f.kind === 'bulk') acknowledge(f, answer.body as { items: Record<string, Record<string, unknown>>[] });
        for (const it of f.items) locked.delete(it.id);
        return;
      }
    } finally {
      inFlight.delete(f);
    }
  };
  const client = async () => {
    while (!killed) {
      const items = nextItems(locked);
      if (items.length === 0) {
        await sleep(2);
        continue;
      }
      const refresh = random() < 0.1;
      figures.bulkRequests++;
      await send({ kind: 'bulk', refresh, items }, `/${INDEX}/_bulk${refresh ? '?refresh=true' : ''}`, items.map((it) => it.lines).join(''));
    }
  };
  const maintenance = async () => {
    while (!killed) {
      await sleep(20 + randInt(150));
      if (killed) return;
      if (random() < 0.65) {
        figures.forceMerges++;
        await send({ kind: 'forcemerge', refresh: false, items: [] }, `/${INDEX}/_forcemerge?max_num_segments=${random() < 0.7 ? 1 : 2}`);
      } else {
        figures.refreshes++;
        await send({ kind: 'refresh', refresh: true, items: [] }, `/${INDEX}/_refresh`);
      }
    }
  };
  const delay = KILL_MIN_MS + random() * (KILL_MAX_MS - KILL_MIN_MS);
  const killer = sleep(delay).then(() => {
    killed = true;
    const flights = [...inFlight];
    if (flights.some((f) => f.kind === 'bulk')) figures.killsDuringBulk++;
    if (flights.some((f) => f.refresh)) figures.killsDuringRefresh++;
    if (flights.some((f) => f.kind === 'forcemerge')) figures.killsDuringForceMerge++;
    if (flights.length === 0) figures.killsDuringNothing++;
    lastKill = `kill ${currentRound + 1}, ${delay.toFixed(0)} ms into the writes, in flight: ${flights.map((f) => `${f.kind}${f.refresh ? '?refresh' : ''}${f.items.length ? ` (${f.items.length} items)` : ''}`).join(', ') || 'nothing'}`;
    process.kill(server.pid, 'SIGKILL');
  });
  await Promise.all([killer, maintenance(), ...Array.from({ length: CLIENTS }, client)]);
  const exit = await server.stop();
  if (exit.signal !== 'SIGKILL') throw new Error(`the server exited with ${exit.signal ?? `code ${exit.code}`} before the kill`);
  unackedIds.push(pending.size);
  rmSync(atKill, { recursive: true, force: true });
  cpSync(dir, atKill, { recursive: true });
}

/** A bulk request's items over ids no request in flight touches: index, partial update and delete, with repeats of an id. */
function nextItems(locked: Set<number>): Item[] {
  const count = 1 + randInt(MAX_ITEMS);
  const mine: number[] = [];
  const state = new Map<number, Content | null>();
  const items: Item[] = [];
  for (let i = 0; i < count; i++) {
    let id: number;
    if (mine.length > 0 && random() < 0.25) id = pick(mine);
    else {
      id = randInt(IDS);
      for (let tries = 0; locked.has(id) && tries < 20; tries++) id = randInt(IDS);
      if (locked.has(id)) continue;
      locked.add(id);
      mine.push(id);
      state.set(id, ledger[id]!.content);
    }
    const before = state.get(id)!;
    const item = makeItem(id, before);
    state.set(id, item.after);
    items.push(item);
  }
  return items;
}

function makeItem(id: number, before: Content | null): Item {
  const r = random();
  const action = (lines: string) => `{"${r < 0.45 ? 'index' : r < 0.8 ? 'update' : 'delete'}":{"_id":"${id}"}}\n${lines}`;
  if (r < 0.45) {
    const source: Source = { tag: pick(TAGS), n: randInt(1_000_000) };
    if (random() < 0.7) source.meta = { color: pick(COLORS), w: randInt(100) };
    const vector = randomVector();
    const json = JSON.stringify(source);
    const vectorMember = `"vector":${vectorJson(vector)}`;
    // The vector first or last: the server keeps `_source` without it, the rest byte for byte.
    const line = random() < 0.5 ? `{${vectorMember},${json.slice(1)}` : `${json.slice(0, -1)},${vectorMember}}`;
    return {
      id,
      lines: action(`${line}\n`),
      action: 'index',
      status: before ? 200 : 201,
      result: before ? 'updated' : 'created',
      errorType: null,
      before,
      after: { source, vector },
    };
  }
  if (r < 0.8) {
    const patch: Source = {};
    let vector: Float32Array | null = null;
    const kind = randInt(7);
    if (kind === 0) patch.n = randInt(1_000_000);
    else if (kind === 1) patch.tag = pick(TAGS);
    else if (kind === 2) patch.meta = { w: randInt(100) };
    else if (kind === 3) patch.meta = { color: pick(COLORS) };
    else if (kind === 4) vector = randomVector();
    else if (kind === 5)
      patch.n = before && typeof before.source.n === 'number' ? before.source.n : 7; // often a noop
    else Object.assign(patch, { tag: pick(TAGS), n: randInt(1_000_000) });
    const docJson = vector === null ? JSON.stringify(patch) : `${JSON.stringify(patch).slice(0, -1)}${Object.keys(patch).length ? ',' : ''}"vector":${vectorJson(vector)}}`;
    const lines = action(`{"doc":${docJson}}\n`);
    if (before === null) return { id, lines, action: 'update', status: 404, result: null, errorType: 'document_missing_exception', before, after: null };
    const merged = mergeInto(structuredClone(before.source), structuredClone(patch));
    const noop = vector === null && JSON.stringify(merged) === JSON.stringify(before.source);
    return {
      id,
      lines,
      action: 'update',
      status: 200,
      result: noop ? 'noop' : 'updated',
      errorType: null,
      before,
      after: noop ? before : { source: merged, vector: vector ?? before.vector },
    };
  }
  return { id, lines: action(''), action: 'delete', status: before ? 200 : 404, result: before ? 'deleted' : 'not_found', errorType: null, before, after: null };
}

/** Records a bulk answer's items in the ledger; an item the ledger did not predict is counted and printed. */
function acknowledge(f: Flight, body: { items: Record<string, Record<string, unknown>>[] }): void {
  if (!Array.isArray(body.items) || body.items.length !== f.items.length) {
    figures.unexpectedAnswers++;
    process.stderr.write(`bench:crash: a _bulk of ${f.items.length} items answered ${JSON.stringify(body).slice(0, 300)}\n`);
    return;
  }
  f.items.forEach((it, i) => {
    const got = body.items[i]![it.action];
    const status = got?.status;
    const result = got?.result ?? null;
    const errorType = (got?.error as { type?: string } | undefined)?.type ?? null;
    const entry = ledger[it.id]!;
    const version = got?._version as number | undefined;
    const seqNo = got?._seq_no as number | undefined;
    let ok = got !== undefined && status === it.status && result === it.result && errorType === it.errorType && String(got._id) === String(it.id);
    if (ok && (status === 200 || status === 201)) {
      // Versions as Elasticsearch counts them: +1 per write to a live doc, unchanged by a noop; seq_no grows.
      if (typeof version !== 'number' || typeof seqNo !== 'number') ok = false;
      else if (result === 'noop') ok = version === entry.version && seqNo === entry.seqNo;
      else ok = seqNo > entry.seqNo && (entry.content === null || version === entry.version + 1);
    }
    if (!ok) {
      figures.unexpectedAnswers++;
      process.stderr.write(
        `bench:crash: id ${it.id}: ${it.action} expected status ${it.status} ${it.result ?? it.errorType} (ledger _version ${entry.version} _seq_no ${entry.seqNo}), got ${JSON.stringify(got)}\n`,
      );
    }
    note(it.id, `round ${currentRound}: ${it.action} -> ${status} ${result ?? errorType}${version === undefined ? '' : ` _version ${version} _seq_no ${seqNo}`}`);
    if (status === 200 || status === 201) {
      figures.ackedOps++;
      ledger[it.id] = { content: it.after, version: version ?? entry.version, seqNo: seqNo ?? entry.seqNo };
    }
  });
}

function mismatch(round: number, id: number, expected: string, got: string): void {
  figures.mismatches++;
  if (failedRound < 0) {
    failedRound = round;
    console.log(`${lastKill}; the directory as it left it: ${atKill}`);
  }
  console.log(`MISMATCH after kill ${round} (seed ${SEED}): id ${id}: expected ${expected}; got ${got}`);
  if (id >= 0) console.log(`  id ${id}'s last writes and checks:\n    ${history[id]!.join('\n    ')}`);
}

/** The ledger's candidates for an id, for a mismatch report. */
function describe(candidates: readonly (Content | null)[]): string {
  return candidates.map((c) => (c === null ? 'absent' : `${JSON.stringify(c.source)} vector ${vectorJson(c.vector)}`)).join(' or ');
}

function describeActual(a: Actual): string {
  return a.found ? `${JSON.stringify(a.source)} vector ${a.vector ? vectorJson(a.vector) : '?'} _version ${a.version} _seq_no ${a.seqNo}` : 'absent';
}

/** The same document: found or not as the candidate, `_source` in the same key order, and (when asked) every float32 of the vector. */
function sameContent(c: Content | null, a: Actual, withVector: boolean): boolean {
  if (c === null || !a.found) return c === null && !a.found;
  if (JSON.stringify(c.source) !== JSON.stringify(a.source)) return false;
  if (!withVector) return true;
  if (!a.vector || a.vector.length !== c.vector.length) return false;
  for (let j = 0; j < c.vector.length; j++) if (a.vector[j] !== c.vector[j]) return false;
  return true;
}

/** Realtime `_mget` of `ids`, in order. */
async function mget(url: string, ids: readonly string[]): Promise<Actual[]> {
  const answer = await request(url, `/${INDEX}/_mget`, 'POST', JSON.stringify({ ids }));
  if (answer.status !== 200) throw new Error(`_mget answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  return (answer.body as { docs: { found: boolean; _source?: Source; _version?: number; _seq_no?: number }[] }).docs.map((d) =>
    d.found ? { found: true, source: d._source ?? {}, version: d._version!, seqNo: d._seq_no! } : { found: false },
  );
}

async function request(url: string, path: string, method: string, body?: string, contentType = 'application/json'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`, { method, ...(body !== undefined ? { body, headers: { 'content-type': contentType } } : {}) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}

/** Elasticsearch's source merge (as `_update` does it): objects merge key by key, anything else replaces. */
function mergeInto(target: Source, patch: Source): Source {
  for (const [k, v] of Object.entries(patch)) {
    const t = target[k];
    if (isObject(t) && isObject(v)) mergeInto(t, v);
    else target[k] = v;
  }
  return target;
}

function isObject(v: unknown): v is Source {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function randomVector(): Float32Array {
  const v = new Float32Array(DIMS);
  for (let j = 0; j < DIMS; j++) v[j] = random() * 2 - 1;
  v[0] = v[0]! + 0.01; // never all zeros (cosine)
  return v;
}

function vectorValues(v: Float32Array): number[] {
  return Array.from(v, shortestFloat32);
}

function vectorJson(v: Float32Array): string {
  return `[${vectorValues(v).join(',')}]`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
