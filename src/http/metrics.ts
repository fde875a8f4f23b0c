/**
 * A minimal Prometheus registry: counters, gauges and fixed-bucket histograms with labels,
 * rendered in the text exposition format (version 0.0.4). Written here rather than pulled in
 * (prom-client) because the server needs ~6 metric families and no process collectors, and
 * the format is small and stable.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Readonly<Record<string, string>>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

abstract class Family {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${name}`);
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith('__') || l === 'le') throw new Error(`invalid label name ${l} on ${name}`);
    }
  }

  /** Series key: label values in declared order (label values may hold any character). */
  protected key(labels: Labels): string {
    return JSON.stringify(this.labelNames.map((n) => labels[n] ?? ''));
  }

  protected labelText(labels: Labels, extra?: readonly [string, string]): string {
    const parts = this.labelNames.map((n) => `${n}="${escapeLabel(labels[n] ?? '')}"`);
    if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
    return parts.length === 0 ? '' : `{${parts.join(',')}}`;
  }

  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  abstract samples(): string[];

  render(): string {
    return [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`, ...this.samples()].join('\n');
  }
}

export class Counter extends Family {
  readonly type = 'counter';
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new Error(`counter ${this.name} can only increase (by ${by})`);
    const k = this.key(labels);
    const s = this.series.get(k);
    if (s) s.value += by;
    else this.series.set(k, { labels: { ...labels }, value: by });
  }

  get(labels: Labels = {}): number {
    return this.series.get(this.key(labels))?.value ?? 0;
  }

  samples(): string[] {
    // An unlabelled counter is exported as 0 before its first increment, so dashboards see it.
    if (this.series.size === 0 && this.labelNames.length === 0) return [`${this.name} 0`];
    return [...this.series.values()].map((s) => `${this.name}${this.labelText(s.labels)} ${formatValue(s.value)}`);
  }
}

/** A gauge read at scrape time (in-flight and queued counts live in the admission controller). */
export class Gauge extends Family {
  readonly type: 'gauge' | 'counter' = 'gauge';
  constructor(
    name: string,
    help: string,
    private readonly read: () => number,
  ) {
    super(name, help, []);
  }

  samples(): string[] {
    return [`${this.name} ${formatValue(this.read())}`];
  }
}

/** A counter kept elsewhere and read at scrape time (the process's CPU time). */
export class CounterReading extends Gauge {
  override readonly type = 'counter';
}

/** A distribution kept elsewhere (Node's event-loop delay monitor), rendered by a DistributionHistogram. */
export interface Distribution {
  readonly count: number;
  readonly sum: number;
  /** How many samples are at most `value`. */
  countAtMost(value: number): number;
}

/** A histogram read at scrape time from a Distribution, in fixed buckets (cumulative, as the format wants). */
export class DistributionHistogram extends Family {
  readonly type = 'histogram';
  constructor(
    name: string,
    help: string,
    readonly buckets: readonly number[],
    private readonly read: () => Distribution,
  ) {
    super(name, help, []);
  }

  samples(): string[] {
    const d = this.read();
    const out = this.buckets.map((b) => `${this.name}_bucket{le="${formatValue(b)}"} ${Math.min(d.count, d.countAtMost(b))}`);
    out.push(`${this.name}_bucket{le="+Inf"} ${d.count}`, `${this.name}_sum ${formatValue(d.sum)}`, `${this.name}_count ${d.count}`);
    return out;
  }
}

export class Histogram extends Family {
  readonly type = 'histogram';
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]! > buckets[i - 1]!)) throw new Error(`histogram ${name}: buckets must increase`);
    }
  }

  observe(labels: Labels, value: number): void {
    const k = this.key(labels);
    let s = this.series.get(k);
    if (!s) {
      s = { labels: { ...labels }, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    // Counts are per bucket here and made cumulative when rendered.
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  count(labels: Labels): number {
    return this.series.get(this.key(labels))?.count ?? 0;
  }

  samples(): string[] {
    const out: string[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((b, i) => {
        cumulative += s.counts[i]!;
        out.push(`${this.name}_bucket${this.labelText(s.labels, ['le', formatValue(b)])} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${this.labelText(s.labels, ['le', '+Inf'])} ${s.count}`);
      out.push(`${this.name}_sum${this.labelText(s.labels)} ${formatValue(s.sum)}`);
      out.push(`${this.name}_count${this.labelText(s.labels)} ${s.count}`);
    }
    return out;
  }
}

export class Registry {
  private readonly families: Family[] = [];

  register<F extends Family>(family: F): F {
    if (this.families.some((f) => f.name === family.name)) throw new Error(`metric ${family.name} registered twice`);
    this.families.push(family);
    return family;
  }

  /** The text exposition: one HELP/TYPE block per family, newline-terminated. */
  render(): string {
    return this.families.map((f) => f.render()).join('\n') + '\n';
  }
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
