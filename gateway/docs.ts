/**
 * The OpenAPI 3.1 document, generated from the routes' own schemas (GET /openapi.json), and the
 * interactive reference (Swagger UI at /docs). Registered before any route, since the document is
 * collected as routes are added. Only /v1 is documented: health, media URLs, the platform's
 * webhooks and the docs themselves are not part of the customer API. The push the service sends
 * to customers' endpoints is, as the document's `webhooks` entry (openapi/push.ts), with one more
 * entry per event type (openapi/event-catalogue.ts). `npx redocly
 * lint` (redocly.yaml) passes on it: test/integration/openapi-document.test.ts runs it.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import pkg from '../package.json';
import { componentSchemas } from './openapi/components';
import { CATALOGUE_WEBHOOKS } from './openapi/event-catalogue';
import { SECURITY_SCHEME, TAG_OBJECTS, v1Operation } from './openapi/operations';
import { PUSH_WEBHOOKS } from './openapi/push';
import { registerSwaggerUi } from './openapi/swagger-ui';

const OPENAPI_PATH = '/openapi.json';
const DOCS_PATH = '/docs';

/** Rendered at the top of /docs; spec, Authentication point 5. */
const DESCRIPTION = `Every /v1 request needs the header \`Authorization: Bearer <API_KEY>\`. Every answer is the envelope
\`{code, message, data}\`: \`code\` 0 is success; otherwise the HTTP status follows the code, but rely on \`code\`.

**Trying requests on this page:** press **Authorize** and paste the **bare API key** (\`vps_…\`), without \`Bearer\`:
this page adds the \`Bearer \` prefix itself. A doubled prefix (\`Bearer Bearer vps_…\`) makes the key invalid and is
refused with 1001. When you write the header by hand, it reads in full \`Authorization: Bearer <API_KEY>\`.
The key is kept in this tab only, until you reload it.`;

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Video Publishing and Engagement Service', version: pkg.version, description: DESCRIPTION },
      // Relative, resolved against the document's own URL: "Try it out" calls the origin the page was
      // opened at, whether 127.0.0.1, localhost or a proxy's name. An absolute origin (the public
      // URL) would be another origin for every reader who typed a different one, and the browser
      // would refuse the call.
      servers: [{ url: '/', description: 'The origin this document was loaded from' }],
      tags: TAG_OBJECTS,
      // The push itself, then the catalogue: one entry per event type.
      webhooks: { ...PUSH_WEBHOOKS, ...CATALOGUE_WEBHOOKS },
      components: {
        schemas: componentSchemas(),
        securitySchemes: {
          [SECURITY_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description:
              'The API key. In the Authorize dialog enter the bare key: the `Bearer ` prefix is added for you, and a doubled prefix is refused with 1001.',
          },
        },
      },
    },
    transform: ({ schema, url, route }) =>
      url.startsWith('/v1/') ? { schema: v1Operation(url, route), url } : { schema: { ...schema, hide: true }, url },
  });
  await registerSwaggerUi(app, { prefix: DOCS_PATH, documentUrl: OPENAPI_PATH });
  app.get(OPENAPI_PATH, { schema: { hide: true } as object }, async () => app.swagger());
}
