import { normalizeToUnitInterval, scaleMaxInnerProductScore } from '../util/VectorUtil.js';
import type { Kernels } from './Kernels.js';

const f = Math.fround;

/**
 * A field similarity of a fixed fp32 target, on the WebAssembly SIMD kernels (~25x the plain-JS
 * loop: 0.5 vs 14 us for a 768-dim cosine): the target lives in kernel memory, each doc vector is
 * copied next to it (a memcpy of one vector) and scored, then mapped to Lucene's score for the
 * similarity ordinal. Rescoring and the on-disk first phase both score through this, so their
 * scores are identical.
 */
export class Fp32Similarity {
  private readonly targetPtr: number;
  private readonly docPtr: number;
  private readonly docBase: number;
  private released = false;
  /** Scores `vectors[off .. off + dims)` against the target. */
  readonly score: (vectors: Float32Array, off: number) => number;
  /** Scores the vector at byte address `ptr` of the kernels' memory against the target (no copy). */
  readonly scoreAt: (ptr: number) => number;

  constructor(
    private readonly k: Kernels,
    similarity: number,
    target: Float32Array,
    readonly dims: number,
  ) {
    if (target.length !== dims) throw new RangeError(`target has ${target.length} dims, expected ${dims}`);
    this.targetPtr = k.alloc(4 * dims);
    this.docPtr = k.alloc(4 * dims);
    k.f32().set(target, this.targetPtr >>> 2);
    this.docBase = this.docPtr >>> 2;
    const { targetPtr, docPtr, docBase } = this;
    // A memcpy (set of a subarray view) is ~10x the element loop for a 4 KiB vector.
    const copy = (v: Float32Array, off: number) => k.f32().set(v.subarray(off, off + dims), docBase);
    this.scoreAt =
      similarity === 0
        ? (ptr) => f(1 / f(1 + k.squareDistance(targetPtr, ptr, dims)))
        : similarity === 1
          ? (ptr) => normalizeToUnitInterval(k.dot(targetPtr, ptr, dims))
          : similarity === 2
            ? (ptr) => normalizeToUnitInterval(k.cosine(targetPtr, ptr, dims))
            : (ptr) => scaleMaxInnerProductScore(k.dot(targetPtr, ptr, dims));
    const { scoreAt } = this;
    this.score = (v, off) => (copy(v, off), scoreAt(docPtr));
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.k.free(this.targetPtr);
    this.k.free(this.docPtr);
  }
}
