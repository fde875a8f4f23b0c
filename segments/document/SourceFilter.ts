/**
 * `_source` filtering as Elasticsearch applies it (source `includes` / `excludes`, each a list of
 * dotted paths with `*` wildcards): a value is kept when an include pattern matches its path or
 * one of its parents' paths (including an object includes everything under it), and no exclude
 * pattern does (excluding an object excludes everything under it). Objects are kept when they
 * keep a field (or were themselves matched); arrays keep their elements' filtered forms, in order;
 * elements of an array share its path. No includes means everything is included.
 */
export interface SourceFiltering {
  readonly includes: readonly string[];
  readonly excludes: readonly string[];
}

/** Whether the filtering keeps everything (nothing to do). */
export function isIdentity(f: SourceFiltering): boolean {
  return f.includes.length === 0 && f.excludes.length === 0;
}

/** The filtered copy of a parsed `_source` object (the input is not modified). */
export function filterSource(source: Record<string, unknown>, f: SourceFiltering): Record<string, unknown> {
  if (isIdentity(f)) return source;
  const includes = f.includes.map(compile);
  const excludes = f.excludes.map(compile);
  return filterObject(source, '', includes, excludes, includes.length === 0) ?? {};
}

/** Whether `path` (a field, not under an object the patterns already decided) is one the patterns name, for `fields` / docvalue patterns. */
export function matchesAny(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => compile(p).test(path));
}

function compile(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

/**
 * Whether a pattern could match something under `prefix` (so the object at `prefix` must be
 * entered): the pattern's literal head agrees with `prefix.` as far as both go.
 */
function mayMatchBelow(pattern: RegExp, prefix: string): boolean {
  const src = pattern.source.slice(1, -1); // the anchored body
  const star = src.indexOf('.*');
  const literal = (star < 0 ? src : src.slice(0, star)).replace(/\\(.)/g, '$1');
  const head = `${prefix}.`;
  return star < 0 ? literal.startsWith(head) : literal.startsWith(head) || head.startsWith(literal);
}

function filterValue(value: unknown, path: string, includes: readonly RegExp[], excludes: readonly RegExp[], included: boolean): unknown | undefined {
  if (excludes.some((e) => e.test(path))) return undefined;
  const here = included || includes.some((i) => i.test(path));
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      const kept = filterValue(v, path, includes, excludes, here);
      if (kept !== undefined) out.push(kept);
    }
    return out.length > 0 || here ? out : undefined;
  }
  if (typeof value === 'object' && value !== null) return filterObject(value as Record<string, unknown>, path, includes, excludes, here);
  return here ? value : undefined;
}

function filterObject(
  obj: Record<string, unknown>,
  path: string,
  includes: readonly RegExp[],
  excludes: readonly RegExp[],
  included: boolean,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let kept = false;
  for (const [key, value] of Object.entries(obj)) {
    const p = path === '' ? key : `${path}.${key}`;
    // Skip a subtree no include can reach (unless it is already included).
    if (!included && includes.length > 0 && !includes.some((i) => i.test(p) || (typeof value === 'object' && value !== null && mayMatchBelow(i, p)))) continue;
    const v = filterValue(value, p, includes, excludes, included);
    if (v !== undefined) {
      out[key] = v;
      kept = true;
    }
  }
  return kept || (included && path !== '') ? out : path === '' ? out : undefined;
}
