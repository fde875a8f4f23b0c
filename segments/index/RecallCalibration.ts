/**
 * What a search must ask for to reach a recall@k on one index: settings (an oversample and a
 * first-phase beam) measured on a sample of queries (the index's own documents, or held-out
 * vectors) against their exact fp32 nearest neighbours, each with its mean recall, a lower
 * confidence bound on it and its mean search time. A search with a recall target takes the
 * cheapest measured setting whose lower bound reaches the target (settingFor), and only such a
 * setting: a target no setting was measured to reach is refused, never guessed.
 *
 * The bytes are RecallCalibrationFormat's; the measurement is src/calibration/calibrateRecall.ts.
 */
export interface RecallPoint {
  /** First-phase candidates rescored per hit wanted (k x oversample in all). */
  readonly oversample: number;
  /** The HNSW beam per segment the setting searched with at k = RecallCalibration.k (the engine's default for its candidates, or a smaller one). */
  readonly numCandidates: number;
  /** Mean recall@k over the sample. */
  readonly recall: number;
  /** One-sided lower confidence bound on the mean (RecallCalibration.confidence). */
  readonly lowerBound: number;
  /** Mean engine time of the sample's searches at this setting (warm, a few in flight at once: a relative cost, not a latency). */
  readonly meanMs: number;
}

/** Where the calibration's queries came from. */
export type CalibrationSource = 'documents' | 'held-out';

/** An index's calibration: the settings measured, how, when and on what. */
export interface RecallCalibration {
  /** Hits per query the recall was measured at (recall@k). */
  readonly k: number;
  /** Queries in the sample. */
  readonly queries: number;
  /** 'documents': live docs of the index, each searched with itself left out of its neighbours. */
  readonly source: CalibrationSource;
  /** The commit generation measured (0: an index without commits, e.g. a Lucene directory). */
  readonly generation: number;
  /** Live docs when measured: an index that has grown far past them is calibrated again. */
  readonly docs: number;
  /** When measured, ms since the epoch. */
  readonly measuredAt: number;
  /** Confidence of the lower bounds (one-sided), e.g. 0.95. */
  readonly confidence: number;
  /** The index's default recall target, used by searches that name no oversample, beam or target; null: none. */
  readonly defaultTarget: number | null;
  /**
   * Measured settings, oversample ascending and, at one oversample, beam descending (the engine's
   * default beam first, then smaller ones); at least one.
   */
  readonly points: readonly RecallPoint[];
}

/**
 * The cheapest measured setting whose lower bound reaches `target`, or null when none does: the
 * smallest oversample any of whose beams reaches it (each oversample's candidates are fp32 reads
 * when the vectors are cold, the cost that dominates there), at the smallest beam that does
 * (at one oversample a smaller beam only visits fewer nodes). Not the setting measured fastest:
 * a calibration warms the page cache as it goes, so a later, larger oversample can time faster
 * than an earlier one and still cost more reads on a cold index (1M x 1024, first calibration
 * after a build: oversample 3 at 12.4 ms, then 4 at beam 50 at 8.2 ms).
 */
export function settingFor(calibration: RecallCalibration, target: number): RecallPoint | null {
  let best: RecallPoint | null = null;
  for (const p of calibration.points) {
    if (best !== null && p.oversample !== best.oversample) break;
    if (p.lowerBound >= target) best = p;
  }
  return best;
}

/** The setting with the best lower bound (the first of equals: the cheapest). */
export function bestSetting(calibration: RecallCalibration): RecallPoint {
  return calibration.points.reduce((best, p) => (p.lowerBound > best.lowerBound ? p : best));
}

/** The smallest recall target a search may name. */
export const MIN_RECALL_TARGET = 0.01;
/** The largest recall target a search may name (a calibration stops measuring once a bound passes it). */
export const MAX_RECALL_TARGET = 0.999;
