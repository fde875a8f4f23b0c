import { MappingError } from './MappingError.js';

/** The JSON kinds `match_mapping_type` names (after date and numeric detection). */
export type JsonKind = 'string' | 'long' | 'double' | 'boolean' | 'date' | 'object';
const KINDS: readonly string[] = ['string', 'long', 'double', 'boolean', 'date', 'object', 'binary', '*'];

/**
 * One entry of `dynamic_templates`, applied as Elasticsearch applies it: to a field dynamic
 * mapping is about to add, the first template whose conditions all hold gives the field's mapping.
 * Conditions: `match_mapping_type` (the JSON kind, or a list, `*` for any), `unmatch_mapping_type`,
 * `match` / `unmatch` on the field's own name and `path_match` / `path_unmatch` on its dotted path
 * (each a pattern or a list of patterns: simple wildcards `*` by default, Java-style regular
 * expressions with `match_pattern: "regex"`). In the mapping, `{name}` becomes the field's name and
 * `{dynamic_type}` its JSON kind.
 */
export class DynamicTemplate {
  private constructor(
    readonly name: string,
    private readonly json: Record<string, unknown>,
    private readonly kinds: readonly string[] | null,
    private readonly notKinds: readonly string[] | null,
    private readonly match: readonly RegExp[] | null,
    private readonly unmatch: readonly RegExp[] | null,
    private readonly pathMatch: readonly RegExp[] | null,
    private readonly pathUnmatch: readonly RegExp[] | null,
    private readonly mapping: Record<string, unknown>,
  ) {}

  static parse(entry: unknown, path: string): DynamicTemplate {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || Object.keys(entry).length !== 1) {
      throw new MappingError(path, 'a dynamic template is an object with one key, its name');
    }
    const [name, body] = Object.entries(entry)[0]!;
    const at = `${path}.${name}`;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new MappingError(at, 'expected an object');
    const t = body as Record<string, unknown>;
    for (const key of Object.keys(t)) {
      if (!['match_mapping_type', 'unmatch_mapping_type', 'match', 'unmatch', 'path_match', 'path_unmatch', 'match_pattern', 'mapping'].includes(key)) {
        if (key === 'runtime') throw new MappingError(`${at}.runtime`, 'runtime fields are not supported');
        throw new MappingError(`${at}.${key}`, `unknown dynamic template parameter [${key}]`);
      }
    }
    const regex = t.match_pattern === 'regex';
    if (t.match_pattern !== undefined && t.match_pattern !== 'regex' && t.match_pattern !== 'simple') {
      throw new MappingError(`${at}.match_pattern`, `expected simple or regex, got ${JSON.stringify(t.match_pattern)}`);
    }
    const patterns = (key: string): RegExp[] | null => {
      const v = t[key];
      if (v === undefined) return null;
      const list = Array.isArray(v) ? v : [v];
      return list.map((p, i) => {
        if (typeof p !== 'string') throw new MappingError(`${at}.${key}${Array.isArray(v) ? `.${i}` : ''}`, `expected a string, got ${JSON.stringify(p)}`);
        try {
          return regex ? new RegExp(`^(?:${p})$`) : wildcard(p);
        } catch (e) {
          throw new MappingError(`${at}.${key}`, `invalid pattern [${p}]: ${(e as Error).message}`);
        }
      });
    };
    const kinds = (key: string): string[] | null => {
      const v = t[key];
      if (v === undefined) return null;
      const list = Array.isArray(v) ? v : [v];
      for (const k of list)
        if (typeof k !== 'string' || !KINDS.includes(k)) throw new MappingError(`${at}.${key}`, `unknown mapping type [${String(k)}] (expected one of ${KINDS.join(', ')})`);
      return list as string[];
    };
    if (typeof t.mapping !== 'object' || t.mapping === null || Array.isArray(t.mapping)) throw new MappingError(`${at}.mapping`, 'a dynamic template needs a mapping object');
    return new DynamicTemplate(
      name,
      t,
      kinds('match_mapping_type'),
      kinds('unmatch_mapping_type'),
      patterns('match'),
      patterns('unmatch'),
      patterns('path_match'),
      patterns('path_unmatch'),
      t.mapping as Record<string, unknown>,
    );
  }

  /** Whether this template applies to a new field at `path` whose value is of `kind`. */
  matches(path: string, kind: JsonKind): boolean {
    const name = path.slice(path.lastIndexOf('.') + 1);
    if (this.kinds && !this.kinds.includes('*') && !this.kinds.includes(kind)) return false;
    if (this.notKinds && (this.notKinds.includes('*') || this.notKinds.includes(kind))) return false;
    if (this.match && !this.match.some((r) => r.test(name))) return false;
    if (this.unmatch?.some((r) => r.test(name))) return false;
    if (this.pathMatch && !this.pathMatch.some((r) => r.test(path))) return false;
    if (this.pathUnmatch?.some((r) => r.test(path))) return false;
    return true;
  }

  /** The template's mapping for a field named `name` of `kind`, placeholders replaced (a new object). */
  render(name: string, kind: JsonKind): Record<string, unknown> {
    const fill = (v: unknown): unknown => {
      if (typeof v === 'string') return v.replaceAll('{name}', name).replaceAll('{dynamic_type}', kind);
      if (Array.isArray(v)) return v.map(fill);
      if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [fill(k) as string, fill(x)]));
      return v;
    };
    const out = fill(this.mapping) as Record<string, unknown>;
    // A template without a type maps the field as its JSON kind does.
    if (out.type === undefined) out.type = kind === 'string' ? 'keyword' : kind === 'double' ? 'float' : kind;
    return out;
  }

  toJSON(): Record<string, unknown> {
    return { [this.name]: this.json };
  }
}

/** Elasticsearch's simple match: `*` matches any run of characters; everything else literally. */
function wildcard(p: string): RegExp {
  return new RegExp(
    `^${p
      .split('*')
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}
