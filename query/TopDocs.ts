import type { ScoreDoc, TotalHits } from './ScoreDoc.js';

/** Ranked hits plus how many docs matched (Lucene's TopDocs: totalHits value and relation). */
export class TopDocs {
  constructor(
    readonly totalHits: TotalHits,
    readonly scoreDocs: readonly ScoreDoc[],
  ) {}

  /** No hits, total 0. */
  static empty(): TopDocs {
    return new TopDocs({ value: 0, relation: 'EQUAL_TO' }, []);
  }

  /**
   * Lucene's TopDocs.merge: the top `topN` of several already-ranked result lists, score
   * descending; equal scores go to the lower shard index, then the lower doc. Scores are compared
   * with < and >, so NaN never wins a comparison and falls through to the tie-breakers, and
   * -0.0 equals +0.0. totalHits is summed; it is EQUAL_TO only if every input's is.
   */
  static merge(topN: number, shardHits: readonly TopDocs[]): TopDocs {
    let total = 0;
    let exact = true;
    for (const t of shardHits) {
      total += t.totalHits.value;
      if (t.totalHits.relation !== 'EQUAL_TO') exact = false;
    }
    const merged: ScoreDoc[] = [];
    const pos = new Int32Array(shardHits.length);
    // A k-way merge over the shards' heads: O(topN x shards), and shards are few.
    while (merged.length < topN) {
      let best = -1;
      for (let s = 0; s < shardHits.length; s++) {
        const list = shardHits[s].scoreDocs;
        if (pos[s] >= list.length) continue;
        if (best < 0 || mergeLessThan(list[pos[s]], s, shardHits[best].scoreDocs[pos[best]], best)) best = s;
      }
      if (best < 0) break;
      const hit = shardHits[best].scoreDocs[pos[best]++];
      merged.push(hit.shardIndex === undefined ? { doc: hit.doc, score: hit.score, shardIndex: best } : hit);
    }
    return new TopDocs({ value: total, relation: exact ? 'EQUAL_TO' : 'GREATER_THAN_OR_EQUAL_TO' }, merged);
  }
}

/** true when a (from shard sa) ranks before b (from shard sb). */
function mergeLessThan(a: ScoreDoc, sa: number, b: ScoreDoc, sb: number): boolean {
  if (a.score > b.score) return true;
  if (a.score < b.score) return false;
  const ia = a.shardIndex ?? sa,
    ib = b.shardIndex ?? sb;
  if (ia !== ib) return ia < ib;
  return a.doc < b.doc;
}
