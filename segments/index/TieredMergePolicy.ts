/** A segment as a merge policy sees it: its name, docs and bytes. */
export interface MergeCandidate {
  readonly name: string;
  readonly maxDoc: number;
  readonly delCount: number;
  /** Bytes on disk per doc (vectors, codes, graph, documents): the segment's size is this x maxDoc. */
  readonly bytesPerDoc: number;
}

/** TieredMergePolicy's settings; every one defaults to Lucene's. */
export interface TieredMergePolicyOptions {
  /** Segments allowed per tier before a merge; default 10. */
  readonly segmentsPerTier?: number;
  /** Segments merged at once; default 10. */
  readonly maxMergeAtOnce?: number;
  /** Segments smaller than this count as this large (tiny flushes merge together early); default 16 MiB. */
  readonly floorSegmentBytes?: number;
  /** No merge makes a segment larger than this (live bytes); default 5 GiB. */
  readonly maxMergedSegmentBytes?: number;
  /** A segment with more deleted docs than this percentage is merged to reclaim them; default 20. */
  readonly deletesPctAllowed?: number;
}

const MIB = 1024 * 1024;

/**
 * Lucene's TieredMergePolicy, with its defaults (10 segments per tier, 10 at once, 16 MiB floor,
 * 5 GiB max merged segment, 20% deletes allowed): segments are sorted by live size; the index
 * may hold a budget of segments that grows by tiers (10 of the floor size, then 10 of 10x that,
 * ...); above the budget, the best window of up to 10 similar-size segments is merged, best
 * meaning the least skewed (the largest a small part of the total), smallest, and with the most
 * deletes to reclaim. A segment past the deletes allowance is merged even under the budget.
 * Merges of equal-size segments keep the write amplification logarithmic: each doc is rewritten
 * about once per tier.
 */
export class TieredMergePolicy {
  readonly segmentsPerTier: number;
  readonly maxMergeAtOnce: number;
  readonly floorSegmentBytes: number;
  readonly maxMergedSegmentBytes: number;
  readonly deletesPctAllowed: number;

  constructor(o: TieredMergePolicyOptions = {}) {
    this.segmentsPerTier = o.segmentsPerTier ?? 10;
    this.maxMergeAtOnce = o.maxMergeAtOnce ?? 10;
    this.floorSegmentBytes = o.floorSegmentBytes ?? 16 * MIB;
    this.maxMergedSegmentBytes = o.maxMergedSegmentBytes ?? 5 * 1024 * MIB;
    this.deletesPctAllowed = o.deletesPctAllowed ?? 20;
    if (!(this.segmentsPerTier >= 2 && this.maxMergeAtOnce >= 2)) throw new RangeError('segmentsPerTier and maxMergeAtOnce must be at least 2');
  }

  /**
   * Merge debt: how many segments `segments` holds beyond the policy's budget (0 when within it).
   * Each merge takes up to maxMergeAtOnce of them down to one.
   */
  segmentsOverBudget(segments: readonly MergeCandidate[]): number {
    const eligible = this.eligible(segments);
    return Math.max(0, eligible.length - this.budget(eligible));
  }

  /** The next merge to run over `segments` (those not already merging), or null: the names of the segments to merge into one. */
  findMerge(segments: readonly MergeCandidate[]): string[] | null {
    const floored = (s: MergeCandidate) => Math.max(this.floorSegmentBytes, live(s));
    const eligible = this.eligible(segments);
    if (eligible.length === 0) return null;
    const overBudget = eligible.length > this.budget(eligible);
    let best: { names: string[]; score: number } | null = null;
    for (let start = 0; start < eligible.length; start++) {
      const window: MergeCandidate[] = [];
      let size = 0;
      for (let i = start; i < eligible.length && window.length < this.maxMergeAtOnce; i++) {
        const s = eligible[i]!;
        if (size + live(s) > this.maxMergedSegmentBytes) continue;
        window.push(s);
        size += live(s);
      }
      const reclaims = window.some((s) => deletesPct(s) > this.deletesPctAllowed);
      // Over budget: a full window (or what is left at the small end); under it: only to reclaim deletes.
      if (!(overBudget ? window.length >= Math.min(this.maxMergeAtOnce, eligible.length - start) && window.length >= 2 : reclaims)) continue;
      const flooredTotal = window.reduce((a, s) => a + floored(s), 0);
      const skew = floored(window[0]!) / flooredTotal;
      const liveRatio = window.reduce((a, s) => a + (s.maxDoc - s.delCount), 0) / window.reduce((a, s) => a + s.maxDoc, 0);
      const score = skew * flooredTotal ** 0.05 * liveRatio ** 2;
      if (best === null || score < best.score) best = { names: window.map((s) => s.name), score };
    }
    return best?.names ?? null;
  }

  /** The segments a merge may take (not already at half the largest merged size, unless they reclaim deletes), largest first. */
  private eligible(segments: readonly MergeCandidate[]): MergeCandidate[] {
    return segments.filter((s) => live(s) <= this.maxMergedSegmentBytes / 2 || deletesPct(s) > this.deletesPctAllowed).sort((a, b) => live(b) - live(a));
  }

  /** The budget: segmentsPerTier segments at the floor size, then at maxMergeAtOnce x that, ... */
  private budget(eligible: readonly MergeCandidate[]): number {
    if (eligible.length === 0) return this.segmentsPerTier;
    let total = 0;
    for (const s of eligible) total += live(s);
    let levelSize = Math.max(this.floorSegmentBytes, Math.min(...eligible.map(live)));
    let bytesLeft = total;
    let allowed = 0;
    for (;;) {
      const atLevel = bytesLeft / levelSize;
      if (atLevel < this.segmentsPerTier || levelSize >= this.maxMergedSegmentBytes) {
        allowed += Math.ceil(atLevel);
        break;
      }
      allowed += this.segmentsPerTier;
      bytesLeft -= this.segmentsPerTier * levelSize;
      levelSize *= this.maxMergeAtOnce;
    }
    return Math.max(allowed, this.segmentsPerTier);
  }
}

function live(s: MergeCandidate): number {
  return s.bytesPerDoc * (s.maxDoc - s.delCount);
}

function deletesPct(s: MergeCandidate): number {
  return s.maxDoc === 0 ? 0 : (100 * s.delCount) / s.maxDoc;
}
