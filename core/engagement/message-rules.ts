/**
 * The rules of direct messages that the platform leaves to the caller, as pure functions: which
 * one kind of content a send carries and its official body, the event data of a sent message, the
 * message image check, and the automatic messages' content per type, with every limit once.
 */
import type { SendMessageRequest } from '../../gen/vps/engagement/v1/message_pb';
import { IMAGE_CONTENT_TYPES, imageInfo, type ImageFormat } from '../media/formats';
import { ApiError, invalidField } from '../errors';
import type { BoundSeat } from '../publishing/seats';
import { toOfficial } from '../upstream/mapping';
import { SEND_MESSAGE_BODY } from '../upstream/vplat/message-fields';

/** official-api.md §6.4: JPG or PNG, at most 3 MB (binary megabytes, as the emulator counts). */
export const MESSAGE_MEDIA_MAX_BYTES = 3 * 1024 * 1024;
export const MESSAGE_MEDIA_FORMATS: readonly ImageFormat[] = ['JPEG', 'PNG'];
/** A media id stays valid 30 days; a download address 24 hours (spec, Limits). */
export const MEDIA_ID_VALID_MS = 30 * 86_400_000;
export const DOWNLOAD_URL_VALID_MS = 24 * 3_600_000;
export const MAX_TEXT_CHARS = 6000;

export const CONVERSATION_TYPES = ['STRANGER', 'SINGLE'] as const;
export const SENDER_ACTIONS = ['TYPING', 'MARK_READ'] as const;
export const TEMPLATE_TYPES = ['QA_BUTTON_CARD', 'QA_LINK_CARD'] as const;
export const MEDIA_TYPES = ['IMAGE', 'VIDEO'] as const;
export const CAPABILITY_TYPES = ['IMAGE_SEND'] as const;
export const AUTO_MESSAGE_TYPES = ['WELCOME_MESSAGE', 'SUGGESTED_QUESTION', 'CHAT_PROMPT'] as const;
export const DELETABLE_AUTO_MESSAGE_TYPES = ['SUGGESTED_QUESTION', 'CHAT_PROMPT'] as const;
export const OPERATION_STATUSES = ['ENABLE', 'DISABLE'] as const;

/** The content fields of each auto message type, with their official limits (characters). */
export const AUTO_MESSAGE_CONTENT: Readonly<
  Record<(typeof AUTO_MESSAGE_TYPES)[number], ReadonlyArray<readonly [field: string, max: number]>>
> = {
  WELCOME_MESSAGE: [['welcomeMessageContent', 250]],
  SUGGESTED_QUESTION: [
    ['suggestedQuestionQuestion', 80],
    ['suggestedQuestionAnswer', 200],
  ],
  CHAT_PROMPT: [
    ['chatPromptTitle', 18],
    ['chatPromptContent', 150],
  ],
};

/** The send kinds, each with the request fields that carry it and its official message_type. */
const SEND_KINDS = [
  { kind: 'text', fields: ['text'], messageType: 'TEXT' },
  { kind: 'image', fields: ['imageMediaId'], messageType: 'IMAGE' },
  { kind: 'shared post', fields: ['sharePostItemId'], messageType: 'SHARE_POST' },
  { kind: 'QA card', fields: ['templateType', 'templateTitle', 'templateButtons'], messageType: 'TEMPLATE' },
  { kind: 'typing indicator or read receipt', fields: ['senderAction'], messageType: 'SENDER_ACTION' },
] as const;
type SendKind = (typeof SEND_KINDS)[number];

/** Characters as a reader counts them: an emoji is one (official "6,000 chars incl. spaces/emoji"). */
const chars = (s: string) => Array.from(s).length;

export function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!value) throw invalidField(field, `is required (one of ${allowed.join(', ')})`);
  if (!(allowed as readonly string[]).includes(value)) throw invalidField(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function required(field: string, value: string, max = 1000): string {
  if (!value) throw invalidField(field, 'is required');
  if (chars(value) > max) throw invalidField(field, `must be at most ${max} characters`);
  return value;
}

/**
 * The one kind of content a send carries, or 2001 naming the fields: none given, or two kinds
 * given at once. referencedMessageId only goes with text.
 */
export function sendKindOf(
  req: Pick<
    SendMessageRequest,
    | 'text'
    | 'imageMediaId'
    | 'sharePostItemId'
    | 'templateType'
    | 'templateTitle'
    | 'templateButtons'
    | 'senderAction'
    | 'referencedMessageId'
  >,
): SendKind {
  const given = (field: string) => {
    const value = (req as Record<string, unknown>)[field];
    return Array.isArray(value) ? value.length > 0 : value !== undefined;
  };
  const present = SEND_KINDS.filter((k) => k.fields.some(given));
  const all = SEND_KINDS.map((k) => k.fields.join('/')).join(', ');
  if (present.length === 0)
    throw new ApiError(2001, `content: give exactly one of ${all}; none was given`, {
      data: { field: 'content', fields: SEND_KINDS.flatMap((k) => k.fields) },
    });
  if (present.length > 1) {
    const fields = present.flatMap((k) => k.fields.filter(given));
    throw new ApiError(
      2001,
      `${fields.join(', ')}: give exactly one kind of content (${present.map((k) => k.kind).join(' and ')} were given together)`,
      {
        data: { field: fields[0], fields },
      },
    );
  }
  const kind = present[0]!;
  if (req.referencedMessageId !== undefined && kind.messageType !== 'TEXT')
    throw invalidField('referencedMessageId', 'goes only with text');
  return kind;
}

/** The official send body for one checked kind of content (without business_id). */
export function sendBody(req: SendMessageRequest, kind: SendKind): Record<string, unknown> {
  const conversationId = required('conversationId', req.conversationId);
  const fields: Record<string, unknown> = { conversationId };
  switch (kind.messageType) {
    case 'TEXT': {
      if (!req.text) throw invalidField('text', 'must not be empty');
      if (chars(req.text) > MAX_TEXT_CHARS) throw invalidField('text', `must be at most ${MAX_TEXT_CHARS} characters`);
      fields.text = req.text;
      if (req.referencedMessageId !== undefined) fields.referencedMessageId = required('referencedMessageId', req.referencedMessageId, 200);
      break;
    }
    case 'IMAGE':
      fields.imageMediaId = required('imageMediaId', req.imageMediaId ?? '', 500);
      break;
    case 'SHARE_POST':
      fields.sharePostItemId = required('sharePostItemId', req.sharePostItemId ?? '', 200);
      break;
    case 'TEMPLATE': {
      const type = oneOf('templateType', req.templateType ?? '', TEMPLATE_TYPES);
      fields.templateType = type;
      fields.templateTitle = required('templateTitle', req.templateTitle ?? '', 40);
      if (req.templateButtons.length < 1 || req.templateButtons.length > 3)
        throw invalidField('templateButtons', 'must hold 1 to 3 buttons');
      const maxTitle = type === 'QA_BUTTON_CARD' ? 20 : 40;
      fields.templateButtons = req.templateButtons.map((b, i) => {
        if (b.type && b.type !== 'REPLY') throw invalidField(`templateButtons[${i}].type`, 'must be REPLY');
        const title = required(`templateButtons[${i}].title`, b.title, maxTitle);
        if (chars(b.id) > 40) throw invalidField(`templateButtons[${i}].id`, 'must be at most 40 characters');
        return { type: 'REPLY', title, ...(b.id ? { id: b.id } : {}) };
      });
      break;
    }
    case 'SENDER_ACTION':
      fields.senderAction = oneOf('senderAction', req.senderAction ?? '', SENDER_ACTIONS);
      break;
  }
  return toOfficial(SEND_MESSAGE_BODY, fields, { recipient_type: 'CONVERSATION', message_type: kind.messageType });
}

/**
 * The `vplat.message.sent` event of a send, in the official im_send_msg field names (what the
 * platform's own push carries), from what the send itself knows.
 */
export function sentEventData(
  seat: BoundSeat,
  body: Record<string, unknown>,
  messageId: string,
  timestamp: number,
): Record<string, unknown> {
  const { recipient, message_type: messageType, business_id: _businessId, recipient_type: _recipientType, ...payload } = body;
  return {
    ...(seat.accountUsername ? { from: seat.accountUsername } : {}),
    unique_identifier: seat.accountId,
    from_user: { id: seat.accountId, role: 'business_account' },
    conversation_id: recipient,
    message_id: messageId,
    timestamp,
    type: String(messageType).toLowerCase(),
    ...payload,
    message_tag: { source: 'API' },
  };
}

/** What an uploaded image is, judged from its bytes, or 2001 naming the file. */
export async function checkMessageImage(data: Uint8Array): Promise<{ contentType: string }> {
  if (data.length === 0) throw invalidField('file', 'is empty');
  if (data.length > MESSAGE_MEDIA_MAX_BYTES) throw invalidField('file', `must be at most 3 MB (${MESSAGE_MEDIA_MAX_BYTES} bytes)`);
  const format = (await imageInfo(data))?.format;
  if (!format || !MESSAGE_MEDIA_FORMATS.includes(format)) throw invalidField('file', 'must be a JPG or PNG image');
  return { contentType: IMAGE_CONTENT_TYPES[format] };
}

/** The content fields of an auto message: those of its type, required and within limits; the others absent. */
export function autoMessageContent(type: (typeof AUTO_MESSAGE_TYPES)[number], req: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [otherType, fields] of Object.entries(AUTO_MESSAGE_CONTENT)) {
    for (const [field, max] of fields) {
      const value = req[field];
      if (otherType !== type) {
        if (value !== undefined) throw invalidField(field, `goes only with autoMessageType ${otherType}`);
        continue;
      }
      if (typeof value !== 'string' || value.trim() === '') throw invalidField(field, `is required with autoMessageType ${type}`);
      if (chars(value) > max) throw invalidField(field, `must be at most ${max} characters`);
      out[field] = value;
    }
  }
  return out;
}
