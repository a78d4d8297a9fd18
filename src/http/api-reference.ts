/**
 * The API reference at /v1/docs: Swagger UI (swagger-ui-dist, served from this origin, no CDN)
 * renders the OpenAPI documents the host serves (openapi-documents.ts). Swagger UI runs under a
 * strict CSP, scripts and styles only from this origin, no eval, nothing inline; its validator
 * badge (an external image) and "Try it out" are off. docs/api.md, "API reference".
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { errors } from '../kernel/errors.js';
import { html } from '../screens/html.js';
import { OPENAPI_DOCUMENTS } from './openapi-documents.js';

export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Swagger UI draws a few icons as data: images; the page's own favicon.
  "img-src 'self' data:",
  // The OpenAPI document itself, fetched by the page.
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The documents by their `?document=` name, with a title for the page's menu. */
const TITLES: Record<(typeof OPENAPI_DOCUMENTS)[number]['name'], string> = {
  'keyhall-v1': 'Management API (/v1)',
  oauth: 'OAuth 2.0 and OpenID Connect',
  scim: 'SCIM 2.0',
};

/**
 * Starts Swagger UI on the page's #reference element, with the document its data-url names,
 * expanded as its data-expansion says: the management document (130+ operations) opens with its
 * tags collapsed, since Swagger UI 5.35 stops rendering a fully listed document past about 128
 * operations (measured: 128 render; 130 stop after the first 9, with no error); a tag opens on a
 * click or a deep link.
 */
const START_SCRIPT = `'use strict';
(function () {
  var el = document.getElementById('reference');
  window.ui = window.SwaggerUIBundle({
    url: el.getAttribute('data-url'),
    domNode: el,
    deepLinking: true,
    docExpansion: el.getAttribute('data-expansion') || 'list',
    defaultModelsExpandDepth: 0,
    validatorUrl: null,
    supportedSubmitMethods: [],
  });
})();
`;

const PAGE_CSS = `body { margin: 0; font-family: system-ui, sans-serif; color: #1a1a1a; }
.reference-top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 12px 24px; border-bottom: 1px solid #d0d4da; background: #f5f6f8; }
.reference-top .brand { font-weight: 700; color: inherit; text-decoration: none; }
.reference-top ul { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; margin: 0; padding: 0; }
.reference-top a { color: #0b57d0; }
.reference-top a[aria-current='page'] { font-weight: 700; }
`;

interface Asset {
  /** The public name: the plain name with a hash of the content. */
  name: string;
  body: Buffer;
  type: string;
}

/** The page's assets by their plain names, each public under a content-hashed name so it can be cached for good. */
function loadAssets(): Map<string, Asset> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const css = 'text/css; charset=utf-8';
  const js = 'text/javascript; charset=utf-8';
  const sources: Array<[string, Buffer, string]> = [
    ['swagger-ui.css', readFileSync(path.join(dist, 'swagger-ui.css')), css],
    ['reference.css', Buffer.from(PAGE_CSS), css],
    ['swagger-ui-bundle.js', readFileSync(path.join(dist, 'swagger-ui-bundle.js')), js],
    ['start.js', Buffer.from(START_SCRIPT), js],
  ];
  return new Map(
    sources.map(([plain, body, type]) => {
      const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
      const dot = plain.lastIndexOf('.');
      return [plain, { name: `${plain.slice(0, dot)}.${hash}${plain.slice(dot)}`, body, type }];
    }),
  );
}

export async function apiReferenceRoutes(app: FastifyInstance): Promise<void> {
  let loaded: Map<string, Asset> | undefined;
  const assets = () => (loaded ??= loadAssets());
  const href = (plain: string) => `/v1/docs/assets/${assets().get(plain)!.name}`;

  app.get('/v1/docs', async (request, reply) => {
    const wanted = (request.query as Record<string, unknown>).document ?? 'keyhall-v1';
    const doc = OPENAPI_DOCUMENTS.find((d) => d.name === wanted);
    if (!doc) throw errors.invalidRequest(`document must be one of ${OPENAPI_DOCUMENTS.map((d) => d.name).join(', ')}`);
    const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${TITLES[doc.name]} · Keyhall API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${href('swagger-ui.css')}">
<link rel="stylesheet" href="${href('reference.css')}">
</head>
<body>
<header class="reference-top">
<a class="brand" href="/">Keyhall API reference</a>
<nav aria-label="OpenAPI documents"><ul>
${OPENAPI_DOCUMENTS.map((d) => html`<li><a href="/v1/docs?document=${d.name}"${d.name === doc.name ? html` aria-current="page"` : ''}>${TITLES[d.name]}</a></li>`)}
</ul></nav>
<a href="${doc.path}">${doc.path}</a>
</header>
<main id="reference" data-url="${doc.path}" data-expansion="${doc.name === 'keyhall-v1' ? 'none' : 'list'}"></main>
<script src="${href('swagger-ui-bundle.js')}"></script>
<script src="${href('start.js')}"></script>
</body>
</html>`;
    return reply
      .header('content-security-policy', API_REFERENCE_CSP)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'same-origin')
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(page.value);
  });

  app.get('/v1/docs/assets/:name', async (request, reply) => {
    const { name } = request.params as { name: string };
    const asset = [...assets().values()].find((a) => a.name === name);
    if (!asset) throw errors.notFound('no such asset');
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });
}
