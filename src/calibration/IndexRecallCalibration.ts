import { DirectoryReader } from '../../segments/index/DirectoryReader.js';
import type { IndexReader } from '../../segments/index/IndexReader.js';
import type { RecallCalibration } from '../../segments/index/RecallCalibration.js';
import { readRecallCalibration, writeRecallCalibration } from '../../segments/index/RecallCalibrationFormat.js';
import type { Executor } from '../executor/Executor.js';
import type { ProgressStream } from '../progress/Progress.js';
import { type CalibratedSearch, calibrateRecall, liveDocCount } from './calibrateRecall.js';
import { RecallTargetError } from './RecallTargetError.js';

/**
 * When an open index without a calibration (or with one measured on a far smaller or larger index)
 * measures one: 'open' starts it in the background at open when the index has at least
 * CALIBRATE_AT_OPEN_DOCS live docs (smaller ones at the first search that names a recall target);
 * 'first-use' only at that search; 'never' not at all (such a search is refused).
 */
export const CALIBRATE_WHEN = ['open', 'first-use', 'never'] as const;
/** One of CALIBRATE_WHEN (see there). */
export type CalibrateWhen = (typeof CALIBRATE_WHEN)[number];

/**
 * Below this many live docs an index is calibrated at its first recall-target search rather than
 * at open: it costs well under a second there, and opening many small indexes (tests, a fresh
 * served index that writes grow) starts no background work.
 */
export const CALIBRATE_AT_OPEN_DOCS = 20_000;

/**
 * Directories with a measurement under way in this process: a refresh reopens an index every
 * second while writes come, and each open would otherwise start (and its close abort) one more.
 */
const measuringDirs = new Map<string, Promise<RecallCalibration>>();

/** A calibration measured on fewer than half or more than twice the live docs is measured again. */
const STALE_FACTOR = 2;

/**
 * One open index's recall calibration: the one its directory holds, or one being measured (in the
 * background from open, or for the search that asked). A prescore index directory keeps what is
 * measured (`recall.cal`); a Lucene directory is never written, its calibration lives while open.
 */
export class IndexRecallCalibration {
  private current: RecallCalibration | null;
  private running: { readonly promise: Promise<RecallCalibration>; readonly abort: AbortController } | null = null;
  private readonly persist: boolean;
  private closed = false;

  /** `stored`: the directory's calibration (readStored), read before the open took any resources. */
  constructor(
    stored: RecallCalibration | null,
    private readonly reader: IndexReader,
    private readonly executor: Executor,
    private readonly index: CalibratedSearch,
    private readonly options: {
      readonly when: CalibrateWhen;
      readonly beam: (candidates: number) => number;
      readonly progress?: boolean | ProgressStream;
      readonly onError?: (e: unknown) => void;
    },
  ) {
    this.persist = reader instanceof DirectoryReader;
    this.current = stored;
  }

  /** The calibration a prescore index directory holds (null: none, or not a prescore directory); a corrupt file throws, naming it. */
  static readStored(reader: IndexReader): RecallCalibration | null {
    return reader instanceof DirectoryReader ? readRecallCalibration(reader.dir) : null;
  }

  /** Starts measuring in the background when `when` is 'open' and the index is large enough and has no fresh calibration. */
  startAtOpen(): void {
    if (this.options.when !== 'open' || this.closed) return;
    const elsewhere = measuringDirs.get(this.reader.dir);
    if (elsewhere !== undefined) {
      // Another open of the directory (the generation a refresh replaces) is measuring: take its
      // result, or measure here if it was stopped (closed before it finished).
      elsewhere.then(
        (measured) => {
          this.current ??= measured;
        },
        () => this.startAtOpen(),
      );
      return;
    }
    const live = liveDocCount(this.reader);
    if (live < CALIBRATE_AT_OPEN_DOCS) return;
    if (this.current !== null && live <= this.current.docs * STALE_FACTOR && live * STALE_FACTOR >= this.current.docs) return;
    this.measure().catch((e) => this.options.onError?.(e));
  }

  /** The calibration held now (a stale one while its successor is measured), or null. No I/O: searches ask on every call. */
  get(): RecallCalibration | null {
    return this.current;
  }

  /** Whether a measurement is under way. */
  get measuring(): boolean {
    return this.running !== null;
  }

  /** The calibration, measuring it first when there is none (unless `when` is 'never'). */
  async require(): Promise<RecallCalibration> {
    // Another open of the directory (a refresh's reader, `prescore calibrate`) may have written one since.
    if (this.current === null && this.persist && this.running === null) this.current = readRecallCalibration(this.reader.dir);
    if (this.current !== null) return this.current;
    if (this.running !== null) return this.running.promise;
    if (this.options.when === 'never') {
      throw new RecallTargetError(
        `index ${this.reader.dir} has no recall calibration (run \`prescore calibrate --index ${this.reader.dir}\`, or open it with calibrate 'open' or 'first-use')`,
      );
    }
    return this.measure();
  }

  /**
   * Measures now (also when one is held), keeps the result, and writes it to a prescore index
   * directory: a failed write is logged (onError), or thrown when `mustStore` (an asked-for calibration).
   */
  measure(
    options: { readonly queries?: Float32Array; readonly sample?: number; readonly defaultTarget?: number | null; readonly mustStore?: boolean } = {},
  ): Promise<RecallCalibration> {
    if (this.running !== null) return this.running.promise;
    const abort = new AbortController();
    const promise = calibrateRecall(this.index, this.reader, this.executor, {
      beam: this.options.beam,
      progress: this.options.progress,
      signal: abort.signal,
      queries: options.queries,
      sample: options.sample,
      defaultTarget: options.defaultTarget !== undefined ? options.defaultTarget : (this.current?.defaultTarget ?? null),
    }).then(
      (measured) => {
        this.current = measured;
        this.running = null;
        // A directory this process may not write (read-only, full) keeps the calibration in memory.
        if (this.persist) {
          try {
            writeRecallCalibration(this.reader.dir, measured);
          } catch (e) {
            if (options.mustStore) throw e;
            this.options.onError?.(new Error(`measured, but not stored in ${this.reader.dir}: ${e instanceof Error ? e.message : String(e)}`));
          }
        }
        return measured;
      },
      (e: unknown) => {
        this.running = null;
        throw e;
      },
    );
    this.running = { promise, abort };
    const dir = this.reader.dir;
    measuringDirs.set(dir, promise);
    const done = () => {
      if (measuringDirs.get(dir) === promise) measuringDirs.delete(dir);
    };
    void promise.then(done, done);
    return promise;
  }

  /** Stops a measurement under way and waits for its searches and tasks to end. */
  async close(): Promise<void> {
    this.closed = true;
    const running = this.running;
    if (running === null) return;
    running.abort.abort(new Error(`index ${this.reader.dir} closed while calibrating`));
    await running.promise.catch(() => {});
  }
}
