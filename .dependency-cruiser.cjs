/**
 * The layering rules (issue: one-way architecture). Data and imports flow one way, as Lucene's
 * store <- codecs <- index <- search do:
 *   segments/  (store, formats, quantization, kernels, index)   imports nothing above it
 *   query/     (queries, rescoring, prefetch, executor)          imports segments/ only
 *   src/       (service: HTTP, CLI, facade, composition root)    imports query/, segments/, load/
 *   load/      (the load tester, a standalone HTTP client)       imports none of the three
 * Checked by test/architecture.test.ts in `npm test`.
 */
module.exports = {
  forbidden: [
    {
      name: 'segments-is-the-bottom-layer',
      comment: 'segments/ must not import query/, src/ or load/',
      severity: 'error',
      from: { path: '^segments/' },
      to: { path: '^(query|src|load)/' },
    },
    {
      name: 'query-imports-only-segments',
      comment: 'query/ must not import src/ or load/',
      severity: 'error',
      from: { path: '^query/' },
      to: { path: '^(src|load)/' },
    },
    {
      name: 'load-is-standalone',
      comment: 'load/ is an HTTP client: it must not import the engine or the service',
      severity: 'error',
      from: { path: '^load/' },
      to: { path: '^(segments|query|src)/' },
    },
    {
      name: 'no-cycles',
      comment: 'no module may reach itself through its imports (type-only imports included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
