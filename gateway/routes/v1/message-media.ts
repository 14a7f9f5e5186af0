/**
 * Message media that is not JSON: the image upload (POST …/message/media/upload), multipart: the
 * field account and the part file (JPG or PNG, at most 3 MB, official-api.md §6.4), in either order,
 * checked by core caller and account first (before the gateway reads the file, when the account
 * comes first), then bytes; and the media itself (GET …/message/media/content), which the
 * platform serves only to a holder of the account's token, relayed by core as a byte stream.
 */
import { Readable } from 'node:stream';
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { MessageService, type FetchMediaResponse } from '../../../gen/vps/engagement/v1/message_pb';
import { Access } from '../../../gen/vps/options/v1/options_pb';
import { MESSAGE_MEDIA_MAX_BYTES } from '../../../core/engagement/message-rules';
import { ApiError } from '../../../core/errors';
import { registerSmallUpload } from '../../multipart';
import { authorizeCaller, forwardedHeaders, forwardResponseHeaders, nulField, single } from '../../rpc-route';
import { okEnvelope } from '../../schemas/common';
import { MediaDownloadBody, MediaUploadJson, MessageMediaUploadFields } from '../../schemas/messages';
import { BUSINESS } from './paths';

const MESSAGE = `${BUSINESS}/message`;

/** POST …/message/media/upload (multipart) and GET …/message/media/content (the bytes). */
export async function registerMessageMediaRoute(app: FastifyInstance, opts: { transport: Transport; drainBytes: number }): Promise<void> {
  registerMediaContentRoute(app, opts.transport);
  await registerSmallUpload(app, {
    transport: opts.transport,
    url: `${MESSAGE}/media/upload`,
    schema: {
      summary:
        'Upload a message image (JPG or PNG, at most 3 MB): multipart/form-data with account and the part file (in either order); returns mediaId, valid 30 days (expiresAt)',
      body: { content: { 'multipart/form-data': { schema: MessageMediaUploadFields } } },
      response: { 200: okEnvelope(MediaUploadJson) },
    },
    accountField: 'account',
    drainBytes: opts.drainBytes,
    maxBytes: MESSAGE_MEDIA_MAX_BYTES,
    check: (req, account) =>
      opts.transport.unary(MessageService.method.checkMediaUpload, undefined, undefined, forwardedHeaders(req), { account }),
    send: async (req, upload) => {
      const res = await opts.transport.unary(MessageService.method.uploadMessageMedia, undefined, undefined, forwardedHeaders(req), upload);
      return { header: res.header, data: res.message.data ?? {} };
    },
  });
}

function registerMediaContentRoute(app: FastifyInstance, transport: Transport): void {
  app.route<{ Querystring: MediaDownloadBody }>({
    method: 'GET',
    url: `${MESSAGE}/media/content`,
    schema: {
      summary:
        "The bytes of a message's image or video, fetched for you with the account's token (the platform's download address needs it); the same fields as media/download, in the query",
      querystring: MediaDownloadBody,
      response: {
        200: {
          description: "The file, with the platform's Content-Type",
          content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
        },
      },
    },
    config: { access: Access.READ },
    attachValidation: true,
    handler: async (req, reply) => {
      const invalid = req.validationError?.message ?? nulField(req);
      if (invalid) {
        await authorizeCaller(transport, req, Access.READ);
        throw new ApiError(2001, invalid);
      }
      const q = req.query;
      const call = new AbortController();
      reply.raw.once('close', () => call.abort());
      const res = await transport.stream(MessageService.method.fetchMedia, call.signal, undefined, forwardedHeaders(req), single({ ...q }));
      const parts = res.message[Symbol.asyncIterator]();
      // Every refusal (key, account, the platform) comes before the head: answered as an envelope.
      const first = await parts.next();
      const head = !first.done && first.value.part.case === 'head' ? first.value.part.value : undefined;
      if (!head) throw new Error('core sent media without its head');
      forwardResponseHeaders(res.header, reply);
      // Whatever a customer's correspondent sent: saved as a file, never shown in the API's origin
      // (with nosniff, which every answer carries, a browser cannot be talked into running it).
      void reply
        .header('content-type', head.contentType)
        .header('content-disposition', 'attachment')
        .header('cache-control', 'private, no-store');
      if (head.contentLength !== undefined) void reply.header('content-length', String(head.contentLength));
      return reply.send(Readable.from(chunks(parts)));
    },
  });
}

async function* chunks(parts: AsyncIterator<FetchMediaResponse>): AsyncGenerator<Uint8Array> {
  for (let next = await parts.next(); !next.done; next = await parts.next()) {
    if (next.value.part.case === 'chunk') yield next.value.part.value;
  }
}
