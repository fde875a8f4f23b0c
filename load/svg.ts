/**
 * Minimal inline-SVG charts for the HTML report: no scripts, fonts or URLs, so the file is
 * self-contained and renders the same offline. Hover titles carry exact values.
 */

export interface Axis {
  readonly min: number;
  readonly max: number;
  readonly log?: boolean;
  readonly ticks: ReadonlyArray<readonly [number, string]>;
  readonly label: string;
}

export interface Series {
  readonly name: string;
  readonly color: string;
  /** Points with a null y break the line. */
  readonly points: ReadonlyArray<readonly [number, number | null]>;
  /** true: the default dash; a string: an SVG dash pattern (e.g. "2 3" for dots). */
  readonly dash?: boolean | string;
  /** Line width (default 1.8). */
  readonly width?: number;
  readonly markers?: boolean;
  /** Marker radius (default 2.6). */
  readonly markerRadius?: number;
  /** Rings instead of dots: a ring around another series' dot shows both where they coincide. */
  readonly hollow?: boolean;
  /** Formats a point's hover title. */
  readonly title?: (x: number, y: number) => string;
}

export interface Bars {
  readonly name: string;
  readonly color: string;
  /** [x0, x1, y] rectangles from the axis floor (or from `base` when stacked). */
  readonly rects: ReadonlyArray<readonly [number, number, number, number]>;
}

export interface ChartExtras {
  readonly bands?: ReadonlyArray<{ x0: number; x1: number; color: string; label: string }>;
  readonly hlines?: ReadonlyArray<{ y: number; color: string; label: string }>;
  readonly bars?: readonly Bars[];
}

// The drawing's own coordinates; the SVG scales to the page's width (CSS width:100%), keeping
// this aspect ratio, so a wide screen gets a wide plot instead of 860 px in the left 40%.
const W = 1200;
const H = 400;
const M = { l: 70, r: 20, t: 48, b: 48 };

function markerPaint(s: Series): string {
  return s.hollow === true ? `fill="#fff" stroke="${s.color}" stroke-width="1.5"` : `fill="${s.color}"`;
}

function dashOf(s: Series): string {
  if (s.dash === undefined || s.dash === false) return '';
  return ` stroke-dasharray="${s.dash === true ? '6 3' : s.dash}"`;
}

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function scale(a: Axis, lo: number, hi: number): (v: number) => number {
  if (a.log === true) {
    const l0 = Math.log10(a.min);
    const l1 = Math.log10(a.max);
    return (v) => lo + ((Math.log10(Math.max(v, a.min)) - l0) / (l1 - l0 || 1)) * (hi - lo);
  }
  return (v) => lo + ((v - a.min) / (a.max - a.min || 1)) * (hi - lo);
}

const n2 = (v: number): string => (Math.round(v * 10) / 10).toString();

export function chart(title: string, x: Axis, y: Axis, series: readonly Series[], extras: ChartExtras = {}): string {
  const sx = scale(x, M.l, W - M.r);
  const sy = scale(y, H - M.b, M.t);
  const clampY = (v: number): number => Math.min(H - M.b, Math.max(M.t, sy(v)));
  const out: string[] = [];
  out.push(`<svg class="chart" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMidYMid meet" role="img" aria-label="${esc(title)}">`);
  out.push(`<text x="${M.l}" y="18" class="title">${esc(title)}</text>`);
  for (const b of extras.bands ?? []) {
    const x0 = sx(b.x0);
    const x1 = sx(b.x1);
    out.push(`<rect x="${n2(x0)}" y="${M.t}" width="${n2(Math.max(0, x1 - x0))}" height="${H - M.t - M.b}" fill="${b.color}"><title>${esc(b.label)}</title></rect>`);
    out.push(`<text x="${n2(x0 + 4)}" y="${H - M.b - 5}" class="band">${esc(b.label)}</text>`);
  }
  // grid + ticks
  for (const [v, label] of y.ticks) {
    const py = n2(sy(v));
    out.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${py}" y2="${py}" class="grid"/>`);
    out.push(`<text x="${M.l - 6}" y="${py}" class="ytick">${esc(label)}</text>`);
  }
  x.ticks.forEach(([v, label], i) => {
    const px = n2(sx(v));
    const last = i === x.ticks.length - 1 && sx(v) > W - M.r - 30;
    out.push(`<line x1="${px}" x2="${px}" y1="${M.t}" y2="${H - M.b}" class="grid"/>`);
    out.push(`<text x="${px}" y="${H - M.b + 16}" class="xtick"${last ? ' style="text-anchor:end"' : ''}>${esc(label)}</text>`);
  });
  out.push(`<rect x="${M.l}" y="${M.t}" width="${W - M.l - M.r}" height="${H - M.t - M.b}" class="frame"/>`);
  out.push(`<text x="${(M.l + W - M.r) / 2}" y="${H - 8}" class="xlabel">${esc(x.label)}</text>`);
  out.push(`<text transform="translate(14 ${(M.t + H - M.b) / 2}) rotate(-90)" class="ylabel">${esc(y.label)}</text>`);
  for (const bars of extras.bars ?? []) {
    for (const [x0, x1, y0, y1] of bars.rects) {
      if (y1 <= y0) continue;
      const top = clampY(y1);
      const bottom = clampY(y0);
      out.push(
        `<rect x="${n2(sx(x0))}" y="${n2(top)}" width="${n2(Math.max(1, sx(x1) - sx(x0)))}" height="${n2(Math.max(1, bottom - top))}" fill="${bars.color}"><title>${esc(
          `${bars.name}: ${y1 - y0} at t=${x0}s`,
        )}</title></rect>`,
      );
    }
  }
  for (const h of extras.hlines ?? []) {
    const py = n2(sy(h.y));
    out.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${py}" y2="${py}" stroke="${h.color}" stroke-dasharray="6 4" stroke-width="1.5"/>`);
    out.push(`<text x="${W - M.r - 4}" y="${Number(py) - 4}" class="hline" fill="${h.color}">${esc(h.label)}</text>`);
  }
  for (const s of series) {
    let d = '';
    let pen = false;
    for (const [px, py] of s.points) {
      if (py === null || !Number.isFinite(py)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${n2(sx(px))} ${n2(clampY(py))}`;
      pen = true;
    }
    if (d !== '') {
      out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.width ?? 1.8}"${dashOf(s)}/>`);
    }
    if (s.markers === true) {
      for (const [px, py] of s.points) {
        if (py === null || !Number.isFinite(py)) continue;
        const t = s.title !== undefined ? s.title(px, py) : `${s.name}: ${py}`;
        out.push(`<circle cx="${n2(sx(px))}" cy="${n2(clampY(py))}" r="${s.markerRadius ?? 2.6}" ${markerPaint(s)}><title>${esc(t)}</title></circle>`);
      }
    }
  }
  // Legend above the plot area, each entry drawn as its series is (colour, dash, width, marker).
  let lx = M.l;
  const ly = M.t - 12;
  for (const s of series) {
    out.push(`<line x1="${lx}" x2="${lx + 28}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="${Math.max(2, s.width ?? 1.8)}"${dashOf(s)}/>`);
    if (s.markers === true) out.push(`<circle cx="${lx + 14}" cy="${ly}" r="${s.markerRadius ?? 2.6}" ${markerPaint(s)}/>`);
    out.push(`<text x="${lx + 34}" y="${ly + 4}" class="legend">${esc(s.name)}</text>`);
    lx += 48 + s.name.length * 7;
  }
  for (const b of extras.bars ?? []) {
    out.push(`<rect x="${lx}" y="${ly - 5}" width="14" height="10" fill="${b.color}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly + 4}" class="legend">${esc(b.name)}</text>`);
    lx += 34 + b.name.length * 7;
  }
  out.push('</svg>');
  return out.join('\n');
}

/** 1-2-5 ticks covering [0, max]. */
export function linearTicks(max: number, unit = ''): { max: number; ticks: Array<[number, string]> } {
  const top = max > 0 ? max : 1;
  const raw = top / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: Array<[number, string]> = [];
  const end = Math.ceil(top / step) * step;
  for (let v = 0; v <= end + step / 1e6; v += step) ticks.push([v, `${fmt(v)}${unit}`]);
  return { max: end, ticks };
}

/** Decade ticks (with 2 and 5) covering [min, max] on a log axis. */
export function logTicks(min: number, max: number, unit = ''): { min: number; max: number; ticks: Array<[number, string]> } {
  const lo = 10 ** Math.floor(Math.log10(Math.max(min, 1e-3)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(max, lo * 10)));
  const ticks: Array<[number, string]> = [];
  const decades = Math.round(Math.log10(hi / lo));
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (v <= hi * 1.0001) ticks.push([v, m === 1 || decades <= 2 ? `${fmt(v)}${unit}` : '']);
    }
  }
  return { min: lo, max: hi, ticks };
}

function fmt(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1000) return `${Math.round(v / 100) / 10}k`.replace('.0k', 'k');
  if (Math.abs(v) < 1) return String(Math.round(v * 1000) / 1000);
  return String(Math.round(v * 10) / 10);
}
