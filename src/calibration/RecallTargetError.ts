/**
 * A recall target the index cannot honour: above what every measured setting reached, or asked
 * of an index that has no calibration and may not measure one. The caller's mistake, not the
 * engine's (HTTP 400), unlike other errors a search may throw.
 */
export class RecallTargetError extends RangeError {
  override readonly name = 'RecallTargetError';
}
