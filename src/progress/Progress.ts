/**
 * A progress line for long work (generation, ground truth, index builds) on stderr. On a TTY the
 * line is redrawn in place at most every `redrawMs`; otherwise (logs, CI) a plain line is printed
 * every `logEveryMs`. Work is counted either with `tick(n)` from the main thread or through a
 * SharedArrayBuffer counter that worker tasks `Atomics.add` into and that is polled on an interval
 * (`attach`). `finish()` prints a summary: count, wall time, average rate.
 */

/** Where the line goes: process.stderr, or anything with `write` (tests). */
export interface ProgressStream {
  /** Writes a piece of the line (a redraw, or a whole line when not a TTY). */
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressOptions {
  /** What is being done, e.g. 'gen base'. */
  readonly label: string;
  /** Units of work expected; unknown when undefined (no percent or ETA). */
  readonly total?: number;
  /** Name of the unit, e.g. 'vectors'. */
  readonly unit?: string;
  /** Default process.stderr. */
  readonly stream?: ProgressStream;
  /** Redraw in place; default stream.isTTY. */
  readonly tty?: boolean;
  /** False prints nothing (counting still works). Default: true unless PRESCORE_PROGRESS=0. */
  readonly enabled?: boolean;
  /** Minimum time between TTY redraws; default 100 ms (10 per second). */
  readonly redrawMs?: number;
  /** Time between lines when not a TTY; default 5000 ms. */
  readonly logEveryMs?: number;
  /** Millisecond clock (tests); default performance.now. */
  readonly now?: () => number;
}

export interface ProgressSummary {
  readonly label: string;
  readonly done: number;
  readonly total?: number;
  readonly elapsedMs: number;
  /** Average units per second over the whole run. */
  readonly rate: number;
}

/** A shared counter array: Int32Array (up to 2^31-1) or BigInt64Array. */
export type ProgressCounter = Int32Array | BigInt64Array;

/** Rate and ETA come from the work done over roughly this window (recent speed, not the average). */
const RATE_WINDOW_MS = 10_000;

export class Progress {
  readonly label: string;
  readonly unit: string;
  private totalValue: number | undefined;
  private doneValue = 0;
  private readonly stream: ProgressStream;
  private readonly tty: boolean;
  private readonly enabled: boolean;
  private readonly redrawMs: number;
  private readonly logEveryMs: number;
  private readonly now: () => number;
  private readonly startedAt: number;
  private lastDrawAt = -Infinity;
  private lastLogAt: number;
  private drawn = false;
  private finished: ProgressSummary | undefined;
  /** (time, done) samples for the recent rate. */
  private readonly samples: { t: number; done: number }[] = [];
  private poller: ReturnType<typeof setInterval> | undefined;
  private counter: ProgressCounter | undefined;
  private counterIndex = 0;
  private counterBase = 0;

  constructor(options: ProgressOptions) {
    this.label = options.label;
    this.unit = options.unit ?? '';
    this.totalValue = options.total;
    this.stream = options.stream ?? process.stderr;
    this.tty = options.tty ?? Boolean(this.stream.isTTY);
    this.enabled = options.enabled ?? process.env.PRESCORE_PROGRESS !== '0';
    this.redrawMs = options.redrawMs ?? 100;
    this.logEveryMs = options.logEveryMs ?? 5000;
    this.now = options.now ?? (() => performance.now());
    this.startedAt = this.now();
    this.lastLogAt = this.startedAt;
    this.samples.push({ t: this.startedAt, done: 0 });
  }

  /** A fresh shared counter for workers to `Atomics.add(counter, 0, n)` into. */
  static counter(): Int32Array {
    return new Int32Array(new SharedArrayBuffer(4));
  }

  get done(): number {
    return this.doneValue;
  }

  get total(): number | undefined {
    return this.totalValue;
  }

  set total(total: number | undefined) {
    this.totalValue = total;
  }

  /** Adds n units of work done. */
  tick(n = 1): void {
    this.update(this.doneValue + n);
  }

  /** Sets the absolute amount of work done. */
  update(done: number): void {
    if (this.finished) return;
    this.doneValue = done;
    this.maybeDraw(false);
  }

  /**
   * Polls `counter[index]` every `intervalMs` (default: the redraw interval on a TTY, 1 s
   * otherwise) and shows its value plus whatever was counted before. The timer is unref'd and
   * stops at finish()/stop().
   */
  attach(counter: ProgressCounter, options: { index?: number; intervalMs?: number } = {}): this {
    this.detach();
    this.counter = counter;
    this.counterIndex = options.index ?? 0;
    this.counterBase = this.doneValue - readCounter(counter, this.counterIndex);
    const interval = options.intervalMs ?? (this.tty ? this.redrawMs : 1000);
    this.poller = setInterval(() => this.poll(), interval);
    this.poller.unref?.();
    return this;
  }

  /** Reads the attached counter now (also done by the interval). */
  poll(): void {
    if (this.counter) this.update(this.counterBase + readCounter(this.counter, this.counterIndex));
  }

  /** Stops polling the counter (its last value is kept). */
  detach(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    if (this.counter) this.poll();
    this.counter = undefined;
  }

  /** Stops and prints the summary line: `label: 1.00M vectors in 12.3s (81.2k vectors/s)`. */
  finish(note?: string): ProgressSummary {
    if (this.finished) return this.finished;
    this.detach();
    const elapsedMs = this.now() - this.startedAt;
    const summary: ProgressSummary = {
      label: this.label,
      done: this.doneValue,
      ...(this.totalValue !== undefined ? { total: this.totalValue } : {}),
      elapsedMs,
      rate: elapsedMs > 0 ? (this.doneValue * 1000) / elapsedMs : 0,
    };
    this.finished = summary;
    if (this.enabled) {
      const unit = this.unit ? ` ${this.unit}` : '';
      const line = `${this.label}: ${formatCount(this.doneValue)}${unit} in ${formatDuration(elapsedMs)} ` + `(${formatCount(summary.rate)}${unit}/s)${note ? `, ${note}` : ''}`;
      this.stream.write(`${this.tty && this.drawn ? '\r\x1b[K' : ''}${line}\n`);
    }
    return summary;
  }

  /** Stops without a summary, clearing the TTY line (after a failure). */
  stop(): void {
    if (this.finished) return;
    this.detach();
    this.finished = { label: this.label, done: this.doneValue, elapsedMs: this.now() - this.startedAt, rate: 0 };
    if (this.enabled && this.tty && this.drawn) this.stream.write('\r\x1b[K');
  }

  /** The current status line (without control characters). */
  render(bar = this.tty): string {
    const now = this.now();
    const elapsed = now - this.startedAt;
    const rate = this.recentRate(now);
    const total = this.totalValue;
    const unit = this.unit ? ` ${this.unit}` : '';
    const parts: string[] = [];
    if (total !== undefined && total > 0) {
      const fraction = Math.min(1, Math.max(0, this.doneValue / total));
      if (bar) parts.push(progressBar(fraction, 24));
      parts.push(`${(fraction * 100).toFixed(1).padStart(5)}%`);
      parts.push(`${formatCount(this.doneValue)}/${formatCount(total)}${unit}`);
    } else {
      parts.push(`${formatCount(this.doneValue)}${unit}`);
    }
    parts.push(`${formatCount(rate)}/s`);
    if (total !== undefined && total > 0) {
      const left = total - this.doneValue;
      parts.push(left <= 0 ? 'ETA 0s' : rate > 0 ? `ETA ${formatDuration((left / rate) * 1000)}` : 'ETA ?');
    }
    parts.push(`elapsed ${formatDuration(elapsed)}`);
    return `${this.label}: ${parts.join('  ')}`;
  }

  private maybeDraw(force: boolean): void {
    const now = this.now();
    this.sample(now);
    if (!this.enabled) return;
    if (this.tty) {
      if (!force && now - this.lastDrawAt < this.redrawMs) return;
      this.lastDrawAt = now;
      let line = this.render(true);
      const columns = this.stream.columns;
      if (columns && line.length >= columns) line = line.slice(0, Math.max(0, columns - 1));
      this.stream.write(`\r${line}\x1b[K`);
      this.drawn = true;
    } else {
      if (!force && now - this.lastLogAt < this.logEveryMs) return;
      this.lastLogAt = now;
      this.stream.write(`${this.render(false)}\n`);
    }
  }

  private sample(now: number): void {
    const s = this.samples;
    const last = s[s.length - 1];
    // About one sample per 250 ms; drop samples older than the window (keep one before it).
    if (now - last.t >= 250) s.push({ t: now, done: this.doneValue });
    while (s.length > 2 && now - s[1].t > RATE_WINDOW_MS) s.shift();
  }

  private recentRate(now: number): number {
    const first = this.samples[0];
    const dt = now - first.t;
    return dt > 0 ? ((this.doneValue - first.done) * 1000) / dt : 0;
  }
}

function readCounter(counter: ProgressCounter, index: number): number {
  return counter instanceof BigInt64Array ? Number(Atomics.load(counter, index)) : Atomics.load(counter, index);
}

function progressBar(fraction: number, width: number): string {
  const full = Math.round(fraction * width);
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}]`;
}

/** 987, 12,345, 123k, 1.23M, 12.3G: at most ~6 characters for large numbers. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a < 100_000) return a < 10 && !Number.isInteger(n) ? n.toFixed(1) : Math.round(n).toLocaleString('en-US');
  const units = ['k', 'M', 'G', 'T'];
  let v = n / 1000;
  let u = 0;
  while (Math.abs(v) >= 999.5 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)}${units[u]}`;
}

/** 850ms, 12.3s, 4m05s, 1h02m. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(sec).padStart(2, '0')}s`;
}
