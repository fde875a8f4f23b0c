/**
 * One executor round trip of a task, timed on the process-wide monotonic clock (see clock.ts):
 * what the search profile reports for every hop.
 * - `queueMs` = submitted -> the worker starts the handler: the executor's queue, the structured
 *   clone of the arguments, the message post and the worker thread's wake-up;
 * - `runMs` = the handler itself;
 * - `returnMs` = handler done -> the result is back on the calling thread: the clone of the
 *   result, the message and the caller's event loop picking it up.
 */
export interface TaskHop {
  readonly task: string;
  readonly threadId: number;
  readonly submittedAt: number;
  readonly queueMs: number;
  readonly runMs: number;
  readonly returnMs: number;
}

/** What a worker entry sends back instead of the bare result when the caller asked for the hop. */
export interface TimedResult {
  readonly value: unknown;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly threadId: number;
}
