/**
 * Requests of the direct-message routes (official paths under /v1/vplat/v1.3/business/message/).
 * Field names are the official ones flattened to camelCase (core/upstream/vplat/message-fields.ts);
 * the shape is checked here, the rules (exactly one kind of content, IMAGE_SEND) in core.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  AUTO_MESSAGE_TYPES,
  CAPABILITY_TYPES,
  CONVERSATION_TYPES,
  DELETABLE_AUTO_MESSAGE_TYPES,
  MAX_TEXT_CHARS,
  MEDIA_TYPES,
  OPERATION_STATUSES,
  SENDER_ACTIONS,
  TEMPLATE_TYPES,
} from '../../core/engagement/message-rules';
import { Timestamp } from './common';

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

const Account = Type.String({ minLength: 1, maxLength: 200, description: 'The bound account: username or businessId' });
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 500, description });
const Text = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, description });
const ConversationId = Id('The official conversation_id (may contain "+": percent-encode it in a query)');
const AutoMessageType = literals(AUTO_MESSAGE_TYPES, 'Official auto_message_type');

export const ConversationListQuery = Type.Object(
  {
    account: Account,
    conversationType: literals(CONVERSATION_TYPES, 'STRANGER: the business has not replied yet; SINGLE otherwise'),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: '1 to 100; default 100' })),
    cursor: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "The previous page's cursor; default 0" }),
    ),
  },
  { additionalProperties: false },
);
export type ConversationListQuery = Static<typeof ConversationListQuery>;

export const MessageListQuery = Type.Object({ account: Account, conversationId: ConversationId }, { additionalProperties: false });
export type MessageListQuery = Static<typeof MessageListQuery>;

const TemplateButton = Type.Object(
  {
    type: Type.Optional(Type.Literal('REPLY', { description: 'The only kind; REPLY when absent' })),
    title: Text(40, 'At most 20 characters on a button card, 40 on a link card'),
    id: Type.Optional(Type.String({ maxLength: 40, description: 'Your id for the button, echoed back in the reply' })),
  },
  { additionalProperties: false },
);

export const SendMessageBody = Type.Object(
  {
    account: Account,
    conversationId: ConversationId,
    // The UTF-16 maxLength bounds what is buffered; core counts characters as the platform does.
    text: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_TEXT_CHARS * 2, description: `A text message, at most ${MAX_TEXT_CHARS} characters` }),
    ),
    imageMediaId: Type.Optional(Id('An image message: a mediaId from message/media/upload (IMAGE_SEND is checked first)')),
    sharePostItemId: Type.Optional(Id("Shares one of the account's own posts")),
    templateType: Type.Optional(literals(TEMPLATE_TYPES, 'A QA card: with templateTitle and templateButtons')),
    templateTitle: Type.Optional(Text(40, "The QA card's title, at most 40 characters")),
    templateButtons: Type.Optional(Type.Array(TemplateButton, { minItems: 1, maxItems: 3, description: '1 to 3 reply buttons' })),
    senderAction: Type.Optional(literals(SENDER_ACTIONS, 'TYPING: typing indicator; MARK_READ: read receipt')),
    referencedMessageId: Type.Optional(Id('Quotes a message of the conversation; text only')),
  },
  { additionalProperties: false },
);
export type SendMessageBody = Static<typeof SendMessageBody>;

export const MediaDownloadBody = Type.Object(
  {
    account: Account,
    conversationId: ConversationId,
    messageId: Id('The message carrying the media'),
    mediaId: Id('The media id of the message'),
    mediaType: literals(MEDIA_TYPES),
  },
  { additionalProperties: false },
);
export type MediaDownloadBody = Static<typeof MediaDownloadBody>;

export const CapabilitiesQuery = Type.Object(
  {
    account: Account,
    capabilityTypes: Type.Optional(Type.Array(literals(CAPABILITY_TYPES), { minItems: 1, maxItems: 5, description: 'Default IMAGE_SEND' })),
    conversationId: ConversationId,
    conversationType: literals(CONVERSATION_TYPES),
  },
  { additionalProperties: false },
);
export type CapabilitiesQuery = Static<typeof CapabilitiesQuery>;

export const AutoMessageGetBody = Type.Object(
  { account: Account, autoMessageType: AutoMessageType, autoMessageId: Type.Optional(Id('One message only')) },
  { additionalProperties: false },
);
export type AutoMessageGetBody = Static<typeof AutoMessageGetBody>;

const autoMessageContent = {
  welcomeMessageContent: Type.Optional(Text(250, 'WELCOME_MESSAGE: at most 250 characters')),
  suggestedQuestionQuestion: Type.Optional(Text(80, 'SUGGESTED_QUESTION: at most 80 characters')),
  suggestedQuestionAnswer: Type.Optional(Text(200, 'SUGGESTED_QUESTION: at most 200 characters')),
  chatPromptTitle: Type.Optional(Text(18, 'CHAT_PROMPT: at most 18 characters')),
  chatPromptContent: Type.Optional(Text(150, 'CHAT_PROMPT: at most 150 characters')),
};

export const AutoMessageCreateBody = Type.Object(
  { account: Account, autoMessageType: AutoMessageType, ...autoMessageContent },
  { additionalProperties: false },
);
export type AutoMessageCreateBody = Static<typeof AutoMessageCreateBody>;

export const AutoMessageUpdateBody = Type.Object(
  {
    account: Account,
    autoMessageId: Id('The message to change (not while REVIEWING)'),
    autoMessageType: AutoMessageType,
    ...autoMessageContent,
  },
  { additionalProperties: false },
);
export type AutoMessageUpdateBody = Static<typeof AutoMessageUpdateBody>;

export const AutoMessageDeleteBody = Type.Object(
  {
    account: Account,
    autoMessageType: literals(DELETABLE_AUTO_MESSAGE_TYPES, 'A welcome message cannot be deleted'),
    autoMessageId: Id('The message to delete'),
  },
  { additionalProperties: false },
);
export type AutoMessageDeleteBody = Static<typeof AutoMessageDeleteBody>;

export const AutoMessageSortBody = Type.Object(
  {
    account: Account,
    autoMessageType: Type.Optional(Type.Literal('CHAT_PROMPT', { description: 'The only sortable type; default CHAT_PROMPT' })),
    autoMessageIds: Type.Array(Id('A chat prompt id'), {
      minItems: 1,
      maxItems: 6,
      description: 'Every chat prompt, in the desired order',
    }),
  },
  { additionalProperties: false },
);
export type AutoMessageSortBody = Static<typeof AutoMessageSortBody>;

export const AutoMessageStatusBody = Type.Object(
  { account: Account, autoMessageType: AutoMessageType, operationStatus: literals(OPERATION_STATUSES, 'For every message of the type') },
  { additionalProperties: false },
);
export type AutoMessageStatusBody = Static<typeof AutoMessageStatusBody>;

/** The multipart form of message/media/upload: account and the part file, in either order. */
export const MessageMediaUploadFields = Type.Object({
  account: Account,
  file: Type.String({ format: 'binary', description: 'JPG or PNG, at most 3 MB' }),
});

/** An official answer flattened to camelCase fields (core/upstream/vplat/message-fields.ts). */
export const FlatJson = Type.Object({}, { additionalProperties: true });

export const MediaUploadJson = Type.Object(
  {
    mediaId: Type.String({ description: 'For imageMediaId of message/send' }),
    expiresAt: { ...Timestamp, description: 'When the mediaId stops being valid (30 days after upload)' },
  },
  { additionalProperties: true },
);

export const MediaDownloadJson = Type.Object(
  {
    downloadUrl: Type.String({
      description: "The platform's address; fetching it needs the header x-user with the account's access token",
    }),
    expiresAt: { ...Timestamp, description: 'When the address stops working (24 hours after it was issued)' },
  },
  { additionalProperties: true },
);
