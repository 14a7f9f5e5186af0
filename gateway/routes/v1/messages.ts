/**
 * Direct messages and automatic messages over HTTP: the official paths under
 * /v1/vplat/v1.3/business/message/, one row per MessageService RPC. The image upload is multipart
 * and lives in message-media.ts.
 */
import { MessageService } from '../../../gen/vps/engagement/v1/message_pb';
import { defineRoute, type RpcRoute } from '../../rpc-route';
import { okEnvelope } from '../../schemas/common';
import {
  AutoMessageCreateBody,
  AutoMessageDeleteBody,
  AutoMessageGetBody,
  AutoMessageSortBody,
  AutoMessageStatusBody,
  AutoMessageUpdateBody,
  CapabilitiesQuery,
  ConversationListQuery,
  FlatJson,
  MediaDownloadBody,
  MediaDownloadJson,
  MessageListQuery,
  SendMessageBody,
} from '../../schemas/messages';
import { BUSINESS } from './paths';

const MESSAGE = `${BUSINESS}/message`;
const flat = { response: { 200: okEnvelope(FlatJson) } };
const dataOf = (res: { data?: Record<string, unknown> }) => res.data ?? {};

/** The message routes under /v1/vplat/v1.3/business/. */
export const messageRoutes: RpcRoute[] = [
  defineRoute({
    method: 'GET',
    url: `${MESSAGE}/conversation/list`,
    summary: 'Conversations of the last 90 days (official conversation/list): items, hasMore, cursor',
    rpc: MessageService.method.listConversations,
    schema: { querystring: ConversationListQuery, ...flat },
    toRequest: (req) => {
      const q = req.query;
      return {
        account: q.account,
        conversationType: q.conversationType,
        limit: q.limit,
        cursor: q.cursor === undefined ? undefined : BigInt(q.cursor),
      };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'GET',
    url: `${MESSAGE}/content/list`,
    summary: 'The latest 20 messages of a conversation, newest first (fixed; no paging): items, participants',
    rpc: MessageService.method.listMessages,
    schema: { querystring: MessageListQuery, ...flat },
    toRequest: (req) => {
      const q = req.query;
      return { account: q.account, conversationId: q.conversationId };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/send`,
    summary:
      'Send exactly one of: text, imageMediaId, sharePostItemId, a QA card (templateType, templateTitle, templateButtons), senderAction TYPING or MARK_READ',
    rpc: MessageService.method.sendMessage,
    schema: { body: SendMessageBody, ...flat },
    toRequest: (req) => {
      const b = req.body;
      return {
        account: b.account,
        conversationId: b.conversationId,
        text: b.text,
        imageMediaId: b.imageMediaId,
        sharePostItemId: b.sharePostItemId,
        templateType: b.templateType,
        templateTitle: b.templateTitle,
        templateButtons: (b.templateButtons ?? []).map((button) => ({ type: button.type ?? '', title: button.title, id: button.id ?? '' })),
        senderAction: b.senderAction,
        referencedMessageId: b.referencedMessageId,
      };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/media/download`,
    summary: "A download address of a message's image or video, valid 24 hours (expiresAt)",
    rpc: MessageService.method.getMediaDownload,
    schema: { body: MediaDownloadBody, response: { 200: okEnvelope(MediaDownloadJson) } },
    toRequest: (req) => {
      const b = req.body;
      return { account: b.account, conversationId: b.conversationId, messageId: b.messageId, mediaId: b.mediaId, mediaType: b.mediaType };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'GET',
    url: `${MESSAGE}/capabilities/get`,
    summary: 'What a conversation allows now (IMAGE_SEND): items of capabilityType, capabilityResult',
    rpc: MessageService.method.getCapabilities,
    schema: { querystring: CapabilitiesQuery, ...flat },
    toRequest: (req) => {
      const q = req.query;
      return {
        account: q.account,
        capabilityTypes: q.capabilityTypes ?? [],
        conversationId: q.conversationId,
        conversationType: q.conversationType,
      };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/auto_message/get`,
    summary: 'Automatic messages of a type with their review status, and whether the type is enabled',
    rpc: MessageService.method.getAutoMessages,
    schema: { body: AutoMessageGetBody, ...flat },
    toRequest: (req) => {
      const b = req.body;
      return { account: b.account, autoMessageType: b.autoMessageType, autoMessageId: b.autoMessageId };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/auto_message/create`,
    summary: 'Create a welcome message, suggested question or chat prompt (reviewed before use): autoMessageId',
    rpc: MessageService.method.createAutoMessage,
    schema: { body: AutoMessageCreateBody, ...flat },
    toRequest: (req) => req.body,
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/auto_message/update`,
    summary: 'Change an automatic message (not while it is in review)',
    rpc: MessageService.method.updateAutoMessage,
    schema: { body: AutoMessageUpdateBody, ...flat },
    toRequest: (req) => req.body,
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/auto_message/delete`,
    summary: 'Delete a suggested question or chat prompt (a welcome message is turned off instead)',
    rpc: MessageService.method.deleteAutoMessage,
    schema: { body: AutoMessageDeleteBody, ...flat },
    toRequest: (req) => req.body,
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/auto_message/sort`,
    summary: 'Order the chat prompts',
    rpc: MessageService.method.sortAutoMessages,
    schema: { body: AutoMessageSortBody, ...flat },
    toRequest: (req) => {
      const b = req.body;
      return { account: b.account, autoMessageType: b.autoMessageType ?? 'CHAT_PROMPT', autoMessageIds: b.autoMessageIds };
    },
    toData: dataOf,
  }),
  defineRoute({
    method: 'POST',
    url: `${MESSAGE}/auto_message/status/update`,
    summary: 'Turn every automatic message of a type on (ENABLE) or off (DISABLE)',
    rpc: MessageService.method.updateAutoMessageStatus,
    schema: { body: AutoMessageStatusBody, ...flat },
    toRequest: (req) => req.body,
    toData: dataOf,
  }),
];
