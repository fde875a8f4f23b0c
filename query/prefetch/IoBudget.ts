/**
 * The process's I/O concurrency budget (`ioConcurrency`: requests kept in flight at most),
 * shared by every prefetching task in flight: rescoring rings and graph first phases alike. A
 * task planned while others run gets an equal share of the budget as its prefetch-distance cap,
 * never less than the initial distance. Counted on the thread that plans tasks (the main thread).
 */
let activeTasks = 0;

/** The distance cap each of `tasks` new tasks gets, given the tasks already in flight. */
export function budgetShare(ioConcurrency: number, initialDistance: number, tasks: number): number {
  return Math.max(initialDistance, Math.floor(ioConcurrency / Math.max(1, activeTasks + tasks)));
}

/** Runs `tasks` tasks (started by `run`) as holders of a share of the budget until they settle. */
export async function withBudget<T>(tasks: number, run: () => Promise<T>): Promise<T> {
  activeTasks += tasks;
  try {
    return await run();
  } finally {
    activeTasks -= tasks;
  }
}
