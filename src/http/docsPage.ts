/**
 * `GET /docs`: a browsable reference of the server's OpenAPI document (Swagger UI), its script and
 * stylesheet served by this server from the `swagger-ui-dist` package, so the page works offline.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The files the page loads, by the path the server answers them on. */
export const DOCS_ASSETS = {
  '/docs/swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  '/docs/swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
} as const;

export type DocsAsset = keyof typeof DOCS_ASSETS;

const cache = new Map<string, Buffer>();

/** One of the page's files, read once from the installed `swagger-ui-dist`. */
export function docsAsset(path: DocsAsset): { body: Buffer; type: string } {
  const { file, type } = DOCS_ASSETS[path];
  let body = cache.get(file);
  if (!body) {
    const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    body = readFileSync(join(dir, file));
    cache.set(file, body);
  }
  return { body, type };
}

/** The page itself: Swagger UI over `/openapi.json`. */
export function docsPage(title: string): string {
  const escaped = title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escaped}</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: true });
</script>
</body>
</html>
`;
}
