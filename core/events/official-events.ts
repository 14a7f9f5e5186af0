/**
 * From an official webhook push to the service's event: one table per official event family, the
 * normalized type, when it happened, the content with its official field names, and the key that
 * makes a push unique. Pushes the service does not log (publish notices, which the publish
 * workflows track themselves, and events outside the table) are ignored.
 */
import { createHash } from 'node:crypto';
import type { OfficialWebhook } from '../upstream/vplat/webhooks';
import type { EventType } from './event-types';

/** comment.update, by its comment_action. */
const COMMENT_ACTIONS: Readonly<Record<string, EventType>> = {
  insert: 'vplat.comment.created',
  delete: 'vplat.comment.deleted',
  set_to_hidden: 'vplat.comment.visibility_changed',
  set_to_public: 'vplat.comment.visibility_changed',
  set_to_friends_only: 'vplat.comment.visibility_changed',
};

/** Direct-message events, by official name. */
const MESSAGE_EVENTS: Readonly<Record<string, EventType>> = {
  im_receive_msg: 'vplat.message.received',
  im_send_msg: 'vplat.message.sent',
};

export interface NormalizedEvent {
  type: EventType;
  event: string;
  occurredAt: Date;
  data: Record<string, unknown>;
  /** The official push's identity: its event name, account and content, hashed. */
  sourceKey: string;
}

function typeOf(event: string, content: Record<string, unknown>): EventType | undefined {
  if (event === 'comment.update') return COMMENT_ACTIONS[String(content.comment_action)];
  return MESSAGE_EVENTS[event];
}

/**
 * The official envelope carries no event id, and a retried push repeats the same body; the hash
 * of what identifies it (name, account, content text) is therefore the official event's id.
 */
export function officialSourceKey(webhook: OfficialWebhook): string {
  return `vplat:${createHash('sha256').update(`${webhook.event}\n${webhook.user_openid}\n${webhook.content}`).digest('hex')}`;
}

/**
 * A business message is logged once, whichever reports it first: the platform's im_send_msg push,
 * or the service itself after a send through the API (when no webhook is subscribed, the only one).
 */
export function messageSentKey(messageId: string): string {
  return `message-sent:${messageId}`;
}

export function normalizeOfficial(webhook: OfficialWebhook, content: Record<string, unknown>): NormalizedEvent | undefined {
  const type = typeOf(webhook.event, content);
  if (!type) return undefined;
  const data = { ...content };
  // The spec: parent_comment_id is the number 0 for a top-level comment.
  if (webhook.event === 'comment.update' && (data.comment_type !== 'reply' || data.parent_comment_id === undefined)) data.parent_comment_id = 0;
  const stamp = typeof content.timestamp === 'number' ? content.timestamp : webhook.create_time * 1000;
  const sentId = webhook.event === 'im_send_msg' && typeof content.message_id === 'string' && content.message_id ? content.message_id : undefined;
  return { type, event: webhook.event, occurredAt: new Date(stamp), data, sourceKey: sentId ? messageSentKey(sentId) : officialSourceKey(webhook) };
}
