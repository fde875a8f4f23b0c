import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../load/runLoad.js';
import { renderHtml } from '../load/html.js';
import { chart } from '../load/svg.js';

/** The load report's plots: as wide as the page, every series told apart, p99 never hidden under max. */
let server: Server;
let url: string;

beforeAll(async () => {
  const body = JSON.stringify({ hits: [{ id: '1', doc: 1, score: 0.5 }], took_ms: 1, stats: {} });
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

/** The `<svg>` element whose title is `title`. */
function svgTitled(html: string, title: string): string {
  const svg = [...html.matchAll(/<svg[\s\S]*?<\/svg>/g)].map((m) => m[0]).find((s) => s.includes(`aria-label="${title}`));
  expect(svg, title).toBeDefined();
  return svg!;
}

describe('load report plots', () => {
  it('scale to the page width and keep their aspect ratio', async () => {
    const html = renderHtml(await runLoad({ url, rate: 50, durationMs: 600, dim: 4 }));
    const svgs = [...html.matchAll(/<svg class="chart"[^>]*>/g)].map((m) => m[0]);
    expect(svgs.length).toBeGreaterThanOrEqual(3);
    for (const s of svgs) {
      expect(s).toMatch(/width="100%"/);
      expect(s).toMatch(/viewBox="0 0 \d+ \d+"/);
    }
    expect(html).toMatch(/svg\.chart\{[^}]*width:100%/);
    expect(html).not.toMatch(/body\{[^}]*max-width/);
  });

  it('latency over time: max, p99 and p50 differ in style, max is drawn first and p99 above it', async () => {
    const html = renderHtml(await runLoad({ url, rate: 50, durationMs: 600, dim: 4 }));
    const svg = svgTitled(html, 'Latency over time');
    const paths = [...svg.matchAll(/<path d="[^"]+" fill="none" stroke="([^"]+)" stroke-width="([^"]+)"( stroke-dasharray="([^"]+)")?\/>/g)].map((m) => ({
      color: m[1],
      width: m[2],
      dash: m[4] ?? 'solid',
    }));
    expect(paths).toHaveLength(3);
    const [max, p99, p50] = paths;
    // Pairwise distinguishable without colour (dash or width) and with it.
    expect(new Set(paths.map((p) => p.color)).size).toBe(3);
    expect(new Set(paths.map((p) => `${p.dash}/${p.width}`)).size).toBe(3);
    expect(p99!.dash).toBe('solid');
    expect(Number(p99!.width)).toBeGreaterThan(Number(max!.width));
    expect(p50!.dash).not.toBe('solid');
    // The legend names each series, drawn in its own style.
    const legend = [...svg.matchAll(/<text[^>]*class="legend">([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(legend).toEqual(['max', 'p99', 'p50']);
    // max's markers are rings, so they show around p99's dots where the two coincide.
    expect(svg).toMatch(/<circle[^>]*fill="#fff" stroke="[^"]+"[^>]*><title>max /);
  });

  it('a series given a dash pattern and width is drawn and listed with exactly those', () => {
    const svg = chart('t', { min: 0, max: 1, ticks: [], label: 'x' }, { min: 0, max: 1, ticks: [], label: 'y' }, [
      {
        name: 'a',
        color: '#123456',
        dash: '2 3',
        width: 3,
        points: [
          [0, 0],
          [1, 1],
        ],
      },
    ]);
    expect(svg).toContain('<path d="M70 352L1180 48" fill="none" stroke="#123456" stroke-width="3" stroke-dasharray="2 3"/>');
    expect(svg).toMatch(/<line [^>]*stroke="#123456" stroke-width="3" stroke-dasharray="2 3"\/>/);
  });
});
