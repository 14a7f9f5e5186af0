/**
 * Swagger UI at /docs, from the copy of swagger-ui-dist that @fastify/swagger-ui ships in its
 * `static/` folder. That plugin's own routes are not used: they load @fastify/static, whose
 * content-disposition 3 is ESM-only and cannot be required by Jest's module loader, which every
 * test building the gateway goes through. What it would add here is three small routes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const ASSETS_DIR = path.join(path.dirname(require.resolve('@fastify/swagger-ui/package.json')), 'static');

/** The files the page loads; nothing else of the folder is served. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

export interface SwaggerUiOptions {
  /** Where the page lives, e.g. /docs; its assets are under <prefix>/static/. */
  prefix: string;
  /** The OpenAPI document the page reads. */
  documentUrl: string;
}

export async function registerSwaggerUi(app: FastifyInstance, opts: SwaggerUiOptions): Promise<void> {
  const assets = `${opts.prefix}/static`;
  const config = {
    url: opts.documentUrl,
    dom_id: '#swagger-ui',
    // Without the top bar: the page documents this API only, so it offers no box to load another.
    layout: 'BaseLayout',
    deepLinking: true,
    docExpansion: 'list',
    // A key typed on a shared machine should not outlive the tab.
    persistAuthorization: false,
    tryItOutEnabled: true,
    displayRequestDuration: true,
    // The default validator badge is an image from validator.swagger.io.
    validatorUrl: null,
  };
  // A file rather than an inline script, so the policy below can refuse every inline script.
  const initializer = `window.onload = function () {
  window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(config)}, { presets: [SwaggerUIBundle.presets.apis] }));
};
`;
  const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>API reference</title>
<link rel="stylesheet" type="text/css" href="${assets}/swagger-ui.css">
<link rel="icon" type="image/png" href="${assets}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${assets}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assets}/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="${assets}/initializer.js" charset="UTF-8"></script>
</body>
</html>
`;
  // Everything the page loads comes from this server; the browser refuses anything else, so no
  // asset is fetched from a CDN and no request leaves for a third party.
  const policy = [
    "default-src 'self'",
    // The document's server is relative: "Try it out" calls this origin only.
    "connect-src 'self'",
    "img-src 'self' data:",
    // Swagger UI sets style attributes on the elements it renders.
    "style-src 'self' 'unsafe-inline'",
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'self'",
  ].join('; ');

  await app.register(async (docs) => {
    docs.addHook('onSend', async (_req, reply) => {
      void reply.header('content-security-policy', policy);
    });
    const hidden = { schema: { hide: true } as object };
    docs.get(opts.prefix, hidden, async (_req, reply) => reply.type('text/html; charset=utf-8').send(page));
    docs.get(`${assets}/initializer.js`, hidden, async (_req, reply) =>
      reply.type('application/javascript; charset=utf-8').send(initializer),
    );
    for (const [file, type] of Object.entries(ASSETS)) {
      docs.get(`${assets}/${file}`, hidden, async (_req, reply) =>
        reply
          .type(type)
          .header('cache-control', 'public, max-age=3600')
          .send(fs.createReadStream(path.join(ASSETS_DIR, file))),
      );
    }
  });
}
