/**
 * A hit: a global doc id (docBase + segment doc, docBase being the sum of the earlier segments'
 * maxDoc, deleted docs included) and its float32 score, as Lucene's ScoreDoc.
 */
export interface ScoreDoc {
  readonly doc: number;
  readonly score: number;
  /** Index of the shard/leaf that produced it; -1 when not set. */
  readonly shardIndex?: number;
}

/** Whether {@link TotalHits.value} is exact or a lower bound. */
export type TotalHitsRelation = 'EQUAL_TO' | 'GREATER_THAN_OR_EQUAL_TO';

/** How many docs matched, exactly or as a lower bound (Lucene's TotalHits). */
export interface TotalHits {
  readonly value: number;
  readonly relation: TotalHitsRelation;
}

/**
 * Java's Float.compare: -0.0 < +0.0 and NaN is above everything (and equal to itself). HitQueue
 * orders by it; TopDocs.merge deliberately does not (it uses < and >, see TopDocs).
 */
export function floatCompare(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) {
    if (a !== 0) return 0;
    const na = Object.is(a, -0),
      nb = Object.is(b, -0);
    return na === nb ? 0 : na ? -1 : 1;
  }
  const aNaN = Number.isNaN(a),
    bNaN = Number.isNaN(b);
  return aNaN === bNaN ? 0 : aNaN ? 1 : -1;
}
