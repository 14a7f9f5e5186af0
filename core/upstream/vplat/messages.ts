/**
 * Business Messaging endpoints (official-api.md §6): conversations, their latest messages,
 * sending, media, capabilities and automatic messages, one typed function each, in the official
 * wire shapes (snake_case). A send is not idempotent and counts against the conversation's
 * 48-hour window (10 messages), so nothing here retries; failures arrive as UpstreamError.
 */
import { UpstreamError } from '../failures';
import { FormData, type OfficialFile } from '../http';
import type { VplatClient } from './client';
import { mediaAddressRefusal } from './media-hosts';

export type ConversationType = 'STRANGER' | 'SINGLE';
export type ParticipantRole = 'BUSINESS_ACCOUNT' | 'PERSONAL_ACCOUNT';
export type MessageSource = 'APP' | 'WEB' | 'API' | 'OTHERS' | 'UNKNOWN_SOURCE';
export type ReadMessageType = 'TEXT' | 'IMAGE' | 'SHARE_POST' | 'VIDEO' | 'EMOJI' | 'STICKER' | 'TEMPLATE' | 'OTHER';

export interface ConversationListQuery {
  business_id: string;
  conversation_type: ConversationType;
  /** 1–100, default 100. */
  limit?: number;
  cursor?: number;
}

export interface ConversationReferral {
  ad?: Array<{ advertiser_id: string; ad_id: string; timestamp: number; ad_name: string; embed_url: string; message_material_id: string }>;
  short_link?: Array<{ ref: string; prefilled_message: string; prefilled_message_audit_status: 'PASS' | 'REJECT' }>;
}

export interface ConversationListData {
  conversations: Array<{
    /** May contain `+`: always percent-encode it in a query (the transport does). */
    conversation_id: string;
    /** Milliseconds. */
    update_time: number;
    referral?: ConversationReferral;
  }>;
  has_more: boolean;
  cursor: number;
}

export interface MessageTemplate {
  type: 'QA_BUTTON_CARD' | 'QA_LINK_CARD';
  /** At most 40 characters. */
  title: string;
  /** 1–3; title at most 20 characters on a button card, 40 on a link card; id at most 40. */
  buttons: Array<{ type: 'REPLY'; title: string; id?: string }>;
}

export interface MessageUser {
  role: ParticipantRole;
  /** business_id for the business, the user's unique_identifier otherwise. */
  id: string;
}

export interface Message {
  /** Usernames. */
  sender: string;
  recipient: string;
  conversation_id: string;
  message_id: string;
  /** Milliseconds. */
  timestamp: number;
  message_tag?: { source: MessageSource };
  message_type: ReadMessageType;
  auto_message_type?: 'WELCOME_MESSAGE' | 'SUGGESTED_QUESTION' | 'AUTO_REPLY';
  text?: { body: string };
  image?: { media_id: string };
  share_post?: { embed_url: string };
  video?: { media_id: string };
  sticker?: { url: string };
  emoji?: { url: string };
  template?: MessageTemplate;
  reactions?: Array<{ type: 'EMOJI' | 'AI_EMOJI'; emoji?: string; ai_emoji_url?: string; unique_identifier: string; timestamp: number }>;
  from_user: MessageUser;
  to_user: MessageUser;
  referenced_message_info?: { referenced_message_id: string };
}

export interface Participant extends MessageUser {
  display_name: string;
  profile_image: string;
  /** Personal accounts only. */
  is_follower?: boolean;
}

export interface MessageListData {
  /** The 20 most recent messages; there is no pagination. */
  messages: Message[];
  participants: Participant[];
}

interface SendBase {
  business_id: string;
  recipient_type: 'CONVERSATION';
  /** The conversation_id. */
  recipient: string;
}

/** Exactly the payload object of its message_type. */
export type SendMessageRequest = SendBase &
  (
    | { message_type: 'TEXT'; text: { body: string }; referenced_message_info?: { referenced_message_id: string } }
    | { message_type: 'IMAGE'; image: { media_id: string } }
    | { message_type: 'SHARE_POST'; share_post: { item_id: string } }
    | { message_type: 'TEMPLATE'; template: MessageTemplate }
    | { message_type: 'SENDER_ACTION'; sender_action: 'TYPING' | 'MARK_READ' }
  );

export interface SendMessageData {
  /** `message_id` is "" for SENDER_ACTION. */
  message: { message_id: string };
}

export interface MessageMediaFile {
  bytes: Uint8Array;
  fileName: string;
  /** image/jpeg or image/png. */
  contentType: string;
}

export interface MediaDownloadRequest {
  business_id: string;
  conversation_id: string;
  message_id: string;
  media_id: string;
  media_type: 'IMAGE' | 'VIDEO';
}

export interface MediaDownloadData {
  /** Valid 24 hours; fetching it needs the header `x-user: <Access-Token>`. */
  download_url: string;
}

export interface CapabilitiesQuery {
  business_id: string;
  capability_types: Array<'IMAGE_SEND'>;
  /** Required with IMAGE_SEND. */
  conversation_id?: string;
  conversation_type?: ConversationType;
}

export interface CapabilitiesData {
  capability_infos: Array<{ capability_type: 'IMAGE_SEND'; capability_result: boolean }>;
}

export type AutoMessageType = 'WELCOME_MESSAGE' | 'SUGGESTED_QUESTION' | 'CHAT_PROMPT';
export type AuditStatus = 'REVIEWING' | 'APPROVED' | 'REJECTED';
export type OperationStatus = 'ENABLE' | 'DISABLE';

/** One object per type: welcome content ≤250; question ≤80 and answer ≤200; prompt title ≤18 and content ≤150. */
export type AutoMessageContent =
  | { auto_message_type: 'WELCOME_MESSAGE'; welcome_message: { content: string } }
  | { auto_message_type: 'SUGGESTED_QUESTION'; suggested_question: { question: string; answer: string } }
  | { auto_message_type: 'CHAT_PROMPT'; chat_prompt: { title: string; content: string } };

export interface AutoMessage {
  auto_message_id: string;
  auto_message_type: AutoMessageType;
  audit_status: AuditStatus;
  welcome_message?: { content: string };
  suggested_question?: { question: string; answer: string };
  chat_prompt?: { title: string; content: string };
}

export interface AutoMessageGetData {
  business_id: string;
  operation_status: OperationStatus;
  auto_messages: AutoMessage[];
}

export interface AutoMessageWriteData {
  auto_message: { auto_message_id: string };
}

export function listConversations(client: VplatClient, accessToken: string, query: ConversationListQuery): Promise<ConversationListData> {
  return client.get<ConversationListData>('business/message/conversation/list/', accessToken, { ...query });
}

export function listMessages(
  client: VplatClient,
  accessToken: string,
  query: { business_id: string; conversation_id: string },
): Promise<MessageListData> {
  return client.get<MessageListData>('business/message/content/list/', accessToken, { ...query });
}

export function sendMessage(client: VplatClient, accessToken: string, body: SendMessageRequest): Promise<SendMessageData> {
  return client.post<SendMessageData>('business/message/send/', accessToken, body);
}

/** JPG or PNG, at most 3 MB; the media_id stays valid for 30 days. */
export function uploadMessageMedia(
  client: VplatClient,
  accessToken: string,
  businessId: string,
  file: MessageMediaFile,
): Promise<{ media_id: string }> {
  const form = new FormData();
  form.append('business_id', businessId);
  form.append('media_type', 'IMAGE');
  form.append('file', new Blob([file.bytes], { type: file.contentType }), file.fileName);
  return client.upload<{ media_id: string }>('business/message/media/upload/', accessToken, form);
}

export function getMessageMediaDownload(client: VplatClient, accessToken: string, body: MediaDownloadRequest): Promise<MediaDownloadData> {
  return client.post<MediaDownloadData>('business/message/media/download/', accessToken, body);
}

/** Message media a service relays at most: the platform's own media limits are far below it. */
export const MESSAGE_MEDIA_RELAY_MAX_BYTES = 200 * 1024 * 1024;
const MESSAGE_MEDIA_TIMEOUT_MS = 300_000;

const MEDIA_ADDRESS_ENDPOINT = 'business/message/media/download (address)';

/** A media/download address the access token may not go to (3001, not retryable). */
export class MediaAddressRefused extends UpstreamError {
  constructor(readonly reason: string) {
    super({
      platform: 'vplat',
      endpoint: MEDIA_ADDRESS_ENDPOINT,
      // The same answer would be refused again: nothing a retry can change.
      failureClass: 'bad_request',
      retryable: false,
      officialMessage: `the platform's media download address was refused, and the account's access token not sent to it: ${reason} (the token goes only to https addresses on the platform's own hosts)`,
    });
  }
}

/**
 * The bytes behind a media/download address, fetched as the platform asks: with `x-user:
 * <Access-Token>`. The address is checked first (media-hosts.ts): one the token may not go to is
 * refused with 3001 and nothing is sent to it.
 */
export function downloadMessageMedia(
  client: VplatClient,
  accessToken: string,
  downloadUrl: string,
  mediaHosts: readonly string[],
): Promise<OfficialFile> {
  const refusal = mediaAddressRefusal(downloadUrl, { apiBase: client.settings.baseUrl, mediaHosts });
  if (refusal) return Promise.reject(new MediaAddressRefused(refusal));
  return client.http.download({
    platform: 'vplat',
    endpoint: MEDIA_ADDRESS_ENDPOINT,
    url: downloadUrl,
    headers: { 'x-user': accessToken },
    maxBytes: MESSAGE_MEDIA_RELAY_MAX_BYTES,
    totalMs: MESSAGE_MEDIA_TIMEOUT_MS,
  });
}

export function getMessagingCapabilities(client: VplatClient, accessToken: string, query: CapabilitiesQuery): Promise<CapabilitiesData> {
  return client.get<CapabilitiesData>('business/message/capabilities/get/', accessToken, { ...query });
}

/** Served as GET with a query, as the official curl example does (the doc's header says POST). */
export function getAutoMessages(
  client: VplatClient,
  accessToken: string,
  query: { business_id: string; auto_message_type: AutoMessageType; auto_message_id?: string },
): Promise<AutoMessageGetData> {
  return client.get<AutoMessageGetData>('business/message/auto_message/get/', accessToken, { ...query });
}

/** Starts in review (REVIEWING). At most 1 welcome message, 3 suggested questions, 6 chat prompts; duplicates are refused. */
export function createAutoMessage(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string } & AutoMessageContent,
): Promise<AutoMessageWriteData> {
  return client.post<AutoMessageWriteData>('business/message/auto_message/create/', accessToken, body);
}

/** Refused while the message is in review. */
export function updateAutoMessage(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; auto_message_id: string } & AutoMessageContent,
): Promise<AutoMessageWriteData> {
  return client.post<AutoMessageWriteData>('business/message/auto_message/update/', accessToken, body);
}

/** A welcome message cannot be deleted (disable it instead). */
export function deleteAutoMessage(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; auto_message_type: 'SUGGESTED_QUESTION' | 'CHAT_PROMPT'; auto_message_id: string },
): Promise<Record<string, never>> {
  return client.post<Record<string, never>>('business/message/auto_message/delete/', accessToken, body);
}

/** Chat prompts only; `auto_message_ids` in the desired order. */
export function sortAutoMessages(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; auto_message_type: 'CHAT_PROMPT'; auto_message_ids: string[] },
): Promise<Record<string, never>> {
  return client.post<Record<string, never>>('business/message/auto_message/sort/', accessToken, body);
}

/** Turns every auto message of the type on or off. */
export function updateAutoMessageStatus(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; auto_message_type: AutoMessageType; operation_status: OperationStatus },
): Promise<Record<string, never>> {
  return client.post<Record<string, never>>('business/message/auto_message/status/update/', accessToken, body);
}
