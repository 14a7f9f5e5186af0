/**
 * POST /webhooks/vplat: the receiver of the short-video platform's webhooks (outside /v1: the
 * platform authenticates by signature, not by API key). The body is passed to core byte for byte,
 * since the signature covers the raw text. A 200 tells the platform the event is stored; anything
 * else makes it push again later.
 */
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { IngestService } from '../../gen/vps/event/v1/event_pb';

export const UPSTREAM_WEBHOOK_PATH = '/webhooks/vplat';

/** Official pushes are small JSON documents; a larger body is not one. */
const MAX_WEBHOOK_BYTES = 256 * 1024;

export async function registerUpstreamWebhooks(app: FastifyInstance, transport: Transport): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BYTES }, (_req, body, done) => done(null, body));
    scope.post(UPSTREAM_WEBHOOK_PATH, async (req) => {
      const signature = req.headers['tiktok-signature'];
      const res = await transport.unary(
        IngestService.method.receiveOfficialWebhook,
        undefined,
        undefined,
        new Headers({ 'x-request-id': req.id }),
        {
          body: Buffer.isBuffer(req.body) ? new Uint8Array(req.body) : new Uint8Array(),
          signature: typeof signature === 'string' ? signature : '',
        },
      );
      return { code: 0, message: 'ok', data: { outcome: res.message.outcome, eventId: res.message.eventId || null } };
    });
  });
}
