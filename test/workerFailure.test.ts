import { afterAll, describe, expect, it } from 'vitest';
import { unwrapWorkerAnswer, workerFailureOf } from '../query/executor/WorkerFailure.js';
import type { TaskHop } from '../query/executor/TaskHop.js';
import { Executor } from '../src/executor/Executor.js';
import { MERGE_SEGMENTS } from '../src/executor/tasks.js';

afterAll(() => Executor.shutdown());

describe('an error thrown on an executor worker reaches the caller whole (WorkerFailure)', () => {
  it('keeps an fs error’s code, errno, syscall and path across a structured clone, with its name, message and stack', () => {
    const e = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write', path: '/x/_3.vec' });
    const failure = workerFailureOf(e);
    expect(failure).not.toBeNull();
    const thrown = (() => {
      try {
        unwrapWorkerAnswer(structuredClone(failure));
      } catch (x) {
        return x as NodeJS.ErrnoException;
      }
      return null;
    })();
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).toMatchObject({ name: 'Error', message: e.message, code: 'ENOSPC', errno: -28, syscall: 'write', path: '/x/_3.vec', stack: e.stack });
  });

  it('leaves an error without such properties to the clone (its class crosses), and passes any other answer through', () => {
    expect(workerFailureOf(new RangeError('dims must be positive'))).toBeNull();
    expect(workerFailureOf('not an error')).toBeNull();
    const answer = { threadId: 3, value: [1, 2] };
    expect(unwrapWorkerAnswer(answer)).toBe(answer);
    expect(unwrapWorkerAnswer(null)).toBeNull();
  });

  it('a task failing on a worker rejects with the fs error’s code, with and without task hops', async () => {
    const args = { dir: '/nonexistent/prescore-index', name: '_9', segments: [], mapping: '{}', fieldNumbers: [], seed: 1 };
    const expected = { code: 'ENOENT', syscall: 'lstat', path: '/nonexistent' }; // realpathSync's lstat of the first missing part
    await expect(Executor.background().run(MERGE_SEGMENTS, args)).rejects.toMatchObject(expected);
    const hops: TaskHop[] = [];
    await expect(Executor.background().run(MERGE_SEGMENTS, args, { hops })).rejects.toMatchObject(expected);
    expect(hops).toHaveLength(0); // a failed task records no hop
  });
});
