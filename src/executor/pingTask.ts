import { threadId } from 'node:worker_threads';

/** A no-op task: measures the executor's round trip and tells which worker ran it. */
export async function ping(args: { readonly sleepMs?: number }): Promise<{ threadId: number }> {
  if (args.sleepMs) await new Promise((resolve) => setTimeout(resolve, args.sleepMs));
  return { threadId };
}
