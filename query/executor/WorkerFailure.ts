/**
 * An error thrown on an executor worker, carried back as a value. Structured clone (how a worker
 * thread's answer crosses to the caller) keeps an Error's class, message and stack but drops its
 * own properties: a `fs` error's `code` (`ENOSPC`, `EDQUOT`, `EIO`) arrived as a bare Error, and
 * the server could only tell a full disk by searching the message. A worker answers such an error
 * as a WorkerFailure instead, and the caller throws it again with its properties.
 */
export interface WorkerFailure {
  readonly [WORKER_FAILURE]: {
    readonly name: string;
    readonly message: string;
    readonly stack: string | undefined;
    /** The error's own properties whose values are strings, numbers or booleans (code, errno, syscall, path). */
    readonly properties: Readonly<Record<string, string | number | boolean>>;
  };
}

/** The key a worker's answer carries a failure under (a string: symbols do not survive a clone). */
const WORKER_FAILURE = '__prescoreWorkerFailure';

/**
 * What a worker answers for `e`: a WorkerFailure when it is an Error with own properties that a
 * clone would drop, else null (throw it as it is: its class, message and stack cross intact).
 */
export function workerFailureOf(e: unknown): WorkerFailure | null {
  if (!(e instanceof Error)) return null;
  const properties: Record<string, string | number | boolean> = {};
  let any = false;
  for (const [key, value] of Object.entries(e)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    properties[key] = value;
    any = true;
  }
  return any ? { [WORKER_FAILURE]: { name: e.name, message: e.message, stack: e.stack, properties } } : null;
}

/** Throws the error a worker answered as a WorkerFailure; returns any other answer as it is. */
export function unwrapWorkerAnswer<R>(answer: R | WorkerFailure): R {
  if (typeof answer !== 'object' || answer === null || !(WORKER_FAILURE in answer)) return answer as R;
  const { name, message, stack, properties } = (answer as WorkerFailure)[WORKER_FAILURE];
  const e = Object.assign(new Error(message), properties);
  e.name = name;
  if (stack !== undefined) e.stack = stack;
  throw e;
}
