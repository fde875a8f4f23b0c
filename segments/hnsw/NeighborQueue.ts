/**
 * Lucene's NeighborQueue as parallel typed arrays. Lucene packs (sortable score << 32 | ~node)
 * into one int64 and keeps a min-heap of those (a max-heap stores -1 - v). JS has no cheap int64,
 * so each entry is the same 64-bit key split in two: `hi` (int32, signed compare) and `lo`
 * (uint32, unsigned compare). Ordering is therefore bit-for-bit Lucene's:
 *   - scores compare like Float.compare (-0 < +0, NaN above everything);
 *   - on equal scores the smaller node wins: it is popped first from a max-heap and evicted last
 *     from a min-heap.
 * The heap never allocates after it has grown to its working size.
 */
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/** NumericUtils.floatToSortableInt. */
export function floatToSortableInt(score: number): number {
  f32[0] = score;
  const bits = i32[0];
  return bits ^ ((bits >> 31) & 0x7fffffff);
}

/** NumericUtils.sortableIntToFloat. */
export function sortableIntToFloat(v: number): number {
  i32[0] = v ^ ((v >> 31) & 0x7fffffff);
  return f32[0];
}

/** Math.nextUp for float32: the smallest float32 above v (NaN and +Infinity unchanged). */
export function nextUpFloat(v: number): number {
  if (Number.isNaN(v) || v === Infinity) return v;
  if (v === 0) return 1.401298464324817e-45;
  f32[0] = v;
  i32[0] += v > 0 ? 1 : -1;
  return f32[0];
}

export class NeighborQueue {
  private hi: Int32Array;
  private lo: Uint32Array;
  private n = 0;

  /**
   * @param maxSize bound used by insertWithOverflow (and the initial capacity); push grows past it
   * @param maxHeap true: top is the best (highest score, then smallest node); false: top is the worst
   */
  constructor(
    private _maxSize: number,
    readonly maxHeap: boolean,
  ) {
    const cap = Math.max(1, _maxSize);
    this.hi = new Int32Array(cap);
    this.lo = new Uint32Array(cap);
  }

  get maxSize(): number {
    return this._maxSize;
  }

  /** Clears the queue and sets the bound used by insertWithOverflow (reuse across searches). */
  reset(maxSize: number): void {
    this.n = 0;
    this._maxSize = maxSize;
  }

  size(): number {
    return this.n;
  }

  clear(): void {
    this.n = 0;
  }

  /** Adds unconditionally, growing storage as needed. */
  add(node: number, score: number): void {
    if (this.n === this.hi.length) this.grow();
    const k = floatToSortableInt(score);
    if (this.maxHeap) this.siftUp(this.n++, ~k, node >>> 0);
    else this.siftUp(this.n++, k, ~node >>> 0);
  }

  /**
   * Adds while below maxSize; otherwise replaces the top when the new entry is better than it (a
   * min-heap keeps the maxSize best). Returns whether the entry was inserted.
   */
  insertWithOverflow(node: number, score: number): boolean {
    const k = floatToSortableInt(score);
    let h: number;
    let l: number;
    if (this.maxHeap) {
      h = ~k;
      l = node >>> 0;
    } else {
      h = k;
      l = ~node >>> 0;
    }
    if (this.n < this._maxSize) {
      if (this.n === this.hi.length) this.grow();
      this.siftUp(this.n++, h, l);
      return true;
    }
    if (this.n === 0) return false;
    const th = this.hi[0];
    if (h < th || (h === th && l < this.lo[0])) return false;
    this.siftDown(0, h, l);
    return true;
  }

  /** Removes the top entry and returns its node. */
  pop(): number {
    if (this.n === 0) throw new Error('pop from an empty NeighborQueue');
    const node = this.decodeNode(this.lo[0]);
    const last = --this.n;
    if (last > 0) this.siftDown(0, this.hi[last], this.lo[last]);
    return node;
  }

  topNode(): number {
    return this.decodeNode(this.lo[0]);
  }

  /** Max-heap: the best score; min-heap: the worst score kept. */
  topScore(): number {
    const h = this.hi[0];
    return sortableIntToFloat(this.maxHeap ? ~h : h);
  }

  /** Node at heap position i (0-based, heap order). */
  nodeAt(i: number): number {
    return this.decodeNode(this.lo[i]);
  }

  scoreAt(i: number): number {
    const h = this.hi[i];
    return sortableIntToFloat(this.maxHeap ? ~h : h);
  }

  private decodeNode(l: number): number {
    return this.maxHeap ? l | 0 : ~l;
  }

  private grow(): void {
    const cap = this.hi.length * 2;
    const hi = new Int32Array(cap);
    hi.set(this.hi);
    const lo = new Uint32Array(cap);
    lo.set(this.lo);
    this.hi = hi;
    this.lo = lo;
  }

  private siftUp(i: number, h: number, l: number): void {
    const hi = this.hi;
    const lo = this.lo;
    while (i > 0) {
      const p = (i - 1) >>> 1;
      const ph = hi[p];
      if (ph < h || (ph === h && lo[p] <= l)) break;
      hi[i] = ph;
      lo[i] = lo[p];
      i = p;
    }
    hi[i] = h;
    lo[i] = l;
  }

  /** Places (h, l) at position i (whose old entry is discarded) and restores the heap below it. */
  private siftDown(i: number, h: number, l: number): void {
    const hi = this.hi;
    const lo = this.lo;
    const n = this.n;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      let ch = hi[c];
      let cl = lo[c];
      const r = c + 1;
      if (r < n) {
        const rh = hi[r];
        if (rh < ch || (rh === ch && lo[r] < cl)) {
          c = r;
          ch = rh;
          cl = lo[r];
        }
      }
      if (h < ch || (h === ch && l <= cl)) break;
      hi[i] = ch;
      lo[i] = cl;
      i = c;
    }
    hi[i] = h;
    lo[i] = l;
  }
}
