/**
 * Human durations for the CLI ("500ms", "60s", "2m", "1m30s", "1.5s"). A bare number is
 * rejected rather than guessed at: "60" could mean seconds or milliseconds.
 */

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?|\.\d+)(us|ms|s|m|h)/gy;

/** Parses a duration into milliseconds; throws an Error naming `what` on bad input. */
export function parseDuration(text: string, what = 'duration'): number {
  const s = text.trim().toLowerCase();
  if (s === '') throw new Error(`${what}: empty duration`);
  PART.lastIndex = 0;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = PART.exec(s)) !== null) {
    total += Number(m[1]) * UNIT_MS[m[2]];
    pos = PART.lastIndex;
  }
  if (pos !== s.length || pos === 0) {
    throw new Error(`${what}: cannot parse duration "${text}" (use a number with a unit: 500ms, 60s, 2m, 1m30s)`);
  }
  if (!Number.isFinite(total)) throw new Error(`${what}: duration "${text}" is too large`);
  return total;
}

/** Formats milliseconds compactly for progress lines and tables ("950ms", "12.5s", "2m05s"). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${trim(ms / 1000)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms - m * 60_000) / 1000);
  return `${m}m${String(s).padStart(2, '0')}s`;
}

function trim(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}
