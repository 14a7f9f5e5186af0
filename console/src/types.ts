/**
 * The shapes the console reads. The /v1 ones come from the gateway's route schemas (type-only
 * imports), so a renamed field fails this build instead of rendering blank cells. Publish records
 * are restated: their schema module imports the publishing core, which does not type-check under
 * the browser's DOM library; test/unit/console-static.test.ts checks that the two agree.
 */
import type { Static } from '@sinclair/typebox';
import type { DeliveryJson, DeliveryPageJson, EventJson, EventPageJson } from '../../gateway/schemas/events';
import type { SeatJson } from '../../gateway/schemas/seats';
import type { ListedWebhookEndpointJson, WebhookEndpointJson } from '../../gateway/schemas/webhook-endpoints';

/** The types a webhook subscription may name: the event catalogue's (core/events/event-types.ts). */
export type { EventType } from '../../core/events/event-types';

export type Seat = SeatJson;
/** An endpoint as the list shows it, with its delivery queue's figures. */
export type WebhookEndpoint = ListedWebhookEndpointJson;
export type CreatedWebhookEndpoint = WebhookEndpointJson & { secret: string };
export type Delivery = DeliveryJson;
export type DeliveryStatus = DeliveryJson['status'];
export type DeliveryAttempt = DeliveryJson['attempts'][number];
export type ServiceEvent = Static<typeof EventJson>;

export type EventPage = Static<typeof EventPageJson>;
export type DeliveryPage = Static<typeof DeliveryPageJson>;

/** Normalized publish statuses (core/db/schema), for the filter; the unit test keeps them equal. */
export const PUBLISH_STATUSES = [
  'submitted',
  'publish_processing',
  'publish_complete',
  'publish_failed',
  'publish_draft_inbox',
  'service_error',
] as const;
export type PublishStatus = (typeof PUBLISH_STATUSES)[number];

export interface PublishRecord {
  id: string;
  status: PublishStatus;
  /** Followed to its end without a final status from the platform: status is the last known. */
  unconfirmed: boolean;
  reason: string | null;
  /** The platform's id once known; until then the service's handle, which status queries take too. */
  shareId: string;
  /** The service's own handle of the publish (vpsh_…), the same for the record's whole life. */
  handle: string;
  postId: string | null;
  track: 'video' | 'shop';
  kind: 'video' | 'photo';
  seatId: string;
  accountId: string;
  workflowId: string;
  createdAt: string;
}

export interface RecordPage {
  items: PublishRecord[];
  nextCursor: string | null;
}

/** The console's own API (/console/api), as the session backend answers it. */
export interface Session {
  user: { id: string; email: string; name: string };
  customer: { id: string; name: string };
  csrfToken: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export type CreatedApiKey = ApiKey & { key: string };

/** GET /console/config.json: what the gateway tells the console about its surroundings. */
export interface ConsoleConfig {
  /** Null when the gateway does not know a Temporal UI: the workflow links are hidden. */
  temporalUiUrl: string | null;
  temporalNamespace: string;
}
