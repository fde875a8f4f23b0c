import { VectorSimilarityFunction } from '../VectorSimilarityFunction.js';
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
}

export function compileSpec(spec: ValuesSpec, fieldSimilarity: number, dims: number): CompiledSpec {
  switch (spec.kind) {
    case 'scores':
      return { evaluate: (_v, _o, firstPhase) => firstPhase, needsVector: false };
    case 'fullPrecision': {
      const sim = VectorSimilarityFunction.fromOrdinal(spec.similarity ?? fieldSimilarity);
      const target = spec.target;
      const compareAt = sim.compareAt;
      return { evaluate: (v, off) => compareAt(target, 0, v, off, dims), needsVector: true };
    }
    case 'linear': {
      const parts = spec.terms.map((t) => ({ weight: t.weight, c: compileSpec(t.spec, fieldSimilarity, dims) }));
      return {
        evaluate: (v, off, fp) => {
          let sum = 0;
          for (const p of parts) sum += p.weight * p.c.evaluate(v, off, fp);
          return Math.fround(sum);
        },
        needsVector: parts.some((p) => p.c.needsVector),
      };
    }
  }
}
