import { setMaxListeners } from 'node:events';
import { Code, ConnectError, createConnectRouter } from '@connectrpc/connect';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from '@connectrpc/connect-node';
import { relabelProtocolErrors } from './net/protocol-errors';
import type { FastifyInstance } from 'fastify';
import type { CoreHandlers } from './router';
import type { Logger } from './logger';
import { registerOpsRoutes } from './observability/ops-routes';
import type { ReadinessReport } from './observability/readiness';
import { LISTEN_BACKLOG } from './net/listen-backlog';
import { NO_STORE, NOSNIFF } from './net/security-headers';
import type { HttpTimeouts } from './net/http-timeouts';
import { internalServer } from './net/internal-server';

/**
 * Core's own HTTP server: the Connect services for gateways and internal callers (Connect, gRPC
 * and gRPC-Web protocols, JSON or binary), plus liveness and readiness probes.
 */
export async function startCoreServer(
  core: CoreHandlers,
  opts: {
    host: string;
    port: number;
    logger: Logger;
    readiness?: () => Promise<ReadinessReport>;
    draining?: () => boolean;
    /** DEFAULT_HTTP_TIMEOUTS when not given. Its callers are ours, but a stuck one must not hold a connection forever either. */
    httpTimeouts?: HttpTimeouts;
  },
): Promise<{ url: string; close(): Promise<void> }> {
  const app = internalServer(opts.logger, opts.httpTimeouts);
  const shutdown = new AbortController();
  // Every call in flight listens on it, legitimately: more than Node's default of 10 is no leak.
  setMaxListeners(0, shutdown.signal);
  // On the raw response, so that Connect's answers, written past Fastify's reply, carry them too.
  // Every answer: core's RPCs include the admin's and the console's, which show keys once.
  app.addHook('onRequest', async (_req, reply) => {
    reply.raw.setHeader(...NOSNIFF);
    reply.raw.setHeader(...NO_STORE);
  });
  registerConnectRoutes(app, core, shutdown.signal, opts.logger);
  // Open server streams (WatchEvents from a gateway in another process) would otherwise hold close() forever.
  app.addHook('preClose', async () => shutdown.abort());
  registerOpsRoutes(app, {
    readiness: opts.readiness ?? (async () => ({ ready: true, checks: [] })),
    draining: opts.draining,
    detailed: true,
  });
  await app.listen({ host: opts.host, port: opts.port, backlog: LISTEN_BACKLOG });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { close: () => app.close(), url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}` };
}

/**
 * Core's Connect routes on Fastify, as @connectrpc/connect-fastify mounts them, except for what
 * happens when an answer cannot be written: a gateway that cut a stream (its client left, or it
 * is stopping) is routine and logged at debug level through our logger, not with console.error.
 */
function registerConnectRoutes(app: FastifyInstance, core: CoreHandlers, shutdownSignal: AbortSignal, logger: Logger): void {
  const router = createConnectRouter({
    interceptors: core.interceptors,
    shutdownSignal,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  core.routes(router);
  // Connect reads the bodies itself: Fastify must leave every content type it speaks unparsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  for (const handler of router.handlers) {
    app.all(handler.requestPath, async (req, reply) => {
      try {
        const res = await handler(universalRequestFromNodeRequest(req.raw, reply.raw, req.body as undefined, undefined));
        const relabelled = relabelProtocolErrors(res, (message) =>
          logger.info(
            { rpc: `${handler.service.typeName}/${handler.method.name}`, reason: message },
            'request refused by the RPC protocol layer: 2001',
          ),
        );
        await universalResponseToNodeResponse(relabelled, reply.raw);
      } catch (err) {
        const rpc = `${handler.service.typeName}/${handler.method.name}`;
        if (reply.raw.destroyed || ConnectError.from(err).code === Code.Aborted)
          logger.debug({ err, rpc }, 'caller left before the answer was written');
        else logger.error({ err, rpc }, 'could not write the answer of an RPC');
      }
    });
  }
}
