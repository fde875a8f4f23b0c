import { TAGS } from './DocFields.js';
import { CLUSTERS } from './EmbeddingModel.js';

/**
 * The Elasticsearch Query DSL shapes `prescore gen --filters` emits in filters.json (the content
 * of `knn.filter`), and a small evaluator for exactly those shapes over the generator's own
 * columns (cluster, u, tags). It is what the filtered ground truth runs, so the ground truth
 * follows the DSL as written, not a second description of it. A general DSL evaluator is not
 * the point: any other shape is refused with the path of the clause.
 *
 * Shapes (leaves, and the two ways they combine):
 *   {"range": {"u": {"lt": x}}}                      u < x
 *   {"term": {"cluster": "c17"}}                     the doc's cluster is c17
 *   {"terms": {"cluster": ["c3", "c17", ...]}}       its cluster is one of them
 *   {"term": {"tags": "s10"}}                        tags (multi-valued) contains s10
 *   {"bool": {"filter": [A, B, ...]}}                all of them
 *   {"bool": {"should": [A, B, ...], "minimum_should_match": 1}}   any of them
 *
 * Every such filter reduces to one form: a doc passes iff its tags contain all of `tagMask` and
 * u < uBelow[cluster] (a per-cluster bound: -Infinity for none of the cluster, +Infinity for all
 * of it). AND takes the union of the masks and the minimum of the bounds, OR the maximum of the
 * bounds (its clauses must require the same tags, which the emitted shapes do).
 */
export type FilterDsl =
  | { readonly range: { readonly u: { readonly lt: number } } }
  | { readonly term: { readonly cluster: string } }
  | { readonly terms: { readonly cluster: readonly string[] } }
  | { readonly term: { readonly tags: string } }
  | { readonly bool: { readonly filter: readonly FilterDsl[] } }
  | { readonly bool: { readonly should: readonly FilterDsl[]; readonly minimum_should_match: 1 } };

export interface CompiledFilter {
  /** Tag bits (DocFields.TAGS order) a passing doc must all carry. */
  tagMask: number;
  /** CLUSTERS bounds: a doc of cluster c passes iff u < uBelow[c] (and its tags match). */
  readonly uBelow: Float64Array;
}

/** Whether a doc passes a compiled filter. */
export function passes(f: CompiledFilter, cluster: number, u: number, tags: number): boolean {
  return u < f.uBelow[cluster] && (tags & f.tagMask) === f.tagMask;
}

/** Compiles one filter of the emitted shapes; throws an Error naming the clause it cannot evaluate. */
export function compileFilter(dsl: unknown, path = 'filter'): CompiledFilter {
  const out: CompiledFilter = { tagMask: 0, uBelow: new Float64Array(CLUSTERS) };
  compileInto(dsl, path, out);
  return out;
}

function compileInto(dsl: unknown, path: string, out: CompiledFilter): void {
  const [kind, body] = single(dsl, path);
  const at = `${path}.${kind}`;
  switch (kind) {
    case 'range': {
      const [field, bounds] = single(body, at);
      if (field !== 'u') fail(`${at}: only "u" is supported, got "${field}"`);
      const [op, x] = single(bounds, `${at}.u`);
      if (op !== 'lt' || typeof x !== 'number' || !Number.isFinite(x)) fail(`${at}.u: only {"lt": <finite number>} is supported`);
      out.tagMask = 0;
      out.uBelow.fill(x as number);
      return;
    }
    case 'term': {
      const [field, value] = single(body, at);
      if (field === 'cluster') {
        out.tagMask = 0;
        out.uBelow.fill(-Infinity);
        out.uBelow[clusterId(value, `${at}.cluster`)] = Infinity;
      } else if (field === 'tags') {
        const t = TAGS.findIndex((tag) => tag.name === value);
        if (t < 0) fail(`${at}.tags: unknown tag ${JSON.stringify(value)} (known: ${TAGS.map((tag) => tag.name).join(', ')})`);
        out.tagMask = 1 << t;
        out.uBelow.fill(Infinity);
      } else {
        fail(`${at}: only "cluster" and "tags" are supported, got "${field}"`);
      }
      return;
    }
    case 'terms': {
      const [field, values] = single(body, at);
      if (field !== 'cluster' || !Array.isArray(values)) fail(`${at}: only {"cluster": [ids...]} is supported`);
      out.tagMask = 0;
      out.uBelow.fill(-Infinity);
      (values as unknown[]).forEach((v, i) => {
        out.uBelow[clusterId(v, `${at}.cluster[${i}]`)] = Infinity;
      });
      return;
    }
    case 'bool': {
      const b = body as Record<string, unknown>;
      const keys = typeof b === 'object' && b !== null ? Object.keys(b).sort().join(',') : '';
      const isAnd = keys === 'filter';
      const isOr = keys === 'minimum_should_match,should' && b.minimum_should_match === 1;
      if (!isAnd && !isOr) fail(`${at}: only {"filter": [...]} or {"should": [...], "minimum_should_match": 1} is supported`);
      const clauses = (isAnd ? b.filter : b.should) as unknown;
      const name = isAnd ? 'filter' : 'should';
      if (!Array.isArray(clauses) || clauses.length === 0) fail(`${at}.${name}: must be a non-empty array`);
      out.tagMask = 0;
      out.uBelow.fill(isAnd ? Infinity : -Infinity);
      const part: CompiledFilter = { tagMask: 0, uBelow: new Float64Array(CLUSTERS) };
      (clauses as unknown[]).forEach((clause, i) => {
        compileInto(clause, `${at}.${name}[${i}]`, part);
        if (isAnd) {
          out.tagMask |= part.tagMask;
          for (let c = 0; c < CLUSTERS; c++) if (part.uBelow[c] < out.uBelow[c]) out.uBelow[c] = part.uBelow[c];
        } else {
          if (i > 0 && part.tagMask !== out.tagMask) fail(`${at}.should[${i}]: should clauses requiring different tags are not supported`);
          out.tagMask = part.tagMask;
          for (let c = 0; c < CLUSTERS; c++) if (part.uBelow[c] > out.uBelow[c]) out.uBelow[c] = part.uBelow[c];
        }
      });
      return;
    }
    default:
      fail(`${at}: unsupported query "${kind}" (supported: range, term, terms, bool)`);
  }
}

/** The one [key, value] of an object with exactly one key. */
function single(v: unknown, path: string): [string, unknown] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`${path}: expected an object with one key`);
  const entries = Object.entries(v as object);
  if (entries.length !== 1) fail(`${path}: expected one key, got ${entries.length} (${entries.map(([k]) => k).join(', ')})`);
  return entries[0];
}

function clusterId(v: unknown, path: string): number {
  const m = typeof v === 'string' ? /^c(\d+)$/.exec(v) : null;
  const c = m ? Number(m[1]) : NaN;
  if (!(c < CLUSTERS)) fail(`${path}: expected a cluster id "c0".."c${CLUSTERS - 1}", got ${JSON.stringify(v)}`);
  return c;
}

function fail(message: string): never {
  throw new Error(`cannot evaluate ${message}`);
}
