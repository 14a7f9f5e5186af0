/**
 * The event catalogue: every type the service logs, in one table. What an event object carries
 * (its `platform` and `event`), which official pushes are logged, what subscriptions may name, and
 * the catalogue in the OpenAPI document and docs/api.md are all read from it.
 *
 * Rules a row follows (test/unit/event-catalogue.test.ts checks them):
 * - `platform` is the type's namespace: `vplat` for what happens to the account on the platform,
 *   whether the platform pushed it or the service saw it; `service` for the customer's own setup.
 * - `event` is the official original event name (`official`) when the platform pushes the event;
 *   an event the service makes itself has none, and its `event` is its type, so it can never be
 *   taken for an official name and `event === type` tells the two kinds apart.
 * - A type, once published, keeps its name: subscriptions store it. An `event` value that changes
 *   keeps its old spelling in `formerly`, and rows stored with it are presented with today's.
 */
import { invalidField } from '../errors';

export const PLATFORM = 'vplat';

/** Namespace of the events the service itself emits about a customer's setup (not platform events). */
export const SERVICE_NAMESPACE = 'service';

export interface CatalogueEntry {
  /** What happened. */
  about: string;
  /** What `data` holds. */
  data: string;
  /** The official event the platform pushes for it; absent for an event the service makes itself. */
  official?: string;
  /** `event` values of earlier releases, still in stored rows: presented as today's name. */
  formerly?: readonly string[];
  /** Addressed to one endpoint on request: no pattern matches it, and reads leave it out unless asked. */
  test?: true;
}

const COMMENT_DATA =
  'The official comment.update content: comment_id, video_id, comment_type (comment or reply), comment_action, unique_identifier, timestamp (ms). parent_comment_id is the number 0 for a top-level comment, the parent id for a reply, and null when the platform does not say which';

const PUBLISH_RECORD_DATA =
  'The publish record: record_id, track, kind, account_id, video_id, share_id, status, official_status, post_id, reason, fail_reason, reason_category, unconfirmed, draft';

export const EVENT_CATALOGUE = {
  'vplat.comment.created': {
    about: 'A new comment or reply on a post of the account (comment_action insert)',
    official: 'comment.update',
    data: COMMENT_DATA,
  },
  'vplat.comment.deleted': {
    about: 'A comment was deleted (comment_action delete)',
    official: 'comment.update',
    data: COMMENT_DATA,
  },
  'vplat.comment.visibility_changed': {
    about: 'A comment was hidden or restored (comment_action set_to_hidden, set_to_friends_only or set_to_public)',
    official: 'comment.update',
    data: COMMENT_DATA,
  },
  'vplat.message.received': {
    about: 'A direct message to the account',
    official: 'im_receive_msg',
    data: 'The official im_receive_msg content: from, to, from_user, to_user, conversation_id, message_id, timestamp (ms), type and the field named by type (text, image, share_post, …)',
  },
  'vplat.message.sent': {
    about:
      'A direct message the account sent, through the API or elsewhere; logged once per message, from the platform push or from the send through the API, whichever comes first',
    official: 'im_send_msg',
    formerly: ['message.send'],
    data: 'The official im_send_msg content (the shape of a received message). Logged from a send through the API: from, unique_identifier, from_user, conversation_id, message_id, timestamp (ms), type, the message field, and message_tag {source: API}',
  },
  'vplat.publish.status_changed': {
    about: 'A publish, on either track, changed status or got its post id (the service follows every publish itself)',
    formerly: ['publish.status_changed'],
    data: `${PUBLISH_RECORD_DATA}; and previous_status`,
  },
  'vplat.publish.unconfirmed': {
    about: 'The service stopped following a publish the platform never confirmed either way; the record keeps its last known status',
    formerly: ['publish.unconfirmed'],
    data: PUBLISH_RECORD_DATA,
  },
  'vplat.video.available': {
    about:
      'A video library upload became available: its videoUrl (video track, read with GET /v1/videos/{id}) or fileId (shop track) can be published',
    data: 'video_id, track, source, status, file_name, file_id, expires_at, failure_reason (null)',
  },
  'vplat.video.failed': {
    about: 'A video library upload failed; failure_reason says why, and the record keeps it',
    data: 'video_id, track, source, status, file_name, file_id, expires_at, failure_reason',
  },
  'vplat.account.authorization_removed': {
    about: 'The platform refused the refresh token of a seat: the account withdrew its authorization, or it lapsed; bind the seat again',
    formerly: ['token_refresh_refused'],
    data: 'account_id, track, official_code, official_message (the platform refusal)',
  },
  'service.endpoint.disabled': {
    about:
      'A webhook endpoint was disabled: its receiver answered 410, or failed every attempt for days; POST /v1/webhook-endpoints/{id}/enable restores it',
    formerly: ['endpoint_disabled'],
    data: 'endpoint_id, url, reason',
  },
  'service.endpoint.test': {
    about: 'A test pushed on request (POST /v1/webhook-endpoints/{id}/test) to that endpoint only',
    formerly: ['endpoint_test'],
    data: 'endpoint_id, url, message',
    test: true,
  },
} as const satisfies Record<string, CatalogueEntry>;

export type CatalogueType = keyof typeof EVENT_CATALOGUE;

/**
 * The test event (POST /v1/webhook-endpoints/{id}/test) is addressed to one endpoint. It is logged
 * like any event (GET /v1/events and the stream show it when asked with includeTest, the delivery
 * log links to it) but no subscription can name it and no pattern, not even "*", matches it, so
 * fan-out, redelivery to "every matching endpoint" and recovery never push it anywhere else.
 */
export const TEST_EVENT_TYPE = 'service.endpoint.test' satisfies CatalogueType;

/** The types a subscription may name: every row but the test event's. */
export type EventType = Exclude<CatalogueType, typeof TEST_EVENT_TYPE>;

const ROWS = Object.entries(EVENT_CATALOGUE) as [CatalogueType, CatalogueEntry][];

export const EVENT_TYPES: readonly EventType[] = ROWS.filter(([, row]) => !row.test).map(([type]) => type as EventType);

export function isCatalogueType(s: string): s is CatalogueType {
  return Object.hasOwn(EVENT_CATALOGUE, s);
}

export function isEventType(s: string): s is EventType {
  return isCatalogueType(s) && !(EVENT_CATALOGUE[s] as CatalogueEntry).test;
}

/** The `platform` of a type: its namespace. */
export function platformOf(type: string): string {
  return type.slice(0, type.indexOf('.'));
}

/** The `event` of a type: its official original name, or the type itself for an event the service makes. */
export function eventNameOf(type: CatalogueType): string {
  return (EVENT_CATALOGUE[type] as CatalogueEntry).official ?? type;
}

/** `platform`, `type` and `event` as the catalogue names them: what the code that logs an event writes. */
export function catalogued<T extends CatalogueType>(type: T): { platform: string; type: T; event: string } {
  return { platform: platformOf(type), type, event: eventNameOf(type) };
}

/** The `event` a stored row is shown with: today's name for one an earlier release stored under its former name. */
export function presentedEventName(type: string, stored: string): string {
  if (!isCatalogueType(type)) return stored;
  return (EVENT_CATALOGUE[type] as CatalogueEntry).formerly?.includes(stored) ? eventNameOf(type) : stored;
}

/** Official event name → the one type it is logged as; names shared by several types (comment.update) are resolved elsewhere. */
const TYPE_OF_OFFICIAL = new Map<string, EventType>(
  ROWS.filter(([, row]) => row.official && ROWS.filter(([, other]) => other.official === row.official).length === 1).map(([type, row]) => [
    row.official!,
    type as EventType,
  ]),
);

/** The type an official push of this name is logged as, when the name alone decides it. */
export function typeOfOfficial(name: string): EventType | undefined {
  return TYPE_OF_OFFICIAL.get(name);
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

/**
 * Types a read of the log (GET /v1/events, the stream) leaves out: the test event's, unless the
 * caller asked for test events or named the test type among its patterns.
 */
export function hiddenTypes(patterns: readonly string[], includeTest: boolean): string[] {
  return includeTest || patterns.includes(TEST_EVENT_TYPE) ? [] : [TEST_EVENT_TYPE];
}

export function patternMatches(pattern: string, type: string): boolean {
  if (type === TEST_EVENT_TYPE) return false;
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}
