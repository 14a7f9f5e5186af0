import type { FastifyInstance } from 'fastify';

/**
 * Once a server begins to close, every answer still to be sent asks the client to close its
 * connection. Node closes the connections that are idle when close() starts; one that carried a
 * request in flight would otherwise stay open on keep-alive after its answer, and hold the
 * process's exit until the keep-alive timeout.
 */
export function closeConnectionsAfterClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_req, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    return payload;
  });
}
