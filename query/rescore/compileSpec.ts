import type { Kernels } from '../../segments/kernels/Kernels.js';
import { Fp32Similarity } from '../../segments/kernels/Fp32Similarity.js';
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
 * fp32 similarities run on the WebAssembly SIMD kernels (Fp32Similarity). Every read path, and
 * the on-disk first phase, uses this same code, so their scores are identical.
 */
export function compileSpec(spec: ValuesSpec, fieldSimilarity: number, dims: number, k: Kernels): CompiledSpec {
  switch (spec.kind) {
    case 'scores':
      return { evaluate: (_v, _o, firstPhase) => firstPhase, needsVector: false, release: () => {} };
    case 'fullPrecision': {
      const sim = new Fp32Similarity(k, spec.similarity ?? fieldSimilarity, spec.target, dims);
      return { evaluate: (v, off) => sim.score(v, off), needsVector: true, release: () => sim.release() };
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
        release: () => {
          for (const p of parts) p.c.release();
        },
      };
    }
  }
}
