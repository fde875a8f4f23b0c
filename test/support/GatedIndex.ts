/**
 * A VectorIndex in front of another (the real engine in HTTP tests) whose searches wait at a gate
 * before they reach it: a test holds searches open for as long as it needs (to fill the server's
 * in-flight slots and queue, say), then opens the gate and every held search runs on the real
 * index. The gate starts open. No timer decides anything, so the outcome does not depend on how fast the machine is.
 */
import type { SearchOptions, SearchResult, VectorIndex } from '../../src/api/types.js';

export class GatedIndex implements VectorIndex {
  /** Searches waiting at the closed gate. */
  waiting = 0;
  /** Searches that went through to the inner index. */
  passed = 0;
  private opened = true;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly inner: VectorIndex) {}

  get name(): string {
    return this.inner.name;
  }

  get dims(): number {
    return this.inner.dims;
  }

  /** Closes the gate: searches from now on wait for open(). */
  hold(): void {
    this.opened = false;
  }

  /** Opens the gate: every waiting search (and every later one) goes through. */
  open(): void {
    this.opened = true;
    for (const pass of [...this.waiters]) pass();
  }

  async search(vector: Float32Array | readonly number[], options: SearchOptions): Promise<SearchResult> {
    if (!this.opened) {
      this.waiting++;
      try {
        await new Promise<void>((resolve, reject) => {
          const pass = () => {
            this.waiters.delete(pass);
            options.signal?.removeEventListener('abort', onAbort);
            resolve();
          };
          const onAbort = () => {
            this.waiters.delete(pass);
            reject(options.signal!.reason);
          };
          this.waiters.add(pass);
          options.signal?.addEventListener('abort', onAbort, { once: true });
        });
      } finally {
        this.waiting--;
      }
    }
    this.passed++;
    return this.inner.search(vector, options);
  }

  describe(): ReturnType<VectorIndex['describe']> {
    return this.inner.describe();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
