import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';

/**
 * The serializable form of a values source: executor workers evaluate it next to the fp32
 * vectors, so it must be plain data (no closures).
 */
export type ValuesSpec =
  /** The first-phase (inner query) score of the doc. */
  | { readonly kind: 'scores' }
  /** fp32 similarity between `target` and the doc's vector; docs without a vector have no value (score 0). */
  | { readonly kind: 'fullPrecision'; readonly target: Float32Array; readonly field: string; readonly similarity: number | null }
  /** Σ weight_i x value_i; a doc has a value only if every term has one. */
  | { readonly kind: 'linear'; readonly terms: readonly { readonly weight: number; readonly spec: ValuesSpec }[] };

/**
 * Lucene's DoubleValuesSource, reduced to what rescoring needs. `needsScores()` tells
 * RescoreTopNQuery whether values depend on the first-phase score; when they do, scoring cannot
 * be deferred behind prefetch and docs are scored in order as they arrive.
 */
export abstract class DoubleValuesSource {
  /** Whether the values depend on the first-phase score (then rescoring cannot be deferred behind prefetch). */
  abstract needsScores(): boolean;
  /** A plain description of the source that the executor's workers can rebuild it from. */
  abstract toSpec(): ValuesSpec;
  /** A readable description. */
  abstract toString(): string;

  /** The first-phase score itself. */
  static readonly SCORES: DoubleValuesSource = new (class extends DoubleValuesSource {
    needsScores(): boolean {
      return true;
    }
    toSpec(): ValuesSpec {
      return { kind: 'scores' };
    }
    toString(): string {
      return 'scores';
    }
  })();

  /** Σ weight x source, e.g. a blend of the first-phase score and fp32 similarity. */
  static linearCombination(...terms: readonly [weight: number, source: DoubleValuesSource][]): DoubleValuesSource {
    return new LinearCombinationValuesSource(terms);
  }
}

class LinearCombinationValuesSource extends DoubleValuesSource {
  constructor(private readonly terms: readonly [number, DoubleValuesSource][]) {
    super();
    if (terms.length === 0) throw new RangeError('linearCombination needs at least one term');
    for (const [w] of terms) if (!Number.isFinite(w)) throw new RangeError(`weight must be finite: ${w}`);
  }

  needsScores(): boolean {
    return this.terms.some(([, s]) => s.needsScores());
  }

  toSpec(): ValuesSpec {
    return { kind: 'linear', terms: this.terms.map(([weight, s]) => ({ weight, spec: s.toSpec() })) };
  }

  toString(): string {
    return this.terms.map(([w, s]) => `${w}*${s}`).join(' + ');
  }
}

/**
 * Lucene's FullPrecisionFloatVectorSimilarityValuesSource: the doc's raw float vector scored
 * against `target` with the field's own similarity (or an explicit one). needsScores() is false,
 * so RescoreTopNQuery defers scoring behind prefetch.
 */
export class FullPrecisionFloatVectorSimilarityValuesSource extends DoubleValuesSource {
  readonly target: Float32Array;

  constructor(
    target: Float32Array | readonly number[],
    readonly field: string,
    readonly similarity?: VectorSimilarityFunction,
  ) {
    super();
    this.target = Float32Array.from(target);
  }

  needsScores(): boolean {
    return false;
  }

  toSpec(): ValuesSpec {
    return { kind: 'fullPrecision', target: this.target, field: this.field, similarity: this.similarity?.ordinal ?? null };
  }

  toString(): string {
    return `FullPrecisionFloatVectorSimilarityValuesSource(field=${this.field}, dims=${this.target.length}${this.similarity ? `, ${this.similarity}` : ''})`;
  }
}

/** Fields (fullPrecision targets) a spec reads: used to validate dims against the index. */
export function specTargets(spec: ValuesSpec): { field: string; target: Float32Array }[] {
  switch (spec.kind) {
    case 'scores':
      return [];
    case 'fullPrecision':
      return [{ field: spec.field, target: spec.target }];
    case 'linear':
      return spec.terms.flatMap((t) => specTargets(t.spec));
  }
}

export { VectorSimilarityFunction };
