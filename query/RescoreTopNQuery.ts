import { docToOrd } from '../segments/index/SegmentHandle.js';
import { leafOf } from '../segments/index/IndexReader.js';
import { DocAndScoreQuery } from './DocAndScoreQuery.js';
import { type DoubleValuesSource, FullPrecisionFloatVectorSimilarityValuesSource, specTargets, type ValuesSpec } from './DoubleValuesSource.js';
import { HitQueue } from './HitQueue.js';
import { Query, type SearchContext, type Searcher } from './Query.js';
import { hitsReadAhead, planRescore, runRescorePlan } from './rescore/Rescorer.js';
import { monotonicMs } from './executor/clock.js';

/**
 * Lucene's RescoreTopNQuery: take the inner query's candidates, give each
 * the value of `valuesSource` (a doc without a value scores 0), keep the top n by score desc then
 * doc asc (HitQueue: among equal scores the lower doc survives), totalHits = inner count.
 *
 * Unlike Lucene's sequential leaf loop, the fp32 reads are prefetched through the executor: the
 * candidates form a ring spanning segments, each vector's pages are prefetched when it enters and
 * it is scored when it leaves (see Rescorer). When `valuesSource.needsScores()`, values depend on
 * the first-phase score and scoring is not deferred: docs are scored in order as they arrive.
 * An empty inner result gives an empty result (Lucene would throw here).
 */
export class RescoreTopNQuery extends Query {
  constructor(
    readonly query: Query,
    readonly valuesSource: DoubleValuesSource,
    readonly n: number,
  ) {
    super();
    if (!(Number.isInteger(n) && n >= 1)) throw new RangeError(`n must be >= 1, got ${n}`);
  }

  /** Rescores `query`'s hits by fp32 similarity to `target` on `field` (the field's own similarity). */
  static createFullPrecisionRescorerQuery(query: Query, target: Float32Array | readonly number[], field: string, n: number): RescoreTopNQuery {
    return new RescoreTopNQuery(query, new FullPrecisionFloatVectorSimilarityValuesSource(target, field), n);
  }

  async rewrite(searcher: Searcher, ctx: SearchContext): Promise<Query> {
    // The inner query's hits are this query's reads: the first phase may start them early.
    const readAhead = specTargets(this.valuesSource.toSpec()).length > 0 ? hitsReadAhead(ctx, this.valuesSource.needsScores()) : undefined;
    const inner = await searcher.rewrite(this.query, readAhead === undefined ? ctx : { ...ctx, hitsReadAhead: readAhead });
    if (!(inner instanceof DocAndScoreQuery)) throw new Error(`inner query ${inner} did not rewrite to a DocAndScoreQuery`);
    ctx.stats.candidates += inner.size;
    if (inner.size === 0) return DocAndScoreQuery.empty();

    const spec = this.valuesSource.toSpec();
    const field = searcher.reader.field;
    for (const t of specTargets(spec)) {
      if (t.field !== field.name) throw new RangeError(`unknown vector field "${t.field}" (the index has "${field.name}")`);
      if (t.target.length !== field.dims) {
        throw new RangeError(`vector dimension mismatch: target has ${t.target.length} dims, field "${field.name}" has ${field.dims}`);
      }
    }

    const started = performance.now();
    if (reusesExactScores(spec, inner, field.similarity.ordinal)) {
      // The first phase scored exactly these values: reading the vectors again would change nothing.
      const queue = new HitQueue(this.n);
      for (let i = 0; i < inner.size; i++) queue.insertWithOverflow(inner.docs[i], inner.scores[i]);
      ctx.stats.deferred = false;
      ctx.stats.rescoreMs += performance.now() - started;
      return new DocAndScoreQuery(queue.toSortedScoreDocs(), inner.size);
    }
    const profiler = ctx.profiler ?? null;
    const prepareAt = profiler ? monotonicMs() : 0;
    const needsScores = this.valuesSource.needsScores();
    const leaves = searcher.reader.leaves;
    const leafOrds = new Int32Array(inner.size);
    const ords = new Int32Array(inner.size);
    for (let i = 0; i < inner.size; i++) {
      const leaf = leafOf(leaves, inner.docs[i]);
      leafOrds[i] = leaf.ord;
      ords[i] = docToOrd(leaf.reader.handle.vectors, inner.docs[i] - leaf.docBase);
    }
    const plan = planRescore(searcher, ctx, { leafOrds, ords, firstPhase: needsScores ? inner.scores : null, spec, needsScores, readAhead: inner.readAhead });
    const runAt = profiler?.phase('rescore.prepare', prepareAt) ?? 0;
    const { scores, hasValue } = await runRescorePlan(searcher, ctx, plan);
    const collectAt = profiler?.phase(plan.onCaller ? 'rescore.onCaller' : 'rescore.executor', runAt) ?? 0;

    const queue = new HitQueue(this.n);
    for (let i = 0; i < inner.size; i++) queue.insertWithOverflow(inner.docs[i], hasValue[i] ? scores[i] : 0);
    profiler?.phase('rescore.topN', collectAt);
    ctx.stats.deferred = !needsScores;
    ctx.stats.rescoreMs += performance.now() - started;
    return new DocAndScoreQuery(queue.toSortedScoreDocs(), inner.size);
  }

  toString(): string {
    return `RescoreTopNQuery(${this.query}, ${this.valuesSource}, n=${this.n})`;
  }
}

/** Whether `spec` is the field similarity to the very target the inner query's exact scores are for. */
function reusesExactScores(spec: ValuesSpec, inner: DocAndScoreQuery, fieldSimilarity: number): boolean {
  const exact = inner.exactTarget;
  if (exact === null || spec.kind !== 'fullPrecision') return false;
  if (spec.similarity !== null && spec.similarity !== fieldSimilarity) return false;
  const t = spec.target;
  if (t.length !== exact.length) return false;
  for (let i = 0; i < t.length; i++) if (!Object.is(t[i], exact[i])) return false;
  return true;
}
