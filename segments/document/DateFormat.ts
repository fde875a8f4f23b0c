/**
 * Dates as Elasticsearch's `date` field type reads them: a value is turned into epoch
 * milliseconds (UTC) by the field's `format`, a `||`-separated list tried in order. The default,
 * as Elasticsearch's, is `strict_date_optional_time||epoch_millis`. Range queries also accept
 * date math (`now-1d/d`, `2024-01-01||+1M`).
 *
 * Supported named formats: `strict_date_optional_time` / `date_optional_time` (ISO 8601: a date,
 * optionally `T` and a time to the nanosecond, optionally `Z` or an offset; no zone means UTC),
 * `strict_date` / `date` (`yyyy-MM-dd`), `strict_date_time` / `date_time`, `epoch_millis`,
 * `epoch_second`, `basic_date` (`yyyyMMdd`), and custom patterns of `yyyy MM dd HH mm ss SSS Z`
 * letters with literal separators (`yyyy/MM/dd HH:mm:ss Z`). Any other format is refused when
 * the mapping is read, naming it. Fractions below a millisecond are truncated, as Elasticsearch's
 * millisecond `date` type stores them.
 */

export class DateParseError extends Error {
  constructor(
    readonly value: string,
    readonly format: string,
  ) {
    super(`failed to parse date field [${value}] with format [${format}]`);
    this.name = 'DateParseError';
  }
}

/** Elasticsearch's default `format` of a `date` field. */
export const DEFAULT_DATE_FORMAT = 'strict_date_optional_time||epoch_millis';
/** Elasticsearch's default `dynamic_date_formats`: which strings dynamic mapping takes for dates. */
export const DEFAULT_DYNAMIC_DATE_FORMATS = ['strict_date_optional_time', 'yyyy/MM/dd HH:mm:ss Z||yyyy/MM/dd Z'] as const;

type Parser = (s: string) => number | null;

/** A parsed `format`: the parsers of its `||` alternatives. */
export class DateFormat {
  private constructor(
    readonly pattern: string,
    private readonly parsers: readonly Parser[],
  ) {}

  /** Throws a RangeError naming the unknown format. */
  static of(pattern: string): DateFormat {
    const parts = pattern.split('||').map((p) => p.trim());
    if (parts.length === 0 || parts.some((p) => p === '')) throw new RangeError(`invalid date format [${pattern}]`);
    return new DateFormat(pattern, parts.map(parserFor));
  }

  /** Epoch milliseconds of a JSON value (a string, or a number for the epoch formats), or a DateParseError. */
  parse(value: unknown): number {
    const s = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value : null;
    if (s !== null) {
      for (const p of this.parsers) {
        const ms = p(s);
        if (ms !== null && Number.isFinite(ms)) return ms;
      }
    }
    throw new DateParseError(typeof value === 'string' ? value : JSON.stringify(value), this.pattern);
  }

  /** Whether `value` parses (dynamic mapping's date detection). */
  matches(value: string): boolean {
    return this.parsers.some((p) => p(value) !== null);
  }

  /** ISO 8601 in UTC with milliseconds, as Elasticsearch renders a date doc value. */
  static formatIso(ms: number): string {
    return new Date(ms).toISOString();
  }
}

function parserFor(name: string): Parser {
  switch (name) {
    case 'strict_date_optional_time':
    case 'date_optional_time':
    case 'strict_date_optional_time_nanos':
      return (s) => iso(s, name.startsWith('strict'), false);
    case 'strict_date_time':
    case 'date_time':
      return (s) => iso(s, name.startsWith('strict'), true);
    case 'strict_date':
    case 'date':
    case 'yyyy-MM-dd':
      return pattern('yyyy-MM-dd');
    case 'basic_date':
      return pattern('yyyyMMdd');
    case 'epoch_millis':
      return (s) => epoch(s, 1);
    case 'epoch_second':
      return (s) => epoch(s, 1000);
    default:
      if (/^[yMdHmsSZ'\s/:.\-T,]+$/.test(name) && /yyyy/.test(name)) return pattern(name);
      throw new RangeError(
        `unsupported date format [${name}] (supported: strict_date_optional_time, date_optional_time, strict_date_time, strict_date, basic_date, epoch_millis, epoch_second, or a pattern of yyyy MM dd HH mm ss SSS Z)`,
      );
  }
}

function epoch(s: string, unitMs: number): number | null {
  if (!/^-?\d+(\.\d+)?$/.test(s)) return null;
  const v = Number(s) * unitMs;
  return Number.isSafeInteger(Math.trunc(v)) ? Math.trunc(v) : null;
}

const ISO = /^(\d{4})-(\d{1,2})(?:-(\d{1,2}))?(?:[Tt ](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:[.,](\d{1,9}))?)?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** ISO 8601 as Elasticsearch's `(strict_)date_optional_time` reads it. */
function iso(s: string, strict: boolean, timeRequired: boolean): number | null {
  const m = ISO.exec(s);
  if (m === null) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  if (
    strict &&
    (mo!.length !== 2 ||
      (d !== undefined && d.length !== 2) ||
      (h !== undefined && h.length !== 2) ||
      (mi !== undefined && mi.length !== 2) ||
      (sec !== undefined && sec.length !== 2))
  )
    return null;
  if (strict && d === undefined) return null; // strict formats need yyyy-MM-dd
  if (timeRequired && (h === undefined || mi === undefined || sec === undefined || zone === undefined)) return null;
  if (h !== undefined && mi === undefined && strict) return null;
  return compose(
    +y!,
    +mo!,
    d === undefined ? 1 : +d,
    h === undefined ? 0 : +h,
    mi === undefined ? 0 : +mi,
    sec === undefined ? 0 : +sec,
    frac === undefined ? 0 : Math.trunc(Number(`0.${frac}`) * 1000 + 1e-9),
    zone,
  );
}

/** Epoch ms of the given fields in the given zone, or null when a field is out of range (month 13, Feb 30). */
function compose(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, zone: string | undefined): number | null {
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return null;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  // Date.UTC maps years 0-99 to 1900-1999.
  const utc = y < 100 ? new Date(t).setUTCFullYear(y) : t;
  const offset = zoneOffsetMinutes(zone);
  return offset === null ? null : utc - offset * 60_000;
}

function zoneOffsetMinutes(zone: string | undefined): number | null {
  if (zone === undefined || zone === 'Z' || zone === 'z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (m === null) return null;
  const hours = +m[2]!;
  const minutes = m[3] === undefined ? 0 : +m[3];
  if (hours > 18 || minutes > 59) return null;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

function daysInMonth(y: number, mo: number): number {
  return [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
}

/** A Java-style pattern of `yyyy MM dd HH mm ss SSS Z` and literal characters ('quoted' literals too). */
function pattern(p: string): Parser {
  const tokens: { kind: string; width: number }[] = [];
  let regex = '^';
  for (let i = 0; i < p.length; ) {
    const c = p[i]!;
    if (c === "'") {
      const end = p.indexOf("'", i + 1);
      if (end < 0) throw new RangeError(`invalid date format [${p}]: unterminated quote`);
      regex += escapeRegExp(p.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    let j = i;
    while (j < p.length && p[j] === c) j++;
    const width = j - i;
    if ('yMdHmsS'.includes(c)) {
      tokens.push({ kind: c, width });
      regex += c === 'y' ? '(-?\\d{4,9})' : c === 'S' ? `(\\d{1,${Math.max(width, 9)}})` : `(\\d{${width}})`;
    } else if (c === 'Z') {
      tokens.push({ kind: 'Z', width });
      regex += '(Z|[+-]\\d{2}:?\\d{2})';
    } else {
      regex += escapeRegExp(p.slice(i, j));
    }
    i = j;
  }
  const re = new RegExp(`${regex}$`);
  return (s) => {
    const m = re.exec(s);
    if (m === null) return null;
    const f: Record<string, number> = { y: 1970, M: 1, d: 1, H: 0, m: 0, s: 0, S: 0 };
    let zone: string | undefined;
    tokens.forEach((t, i) => {
      const v = m[i + 1]!;
      if (t.kind === 'Z') zone = v;
      else if (t.kind === 'S') f.S = Math.trunc(Number(`0.${v}`) * 1000 + 1e-9);
      else f[t.kind] = +v;
    });
    return compose(f.y!, f.M!, f.d!, f.H!, f.m!, f.s!, f.S!, zone);
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * Elasticsearch date math, for range query bounds: an anchor (`now`, or a date in the field's
 * format followed by `||`), then any number of `+N<unit>`, `-N<unit>` and `/<unit>` (rounding
 * down; `roundUp` rounds to the last millisecond of the unit instead, as Elasticsearch does for
 * `gt` and `lte`). Units: y M w d h H m s. A value without date math parses with the format.
 */
export function parseDateMath(value: unknown, format: DateFormat, nowMs: number, roundUp = false): number {
  if (typeof value !== 'string') return format.parse(value);
  let anchor: number;
  let rest: string;
  if (value.startsWith('now')) {
    anchor = nowMs;
    rest = value.slice(3);
  } else {
    const bar = value.indexOf('||');
    if (bar < 0) return format.parse(value);
    anchor = format.parse(value.slice(0, bar));
    rest = value.slice(bar + 2);
  }
  let t = anchor;
  const op = /([+-]\d+|\/)([yMwdhHms])/y;
  let at = 0;
  while (at < rest.length) {
    op.lastIndex = at;
    const m = op.exec(rest);
    if (m === null) throw new DateParseError(value, `${format.pattern} with date math`);
    at = op.lastIndex;
    const unit = m[2]!;
    if (m[1] === '/') t = round(t, unit, roundUp);
    else t = add(t, +m[1]!, unit);
  }
  return t;
}

function add(t: number, n: number, unit: string): number {
  const d = new Date(t);
  switch (unit) {
    case 'y':
      d.setUTCFullYear(d.getUTCFullYear() + n);
      return d.getTime();
    case 'M':
      d.setUTCMonth(d.getUTCMonth() + n);
      return d.getTime();
    case 'w':
      return t + n * 7 * 86_400_000;
    case 'd':
      return t + n * 86_400_000;
    case 'h':
    case 'H':
      return t + n * 3_600_000;
    case 'm':
      return t + n * 60_000;
    default:
      return t + n * 1000;
  }
}

function round(t: number, unit: string, up: boolean): number {
  const d = new Date(t);
  let start: number;
  let next: number;
  switch (unit) {
    case 'y':
      start = Date.UTC(d.getUTCFullYear(), 0, 1);
      next = Date.UTC(d.getUTCFullYear() + 1, 0, 1);
      break;
    case 'M':
      start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      break;
    case 'w': {
      // ISO weeks start on Monday.
      const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      start = day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
      next = start + 7 * 86_400_000;
      break;
    }
    default: {
      const size = unit === 'd' ? 86_400_000 : unit === 'h' || unit === 'H' ? 3_600_000 : unit === 'm' ? 60_000 : 1000;
      start = Math.floor(t / size) * size;
      next = start + size;
    }
  }
  return up ? next - 1 : start;
}
