/**
 * The event-type table: every normalized type the service emits, with the official event it comes
 * from. Subscriptions, validation and documentation all read it from here.
 */
import { invalidField } from '../errors';

export const PLATFORM = 'vplat';

export const EVENT_TYPES = {
  'vplat.comment.created': 'A new comment or reply (official comment.update, action insert)',
  'vplat.comment.deleted': 'A comment was deleted (official comment.update, action delete)',
  'vplat.comment.visibility_changed': 'A comment was hidden or restored (official comment.update, set_to_* actions)',
  'vplat.message.received': 'A direct message was received (official im_receive_msg)',
  'vplat.message.sent': 'A direct message was sent by the account (official im_send_msg)',
  'vplat.publish.status_changed': 'A publish record changed status, on either track',
  'vplat.publish.unconfirmed':
    'The service stopped following a publish the platform never confirmed either way; its status stays the last one known',
  'vplat.video.available':
    'A video library record became available: its videoUrl (video track, read with GET /v1/videos/{id}) or fileId (shop track) can be published',
  'vplat.video.failed': 'A video library upload failed; failure_reason says why, and the record keeps it',
  'vplat.account.authorization_removed': 'The account withdrew the authorization of its seat',
  'service.endpoint.disabled': 'A webhook endpoint was disabled (its receiver answered 410, or failed every attempt for days)',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** Namespace of the events the service itself emits about a customer's setup (not platform events). */
export const SERVICE_NAMESPACE = 'service';

/**
 * The test event (POST /v1/webhook-endpoints/{id}/test) is addressed to one endpoint. It is logged
 * like any event (the pull log and the stream show it, the delivery log links to it) but it is
 * outside the table above: no subscription can name it and no pattern, not even "*", matches it,
 * so fan-out, redelivery to "every matching endpoint" and recovery never push it anywhere else.
 */
export const TEST_EVENT_TYPE = `${SERVICE_NAMESPACE}.endpoint.test`;

export function isEventType(s: string): s is EventType {
  return Object.hasOwn(EVENT_TYPES, s);
}

/** Subscription patterns: "*", "<platform>.*", or an exact type. */
export function isSubscriptionPattern(p: string): boolean {
  return p === '*' || p === `${PLATFORM}.*` || isEventType(p);
}

/**
 * Refuses, naming `field[i]`, the first entry that cannot filter a read of the log (the event list,
 * the stream, the delivery log): a subscription pattern, or the test event's type, which is logged
 * and may be looked up although nothing subscribes to it.
 */
export function checkPatterns(patterns: readonly string[], field: string): void {
  patterns.forEach((p, i) => {
    if (!isSubscriptionPattern(p) && p !== TEST_EVENT_TYPE)
      throw invalidField(`${field}[${i}]`, `unknown event type or pattern ${JSON.stringify(p)}; use "*", "${PLATFORM}.*" or an exact type`);
  });
}

export function patternMatches(pattern: string, type: string): boolean {
  if (type === TEST_EVENT_TYPE) return false;
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}
