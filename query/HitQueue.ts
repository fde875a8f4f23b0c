import { floatCompare, type ScoreDoc } from './ScoreDoc.js';

/**
 * Lucene's HitQueue: a bounded min-heap keeping the best `size` hits. a is "less" than b when
 * Float.compare(a.score, b.score) < 0, or the scores are equal and a.doc > b.doc — so among equal
 * scores the lower doc survives. Because that order is total, the retained set does not depend on
 * insertion order. Backed by typed arrays: inserting allocates nothing.
 */
export class HitQueue {
  private readonly docs: Int32Array;
  private readonly scores: Float32Array;
  private n = 0;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`HitQueue size must be >= 1, got ${capacity}`);
    this.docs = new Int32Array(capacity);
    this.scores = new Float32Array(capacity);
  }

  get size(): number {
    return this.n;
  }

  /** Lucene's insertWithOverflow: once full, replaces the top only if the top is less than the new hit. */
  insertWithOverflow(doc: number, score: number): void {
    if (this.n < this.capacity) {
      this.docs[this.n] = doc;
      this.scores[this.n] = score;
      this.upHeap(this.n++);
    } else if (this.lessThan(this.docs[0], this.scores[0], doc, score)) {
      this.docs[0] = doc;
      this.scores[0] = score;
      this.downHeap(0);
    }
  }

  /** The retained hits sorted best first (score desc, then doc asc). Does not drain the queue. */
  toSortedScoreDocs(): ScoreDoc[] {
    const out: ScoreDoc[] = [];
    for (let i = 0; i < this.n; i++) out.push({ doc: this.docs[i], score: this.scores[i] });
    return out.sort((a, b) => floatCompare(b.score, a.score) || a.doc - b.doc);
  }

  private lessThan(docA: number, scoreA: number, docB: number, scoreB: number): boolean {
    const c = floatCompare(scoreA, scoreB);
    return c < 0 || (c === 0 && docA > docB);
  }

  private upHeap(i: number): void {
    const doc = this.docs[i],
      score = this.scores[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.lessThan(doc, score, this.docs[parent], this.scores[parent])) break;
      this.docs[i] = this.docs[parent];
      this.scores[i] = this.scores[parent];
      i = parent;
    }
    this.docs[i] = doc;
    this.scores[i] = score;
  }

  private downHeap(i: number): void {
    const doc = this.docs[i],
      score = this.scores[i];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.n) break;
      const right = child + 1;
      if (right < this.n && this.lessThan(this.docs[right], this.scores[right], this.docs[child], this.scores[child])) child = right;
      if (!this.lessThan(this.docs[child], this.scores[child], doc, score)) break;
      this.docs[i] = this.docs[child];
      this.scores[i] = this.scores[child];
      i = child;
    }
    this.docs[i] = doc;
    this.scores[i] = score;
  }
}
