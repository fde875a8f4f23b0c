/**
 * The k highest similarities collected so far by every segment of one query, shared by all the
 * executor's workers (Lucene's BlockingFloatHeap behind MultiLeafKnnCollector): a min-heap of
 * float32 in a SharedArrayBuffer guarded by a spinlock. Segments offer their new scores every few
 * hundred visited nodes and read back the global k-th best, which lets a segment that cannot
 * contribute stop early.
 */
const LOCK = 0;
const SIZE = 1;
const HEAP = 2;

export class GlobalSimilarityQueue {
  private readonly ints: Int32Array;
  private readonly floats: Float32Array;

  /** `state` is the shared memory (see create()); wrap it once per thread. */
  constructor(readonly state: Int32Array) {
    this.ints = state;
    this.floats = new Float32Array(state.buffer, state.byteOffset, state.length);
  }

  /** Shared state for a queue of `capacity` similarities. */
  static create(capacity: number): Int32Array {
    return new Int32Array(new SharedArrayBuffer(4 * (HEAP + Math.max(1, capacity))));
  }

  get capacity(): number {
    return this.ints.length - HEAP;
  }

  /**
   * Offers values[0..n) and returns the queue's minimum when it is full (the global k-th best),
   * -Infinity before that.
   */
  offer(values: Float32Array, n: number): number {
    const ints = this.ints;
    while (Atomics.compareExchange(ints, LOCK, 0, 1) !== 0) {
      // Contention is between a handful of threads for a few microseconds: spin.
    }
    try {
      const cap = this.capacity;
      const heap = this.floats;
      let size = ints[SIZE];
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (size < cap) {
          // sift up
          let j = size++;
          while (j > 0) {
            const parent = (j - 1) >> 1;
            if (heap[HEAP + parent] <= v) break;
            heap[HEAP + j] = heap[HEAP + parent];
            j = parent;
          }
          heap[HEAP + j] = v;
        } else if (v > heap[HEAP]) {
          // replace the minimum, sift down
          let j = 0;
          for (;;) {
            let c = 2 * j + 1;
            if (c >= size) break;
            if (c + 1 < size && heap[HEAP + c + 1] < heap[HEAP + c]) c++;
            if (heap[HEAP + c] >= v) break;
            heap[HEAP + j] = heap[HEAP + c];
            j = c;
          }
          heap[HEAP + j] = v;
        }
      }
      ints[SIZE] = size;
      return size >= cap ? heap[HEAP] : -Infinity;
    } finally {
      Atomics.store(ints, LOCK, 0);
    }
  }
}

/** A small bounded min-heap of float scores keeping the `capacity` largest (Lucene's FloatHeap). */
export class FloatHeap {
  private readonly heap: Float32Array;
  private n = 0;

  constructor(readonly capacity: number) {
    this.heap = new Float32Array(Math.max(1, capacity));
  }

  get size(): number {
    return this.n;
  }

  clear(): void {
    this.n = 0;
  }

  /** The smallest kept value (the heap top); only meaningful when size > 0. */
  peek(): number {
    return this.heap[0];
  }

  /** Keeps v if there is room or it beats the minimum; true when the minimum changed. */
  offer(v: number): boolean {
    const h = this.heap;
    if (this.n < this.capacity) {
      let j = this.n++;
      while (j > 0) {
        const p = (j - 1) >> 1;
        if (h[p] <= v) break;
        h[j] = h[p];
        j = p;
      }
      h[j] = v;
      return j === 0;
    }
    if (!(v > h[0])) return false;
    this.siftDownFrom0(v);
    return true;
  }

  /** Removes values in ascending order into out[0..size) and empties the heap; returns the count. */
  drainAscending(out: Float32Array): number {
    const count = this.n;
    for (let i = 0; i < count; i++) {
      out[i] = this.heap[0];
      const last = this.heap[--this.n];
      if (this.n > 0) this.siftDownFrom0(last);
    }
    return count;
  }

  private siftDownFrom0(v: number): void {
    const h = this.heap;
    const n = this.n;
    let j = 0;
    for (;;) {
      let c = 2 * j + 1;
      if (c >= n) break;
      if (c + 1 < n && h[c + 1] < h[c]) c++;
      if (h[c] >= v) break;
      h[j] = h[c];
      j = c;
    }
    h[j] = v;
  }
}
