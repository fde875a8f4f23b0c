/**
 * Executor tasks whose slices the calling thread took back (KnnFloatVectorQuery): still queued
 * or about to answer SLICE_TAKEN when a worker gets to them. They do not make the executor busy
 * (executorIdle), and whoever closes the index or the executor waits for them (drained), since a
 * worker's answer arriving after the pool is destroyed is an error there.
 */
export class TakenBackTasks {
  private readonly outstanding = new Set<Promise<unknown>>();

  get pending(): number {
    return this.outstanding.size;
  }

  add(task: Promise<unknown>): void {
    const settled = () => {
      this.outstanding.delete(task);
    };
    this.outstanding.add(task);
    task.then(settled, settled);
  }

  /** Resolves once every task added so far has settled (they answer without searching). */
  async drained(): Promise<void> {
    await Promise.allSettled([...this.outstanding]);
  }
}
