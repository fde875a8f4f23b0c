import type { ProgressListener } from '../../segments/index/ProgressListener.js';
import { Progress, type ProgressStream } from './Progress.js';

/** A ProgressListener that draws each stage as a Progress line (on stderr unless `stream` is given). */
export function stderrProgress(enabled = true, stream?: ProgressStream): ProgressListener {
  return {
    stage: (label, total, unit) => new Progress({ label, total, unit, enabled, stream }),
  };
}
