import type { HttpTimeouts } from '../net/http-timeouts';
import { internalServer } from '../net/internal-server';
import type { Logger } from '../logger';
import { registerOpsRoutes, type OpsRouteOptions } from './ops-routes';
import type { Metrics } from './metrics';

/**
 * The process's ops server: health, readiness and metrics of every role the process runs, on a port
 * of its own so that /metrics is never served on the public API port. A worker has no other server.
 */
export async function startOpsServer(
  opts: Omit<OpsRouteOptions, 'metrics'> & { host: string; port: number; logger: Logger; metrics: Metrics; httpTimeouts?: HttpTimeouts },
): Promise<{ url: string; close(): Promise<void> }> {
  const app = internalServer(opts.logger, opts.httpTimeouts);
  registerOpsRoutes(app, { ...opts, detailed: true });
  await app.listen({ host: opts.host, port: opts.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`, close: () => app.close() };
}
