import type { Transport } from '@connectrpc/connect';
import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../core/ids';
import { fastifyLogging, type Logger } from '../core/logger';
import { ApiError } from '../core/errors';
import type { MediaStore } from '../core/media/storage';
import { clientErrorResponse, formatValidationErrors, fromApiError, registerEnvelope, send } from './plugins/envelope';
import { validatorCompiler } from './plugins/validation';
import { registerRpcRoutes } from './rpc-route';
import { v1Routes } from './routes/v1';
import { registerEventStreamRoute } from './routes/v1/event-stream';
import { registerUpstreamWebhooks } from './routes/upstream-webhooks';
import { registerMediaRoutes } from './routes/media';
import { registerVideoUploadRoute, videoRoutes } from './routes/v1/videos';
import { registerPhotoUploadRoute } from './routes/v1/shop-catalog';
import { registerMessageMediaRoute } from './routes/v1/message-media';
import { registerConsoleApi } from './routes/console-api';
import { registerConsoleSeats } from './routes/console-seats';
import { registerConsoleStatic } from './routes/console-static';
import { registerDocs } from './docs';

export interface GatewayOptions {
  /** How the gateway reaches core: in memory (--role all) or over HTTP. */
  transport: Transport;
  logger: Logger;
  /** Where uploads are written and media URLs are read from. */
  media: MediaStore;
  /** Largest video upload accepted, in bytes (core may set a lower limit per track). */
  maxUploadBytes: number;
  /** Largest JSON body accepted, in bytes. */
  bodyLimit?: number;
  /** Public origin of the gateway, the OpenAPI document's server; without it, the origin /docs was loaded from. */
  publicUrl?: string;
  /** Where the console links a workflow: the Temporal UI and namespace; no links without a UI. */
  temporalUiUrl?: string | null;
  temporalNamespace?: string;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The public HTTP API; tests drive it over real HTTP or with inject(). */
export async function buildApp(opts: GatewayOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...fastifyLogging(opts.logger),
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    return503OnClosing: true,
    requestIdHeader: false,
    // A caller-supplied request id is kept when it is safe to log and echo; otherwise we make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req');
    },
    schemaErrorFormatter: formatValidationErrors,
    clientErrorHandler: clientErrorResponse,
    // A URL the router cannot decode never reaches the error handler; it gets the envelope here.
    frameworkErrors: (err, _req, reply) => send(reply, fromApiError(new ApiError(2001, `path: ${err.message}`))),
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler());
  // Every body route takes JSON; plain text would otherwise be parsed and fail later, less clearly.
  app.removeContentTypeParser('text/plain');
  // Many HTTP clients send Content-Type: application/json on every request, bodies or not: an empty
  // body is fine on a method that carries none, and keeps Fastify's safe parser otherwise.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' && (req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD')) return done(null, undefined);
    // The default parser answers through `done`; its return value carries nothing.
    void parseJson(req, body as string, done);
  });

  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ reqId: req.id, method: req.method, route: req.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  registerEnvelope(app, opts.transport);
  // Before every route: the document is collected as routes are added.
  await registerDocs(app, { publicUrl: opts.publicUrl });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await registerUpstreamWebhooks(app, opts.transport);
  registerMediaRoutes(app, { transport: opts.transport, media: opts.media });
  await registerConsoleApi(app, { transport: opts.transport, publicUrl: opts.publicUrl });
  await registerConsoleSeats(app, { transport: opts.transport });
  await registerConsoleStatic(app, { temporalUiUrl: opts.temporalUiUrl ?? null, temporalNamespace: opts.temporalNamespace });
  await app.register(
    async (v1) => {
      registerRpcRoutes(v1, v1Routes, opts.transport);
      registerEventStreamRoute(v1, { transport: opts.transport });
      registerRpcRoutes(v1, videoRoutes, opts.transport);
      await registerVideoUploadRoute(v1, { transport: opts.transport, media: opts.media, maxUploadBytes: opts.maxUploadBytes });
      await registerPhotoUploadRoute(v1, { transport: opts.transport });
      await registerMessageMediaRoute(v1, { transport: opts.transport });
    },
    { prefix: '/v1' },
  );
  return app;
}
