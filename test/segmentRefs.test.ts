import { describe, expect, it } from 'vitest';
import { defineTask } from '../query/executor/Task.js';
import type { TaskExecutor } from '../query/executor/TaskExecutor.js';
import { isUnknownSegments, resolveSegments, runOnSegments, type SegmentRefs, type UnknownSegments } from '../query/SegmentRefs.js';
import type { SegmentHandle } from '../segments/index/SegmentHandle.js';
import { newIndexId, releaseInThisThread } from '../segments/index/releaseBoard.js';

/** Only what the registry reads: the key and the index it belongs to. */
const handle = (indexId: number, name: string) => ({ key: `${indexId}.${name}`, indexId, name }) as unknown as SegmentHandle;

const NAMES = defineTask<{ readonly segments: SegmentRefs }, string[] | UnknownSegments>('test.names');

/** An executor whose "worker" is this thread: it resolves the refs as a worker would and records what each message carried. */
function recordingExecutor(): TaskExecutor & { readonly sent: ('keys' | 'handles')[] } {
  const sent: ('keys' | 'handles')[] = [];
  return {
    threads: 1,
    sent,
    async run(_task, args) {
      const refs = (args as { segments: SegmentRefs }).segments;
      sent.push(refs.handles ? 'handles' : 'keys');
      const segments = resolveSegments(refs);
      return (isUnknownSegments(segments) ? segments : segments.map((s) => s.name)) as never;
    },
  };
}

describe('segments named by key across the executor', () => {
  it('sends the handles once, to a worker that has not seen them; later tasks send keys only', async () => {
    const id = newIndexId();
    const handles = [handle(id, '_0'), handle(id, '_1')];
    const executor = recordingExecutor();
    expect(await runOnSegments(executor, NAMES, handles, {})).toEqual(['_0', '_1']);
    expect(executor.sent).toEqual(['keys', 'handles']);
    expect(await runOnSegments(executor, NAMES, handles, {})).toEqual(['_0', '_1']);
    expect(executor.sent).toEqual(['keys', 'handles', 'keys']);
  });

  it('a worker answers UnknownSegments for a key it lacks, and forgets the handles of a closed index', () => {
    const id = newIndexId();
    const h = handle(id, '_0');
    expect(isUnknownSegments(resolveSegments({ keys: [h.key], handles: null }))).toBe(true);
    expect(resolveSegments({ keys: [h.key], handles: [h] })).toEqual([h]);
    expect(resolveSegments({ keys: [h.key], handles: null })).toEqual([h]);
    releaseInThisThread(id);
    expect(isUnknownSegments(resolveSegments({ keys: [h.key], handles: null }))).toBe(true);
  });

  it('fails loudly when a worker does not take the handles it was sent', async () => {
    const stubborn: TaskExecutor = { threads: 1, run: async () => ({ unknownSegments: true }) as never };
    await expect(runOnSegments(stubborn, NAMES, [handle(newIndexId(), '_0')], {})).rejects.toThrow(/test\.names: the worker did not take the segment handles/);
  });
});
