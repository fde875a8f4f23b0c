/**
 * The examples `prescore serve --help` prints after its options: a filtered search returning
 * `_source` in both request shapes, and the same from the library. They search the demo
 * (`prescore start`), and test/docs.test.ts runs each of them as written against an index like it.
 */

/** One example: what it shows, and the code to paste (a shell command, or an ES module). */
export interface HelpExample {
  readonly title: string;
  readonly lang: 'sh' | 'js';
  readonly code: string;
}

export const SERVE_EXAMPLES: readonly HelpExample[] = [
  {
    title: 'A filtered search returning _source, native shape (POST /v1/search, `filter`):',
    lang: 'sh',
    code: `node -e 'console.log(JSON.stringify({
    vector: Array.from({length: 384}, (_, i) => Math.sin(i)), k: 5,
    filter: [{term: {category: "books"}}, {range: {year: {gte: 2015}}}],
    _source: ["title", "year"]}))' \\
  | curl -s -H 'content-type: application/json' --data-binary @- localhost:8080/v1/search`,
  },
  {
    title: "The same in Elasticsearch's shape (POST /:index/_search, `knn.filter`):",
    lang: 'sh',
    code: `node -e 'console.log(JSON.stringify({
    knn: {field: "vector", query_vector: Array.from({length: 384}, (_, i) => Math.sin(i)),
          k: 5, num_candidates: 100,
          filter: {bool: {filter: [{term: {category: "books"}}, {range: {year: {gte: 2015}}}]}}},
    _source: ["title", "category", "year"]}))' \\
  | curl -s -H 'content-type: application/json' --data-binary @- localhost:8080/demo/_search`,
  },
  {
    title: "From Node.js, with Lucene's query classes:",
    lang: 'js',
    code: `import { openIndex, SortedNumericDocValuesRangeQuery } from 'prescore';
const index = await openIndex('data/demo/index');
const vector = Array.from({ length: index.dims }, (_, i) => Math.sin(i));
const filter = new SortedNumericDocValuesRangeQuery('year', 2015, null); // year >= 2015
const { hits } = await index.search(vector, { k: 5, filter, source: ['title', 'year'] });
await index.close();`,
  },
];

/** The text after the options: the examples, indented, then where to read more. */
export function serveExamplesText(): string {
  const indent = (code: string) =>
    code
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
  return [
    'Examples, against the demo (`prescore start`: index "demo", 384 dims, field "vector"; its documents',
    'have title, category, year and in_stock):',
    '',
    ...SERVE_EXAMPLES.flatMap((e) => [`  ${e.title}`, '', indent(e.code), '']),
    '`filter` (`knn.filter`) is one clause or a list that must all match: term, terms, range, exists,',
    'ids, bool, match_all, match_none. A search returns the k nearest docs the filter matches (all of',
    'them when fewer match). Elasticsearch-shaped hits carry _source unless `_source: false`.',
    'Documents: GET /:index/_doc/:id, GET|POST /_mget, GET|POST /:index/_count, GET /:index/_mapping.',
    'Every clause, parameter and error: docs/querying-http.md (docs/library.md for the library),',
    'or GET /docs on the running server.',
  ].join('\n');
}
