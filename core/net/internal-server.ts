/**
 * The Fastify server of core's Connect port and of the ops port: our logging, the timeouts for slow
 * clients, 503 to requests arriving while it closes, and kept-alive connections closed with it.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { fastifyLogging, type Logger } from '../logger';
import { closeConnectionsAfterClose } from './graceful-close';
import { DEFAULT_HTTP_TIMEOUTS, serverTimeoutOptions, watchRequestBodies, type HttpTimeouts } from './http-timeouts';

export function internalServer(logger: Logger, timeouts: HttpTimeouts = DEFAULT_HTTP_TIMEOUTS): FastifyInstance {
  const app = Fastify({
    ...fastifyLogging(logger),
    ...serverTimeoutOptions(timeouts),
    return503OnClosing: true,
  }) as unknown as FastifyInstance;
  closeConnectionsAfterClose(app);
  watchRequestBodies(app, timeouts);
  return app;
}
