import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Router } from 'express';
import { buildOpenApiDocument } from './openapi-document';

export const openApiPath = '/openapi.json';
export const docsPath = '/docs';

/** Redoc's standalone bundle, served from the api itself: the reference page fetches nothing from elsewhere. */
const redocBundlePath = createRequire(__filename).resolve('redoc/bundles/redoc.standalone.js');
/** The one address the bundle hard-codes (its sidebar's "API docs by Redocly" logo), pointed at the api. */
export const redocCdnLogo = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const logoPath = '/docs/logo.svg';
const logo =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#32329f"/></svg>';

/** The bundle as served: read once, its CDN logo replaced by the api's (throws if the bundle no longer has it). */
export function readRedocBundle(): string {
  const bundle = readFileSync(redocBundlePath, 'utf8');
  if (!bundle.includes(redocCdnLogo))
    throw new Error(`the Redoc bundle no longer loads ${redocCdnLogo}: check it for other addresses`);
  // guard: redoc-logo
  return bundle.replaceAll(redocCdnLogo, logoPath);
}

/**
 * The reference page's own CSP: scripts from the api only (the bundle and the starter below, no
 * inline script), the document read from the api, Redoc's inline styles (styled-components) and
 * its search worker (a blob: URL); nothing from another origin.
 */
const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tally API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="reference"></div>
<script src="${docsPath}/redoc.standalone.js"></script>
<script src="${docsPath}/start.js"></script>
</body>
</html>
`;

const startScript = `Redoc.init(${JSON.stringify(openApiPath)}, { expandResponses: '200,201,202' }, document.getElementById('reference'));\n`;

/**
 * `GET /openapi.json` (no key): the OpenAPI 3.1 document, built once per process; and `GET /docs`:
 * the API reference rendered from it in the browser by Redoc, from the bundle the api serves.
 */
export function createOpenApiRoutes(): Router {
  const router = Router();
  let document: string | undefined;
  router.get(openApiPath, (_req, res) => {
    document ??= JSON.stringify(buildOpenApiDocument());
    res.type('application/json').send(document);
  });
  router.get(docsPath, (_req, res) => {
    res.set('Content-Security-Policy', docsContentSecurityPolicy).type('html').send(docsPage);
  });
  router.get(`${docsPath}/start.js`, (_req, res) => {
    res.type('application/javascript').send(startScript);
  });
  let bundle: string | undefined;
  router.get(`${docsPath}/redoc.standalone.js`, (_req, res) => {
    bundle ??= readRedocBundle();
    res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(bundle);
  });
  router.get(logoPath, (_req, res) => {
    res.type('image/svg+xml').send(logo);
  });
  return router;
}
