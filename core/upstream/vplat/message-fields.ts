/**
 * The direct-message endpoints' field tables (service field → official dotted path), one per
 * endpoint, used both ways by core/upstream/mapping.ts. Request tables name what the service sends;
 * answer tables name what is renamed on the way back (everything else follows the joining rule,
 * `text.body` → `textBody`). Lists answer `items`, as every list of the service does. `account`
 * resolves to business_id and is never tabled.
 */
import type { FieldTable } from '../mapping';

/** GET …/message/conversation/list → business/message/conversation/list/. */
export const CONVERSATION_LIST_QUERY: FieldTable = [
  ['conversationType', 'conversation_type'],
  ['limit', 'limit'],
  ['cursor', 'cursor'],
];
export const CONVERSATION_LIST_ANSWER: FieldTable = [
  ['items', 'conversations'],
  ['hasMore', 'has_more'],
  ['cursor', 'cursor'],
];

/** GET …/message/content/list → business/message/content/list/ (the latest 20, newest first). */
export const MESSAGE_LIST_QUERY: FieldTable = [['conversationId', 'conversation_id']];
export const MESSAGE_LIST_ANSWER: FieldTable = [
  ['items', 'messages'],
  ['participants', 'participants'],
];

/** POST …/message/send → business/message/send/; message_type and recipient_type are derived. */
export const SEND_MESSAGE_BODY: FieldTable = [
  ['conversationId', 'recipient'],
  ['text', 'text.body'],
  ['imageMediaId', 'image.media_id'],
  ['sharePostItemId', 'share_post.item_id'],
  ['templateType', 'template.type'],
  ['templateTitle', 'template.title'],
  ['templateButtons', 'template.buttons'],
  ['senderAction', 'sender_action'],
  ['referencedMessageId', 'referenced_message_info.referenced_message_id'],
];
export const SEND_MESSAGE_ANSWER: FieldTable = [['messageId', 'message.message_id']];

/** POST …/message/media/upload → business/message/media/upload/ (multipart). */
export const MEDIA_UPLOAD_ANSWER: FieldTable = [['mediaId', 'media_id']];

/** POST …/message/media/download → business/message/media/download/. */
export const MEDIA_DOWNLOAD_BODY: FieldTable = [
  ['conversationId', 'conversation_id'],
  ['messageId', 'message_id'],
  ['mediaId', 'media_id'],
  ['mediaType', 'media_type'],
];
export const MEDIA_DOWNLOAD_ANSWER: FieldTable = [['downloadUrl', 'download_url']];

/** GET …/message/capabilities/get → business/message/capabilities/get/. */
export const CAPABILITIES_QUERY: FieldTable = [
  ['capabilityTypes', 'capability_types'],
  ['conversationId', 'conversation_id'],
  ['conversationType', 'conversation_type'],
];
export const CAPABILITIES_ANSWER: FieldTable = [['items', 'capability_infos']];

/** POST …/message/auto_message/get → business/message/auto_message/get/ (GET upstream). */
export const AUTO_MESSAGE_GET_QUERY: FieldTable = [
  ['autoMessageType', 'auto_message_type'],
  ['autoMessageId', 'auto_message_id'],
];
export const AUTO_MESSAGE_GET_ANSWER: FieldTable = [
  ['items', 'auto_messages'],
  ['operationStatus', 'operation_status'],
];

/** The content of create and update: one object per type. */
const AUTO_MESSAGE_CONTENT: FieldTable = [
  ['autoMessageType', 'auto_message_type'],
  ['welcomeMessageContent', 'welcome_message.content'],
  ['suggestedQuestionQuestion', 'suggested_question.question'],
  ['suggestedQuestionAnswer', 'suggested_question.answer'],
  ['chatPromptTitle', 'chat_prompt.title'],
  ['chatPromptContent', 'chat_prompt.content'],
];

/** POST …/message/auto_message/create → business/message/auto_message/create/. */
export const AUTO_MESSAGE_CREATE_BODY: FieldTable = AUTO_MESSAGE_CONTENT;
/** POST …/message/auto_message/update → business/message/auto_message/update/. */
export const AUTO_MESSAGE_UPDATE_BODY: FieldTable = [...AUTO_MESSAGE_CONTENT, ['autoMessageId', 'auto_message_id']];
export const AUTO_MESSAGE_WRITE_ANSWER: FieldTable = [['autoMessageId', 'auto_message.auto_message_id']];

/** POST …/message/auto_message/delete → business/message/auto_message/delete/. */
export const AUTO_MESSAGE_DELETE_BODY: FieldTable = [
  ['autoMessageType', 'auto_message_type'],
  ['autoMessageId', 'auto_message_id'],
];

/** POST …/message/auto_message/sort → business/message/auto_message/sort/. */
export const AUTO_MESSAGE_SORT_BODY: FieldTable = [
  ['autoMessageType', 'auto_message_type'],
  ['autoMessageIds', 'auto_message_ids'],
];

/** POST …/message/auto_message/status/update → business/message/auto_message/status/update/. */
export const AUTO_MESSAGE_STATUS_BODY: FieldTable = [
  ['autoMessageType', 'auto_message_type'],
  ['operationStatus', 'operation_status'],
];
