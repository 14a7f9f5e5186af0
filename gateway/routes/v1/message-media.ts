/**
 * The message image upload (POST /v1/vplat/v1.3/business/message/media/upload), multipart: the
 * field account, then the part file (JPG or PNG, at most 3 MB, official-api.md §6.4). Core checks
 * the account first, then the bytes, then uploads.
 */
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { MessageService } from '../../../gen/vps/engagement/v1/message_pb';
import { MESSAGE_MEDIA_MAX_BYTES } from '../../../core/engagement/message-rules';
import { registerSmallUpload } from '../../multipart';
import { forwardedHeaders } from '../../rpc-route';
import { okEnvelope } from '../../schemas/common';
import { MediaUploadJson, MessageMediaUploadFields } from '../../schemas/messages';

/** POST /v1/vplat/v1.3/business/message/media/upload (multipart). */
export async function registerMessageMediaRoute(app: FastifyInstance, opts: { transport: Transport }): Promise<void> {
  await registerSmallUpload(app, {
    transport: opts.transport,
    url: '/vplat/v1.3/business/message/media/upload',
    schema: {
      summary: 'Upload a message image (JPG or PNG, at most 3 MB): multipart/form-data with account, then the part file; returns mediaId, valid 30 days (expiresAt)',
      body: { content: { 'multipart/form-data': { schema: MessageMediaUploadFields } } },
      response: { 200: okEnvelope(MediaUploadJson) },
    },
    accountField: 'account',
    maxBytes: MESSAGE_MEDIA_MAX_BYTES,
    send: async (req, upload) => {
      const res = await opts.transport.unary(MessageService.method.uploadMessageMedia, undefined, undefined, forwardedHeaders(req), upload);
      return { header: res.header, data: res.message.data ?? {} };
    },
  });
}
