/**
 * The emulator as a Fastify app: the official Business API v1.3 paths (with their trailing slash),
 * the shop platform's creator paths, both platforms' OAuth endpoints, and the `/_sandbox/` control
 * API for tests and demos. Parsing, faults and errors follow the platform that owns each path.
 */
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import { fastifyLogging } from '../core/logger';
import { registerBusinessOAuth } from './business/oauth';
import { registerComments } from './business/comments';
import { registerInsights } from './business/insights';
import { registerMessages } from './business/messages';
import { registerPublishing } from './business/publishing';
import { registerWebhookConfig } from './business/webhook-config';
import type { SandboxContext } from './context';
import { registerControl } from './control';
import { registerSampleVideo } from './sample-video';
import { BUSINESS, failure, OfficialError, platformOf, SHOP } from './official-error';
import { registerShop } from './shop/routes';
import { registerShopOAuth } from './shop/oauth';

/** Larger than any file the official upload endpoints accept, so their own size checks answer. */
const MAX_UPLOAD_BYTES = 120 * 1024 * 1024;

function isOfficialPath(url: string): boolean {
  return url.startsWith('/open_api/') || url.startsWith('/affiliate_creator/') || url.startsWith('/api/v2/token/');
}

export async function buildSandboxApp(ctx: SandboxContext): Promise<FastifyInstance> {
  // The pino logger narrows Fastify's logger type; the routes only need the base instance type.
  const app = Fastify({ ...fastifyLogging(ctx.logger), bodyLimit: 10 * 1024 * 1024 }) as unknown as FastifyInstance;

  // JSON bodies are kept raw as well: the shop signature covers the body exactly as sent.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      const platform = platformOf(request.url);
      done(
        platform === 'shop' ? SHOP.invalid('body', 'is not valid JSON') : new OfficialError(40000, 'Invalid JSON in the request body.'),
        undefined,
      );
    }
  });
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 20 } });

  const hanging = new WeakMap<object, number>();
  app.addHook('preHandler', async (request) => {
    const hangMs = hanging.get(request);
    if (hangMs !== undefined) await new Promise((resolve) => setTimeout(resolve, hangMs));
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!isOfficialPath(request.url)) return;
    const platform = platformOf(request.url);
    const fault = ctx.faults.take(platform, request.url);
    if (!fault) return;
    const errors = platform === 'shop' ? SHOP : BUSINESS;
    switch (fault.kind) {
      case 'hang':
        // A slow platform still does the work: the call is processed after the wait, even when
        // the caller gave up meanwhile. The wait is taken once the body has arrived (preHandler),
        // since a closed connection cannot deliver it later.
        hanging.set(request, fault.hangMs);
        return;
      case 'server_error':
        throw errors.system();
      case 'rate_limit':
        throw platform === 'shop' ? SHOP.rateLimited(1) : BUSINESS.rateLimited();
      case 'invalid_token':
        throw errors.tokenInvalid();
      case 'expired_token':
        throw errors.tokenExpired();
      case 'permission_denied':
        throw errors.noPermission();
    }
    return reply;
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof OfficialError) {
      return reply.code(error.httpStatus).headers(error.headers).send(failure(error.code, error.message));
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      const platform = platformOf(request.url);
      const code = platform === 'shop' ? 36009004 : 40000;
      return reply.code(platform === 'shop' ? status : 400).send(failure(code, (error as Error).message));
    }
    ctx.logger.error({ err: error }, 'sandbox handler failed');
    return reply.code(500).send(failure(platformOf(request.url) === 'shop' ? 36009003 : 50000, 'System error.'));
  });

  app.setNotFoundHandler((request, reply) =>
    platformOf(request.url) === 'shop'
      ? reply.code(404).send(failure(36009009, 'The requested path does not exist.'))
      : reply.code(404).send(failure(40000, 'The requested path does not exist. Business API paths end with a slash.')),
  );

  app.get('/_sandbox/health', async () => ({ status: 'ok' }));
  registerControl(app, ctx);
  registerBusinessOAuth(app, ctx);
  registerWebhookConfig(app, ctx);
  registerPublishing(app, ctx);
  registerSampleVideo(app);
  registerComments(app, ctx);
  registerMessages(app, ctx);
  registerInsights(app, ctx);
  registerShopOAuth(app, ctx);
  registerShop(app, ctx);
  return app;
}
