/**
 * The one definition of hnswSearchL0's search context: the block of 4-byte fields through which
 * ResidentGraphSearcher hands a level-0 search to the kernel. kernels.wat names the fields as
 * placeholders (`offset={{ctx.adj}}`) and KernelsBinary substitutes the offsets below before it
 * compiles the WAT (at build time, and when compiling at run time), so the two sides cannot drift:
 * a field the WAT names that is not defined here, or one defined here that the WAT never names,
 * fails the compile.
 *
 * Fields are laid out in this order, 4 bytes each (f: f32, i: i32, p: a pointer into the
 * kernels' memory).
 */
const FIELDS = [
  // the query (its code and Lucene's corrective terms) and the encoding of the docs
  ['planes', 'p', 'the query code: 4 bit planes of codeBytes (1-bit docs) or of ceil(dims / 8) bytes (2-bit docs), else one byte per component'],
  ['codeBytes', 'i', 'bytes of one doc code'],
  ['docBits', 'i', 'doc bits per component: 1, 2, 4, 7 or 8 (ScalarEncodingInfo.docBits)'],
  ['queryScale', 'f', "the query code's step: 1f / (2^queryBits - 1), 1f/15f for 1- and 2-bit docs"],
  ['lxScale', 'f', "the doc code's step: 1f / (2^docBits - 1) (unused for 1-bit docs, whose step is 1)"],
  ['pad', 'p', 'scratch for the zero-padded planes, 4 x round16(codeBytes) bytes'],
  ['records', 'p', "the segment's records (doc code + 16 bytes of corrections)"],
  ['recordSize', 'i', 'bytes per record (codeBytes + 16)'],
  ['ay', 'f', 'query lower interval'],
  ['uy', 'f', 'query upper interval'],
  ['y1', 'i', 'query component sum'],
  ['corrY', 'f', 'query additional correction'],
  ['dims', 'i', 'dimensions'],
  ['similarity', 'i', 'similarity ordinal'],
  ['centroidDP', 'f', 'centroid . centroid'],
  // the graph
  ['adj', 'p', 'level-0 lists, node * stride ints each: [count, neighbour ords...]'],
  ['stride', 'i', 'ints per level-0 list (2M + 1)'],
  ['visited', 'p', 'i32 visit stamps, one per node'],
  ['gen', 'i', "this search's stamp"],
  ['live', 'p', 'bitset of accepted ords (bit o = word o >> 5, bit o & 31); 0 = all'],
  ['twoHop', 'i', '1: filtered traversal (only accepted ords are scored; a rejected neighbour is crossed to its accepted neighbours); 0: accepted ords filter the results only'],
  ['seeds', 'p', 'extra level-0 entry points (ords), searched after `entry`'],
  ['seedCount', 'i', 'how many ords `seeds` holds'],
  // the queues
  ['candidates', 'p', 'candidates heap, 8 bytes x graph size'],
  ['results', 'p', 'results heap, 8 bytes x k'],
  ['k', 'i', 'results queue size'],
  ['nbrOrds', 'p', 'neighbour ords scratch, stride ints (stride + stride x stride with twoHop)'],
  ['nbrScores', 'p', 'neighbour scores scratch, as many floats'],
  ['entry', 'i', 'the level-0 entry point'],
  ['visitedCount', 'i', 'vectors scored: in, so far; out, after the search'],
  ['visitLimit', 'i', 'stop once this many vectors were scored'],
  ['outOrds', 'p', 'the results, best first: ords (k)'],
  ['outScores', 'p', 'the results, best first: scores (k)'],
] as const;

export type SearchContextField = (typeof FIELDS)[number][0];

/** Byte offset of every field, plus `bytes`: the block's size (16-byte multiple). */
export const SEARCH_CONTEXT: Readonly<Record<SearchContextField, number>> & { readonly bytes: number } = (() => {
  const offsets: Record<string, number> = {};
  FIELDS.forEach(([name], i) => {
    offsets[name] = 4 * i;
  });
  offsets.bytes = (4 * FIELDS.length + 15) & ~15;
  return Object.freeze(offsets) as Record<SearchContextField, number> & { bytes: number };
})();

/** The fields in layout order with their kinds, for documentation and tests. */
export const SEARCH_CONTEXT_FIELDS: readonly { readonly name: SearchContextField; readonly kind: 'f' | 'i' | 'p'; readonly doc: string }[] = FIELDS.map(([name, kind, doc]) => ({
  name,
  kind,
  doc,
}));

const PLACEHOLDER = /\{\{ctx\.([A-Za-z0-9_]+)\}\}/g;

/**
 * Replaces every `{{ctx.NAME}}` in WAT text with NAME's byte offset. Throws on a name that is not
 * a field, and on a field the text never names (the kernel would ignore what the TS side writes).
 */
export function substituteSearchContext(wat: string, source = 'kernels.wat'): string {
  const used = new Set<string>();
  const out = wat.replace(PLACEHOLDER, (_, name: string) => {
    if (!Object.hasOwn(SEARCH_CONTEXT, name) || name === 'bytes') {
      throw new Error(`${source}: {{ctx.${name}}} is not a field of the search context (SearchContextLayout.ts)`);
    }
    used.add(name);
    return String(SEARCH_CONTEXT[name as SearchContextField]);
  });
  const unused = FIELDS.map(([name]) => name).filter((n) => !used.has(n));
  if (unused.length > 0) throw new Error(`${source}: search context field(s) ${unused.join(', ')} defined in SearchContextLayout.ts but never read or written`);
  return out;
}
