/**
 * How long work in this layer (index builds, sidecars) reports progress without knowing how it is
 * shown: the service's CLI draws each stage as a progress bar on stderr, tests and libraries may
 * pass nothing.
 */
export interface ProgressListener {
  /** A stage of `total` units of work (undefined: not known ahead) begins, e.g. ('write vectors', 1e6, 'vectors'). */
  stage(label: string, total: number | undefined, unit: string): StageProgress;
}

export interface StageProgress {
  /** Units done so far (monotonic). */
  update(done: number): void;
  /** The stage completed. */
  finish(): void;
  /** The stage was abandoned (an error). */
  stop(): void;
}

const SILENT_STAGE: StageProgress = { update() {}, finish() {}, stop() {} };

/** Reports nothing. */
export const SILENT_PROGRESS: ProgressListener = { stage: () => SILENT_STAGE };
