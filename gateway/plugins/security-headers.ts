/**
 * The headers every answer of the gateway carries, set once here rather than route by route:
 * `X-Content-Type-Options: nosniff` on all of them, so no browser runs an envelope, an error or a
 * relayed file as something other than its declared type; and `Cache-Control: no-store` on the
 * answers of routes declared `carriesSecret` (a key, a webhook secret or a session's CSRF token
 * shown once), so no browser or proxy cache keeps a copy of the secret.
 */
import type { FastifyInstance } from 'fastify';
import { NO_STORE, NOSNIFF } from '../../core/net/security-headers';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's answer shows a secret: it is sent with `Cache-Control: no-store`. */
    carriesSecret?: boolean;
  }
}

export function registerSecurityHeaders(app: FastifyInstance): void {
  // onSend, not onRequest: it runs for every answer sent through the reply, errors, unknown routes
  // and refusals of the framework included, after the route has set its own headers.
  app.addHook('onSend', async (req, reply, payload) => {
    void reply.header(...NOSNIFF);
    if (req.routeOptions.config?.carriesSecret) void reply.header(...NO_STORE);
    return payload;
  });
}
