import { Query } from './Query.js';
import type { ScoreDoc } from './ScoreDoc.js';

/**
 * The final form of kNN and rescore queries (Lucene's DocAndScoreQuery): a fixed set of global
 * docs, held sorted by doc ascending (the order leaves are visited in), each with its score.
 * `totalHits` is what the query that produced it counted (e.g. RescoreTopNQuery's inner count).
 */
export class DocAndScoreQuery extends Query {
  readonly docs: Int32Array;
  readonly scores: Float32Array;
  /** Per doc (in doc order), 1 when its fp32 read was already issued by the first phase; null: none was. */
  readonly readAhead: Uint8Array | null;

  constructor(
    hits: readonly ScoreDoc[],
    readonly totalHits: number = hits.length,
    /**
     * Set when every score is the field's exact fp32 similarity to this target (a first phase
     * that searched fp32 vectors): rescoring by the same target can reuse the scores.
     */
    readonly exactTarget: Float32Array | null = null,
    /** Docs whose fp32 vectors the first phase already prefetched (LeaderReadAhead); null: none. */
    readAheadDocs: ReadonlySet<number> | null = null,
  ) {
    super();
    const sorted = [...hits].sort((a, b) => a.doc - b.doc);
    this.docs = Int32Array.from(sorted, (h) => h.doc);
    this.scores = Float32Array.from(sorted, (h) => h.score);
    this.readAhead = readAheadDocs ? Uint8Array.from(sorted, (h) => (readAheadDocs.has(h.doc) ? 1 : 0)) : null;
    for (let i = 1; i < this.docs.length; i++) {
      if (this.docs[i] === this.docs[i - 1]) throw new RangeError(`duplicate doc ${this.docs[i]}`);
    }
  }

  /** A query with no hits. */
  static empty(): DocAndScoreQuery {
    return new DocAndScoreQuery([], 0);
  }

  get size(): number {
    return this.docs.length;
  }

  async rewrite(): Promise<Query> {
    return this;
  }

  toString(): string {
    return `DocAndScoreQuery(${this.docs.length} docs)`;
  }
}
