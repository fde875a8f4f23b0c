import { afterAll, describe, expect, it } from 'vitest';
import { Piscina } from 'piscina';
import { OrderedTaskQueue } from '../query/executor/OrderedTaskQueue.js';
import { WorkerPool } from '../query/executor/WorkerPool.js';
import { distPath } from '../src/executor/packageRoot.js';
import { PING } from '../src/executor/tasks.js';

type Queued = Parameters<OrderedTaskQueue['push']>[0];
/** A queued task as piscina hands it over: the submitter's options under its symbol. */
const task = (order: number, name: string) => ({ name, [Piscina.queueOptionsSymbol]: { order } }) as unknown as Queued;
const nameOf = (t: Queued | null) => (t as unknown as { name: string } | null)?.name ?? null;

function drain(q: OrderedTaskQueue): (string | null)[] {
  const out: (string | null)[] = [];
  while (q.size > 0) out.push(nameOf(q.shift()));
  return out;
}

describe('OrderedTaskQueue: the executor starts earlier searches first', () => {
  it('starts tasks lowest order first, ties in submission order', () => {
    const q = new OrderedTaskQueue();
    for (const [order, name] of [
      [30, 'c1'],
      [10, 'a1'],
      [20, 'b1'],
      [10, 'a2'],
      [30, 'c2'],
      [20, 'b2'],
      [10, 'a3'],
    ] as const)
      q.push(task(order, name));
    expect(q.size).toBe(7);
    expect(drain(q)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'c2']);
    expect(q.shift()).toBeNull();
  });

  it('a later phase of an earlier search overtakes the first phases of searches that came after it', () => {
    const q = new OrderedTaskQueue();
    q.push(task(2, 'search2.knn'));
    q.push(task(3, 'search3.knn'));
    q.push(task(1, 'search1.rescore')); // search 1 started first; its rescoring is posted last
    expect(drain(q)).toEqual(['search1.rescore', 'search2.knn', 'search3.knn']);
  });

  it('a task taken and handed back (no worker was free) keeps its place among its equals', () => {
    const q = new OrderedTaskQueue();
    q.push(task(1, 'early'));
    q.push(task(5, 'first'));
    q.push(task(5, 'second'));
    expect(nameOf(q.shift())).toBe('early');
    const first = q.shift()!;
    q.push(first); // piscina's default hands back to the tail
    expect(drain(q)).toEqual(['first', 'second']);
    q.push(task(5, 'third'));
    q.unshift(first);
    expect(drain(q)).toEqual(['first', 'third']);
  });

  it('removes an aborted task from anywhere in the queue and keeps the rest in order', () => {
    const q = new OrderedTaskQueue();
    const tasks = [5, 3, 8, 1, 9, 2, 7].map((o) => task(o, `t${o}`));
    for (const t of tasks) q.push(t);
    q.remove(tasks[1]!); // t3
    q.remove(tasks[4]!); // t9, the last
    q.remove(task(4, 'never queued')); // absent: no effect
    expect(drain(q)).toEqual(['t1', 't2', 't5', 't7', 't8']);
  });

  it('puts tasks without an order after every ordered one', () => {
    const q = new OrderedTaskQueue();
    q.push({ name: 'plain' } as unknown as Queued);
    q.push(task(1e12, 'ordered'));
    expect(drain(q)).toEqual(['ordered', 'plain']);
  });
});

describe('WorkerPool: queued tasks start in their order', () => {
  const pool = new WorkerPool({ filename: distPath('src', 'executor', 'worker.js'), threads: 1 });
  afterAll(() => pool.destroy());

  it('runs tasks submitted together on one thread by order, default order = submission time', async () => {
    const done: string[] = [];
    const run = (name: string, order?: number) => pool.run(PING, {}, order === undefined ? {} : { order }).then(() => done.push(name));
    // All are submitted before the worker reports anything, so at most the first runs before the
    // queue decides; it has the lowest order as well.
    await Promise.all([run('o0', 0), run('o5', 5), run('o3', 3), run('unordered'), run('o1', 1), run('o3b', 3)]);
    expect(done).toEqual(['o0', 'o1', 'o3', 'o3b', 'o5', 'unordered']);
  });
});
