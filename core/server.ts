import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import Fastify from 'fastify';
import type { CoreHandlers } from './router';
import { fastifyLogging, type Logger } from './logger';

/**
 * Core's own HTTP server: the Connect services for gateways and internal callers (Connect, gRPC
 * and gRPC-Web protocols, JSON or binary), plus a liveness probe.
 */
export async function startCoreServer(core: CoreHandlers, opts: { host: string; port: number; logger: Logger }): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ ...fastifyLogging(opts.logger) });
  const shutdown = new AbortController();
  await app.register(fastifyConnectPlugin, { routes: core.routes, interceptors: core.interceptors, shutdownSignal: shutdown.signal });
  // Open server streams (WatchEvents from a gateway in another process) would otherwise hold close() forever.
  app.addHook('preClose', async () => shutdown.abort());
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.listen({ host: opts.host, port: opts.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { close: () => app.close(), url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}` };
}
