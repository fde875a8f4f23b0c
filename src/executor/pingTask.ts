import { threadId } from 'node:worker_threads';

export interface PingArgs {
  readonly sleepMs?: number;
  /**
   * Run a full garbage collection in the worker first, when the process exposes one (node
   * --expose-gc; workers inherit the flag): memory measurements settle every thread's heap.
   */
  readonly gc?: boolean;
}

/** A no-op task: measures the executor's round trip and tells which worker ran it. */
export async function ping(args: PingArgs): Promise<{ threadId: number }> {
  if (args.gc) (globalThis as { gc?: () => void }).gc?.();
  if (args.sleepMs) await new Promise((resolve) => setTimeout(resolve, args.sleepMs));
  return { threadId };
}
