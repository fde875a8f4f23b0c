/**
 * The HTML report: one self-contained file (inline CSS and SVG, the report JSON embedded as an
 * inert data block; no scripts or external resources), readable offline and attachable to issues.
 */
import { formatDuration } from './duration.js';
import type { FindMaxResult } from './findMax.js';
import type { LatencySummary, LoadReport } from './report.js';
import { chart, esc, linearTicks, logTicks, type Series } from './svg.js';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

const CSS = `
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.sub{color:#666;margin-bottom:16px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}
.pass{color:#2a7d2a;font-weight:600}.fail{color:#b22;font-weight:600}
.note{color:#555;font-size:12px;max-width:860px}
svg.chart{display:block;margin:8px 0;background:#fff;width:100%;height:auto}
svg .title{font-size:13px;font-weight:600}
svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#999}
svg .xtick{font-size:11px;text-anchor:middle;fill:#444}svg .ytick{font-size:11px;text-anchor:end;dominant-baseline:middle;fill:#444}
svg .xlabel,svg .ylabel{font-size:12px;text-anchor:middle;fill:#333}
svg .legend{font-size:13px;fill:#333}svg .band{font-size:10px;fill:#888}svg .hline{font-size:11px;text-anchor:end}
.warn{background:#fff4e5;border:1px solid #f0c36d;padding:6px 10px;margin:8px 0}
`;

function num(v: number | null, digits = 2): string {
  if (v === null) return '–';
  if (Math.abs(v) >= 1000) return v.toFixed(0);
  if (Math.abs(v) >= 100) return v.toFixed(1);
  return v.toFixed(digits);
}

function page(title: string, body: string, data: unknown): string {
  // The JSON is inert data (not executed); "</" is escaped so it cannot close the element.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>${CSS}</style></head>
<body>
${body}
<script type="application/json" id="report-data">${json}</script>
</body></html>
`;
}

function timeTicks(maxS: number): Array<[number, string]> {
  return linearTicks(maxS).ticks.map(([v]) => [v, v < 60 ? `${v}s` : formatDuration(v * 1000)] as [number, string]);
}

/** Percentile x position: log10(1 / (1 - p)); 100% itself is not representable. */
function px(p: number): number {
  return Math.log10(100 / (100 - Math.min(p, 99.9999999)));
}

function percentileAxisTicks(xMax: number): Array<[number, string]> {
  const labels = ['0%', '90%', '99%', '99.9%', '99.99%', '99.999%', '99.9999%', '99.99999%'];
  const ticks: Array<[number, string]> = [];
  for (let i = 0; i <= Math.ceil(xMax) && i < labels.length; i++) ticks.push([i, labels[i]]);
  return ticks;
}

/** HdrHistogram-style plot of several percentile curves. */
function percentilePlot(curves: ReadonlyArray<{ name: string; curve: ReadonlyArray<readonly [number, number]> }>, sloMs?: number): string {
  const pts = curves.map((c) => c.curve.filter(([p]) => p < 100));
  const xMax = Math.max(2, ...pts.map((c) => (c.length > 0 ? px(c[c.length - 1][0]) : 0)));
  const yMaxRaw = Math.max(sloMs ?? 0, ...curves.flatMap((c) => c.curve.map(([, v]) => v)));
  const y = linearTicks(yMaxRaw * 1.05, '');
  const series: Series[] = curves.map((c, i) => ({
    name: c.name,
    color: COLORS[i % COLORS.length],
    points: pts[i].map(([p, v]) => [px(p), v] as const),
    title: (x, v) => `${c.name}: p${(100 * (1 - 10 ** -x)).toPrecision(6)} = ${v} ms`,
    markers: curves.length === 1,
  }));
  return chart(
    'Latency by percentile (ok responses, from intended send time)',
    { min: 0, max: Math.ceil(xMax), ticks: percentileAxisTicks(xMax), label: 'percentile (log scale of 1/(1-p))' },
    { min: 0, max: y.max, ticks: y.ticks, label: 'latency (ms)' },
    series,
    { hlines: sloMs !== undefined ? [{ y: sloMs, color: '#b22', label: `SLO p99 ${sloMs} ms` }] : [] },
  );
}

function latencyOverTime(r: LoadReport): string {
  const ts = r.time_series;
  const vals = ts.flatMap((s) => [s.p50_ms, s.p99_ms, s.max_ms]).filter((v): v is number => v !== null && v > 0);
  const lt = logTicks(vals.length ? Math.min(...vals) : 0.1, vals.length ? Math.max(...vals) : 10, '');
  const xMax = Math.max(1, ts.length);
  const mk = (name: string, color: string, get: (i: number) => number | null, style: Partial<Series>): Series => ({
    name,
    color,
    points: ts.map((s, i) => [s.t + 0.5, get(i)] as const),
    markers: true,
    title: (x, v) => `${name} t=${Math.floor(x)}s: ${v} ms`,
    ...style,
  });
  const warm = r.config.warmup_s;
  return chart(
    'Latency over time (per second of intended send time, ok responses)',
    { min: 0, max: xMax, ticks: timeTicks(xMax), label: 'time since start (s)' },
    { min: lt.min, max: lt.max, log: true, ticks: lt.ticks, label: 'latency (ms, log)' },
    // Drawn max first, p99 over it: with few requests per second p99 often equals max, and the
    // p99 line must stay visible (thick, solid) over the thin dotted max, whose large rings
    // still show around p99's dots where the two coincide.
    [
      mk('max', '#555', (i) => ts[i].max_ms, { dash: '2 3', width: 1.4, markerRadius: 5.5, hollow: true }),
      mk('p99', COLORS[1], (i) => ts[i].p99_ms, { width: 2.6, markerRadius: 3.2 }),
      mk('p50', COLORS[0], (i) => ts[i].p50_ms, { dash: '8 3', width: 2 }),
    ],
    { bands: warm > 0 ? [{ x0: 0, x1: warm, color: '#f3f3f3', label: 'warm-up' }] : [] },
  );
}

function throughputOverTime(r: LoadReport): string {
  // Counts of a partial last second are scaled to a rate.
  const ts = r.time_series.map((s) => {
    const k = s.span_s > 0 && s.span_s < 1 ? 1 / s.span_s : 1;
    const x = (v: number): number => Math.round(v * k * 10) / 10;
    return { ...s, sent: x(s.sent), ok: x(s.ok), shed: x(s.shed), timeout: x(s.timeout), error: x(s.error) };
  });
  const top = Math.max(1, ...ts.map((s) => Math.max(s.sent, s.completed, s.shed + s.timeout + s.error)));
  const yt = linearTicks(top * 1.1);
  const xMax = Math.max(1, ts.length);
  const bars = [
    { name: 'shed', color: '#ff7f0e', get: (i: number) => ts[i].shed, base: (_i: number) => 0 },
    { name: 'timeout', color: '#9467bd', get: (i: number) => ts[i].timeout, base: (i: number) => ts[i].shed },
    { name: 'error', color: '#d62728', get: (i: number) => ts[i].error, base: (i: number) => ts[i].shed + ts[i].timeout },
  ].map((b) => ({
    name: b.name,
    color: b.color,
    rects: ts.map((s, i) => [s.t + 0.1, s.t + 0.9, b.base(i), b.base(i) + b.get(i)] as const),
  }));
  return chart(
    'Requests per second (sent/ok by intended time, completed by completion time; failures stacked)',
    { min: 0, max: xMax, ticks: timeTicks(xMax), label: 'time since start (s)' },
    { min: 0, max: yt.max, ticks: yt.ticks, label: 'requests / s' },
    [
      { name: 'sent', color: '#7f7f7f', dash: true, points: ts.map((s) => [s.t + 0.5, s.sent] as const) },
      { name: 'ok', color: COLORS[2], points: ts.map((s) => [s.t + 0.5, s.ok] as const), markers: true, title: (x, v) => `ok t=${Math.floor(x)}s: ${v}` },
      { name: 'completed', color: COLORS[0], dash: true, points: ts.map((s) => [s.t + 0.5, s.completed] as const) },
    ],
    { bars, hlines: [{ y: r.offered_rate, color: '#333', label: `offered ${r.offered_rate}/s` }] },
  );
}

function latencyRow(name: string, s: LatencySummary | null): string {
  if (s === null) return '';
  return `<tr><td>${esc(name)}</td><td>${num(s.p50)}</td><td>${num(s.p90)}</td><td>${num(s.p99)}</td><td>${num(s.p999)}</td><td>${num(s.max)}</td><td>${s.count}</td></tr>`;
}

function summaryTables(r: LoadReport): string {
  const c = r.counts;
  const cfg = r.config;
  const kinds = Object.entries(c.errors_by_kind)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const statuses = Object.entries(c.status_counts)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const warn: string[] = [];
  if (c.sent > 0 && c.late / c.sent > 0.05) warn.push(`${((100 * c.late) / c.sent).toFixed(1)}% of requests left the generator late: the client may be a bottleneck.`);
  if (r.request_cap_reached) warn.push('The request cap was reached; the run was cut short.');
  if (r.interrupted) warn.push('The run was interrupted; rates cover the part that ran.');
  return `
${warn.map((w) => `<div class="warn">${esc(w)}</div>`).join('\n')}
<h2>Rates (steady window ${num(r.steady_window_s, 1)} s)</h2>
<table><tr><th>offered</th><th>sent</th><th>achieved (ok)</th><th>completed (any answer)</th></tr>
<tr><td>${num(r.offered_rate, 1)}/s</td><td>${num(r.sent_rate, 1)}/s</td><td>${num(r.achieved_rate, 1)}/s</td><td>${num(r.completed_rate, 1)}/s</td></tr></table>
<h2>Latency (ms)</h2>
<table><tr><th></th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>n</th></tr>
${latencyRow('ok responses, from intended send time', r.latency_ms)}
${c.timeout > 0 ? latencyRow('ok + timeouts at elapsed time', r.latency_incl_timeouts_ms) : ''}
${latencyRow('server took_ms', r.server_took_ms)}
</table>
<p class="note">${esc(r.latency_basis)}</p>
<h2>Outcomes (steady window)</h2>
<table><tr><th>sent</th><th>ok</th><th>shed (429/503)</th><th>timeout</th><th>error</th><th>late</th></tr>
<tr><td>${c.sent}</td><td>${c.ok}</td><td>${c.shed}</td><td>${c.timeout} (client ${c.timeout_client}, 504 ${c.timeout_server}, deadline ${c.timeout_deadline})</td><td>${c.error}</td><td>${c.late}</td></tr></table>
<p class="note">statuses: ${esc(statuses || 'none')}${kinds ? `; errors: ${esc(kinds)}` : ''}</p>
${r.recall !== null ? `<h2>Quality</h2><table><tr><th>recall@${r.recall.k}</th><th>ok responses</th></tr><tr><td>${r.recall.mean.toFixed(4)}</td><td>${r.recall.queries}</td></tr></table>` : ''}
<h2>Client</h2>
<table><tr><th>max lateness</th><th>event-loop delay p99 / max</th><th>peak in-flight</th><th>socket pool</th><th>reset retries</th></tr>
<tr><td>${num(r.client.max_lateness_ms)} ms</td><td>${num(r.client.event_loop_delay_ms.p99)} / ${num(r.client.event_loop_delay_ms.max)} ms</td><td>${r.client.peak_in_flight}</td><td>${cfg.max_sockets}</td><td>${r.client.reset_retries}</td></tr></table>
<h2>Configuration</h2>
<table>
<tr><td>endpoint</td><td>${esc(cfg.endpoint)}</td></tr>
<tr><td>arrivals</td><td>${esc(cfg.arrivals)} at ${cfg.rate}/s, seed ${cfg.seed}</td></tr>
<tr><td>warm-up + duration</td><td>${formatDuration(cfg.warmup_s * 1000)} + ${formatDuration(cfg.duration_s * 1000)}</td></tr>
<tr><td>timeout</td><td>${cfg.timeout_ms} ms (client, from intended time)${cfg.server_timeout_ms !== null ? `; server timeout_ms ${cfg.server_timeout_ms}` : ''}</td></tr>
<tr><td>search</td><td>k=${cfg.k}${cfg.oversample !== null ? ` oversample=${cfg.oversample}` : ''}${cfg.num_candidates !== null ? ` num_candidates=${cfg.num_candidates}` : ''}${cfg.read_path !== null ? ` read_path=${esc(cfg.read_path)}` : ''}</td></tr>
<tr><td>queries</td><td>${esc(cfg.queries.source)} (${cfg.queries.count} x ${cfg.queries.dim})</td></tr>
${cfg.groundtruth !== null ? `<tr><td>ground truth</td><td>${esc(cfg.groundtruth)}</td></tr>` : ''}
<tr><td>started</td><td>${esc(r.started_at)}</td></tr>
</table>`;
}

/** The report of one run as a self-contained HTML page. */
export function renderHtml(r: LoadReport): string {
  const L = r.latency_ms;
  const body = `
<h1>prescore load: ${num(r.offered_rate, 1)}/s offered, p99 ${num(L.p99)} ms</h1>
<div class="sub">${esc(r.config.endpoint)} · ${esc(r.started_at)} · ${r.counts.ok} ok / ${r.counts.shed} shed / ${r.counts.timeout} timeout / ${r.counts.error} error</div>
${percentilePlot([{ name: 'ok responses', curve: r.percentile_curve }])}
${latencyOverTime(r)}
${throughputOverTime(r)}
${summaryTables(r)}`;
  return page(`prescore load ${r.offered_rate}/s`, body, r);
}

/** A find-max search as a self-contained HTML page. */
export function renderFindMaxHtml(f: FindMaxResult): string {
  const steps = f.steps;
  const rows = steps
    .map(
      (s, i) =>
        `<tr><td>${i + 1} (${s.phase})</td><td>${num(s.rate, 1)}</td><td>${num(s.sent_rate, 1)}</td><td>${num(s.achieved_rate, 1)}</td><td>${num(
          s.p50_ms,
        )}</td><td>${num(s.p99_ms)}</td><td>${num(s.p999_ms)}</td><td>${num(s.max_ms)}</td><td>${s.shed}</td><td>${s.timeout}</td><td>${s.error}</td><td>${s.late}</td><td class="${
          s.pass ? 'pass' : 'fail'
        }">${s.pass ? 'pass' : esc('fail: ' + s.reasons.join(', '))}</td></tr>`,
    )
    .join('\n');
  const sorted = [...steps].sort((a, b) => a.rate - b.rate);
  const p99s = sorted.map((s) => s.p99_ms ?? 0);
  const yt = linearTicks(Math.max(f.slo_p99_ms * 1.3, ...p99s.map((v) => Math.min(v, f.slo_p99_ms * 4))));
  const rt = logTicks(Math.min(...sorted.map((s) => s.rate)), Math.max(...sorted.map((s) => s.rate)));
  const p99Chart = chart(
    'p99 latency by offered rate',
    { min: rt.min, max: rt.max, log: true, ticks: rt.ticks, label: 'offered rate (requests/s, log)' },
    { min: 0, max: yt.max, ticks: yt.ticks, label: 'p99 (ms)' },
    [
      { name: 'p99', color: COLORS[1], points: sorted.map((s) => [s.rate, s.p99_ms] as const), markers: true, title: (x, v) => `${x}/s: p99 ${v} ms` },
      { name: 'p50', color: COLORS[0], points: sorted.map((s) => [s.rate, s.p50_ms] as const), markers: true, title: (x, v) => `${x}/s: p50 ${v} ms` },
    ],
    { hlines: [{ y: f.slo_p99_ms, color: '#b22', label: `SLO ${f.slo_p99_ms} ms` }] },
  );
  const at = logTicks(Math.min(...sorted.map((s) => Math.max(1, s.achieved_rate))), Math.max(...sorted.map((s) => s.rate)));
  const achievedChart = chart(
    'Achieved (ok) vs offered rate',
    { min: rt.min, max: rt.max, log: true, ticks: rt.ticks, label: 'offered rate (requests/s, log)' },
    { min: at.min, max: at.max, log: true, ticks: at.ticks, label: 'achieved ok/s (log)' },
    [
      {
        name: 'ideal',
        color: '#bbb',
        dash: true,
        points: [
          [rt.min, rt.min],
          [rt.max, rt.max],
        ],
      },
      { name: 'achieved', color: COLORS[2], points: sorted.map((s) => [s.rate, s.achieved_rate] as const), markers: true, title: (x, v) => `${x}/s offered: ${v}/s ok` },
    ],
  );
  const curves = sorted.filter((s) => s.percentile_curve.length > 0).map((s) => ({ name: `${s.rate}/s`, curve: s.percentile_curve }));
  const body = `
<h1>prescore load --find-max: ${f.max_sustainable_rate !== null ? `${num(f.max_sustainable_rate, 1)}/s sustainable` : 'no sustainable rate found'}</h1>
<div class="sub">${esc(f.endpoint)} · SLO p99 ≤ ${f.slo_p99_ms} ms, no shedding, no timeouts · limited by: ${esc(f.limited_by)} · ${esc(f.started_at)}</div>
<h2>Steps</h2>
<table><tr><th>step</th><th>offered/s</th><th>sent/s</th><th>ok/s</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>shed</th><th>timeout</th><th>error</th><th>late</th><th>verdict</th></tr>
${rows}</table>
<p class="note">Each step: ${formatDuration(f.warmup_s * 1000)} warm-up + ${formatDuration(f.step_duration_s * 1000)} measured. ${esc(f.latency_basis)}</p>
${p99Chart}
${achievedChart}
${curves.length > 0 ? percentilePlot(curves, f.slo_p99_ms) : ''}`;
  return page('prescore load --find-max', body, f);
}
