/**
 * A first-fit allocator over a growable address range [base, end), used for a wasm memory.
 *
 * Free blocks are kept sorted by address and coalesced on free. Every block boundary is a
 * multiple of GRANULE (16 bytes, one v128), so alignments up to 16 cost nothing; larger
 * alignments split a free block and leave the leading fragment free. When nothing fits, `grow`
 * is asked to extend `end`; the new space is appended to (merged with) the last free block. A
 * heap over a part of a memory that others also grow (a worker's scratch in a shared arena) gets
 * new space as a separate region instead: grow then returns `{ start, end }` anywhere above.
 *
 * Addresses are plain non-negative numbers below 2^32 (wasm32 pointers are unsigned).
 */
export const GRANULE = 16;

export interface HeapStats {
  readonly base: number;
  readonly end: number;
  readonly usedBytes: number;
  readonly freeBytes: number;
  readonly freeBlocks: number;
  readonly allocations: number;
}

/** Space a grow callback hands over that need not continue the heap's current end. */
export interface HeapRegion {
  readonly start: number;
  readonly end: number;
}

export class FirstFitHeap {
  /** Sorted, non-adjacent free blocks: starts[i] < ends[i] < starts[i + 1]. */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly sizes = new Map<number, number>();
  private used = 0;

  /**
   * @param grow called with the smallest end address the heap needs (and the aligned size of the
   *   block that did not fit); returns the new end (>= the request), or a fresh region of at least
   *   that size, or throws when the underlying memory cannot grow.
   */
  constructor(
    private readonly base: number,
    private end: number,
    private readonly grow: (minEnd: number, bytes: number) => number | HeapRegion,
  ) {
    if (base % GRANULE !== 0 || end % GRANULE !== 0 || end < base) {
      throw new RangeError(`heap range [${base}, ${end}) must be ${GRANULE}-aligned`);
    }
    if (end > base) {
      this.starts.push(base);
      this.ends.push(end);
    }
  }

  /** Allocates `bytes` (rounded up to 16; 0 gives a distinct 16-byte block) aligned to `align` (a power of two). */
  alloc(bytes: number, align = GRANULE): number {
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`alloc: bad size ${bytes}`);
    if (!Number.isSafeInteger(align) || align <= 0 || (align & (align - 1)) !== 0) {
      throw new RangeError(`alloc: alignment ${align} is not a power of two`);
    }
    const a = Math.max(align, GRANULE);
    const size = Math.max(GRANULE, roundUp(bytes, GRANULE));
    let ptr = this.fit(size, a);
    if (ptr < 0) {
      const n = this.starts.length;
      const tailStart = n > 0 && this.ends[n - 1] === this.end ? this.starts[n - 1] : this.end;
      const minEnd = roundUp(tailStart, a) + size;
      const oldEnd = this.end;
      const grown = this.grow(minEnd, size + a);
      if (typeof grown === 'number') {
        if (grown < minEnd || grown % GRANULE !== 0) throw new Error(`heap grow returned ${grown}, needed ${minEnd}`);
        this.end = grown;
        this.release(oldEnd, grown);
      } else {
        if (grown.start < oldEnd || grown.end - grown.start < size || grown.start % GRANULE !== 0 || grown.end % GRANULE !== 0) {
          throw new Error(`heap grow returned [${grown.start}, ${grown.end}), needed ${size} bytes above ${oldEnd}`);
        }
        this.end = grown.end;
        this.release(grown.start, grown.end);
      }
      ptr = this.fit(size, a);
      if (ptr < 0) throw new Error(`alloc: no fit for ${size} bytes after growing to ${this.end}`);
    }
    this.sizes.set(ptr, size);
    this.used += size;
    return ptr;
  }

  /** Frees a pointer returned by alloc. */
  free(ptr: number): void {
    const size = this.sizes.get(ptr);
    if (size === undefined) throw new Error(`free: ${ptr} is not an allocated pointer`);
    this.sizes.delete(ptr);
    this.used -= size;
    this.release(ptr, ptr + size);
  }

  /** Size in bytes of an allocated block (as rounded up), or undefined. */
  sizeOf(ptr: number): number | undefined {
    return this.sizes.get(ptr);
  }

  stats(): HeapStats {
    let freeBytes = 0;
    for (let i = 0; i < this.starts.length; i++) freeBytes += this.ends[i] - this.starts[i];
    return {
      base: this.base,
      end: this.end,
      usedBytes: this.used,
      freeBytes,
      freeBlocks: this.starts.length,
      allocations: this.sizes.size,
    };
  }

  /** Takes [ptr, ptr+size) out of the first free block that holds it aligned; -1 if none does. */
  private fit(size: number, align: number): number {
    const { starts, ends } = this;
    for (let i = 0; i < starts.length; i++) {
      const s = starts[i],
        e = ends[i];
      const ptr = roundUp(s, align);
      if (ptr + size > e) continue;
      const tail = ptr + size;
      if (ptr === s && tail === e) {
        starts.splice(i, 1);
        ends.splice(i, 1);
      } else if (ptr === s) {
        starts[i] = tail;
      } else if (tail === e) {
        ends[i] = ptr;
      } else {
        ends[i] = ptr;
        starts.splice(i + 1, 0, tail);
        ends.splice(i + 1, 0, e);
      }
      return ptr;
    }
    return -1;
  }

  /** Returns [s, e) to the free list, merging with neighbours. */
  private release(s: number, e: number): void {
    const { starts, ends } = this;
    // First free block starting after s.
    let lo = 0,
      hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid] < s) lo = mid + 1;
      else hi = mid;
    }
    const mergePrev = lo > 0 && ends[lo - 1] === s;
    const mergeNext = lo < starts.length && starts[lo] === e;
    if (mergePrev && mergeNext) {
      ends[lo - 1] = ends[lo];
      starts.splice(lo, 1);
      ends.splice(lo, 1);
    } else if (mergePrev) {
      ends[lo - 1] = e;
    } else if (mergeNext) {
      starts[lo] = s;
    } else {
      starts.splice(lo, 0, s);
      ends.splice(lo, 0, e);
    }
  }
}

function roundUp(x: number, multiple: number): number {
  return Math.ceil(x / multiple) * multiple;
}
