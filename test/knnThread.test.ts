import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../src/executor/Executor.js';
import { openIndex } from '../src/api/openIndex.js';
import { KNN_THREADS, type VectorIndex } from '../src/api/types.js';
import { FirstPhasePlacement } from '../query/knn/KnnThread.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { IndexSearcher } from '../query/IndexSearcher.js';
import { KnnFloatVectorQuery } from '../query/KnnFloatVectorQuery.js';
import { executorIdle } from '../query/Query.js';
import { TakenBackTasks } from '../query/knn/TakenBackTasks.js';
import { knnSlice, type KnnSliceArgs } from '../query/knn/knnSlice.js';
import type { TaskExecutor } from '../query/executor/TaskExecutor.js';

let t: TestIndex;
let index: VectorIndex;
const DIMS = 32;

beforeAll(async () => {
  // Three segments, two with graphs: slices of one and two segments on 2 workers.
  t = await buildTestIndex({ n: 1500, dims: DIMS, segmentDocs: 500, flatThreshold: 400 });
  index = await openIndex(t.dir, { threads: 2 });
});

afterAll(async () => {
  await index?.close();
  t?.cleanup();
  await Executor.shutdown();
});

const query = (i: number) => t.queries.subarray(i * DIMS, (i + 1) * DIMS);

describe('first-phase placement (KnnThread)', () => {
  it('gives identical hits and scores on the calling thread, on the executor and adaptively', async () => {
    for (let qi = 0; qi < 6; qi++) {
      const results = [];
      for (const knnThread of KNN_THREADS) {
        const r = await index.search(query(qi), { k: 10, oversample: 4, knnThread });
        if (knnThread !== 'adaptive') expect(r.stats.searchedOn).toBe(knnThread);
        results.push(r);
      }
      for (const r of results) {
        expect(r.hits).toEqual(results[0]!.hits);
        expect(r.stats.visited).toBe(results[0]!.stats.visited);
      }
    }
  });

  it('adaptive gives concurrent searches the hits each gets alone, wherever they ran', async () => {
    const alone: Awaited<ReturnType<typeof index.search>>[] = [];
    for (let i = 0; i < 8; i++) alone.push(await index.search(query(i), { k: 10, knnThread: 'caller' }));
    const concurrent = await Promise.all(Array.from({ length: 8 }, (_, i) => index.search(query(i), { k: 10 })));
    concurrent.forEach((r, i) => {
      expect(r.hits).toEqual(alone[i]!.hits);
    });
  });
});

describe('caller+executor takes back the slices no worker has started', () => {
  /** An executor whose tasks start only when released: a worker that has not woken yet. Runs knn.slice in this thread then. */
  function stalledExecutor() {
    const held: (() => Promise<void>)[] = [];
    const answers: unknown[] = [];
    const executor: TaskExecutor = {
      threads: 2,
      get pending() {
        return held.length;
      },
      run: <A, R>(_task: unknown, args: A) =>
        new Promise<R>((resolve, reject) => {
          held.push(() =>
            knnSlice(args as KnnSliceArgs).then((r) => {
              answers.push(r);
              resolve(r as R);
            }, reject),
          );
        }),
    };
    return { executor, held, answers };
  }

  it('searches a posted slice on the calling thread when no worker has started it, with the same hits; the task later finds it taken', async () => {
    const reader = DirectoryReader.open(t.dir);
    const { executor, held, answers } = stalledExecutor();
    const stalled = new IndexSearcher(reader, { executor });
    const reference = new IndexSearcher(reader, { executor: Executor.get() });
    expect(stalled.slices.length).toBe(2);
    for (let qi = 0; qi < 3; qi++) {
      const knn = () => new KnnFloatVectorQuery('vector', query(qi), 10, { numCandidates: 40 });
      const taken = await stalled.search(knn(), 10, { knnThread: 'caller+executor' });
      const alone = await reference.search(knn(), 10, { knnThread: 'caller' });
      expect(taken.stats.searchedOn).toBe('caller+executor');
      expect(taken.stats.slicesTakenBack).toBe(stalled.slices.length - 1);
      expect(taken.topDocs.scoreDocs).toEqual(alone.topDocs.scoreDocs);
      expect(alone.stats.slicesTakenBack).toBe(0);
      // The task taken back is still queued, yet the executor counts as idle (it will answer at once).
      expect(executor.pending).toBe(qi + 1);
      expect(executorIdle(stalled)).toBe(true);
    }
    // The held tasks, once a worker gets to them, answer at once without searching.
    for (const start of held.splice(0)) await start();
    expect(answers).toEqual(Array(3).fill({ taken: true }));
    await new Promise((resolve) => setImmediate(resolve)); // the searches' handlers of those answers
    expect(stalled.takenBack.pending).toBe(0);
    expect(executorIdle(stalled)).toBe(true);
  });
});

describe('TakenBackTasks', () => {
  it('counts the tasks until they settle, and drained() waits for all of them, failed ones too', async () => {
    const tasks = new TakenBackTasks();
    let answer!: () => void;
    let fail!: (e: Error) => void;
    tasks.add(new Promise<void>((resolve) => (answer = resolve)));
    const failing = new Promise<void>((_, reject) => (fail = reject));
    failing.catch(() => {});
    tasks.add(failing);
    expect(tasks.pending).toBe(2);
    let drained = false;
    const done = tasks.drained().then(() => (drained = true));
    answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(tasks.pending).toBe(1);
    expect(drained).toBe(false);
    fail(new Error('pool terminated'));
    await done;
    expect(tasks.pending).toBe(0);
  });
});

describe('FirstPhasePlacement', () => {
  const run = (p: FirstPhasePlacement, ms: (onCaller: boolean) => number) => {
    const c = p.choose('adaptive', true);
    p.done(c, ms(c.where === 'caller'));
    return c.where === 'caller';
  };
  /** The placements of the next `n` adaptive choices: true on the caller alone. */
  const runs = (p: FirstPhasePlacement, n: number, ms: (onCaller: boolean) => number) => Array.from({ length: n }, () => run(p, ms));

  /** A placement past its first trial (five searches on each placement). */
  const measured = (ms: (onCaller: boolean) => number) => {
    const p = new FirstPhasePlacement();
    runs(p, 10, ms);
    return p;
  };

  /** The adaptive choices (1-based) that explored, among the next `n`. */
  const explores = (p: FirstPhasePlacement, n: number, ms: (onCaller: boolean) => number) => {
    const at: number[] = [];
    for (let i = 1; i <= n; i++) {
      const c = p.choose('adaptive', true);
      p.done(c, ms(c.where === 'caller'));
      if (c.sample === 'explored') at.push(i);
    }
    return at;
  };

  it('starts with a trial: five searches on each placement in ABBA order, then the faster one', () => {
    const p = new FirstPhasePlacement();
    const callerFast = (onCaller: boolean) => (onCaller ? 0.5 : 2.0);
    const first = Array.from({ length: 10 }, () => {
      const c = p.choose('adaptive', true);
      p.done(c, callerFast(c.where === 'caller'));
      return c;
    });
    expect(first.every((c) => c.sample === 'trial')).toBe(true);
    expect(first.map((c) => (c.where === 'caller' ? 'C' : 'E')).join('')).toBe('CEECCEECCE');
    expect(p.choose('adaptive', true)).toEqual({ where: 'caller', sample: 'preferred' });
  });

  it('re-measures the other placement ever more rarely while it stays clearly slower', () => {
    const callerFast = (onCaller: boolean) => (onCaller ? 0.5 : 2.0);
    const p = measured(callerFast);
    // Explores after 32 choices, then 64, 128, 256, and every 512 from there on.
    expect(explores(p, 2000, callerFast)).toEqual([32, 96, 224, 480, 992, 1504]);
  });

  it('explores every 32nd choice while the other placement is competitive (its time within 1.1x)', () => {
    const close = (onCaller: boolean) => (onCaller ? 0.5 : 0.54);
    const p = measured(close);
    expect(explores(p, 200, close)).toEqual([32, 64, 96, 128, 160, 192]);
  });

  it('keeps whichever placement the trial found faster, even by little, and only explores the other', () => {
    const callerFaster = (onCaller: boolean) => (onCaller ? 0.5 : 0.6);
    const p = measured(callerFaster);
    expect(runs(p, 100, callerFaster).filter((onCaller) => !onCaller).length).toBe(2); // the explores, at 32 and 96
    const executorFaster = (onCaller: boolean) => (onCaller ? 0.5 : 0.42);
    const q = measured(executorFaster);
    expect(runs(q, 100, executorFaster).filter((onCaller) => onCaller).length).toBe(2); // the explores
  });

  it('a placement that became faster is seen at the next explore and takes over after one trial', () => {
    const callerFast = (onCaller: boolean) => (onCaller ? 0.5 : 2.0);
    const p = measured(callerFast);
    explores(p, 1000, callerFast); // backed off to 512
    const executorFast = (onCaller: boolean) => (onCaller ? 0.5 : 0.1);
    const later = runs(p, 700, executorFast);
    const takeover = later.findIndex((_c, i) => later.slice(i, i + 31).every((x) => !x));
    expect(takeover).toBeGreaterThanOrEqual(0);
    expect(takeover).toBeLessThanOrEqual(512 + 10); // the explore, then the trial's ten
  });

  it('a lucky explore calls a trial of five searches on each placement, after which the faster one is kept', () => {
    const callerFaster = (onCaller: boolean) => (onCaller ? 0.5 : 0.7);
    const p = measured(callerFaster);
    runs(p, 31, callerFaster); // the 32nd choice is the next explore
    const explore = p.choose('adaptive', true);
    expect(explore).toEqual({ where: 'caller+executor', sample: 'explored' });
    p.done(explore, 0.01); // lucky: the executor's average 0.7 -> 0.355 , more than 1.1x below the caller's
    const trial = Array.from({ length: 10 }, () => {
      const c = p.choose('adaptive', true);
      p.done(c, callerFaster(c.where === 'caller'));
      return c;
    });
    expect(trial.every((c) => c.sample === 'trial')).toBe(true);
    expect(trial.filter((c) => c.where === 'caller').length).toBe(5);
    expect(runs(p, 31, callerFaster)).toEqual(Array(31).fill(true));
  });

  it('a slow stretch measured on the preferred placement alone does not switch it: the trial sees both slowed', () => {
    const callerFaster = (onCaller: boolean) => (onCaller ? 0.5 : 0.7);
    const p = measured(callerFaster);
    runs(p, 100, callerFaster);
    // The machine runs at half speed for 300 searches: the caller's average passes the executor's
    // time measured before the stretch (0.7) by more than 1.1x, which only calls trials, and
    // every trial finds the caller faster.
    const slow = (onCaller: boolean) => 2 * callerFaster(onCaller);
    const stretch = Array.from({ length: 300 }, () => {
      const c = p.choose('adaptive', true);
      p.done(c, slow(c.where === 'caller'));
      return c;
    });
    const onExecutor = stretch.filter((c) => c.where !== 'caller');
    expect(onExecutor.filter((c) => c.sample === 'trial').length).toBeGreaterThan(0);
    // Never as the preferred placement; at most a trial's five per TRIAL_GAP (32) choices plus its ten.
    expect(onExecutor.filter((c) => c.sample === 'preferred')).toEqual([]);
    expect(onExecutor.length).toBeLessThanOrEqual(Math.ceil(300 / 42) * 5 + 2);
    expect(runs(p, 31, callerFaster)).toEqual(Array(31).fill(true));
  });

  it('lets one search at a time onto the calling thread, busy or not; busy ones are not measured, and a bare reader stays off it', () => {
    const p = new FirstPhasePlacement();
    const first = p.choose('adaptive', true);
    expect(first).toEqual({ where: 'caller', sample: 'trial' });
    // A second search starting before the first one finished: the caller is taken.
    expect(p.choose('adaptive', true)).toEqual({ where: 'worker', sample: 'none' });
    expect(p.choose('adaptive', false)).toEqual({ where: 'worker', sample: 'none' });
    p.done(first, 0.3);
    // The executor busy or other requests waiting: the calling thread still takes one (in turns), unmeasured.
    const busy = p.choose('adaptive', false);
    expect(busy).toEqual({ where: 'caller', sample: 'none' });
    expect(p.choose('adaptive', false)).toEqual({ where: 'worker', sample: 'none' });
    p.done(busy, 0.3);
    expect(p.choose('adaptive', false, false)).toEqual({ where: 'worker', sample: 'none' });
    expect(p.choose('adaptive', true, false)).toEqual({ where: 'worker', sample: 'none' });
    expect(p.choose('executor', true)).toEqual({ where: 'executor', sample: 'none' });
    expect(p.choose('caller', false)).toEqual({ where: 'caller', sample: 'none' });
    expect(p.choose('caller+executor', false)).toEqual({ where: 'caller+executor', sample: 'none' });
  });

  it('measures the executor on an idle executor with the calling thread searching a slice, and picks that when it is clearly cheaper', () => {
    const p = new FirstPhasePlacement();
    const first = p.choose('adaptive', true);
    p.done(first, 2.0);
    const second = p.choose('adaptive', true);
    expect(second).toEqual({ where: 'caller+executor', sample: 'trial' });
    p.done(second, 1.4); // 1.4 < 2.0
    runs(p, 8, (onCaller) => (onCaller ? 2.0 : 1.4));
    expect(p.choose('adaptive', true).where).toBe('caller+executor');
  });
});
