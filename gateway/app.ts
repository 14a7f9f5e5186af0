import type { Transport } from '@connectrpc/connect';
import { closeConnectionsAfterClose } from '../core/net/graceful-close';
import { DEFAULT_HTTP_TIMEOUTS, serverTimeoutOptions, watchRequestBodies, type HttpTimeouts } from '../core/net/http-timeouts';
import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../core/ids';
import { fastifyLogging, type Logger } from '../core/logger';
import { ApiError } from '../core/errors';
import type { MediaStore } from '../core/media/storage';
import { clientErrorResponse, formatValidationErrors, fromApiError, registerEnvelope, send } from './plugins/envelope';
import { validatorCompiler } from './plugins/validation';
import { registerSecurityHeaders } from './plugins/security-headers';
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
import { DEFAULT_UPLOAD_DRAIN_BYTES } from './multipart';
import { HealthService } from '../gen/vps/health/v1/health_pb';
import { createMetrics, type Metrics } from '../core/observability/metrics';
import { registerOpsRoutes } from '../core/observability/ops-routes';
import { DEFAULT_READINESS_CACHE_MS, PROBE_TIMEOUT_MS, sharedReadiness, type ReadinessReport } from '../core/observability/readiness';

export interface GatewayOptions {
  /** How the gateway reaches core: in memory (--role all) or over HTTP. */
  transport: Transport;
  logger: Logger;
  /** Where uploads are written and media URLs are read from. */
  media: MediaStore;
  /** Largest video upload accepted, in bytes (core may set a lower limit per track). */
  maxUploadBytes: number;
  /** A refused upload whose body is at most this long is read to its end before the answer (DEFAULT_UPLOAD_DRAIN_BYTES when not given). */
  uploadDrainBytes?: number;
  /** Largest JSON body accepted, in bytes. */
  bodyLimit?: number;
  /** Public origin of the gateway; an https one marks the console's cookie Secure. */
  publicUrl?: string;
  /** Where the console links a workflow: the Temporal UI and namespace; no links without a UI. */
  temporalUiUrl?: string | null;
  temporalNamespace?: string;
  /** The process's metrics; a private set when not given (nothing scrapes it then). */
  metrics?: Metrics;
  /** True once the process has begun to stop: /readyz answers 503 so traffic moves elsewhere. */
  draining?: () => boolean;
  /** Proxies whose X-Forwarded-For names the client (VPS_TRUSTED_PROXIES); none: the connection's address is the client's. */
  trustedProxies?: readonly string[];
  /** How long /readyz reuses its probe of core (DEFAULT_READINESS_CACHE_MS when not given). */
  readinessCacheMs?: number;
  /** How long clients may take to send headers and bodies (DEFAULT_HTTP_TIMEOUTS when not given). */
  httpTimeouts?: HttpTimeouts;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The envelope code of the answer, once it is known; empty for streams and files. */
    envelopeCode: string;
  }
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
const ENVELOPE_CODE = /^\{"code":(\d+)/;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The public HTTP API; tests drive it over real HTTP or with inject(). */
export async function buildApp(opts: GatewayOptions): Promise<FastifyInstance> {
  const timeouts = opts.httpTimeouts ?? DEFAULT_HTTP_TIMEOUTS;
  const app = Fastify({
    ...fastifyLogging(opts.logger),
    ...serverTimeoutOptions(timeouts),
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Requests that arrive while it closes get the envelope instead (registerEnvelope).
    return503OnClosing: false,
    requestIdHeader: false,
    trustProxy: opts.trustedProxies?.length ? [...opts.trustedProxies] : false,
    // A caller-supplied request id is kept when it is safe to log and echo; otherwise we make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req');
    },
    schemaErrorFormatter: formatValidationErrors,
    clientErrorHandler: (err, socket) => clientErrorResponse(err, socket, timeouts),
    // A URL the router cannot decode never reaches the error handler; it gets the envelope here. A
    // path segment longer than the router takes is longer than any id: unknown, like any other id.
    frameworkErrors: (err, _req, reply) =>
      send(
        reply,
        fromApiError(
          err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new ApiError(1005, 'path parameter: longer than any id; no such resource')
            : new ApiError(2001, `path: ${err.message}`),
        ),
      ),
  }) as unknown as FastifyInstance;

  closeConnectionsAfterClose(app);
  // Before every route, so each one's body is watched.
  watchRequestBodies(app, timeouts);
  app.setValidatorCompiler(validatorCompiler());
  // Every body route takes JSON; plain text would otherwise be parsed and fail later, less clearly.
  app.removeContentTypeParser('text/plain');
  // Many HTTP clients send Content-Type: application/json on every request, bodies or not: an empty
  // body is fine on a method that carries none and on a route whose body is optional (enable,
  // test, rotate-secret), and keeps Fastify's safe parser otherwise.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const bodiless =
      req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD' || req.routeOptions.config?.optionalBody === true;
    if (body === '' && bodiless) return done(null, undefined);
    // The default parser answers through `done`; its return value carries nothing.
    void parseJson(req, body as string, done);
  });

  const metrics = opts.metrics ?? createMetrics({ role: 'gateway', processMetrics: false });
  app.decorateRequest('envelopeCode', '');
  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
  // Every envelope is serialized by the time it is sent; its code leads it, so no parse is needed.
  app.addHook('onSend', async (req, _reply, payload) => {
    if (typeof payload === 'string') req.envelopeCode = ENVELOPE_CODE.exec(payload)?.[1] ?? '';
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    // Route patterns only: raw URLs would give every id its own series. Unknown paths share one.
    const route = req.routeOptions.url ?? 'unmatched';
    const code = req.envelopeCode;
    metrics.httpRequests.inc({ method: req.method, route, status: String(reply.statusCode), code });
    metrics.httpDuration.observe({ method: req.method, route, code }, reply.elapsedTime / 1000);
    // Probes come every few seconds from every load balancer: counted, not logged.
    if (route === '/healthz' || route === '/readyz') return;
    req.log.info(
      {
        method: req.method,
        route,
        status: reply.statusCode,
        code: code === '' ? undefined : Number(code),
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  registerSecurityHeaders(app);
  registerEnvelope(app, opts.transport);
  // Before every route: the document is collected as routes are added.
  await registerDocs(app);
  // Anyone may ask the public port: its probes are shared, so asking often costs core nothing more.
  registerOpsRoutes(app, {
    readiness: sharedReadiness(() => coreReadiness(opts.transport), opts.readinessCacheMs ?? DEFAULT_READINESS_CACHE_MS),
    draining: opts.draining,
  });
  await registerUpstreamWebhooks(app, opts.transport);
  registerMediaRoutes(app, { transport: opts.transport, media: opts.media });
  await registerConsoleApi(app, { transport: opts.transport, publicUrl: opts.publicUrl });
  await registerConsoleSeats(app, { transport: opts.transport });
  await registerConsoleStatic(app, { temporalUiUrl: opts.temporalUiUrl ?? null, temporalNamespace: opts.temporalNamespace });
  await app.register(
    async (v1) => {
      registerRpcRoutes(v1, v1Routes, opts.transport);
      registerEventStreamRoute(v1, { transport: opts.transport, metrics });
      registerRpcRoutes(v1, videoRoutes, opts.transport);
      const drainBytes = opts.uploadDrainBytes ?? DEFAULT_UPLOAD_DRAIN_BYTES;
      await registerVideoUploadRoute(v1, { transport: opts.transport, media: opts.media, maxUploadBytes: opts.maxUploadBytes, drainBytes });
      await registerPhotoUploadRoute(v1, { transport: opts.transport, drainBytes });
      await registerMessageMediaRoute(v1, { transport: opts.transport, drainBytes });
    },
    { prefix: '/v1' },
  );
  return app;
}

/** A gateway is ready when core answers and is ready itself: core's checks are passed on. */
export async function coreReadiness(transport: Transport): Promise<ReadinessReport> {
  const started = performance.now();
  try {
    const res = await transport.unary(HealthService.method.check, AbortSignal.timeout(PROBE_TIMEOUT_MS), PROBE_TIMEOUT_MS, undefined, {});
    const latencyMs = Math.round(performance.now() - started);
    const core = { name: 'core', ok: true, gatesReadiness: true, latencyMs };
    const checks = res.message.checks.map((c) => ({
      name: c.name,
      ok: c.ok,
      gatesReadiness: c.gatesReadiness,
      latencyMs: c.latencyMs,
      ...(c.error ? { error: c.error } : {}),
    }));
    return { ready: res.message.ready, checks: [core, ...checks] };
  } catch (err) {
    return {
      ready: false,
      checks: [
        {
          name: 'core',
          ok: false,
          gatesReadiness: true,
          latencyMs: Math.round(performance.now() - started),
          error: err instanceof Error ? err.message : String(err),
        },
      ],
    };
  }
}
