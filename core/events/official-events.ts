/**
 * From an official webhook push to the service's event: the normalized type (comment.update by its
 * action, every other official name by the event catalogue), when it happened, the content with
 * its official field names, and the key that makes a push unique. Pushes the service does not log (publish notices, which the publish
 * workflows track themselves, and events outside the table) are ignored.
 */
import { createHash } from 'node:crypto';
import { invalidField } from '../errors';
import { replaceUnstorable } from '../unstorable-text';
import type { OfficialWebhook } from '../upstream/vplat/webhooks';
import { typeOfOfficial, type EventType } from './event-types';

/** comment.update, by its comment_action. */
const COMMENT_ACTIONS: Readonly<Record<string, EventType>> = {
  insert: 'vplat.comment.created',
  delete: 'vplat.comment.deleted',
  set_to_hidden: 'vplat.comment.visibility_changed',
  set_to_public: 'vplat.comment.visibility_changed',
  set_to_friends_only: 'vplat.comment.visibility_changed',
};

export interface NormalizedEvent {
  type: EventType;
  event: string;
  occurredAt: Date;
  data: Record<string, unknown>;
  /** The official push's identity: its event name, account and content, hashed. */
  sourceKey: string;
}

/** The table's own entries only: a name like "constructor" must not find Object's. */
function lookUp(table: Readonly<Record<string, EventType>>, name: unknown): EventType | undefined {
  return typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined;
}

/** comment.update by its action; any other official name by the catalogue, which names one type for it. */
function typeOf(event: string, content: Record<string, unknown>): EventType | undefined {
  if (event === 'comment.update') return lookUp(COMMENT_ACTIONS, content.comment_action);
  return typeOfOfficial(event);
}

/** Deeper than any official content (which is flat); a push nested further is refused, not stored. */
export const MAX_CONTENT_DEPTH = 32;

/**
 * The content as it can be stored: every character Postgres refuses replaced by U+FFFD, so the
 * platform's event is kept (refusing it would only make the platform push it again for 72 hours).
 */
function storable(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return replaceUnstorable(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_CONTENT_DEPTH) throw invalidField('content', `is nested deeper than ${MAX_CONTENT_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((item) => storable(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [replaceUnstorable(key), storable(item, depth + 1)]));
}

/** From 1970 to the year 9999: a time outside it is no platform's, and Postgres cannot hold them all. */
const LATEST_MS = Date.UTC(9999, 11, 31);

function instant(ms: unknown): Date | undefined {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 && ms <= LATEST_MS ? new Date(ms) : undefined;
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

/**
 * The spec's parent_comment_id: the number 0 for a top-level comment, and only when the platform
 * says it is one (comment_type "comment", or a parent id of 0), because auto-reply consumers answer
 * exactly those and the account's own replies arrive as comment events too. A reply keeps its
 * parent; a comment the platform does not place either way gets null, which no consumer takes for
 * top-level. The official push sends parent_comment_id for replies only.
 */
export function parentCommentId(data: Record<string, unknown>): unknown {
  const given = data.parent_comment_id;
  const zero = given === 0 || given === '0';
  const hasParent = given !== undefined && given !== null && given !== '' && !zero;
  if (hasParent) return given;
  if (zero || data.comment_type === 'comment') return 0;
  return null;
}

/**
 * Undefined for a push the service does not log. Content too deep to store is refused (2001); a
 * time that is not one (the content's `timestamp` in ms, else the envelope's `create_time` in s)
 * gives way to the next, and to `receivedAt` last.
 */
export function normalizeOfficial(
  webhook: OfficialWebhook,
  content: Record<string, unknown>,
  receivedAt = new Date(),
): NormalizedEvent | undefined {
  const type = typeOf(webhook.event, content);
  if (!type) return undefined;
  const data = storable(content, 0) as Record<string, unknown>;
  if (webhook.event === 'comment.update') data.parent_comment_id = parentCommentId(data);
  const occurredAt =
    instant(content.timestamp) ?? instant(typeof webhook.create_time === 'number' ? webhook.create_time * 1000 : undefined) ?? receivedAt;
  const sentId = webhook.event === 'im_send_msg' && typeof data.message_id === 'string' && data.message_id ? data.message_id : undefined;
  return { type, event: webhook.event, occurredAt, data, sourceKey: sentId ? messageSentKey(sentId) : officialSourceKey(webhook) };
}
