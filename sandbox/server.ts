/**
 * The emulator of the official platform APIs (role `sandbox`). This first version answers health
 * and refuses every other path the way the official Business API refuses an unknown path (HTTP 404
 * with its envelope); the official endpoints arrive with the emulator issue.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { fastifyLogging, type Logger } from '../core/logger';

export async function startSandbox(opts: { host: string; port: number; logger: Logger }): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ ...fastifyLogging(opts.logger) });
  app.get('/_sandbox/health', async () => ({ status: 'ok' }));
  app.setNotFoundHandler((_req, reply) =>
    reply.code(404).send({ code: 40002, message: 'The requested path does not exist.', request_id: randomUUID().replace(/-/g, ''), data: {} }),
  );
  await app.listen({ host: opts.host, port: opts.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { url: `http://${opts.host}:${port}`, close: () => app.close() };
}
