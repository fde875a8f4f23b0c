/**
 * A function that runs on an executor worker, known by its name: only the name and the
 * (structured-cloneable) arguments cross the thread boundary. The type parameters tie a call
 * site to the handler the composition root registers under that name (src/executor/handlers.ts),
 * so `executor.run(task, args)` is typed end to end without the executor knowing any task.
 *
 * @example
 *   export const KNN_SLICE = defineTask<KnnSliceArgs, KnnSliceResult>('knn.slice');
 *   const result = await executor.run(KNN_SLICE, args); // result: KnnSliceResult
 */
export interface Task<A, R> {
  readonly name: string;
  /** Never set: carries the argument and result types. */
  readonly signature?: (args: A) => R;
}

export function defineTask<A, R>(name: string): Task<A, R> {
  return { name };
}

export type TaskArgs<T> = T extends Task<infer A, unknown> ? A : never;
export type TaskResult<T> = T extends Task<unknown, infer R> ? R : never;
