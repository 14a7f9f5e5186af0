/**
 * Direct messages and automatic messages of a video track account, passed through to the official
 * Business Messaging API (official-api.md §6) with the fields flattened by
 * core/upstream/vplat/message-fields.ts. The service adds what the platform leaves to the caller:
 * exactly one kind of content per send, the IMAGE_SEND check before an image, the expiry moments
 * of media ids and download addresses, and the `vplat.message.sent` event of every send.
 */
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CreateAutoMessageRequest,
  DeleteAutoMessageRequest,
  GetAutoMessagesRequest,
  GetCapabilitiesRequest,
  FetchMediaRequest,
  FetchMediaResponseSchema,
  GetMediaDownloadRequest,
  ListConversationsRequest,
  ListMessagesRequest,
  MessageService,
  SendMessageRequest,
  SortAutoMessagesRequest,
  UpdateAutoMessageRequest,
  UpdateAutoMessageStatusRequest,
  UploadMessageMediaRequest,
  CheckMediaUploadRequest,
} from '../../gen/vps/engagement/v1/message_pb';
import { customerOf } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { passThrough } from '../engagement/pass-through';
import {
  AUTO_MESSAGE_TYPES,
  autoMessageContent,
  CAPABILITY_TYPES,
  checkMessageImage,
  CONVERSATION_TYPES,
  DELETABLE_AUTO_MESSAGE_TYPES,
  DOWNLOAD_URL_VALID_MS,
  MEDIA_ID_VALID_MS,
  MEDIA_TYPES,
  oneOf,
  OPERATION_STATUSES,
  required,
  sendBody,
  sendKindOf,
  sentEventData,
} from '../engagement/message-rules';
import { ApiError, invalidField } from '../errors';
import { PLATFORM, catalogued } from '../events/event-types';
import { messageSentKey } from '../events/official-events';
import type { EventRecorder } from '../events/recorder';
import type { Logger } from '../logger';
import { bookSeat, seatAccessToken, type BoundSeat } from '../publishing/seats';
import type { Upstream } from '../upstream';
import { fromOfficial, toOfficial } from '../upstream/mapping';
import {
  AUTO_MESSAGE_CREATE_BODY,
  AUTO_MESSAGE_DELETE_BODY,
  AUTO_MESSAGE_GET_ANSWER,
  AUTO_MESSAGE_GET_QUERY,
  AUTO_MESSAGE_SORT_BODY,
  AUTO_MESSAGE_STATUS_BODY,
  AUTO_MESSAGE_UPDATE_BODY,
  AUTO_MESSAGE_WRITE_ANSWER,
  CAPABILITIES_ANSWER,
  CAPABILITIES_QUERY,
  CONVERSATION_LIST_ANSWER,
  CONVERSATION_LIST_QUERY,
  MEDIA_DOWNLOAD_ANSWER,
  MEDIA_DOWNLOAD_BODY,
  MEDIA_UPLOAD_ANSWER,
  MESSAGE_LIST_ANSWER,
  MESSAGE_LIST_QUERY,
  SEND_MESSAGE_ANSWER,
} from '../upstream/vplat/message-fields';
import * as official from '../upstream/vplat/messages';

const ACCOUNT = (account: string) => required('account', account, 200);

export class MessageHandlers implements ServiceImpl<typeof MessageService> {
  constructor(
    readonly deps: {
      db: Db;
      sealedBox: SealedBox;
      upstream: Upstream;
      events: EventRecorder;
      logger: Logger;
      /** The platform's media hosts, where its download addresses may point (VPLAT_MEDIA_HOSTS). */
      mediaHosts: readonly string[];
    },
  ) {}

  private through(
    ctx: HandlerContext,
    account: string,
    call: (token: string, seat: BoundSeat) => Promise<object>,
    table: Parameters<typeof passThrough>[3],
  ) {
    return passThrough(this.deps, { customerId: customerOf(ctx).customerId, account: ACCOUNT(account) }, call, table);
  }

  private get vplat() {
    return this.deps.upstream.vplat;
  }

  async listConversations(req: ListConversationsRequest, ctx: HandlerContext) {
    const conversationType = oneOf('conversationType', req.conversationType, CONVERSATION_TYPES);
    if (req.limit !== undefined && (req.limit < 1 || req.limit > 100)) throw invalidField('limit', 'must be 1 to 100');
    if (req.cursor !== undefined && req.cursor < 0n) throw invalidField('cursor', 'must be 0 or more');
    const fields = { conversationType, limit: req.limit, cursor: req.cursor === undefined ? undefined : Number(req.cursor) };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.listConversations(
          this.vplat,
          token,
          toOfficial(CONVERSATION_LIST_QUERY, fields, { business_id: seat.accountId }) as unknown as official.ConversationListQuery,
        ),
      CONVERSATION_LIST_ANSWER,
    );
  }

  async listMessages(req: ListMessagesRequest, ctx: HandlerContext) {
    const conversationId = required('conversationId', req.conversationId, 500);
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.listMessages(
          this.vplat,
          token,
          toOfficial(MESSAGE_LIST_QUERY, { conversationId }, { business_id: seat.accountId }) as {
            business_id: string;
            conversation_id: string;
          },
        ),
      MESSAGE_LIST_ANSWER,
    );
  }

  async sendMessage(req: SendMessageRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const kind = sendKindOf(req);
    const body = sendBody(req, kind);
    let sent: { seat: BoundSeat; body: Record<string, unknown>; messageId: string } | undefined;
    const result = await this.through(
      ctx,
      req.account,
      async (token, seat) => {
        const full = { business_id: seat.accountId, ...body };
        if (kind.messageType === 'IMAGE') await this.assertImageSend(token, seat, String(body.recipient));
        const answer = await official.sendMessage(this.vplat, token, full as unknown as official.SendMessageRequest);
        sent = { seat, body: full, messageId: answer.message?.message_id ?? '' };
        return answer;
      },
      SEND_MESSAGE_ANSWER,
    );
    // A typing indicator or read receipt is not a message: no id, nothing to log.
    if (sent && sent.messageId) {
      const occurredAt = new Date();
      await this.deps.events.record({
        customerId,
        seatId: sent.seat.id,
        // The platform's im_send_msg push of the same message is logged under the same key and name.
        ...catalogued('vplat.message.sent'),
        occurredAt,
        data: sentEventData(sent.seat, sent.body, sent.messageId, occurredAt.getTime()),
        sourceKey: messageSentKey(sent.messageId),
      });
    }
    return result;
  }

  /**
   * official-api.md §6.4: ask IMAGE_SEND before an image. Only a SINGLE conversation can ever allow
   * it, so that is the type asked. A refusal is the platform's verdict on the conversation, so it
   * is answered as the platform's refusal would be (3001), not retryable until the user writes.
   */
  private async assertImageSend(token: string, seat: BoundSeat, conversationId: string): Promise<void> {
    const answer = await official.getMessagingCapabilities(this.vplat, token, {
      business_id: seat.accountId,
      capability_types: ['IMAGE_SEND'],
      conversation_id: conversationId,
      conversation_type: 'SINGLE',
    });
    const allowed = answer.capability_infos?.some((c) => c.capability_type === 'IMAGE_SEND' && c.capability_result === true);
    if (!allowed) {
      throw new ApiError(
        3001,
        'IMAGE_SEND: the platform does not allow images in this conversation now (it must be SINGLE, with a user message within 48 hours); send text, or wait for the user to write',
        { data: { platform: PLATFORM, retryable: false, capability: 'IMAGE_SEND', capabilityResult: false } },
      );
    }
  }

  async uploadMessageMedia(req: UploadMessageMediaRequest, ctx: HandlerContext) {
    // The account first (1007), then the bytes, as every upload route does.
    const seat = await this.mediaUploadSeat(req.account, ctx);
    const { contentType } = await checkMessageImage(req.data);
    const fileName = req.fileName || (contentType === 'image/png' ? 'image.png' : 'image.jpg');
    const answer = await official.uploadMessageMedia(this.vplat, seatAccessToken(this.deps.sealedBox, seat), seat.accountId, {
      bytes: req.data,
      fileName,
      contentType,
    });
    const data = fromOfficial(MEDIA_UPLOAD_ANSWER, answer as unknown as Record<string, unknown>);
    return { data: { ...data, expiresAt: new Date(Date.now() + MEDIA_ID_VALID_MS).toISOString() } as JsonObject };
  }

  /** What uploadMessageMedia checks before the image, for a front end to ask before it reads one. */
  async checkMediaUpload(req: CheckMediaUploadRequest, ctx: HandlerContext) {
    await this.mediaUploadSeat(req.account, ctx);
    return {};
  }

  private mediaUploadSeat(account: string, ctx: HandlerContext): Promise<BoundSeat> {
    return bookSeat(this.deps.db, customerOf(ctx).customerId, ACCOUNT(account), 'video', 'account');
  }

  /** The official download address of a message's media, and the token that fetching it needs. */
  private async mediaDownload(req: GetMediaDownloadRequest | FetchMediaRequest, ctx: HandlerContext) {
    const fields = {
      conversationId: required('conversationId', req.conversationId, 500),
      messageId: required('messageId', req.messageId, 500),
      mediaId: required('mediaId', req.mediaId, 500),
      mediaType: oneOf('mediaType', req.mediaType, MEDIA_TYPES),
    };
    let accessToken = '';
    const { data } = await this.through(
      ctx,
      req.account,
      (token, seat) => {
        accessToken = token;
        return official.getMessageMediaDownload(
          this.vplat,
          token,
          toOfficial(MEDIA_DOWNLOAD_BODY, fields, { business_id: seat.accountId }) as unknown as official.MediaDownloadRequest,
        );
      },
      MEDIA_DOWNLOAD_ANSWER,
    );
    return { data, accessToken };
  }

  async getMediaDownload(req: GetMediaDownloadRequest, ctx: HandlerContext) {
    const { data } = await this.mediaDownload(req, ctx);
    return { data: { ...data, expiresAt: new Date(Date.now() + DOWNLOAD_URL_VALID_MS).toISOString() } as JsonObject };
  }

  async *fetchMedia(req: FetchMediaRequest, ctx: HandlerContext): AsyncGenerator<MessageInitShape<typeof FetchMediaResponseSchema>> {
    const { data, accessToken } = await this.mediaDownload(req, ctx);
    const file = await official
      .downloadMessageMedia(this.vplat, accessToken, String(data.downloadUrl), this.deps.mediaHosts)
      .catch((err) => {
        if (err instanceof official.MediaAddressRefused) {
          // The operator's part: a host of the platform missing from the list, or a platform answer to look into.
          this.deps.logger.warn(
            { reason: err.reason, customerId: customerOf(ctx).customerId },
            "refused a media download address of the platform; if the host is the platform's, add it to VPLAT_MEDIA_HOSTS",
          );
        }
        throw err;
      });
    yield {
      part: {
        case: 'head',
        value: { contentType: file.contentType, contentLength: file.contentLength === undefined ? undefined : BigInt(file.contentLength) },
      },
    };
    for await (const chunk of file.body) yield { part: { case: 'chunk', value: chunk } };
  }

  async getCapabilities(req: GetCapabilitiesRequest, ctx: HandlerContext) {
    const capabilityTypes = req.capabilityTypes.length ? [...new Set(req.capabilityTypes)] : ['IMAGE_SEND'];
    capabilityTypes.forEach((t, i) => oneOf(`capabilityTypes[${i}]`, t, CAPABILITY_TYPES));
    const fields = {
      capabilityTypes,
      conversationId: required('conversationId', req.conversationId, 500),
      conversationType: oneOf('conversationType', req.conversationType, CONVERSATION_TYPES),
    };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.getMessagingCapabilities(
          this.vplat,
          token,
          toOfficial(CAPABILITIES_QUERY, fields, { business_id: seat.accountId }) as unknown as official.CapabilitiesQuery,
        ),
      CAPABILITIES_ANSWER,
    );
  }

  async getAutoMessages(req: GetAutoMessagesRequest, ctx: HandlerContext) {
    const fields = {
      autoMessageType: oneOf('autoMessageType', req.autoMessageType, AUTO_MESSAGE_TYPES),
      autoMessageId: req.autoMessageId || undefined,
    };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.getAutoMessages(
          this.vplat,
          token,
          toOfficial(AUTO_MESSAGE_GET_QUERY, fields, { business_id: seat.accountId }) as {
            business_id: string;
            auto_message_type: official.AutoMessageType;
          },
        ),
      AUTO_MESSAGE_GET_ANSWER,
    );
  }

  async createAutoMessage(req: CreateAutoMessageRequest, ctx: HandlerContext) {
    const autoMessageType = oneOf('autoMessageType', req.autoMessageType, AUTO_MESSAGE_TYPES);
    const fields = { autoMessageType, ...autoMessageContent(autoMessageType, req as unknown as Record<string, unknown>) };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.createAutoMessage(
          this.vplat,
          token,
          toOfficial(AUTO_MESSAGE_CREATE_BODY, fields, { business_id: seat.accountId }) as never,
        ),
      AUTO_MESSAGE_WRITE_ANSWER,
    );
  }

  async updateAutoMessage(req: UpdateAutoMessageRequest, ctx: HandlerContext) {
    const autoMessageType = oneOf('autoMessageType', req.autoMessageType, AUTO_MESSAGE_TYPES);
    const fields = {
      autoMessageType,
      autoMessageId: required('autoMessageId', req.autoMessageId, 200),
      ...autoMessageContent(autoMessageType, req as unknown as Record<string, unknown>),
    };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.updateAutoMessage(
          this.vplat,
          token,
          toOfficial(AUTO_MESSAGE_UPDATE_BODY, fields, { business_id: seat.accountId }) as never,
        ),
      AUTO_MESSAGE_WRITE_ANSWER,
    );
  }

  async deleteAutoMessage(req: DeleteAutoMessageRequest, ctx: HandlerContext) {
    if (req.autoMessageType === 'WELCOME_MESSAGE')
      throw invalidField('autoMessageType', 'a welcome message cannot be deleted; turn it off with auto_message/status/update (DISABLE)');
    const fields = {
      autoMessageType: oneOf('autoMessageType', req.autoMessageType, DELETABLE_AUTO_MESSAGE_TYPES),
      autoMessageId: required('autoMessageId', req.autoMessageId, 200),
    };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.deleteAutoMessage(
          this.vplat,
          token,
          toOfficial(AUTO_MESSAGE_DELETE_BODY, fields, { business_id: seat.accountId }) as never,
        ),
      [],
    );
  }

  async sortAutoMessages(req: SortAutoMessagesRequest, ctx: HandlerContext) {
    const autoMessageType = oneOf('autoMessageType', req.autoMessageType || 'CHAT_PROMPT', ['CHAT_PROMPT'] as const);
    if (req.autoMessageIds.length === 0) throw invalidField('autoMessageIds', 'must list the chat prompts in the desired order');
    if (new Set(req.autoMessageIds).size !== req.autoMessageIds.length) throw invalidField('autoMessageIds', 'must not repeat an id');
    req.autoMessageIds.forEach((id, i) => required(`autoMessageIds[${i}]`, id, 200));
    const fields = { autoMessageType, autoMessageIds: [...req.autoMessageIds] };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.sortAutoMessages(this.vplat, token, toOfficial(AUTO_MESSAGE_SORT_BODY, fields, { business_id: seat.accountId }) as never),
      [],
    );
  }

  async updateAutoMessageStatus(req: UpdateAutoMessageStatusRequest, ctx: HandlerContext) {
    const fields = {
      autoMessageType: oneOf('autoMessageType', req.autoMessageType, AUTO_MESSAGE_TYPES),
      operationStatus: oneOf('operationStatus', req.operationStatus, OPERATION_STATUSES),
    };
    return this.through(
      ctx,
      req.account,
      (token, seat) =>
        official.updateAutoMessageStatus(
          this.vplat,
          token,
          toOfficial(AUTO_MESSAGE_STATUS_BODY, fields, { business_id: seat.accountId }) as never,
        ),
      [],
    );
  }
}
