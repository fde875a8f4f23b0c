import type { RescoreCounters } from '../prefetch/RescoreCounters.js';
import type { CompiledSpec } from './compileSpec.js';

const EMPTY = new Float32Array(0);

/**
 * The score functions of one rescoring task: where each entry's value lands (`scores`,
 * `hasValue`), counted and traced. The readers only say where an entry's vector is (a float view
 * and the index of its first component) or that it has none; they never see the values source.
 */
export class EntryScorer {
  readonly scores: Float32Array;
  /** 1 when the entry got a value, 0 otherwise (Lucene then scores it 0). */
  readonly hasValue: Uint8Array;

  constructor(
    private readonly compiled: CompiledSpec,
    private readonly firstPhase: Float32Array | null,
    private readonly counters: RescoreCounters,
    private readonly trace: number[] | null,
    entries: number,
  ) {
    this.scores = new Float32Array(entries);
    this.hasValue = new Uint8Array(entries);
  }

  /** Scores entry `i` whose fp32 vector is `vectors[off..off+dims)`. */
  score(i: number, vectors: Float32Array, off: number): void {
    this.scores[i] = this.compiled.evaluate(vectors, off, this.firstPhase ? this.firstPhase[i] : 0);
    this.hasValue[i] = 1;
    this.counters.scored++;
    if (this.trace) this.trace.push(-(i + 1));
  }

  /** Entry `i`'s doc has no vector: it gets a value only when the source does not need one. */
  noVector(i: number): void {
    if (this.compiled.needsVector) {
      if (this.trace) this.trace.push(-(i + 1)); // no value: Lucene scores it 0
    } else this.score(i, EMPTY, 0);
  }
}
