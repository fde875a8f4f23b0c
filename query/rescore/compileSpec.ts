import type { Kernels } from '../../segments/kernels/Kernels.js';
import { normalizeToUnitInterval, scaleMaxInnerProductScore } from '../../segments/util/VectorUtil.js';
import type { ValuesSpec } from '../DoubleValuesSource.js';

/**
 * Turns a ValuesSpec into a scoring function evaluated per entry inside a worker, once per task
 * (no per-entry interpretation or allocation). `vectors[off..off+dims)` is the doc's fp32 vector
 * (absent when the doc has none); `firstPhase` its inner-query score.
 */
export type CompiledValues = (vectors: Float32Array, off: number, firstPhase: number) => number;

export interface CompiledSpec {
  readonly evaluate: CompiledValues;
  /** Whether a value needs the doc's vector (a doc without one then has no value and scores 0). */
  readonly needsVector: boolean;
  /** Frees the kernel scratch. */
  release(): void;
}

const f = Math.fround;

/**
 * fp32 similarities run on the WebAssembly SIMD kernels (~10x the plain-JS loop): the target
 * lives in kernel memory for the task, each doc vector is copied next to it (one page) and
 * scored. Every read path uses this same code, so their scores are identical.
 */
export function compileSpec(spec: ValuesSpec, fieldSimilarity: number, dims: number, k: Kernels): CompiledSpec {
  switch (spec.kind) {
    case 'scores':
      return { evaluate: (_v, _o, firstPhase) => firstPhase, needsVector: false, release: () => {} };
    case 'fullPrecision': {
      const sim = spec.similarity ?? fieldSimilarity;
      const targetPtr = k.alloc(4 * dims);
      const docPtr = k.alloc(4 * dims);
      k.f32().set(spec.target, targetPtr >>> 2);
      const docBase = docPtr >>> 2;
      // A memcpy (set of a subarray view) is ~10x the element loop for a 4 KiB vector.
      const copy = (v: Float32Array, off: number) => k.f32().set(v.subarray(off, off + dims), docBase);
      const evaluate: CompiledValues =
        sim === 0
          ? (v, off) => (copy(v, off), f(1 / f(1 + k.squareDistance(targetPtr, docPtr, dims))))
          : sim === 1
            ? (v, off) => (copy(v, off), normalizeToUnitInterval(k.dot(targetPtr, docPtr, dims)))
            : sim === 2
              ? (v, off) => (copy(v, off), normalizeToUnitInterval(k.cosine(targetPtr, docPtr, dims)))
              : (v, off) => (copy(v, off), scaleMaxInnerProductScore(k.dot(targetPtr, docPtr, dims)));
      return {
        evaluate,
        needsVector: true,
        release: () => {
          k.free(targetPtr);
          k.free(docPtr);
        },
      };
    }
    case 'linear': {
      const parts = spec.terms.map((t) => ({ weight: t.weight, c: compileSpec(t.spec, fieldSimilarity, dims, k) }));
      return {
        evaluate: (v, off, fp) => {
          let sum = 0;
          for (const p of parts) sum += p.weight * p.c.evaluate(v, off, fp);
          return f(sum);
        },
        needsVector: parts.some((p) => p.c.needsVector),
        release: () => parts.forEach((p) => p.c.release()),
      };
    }
  }
}
