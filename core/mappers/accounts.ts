/**
 * Account rows (customers, users, API keys, seats, webhook endpoints) to protobuf messages, one
 * function per message, used by every service that returns them. Dates cross as Timestamp.
 */
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiKeySchema, CustomerSchema, UserSchema, type ApiKey, type Customer, type User } from '../../gen/vps/admin/v1/admin_pb';
import { AuthorizationStatus, SeatSchema, Track, type Seat } from '../../gen/vps/seat/v1/seat_pb';
import { DeliveryQueueSchema, WebhookEndpointSchema, type WebhookEndpoint } from '../../gen/vps/webhook/v1/webhook_pb';
import type { AuthorizationStatusValue, SeatTrack } from '../db/schema';
import type { ApiKeyRow, CustomerRow, UserRow } from '../db/repositories/tenancy';
import type { SeatRow } from '../db/repositories/seats';
import type { WebhookEndpointRow } from '../db/repositories/webhook-endpoints';
import type { QueueFiguresRow } from '../db/repositories/delivery-queue';

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export const TRACKS: Record<SeatTrack, Track> = { video: Track.VIDEO, shop: Track.SHOP };
export const AUTHORIZATION_STATUSES: Record<AuthorizationStatusValue, AuthorizationStatus> = {
  unbound: AuthorizationStatus.UNBOUND,
  active: AuthorizationStatus.ACTIVE,
  reauthorization_required: AuthorizationStatus.REAUTHORIZATION_REQUIRED,
};

export function trackFromProto(track: Track): SeatTrack | undefined {
  return (Object.keys(TRACKS) as SeatTrack[]).find((k) => TRACKS[k] === track);
}

export function toCustomer(row: CustomerRow): Customer {
  return create(CustomerSchema, {
    id: row.id,
    name: row.name,
    seatQuota: row.seatQuota,
    planExpiresAt: ts(row.planExpiresAt),
    createdAt: ts(row.createdAt),
  });
}

export function toUser(row: UserRow): User {
  return create(UserSchema, {
    id: row.id,
    customerId: row.customerId,
    email: row.email,
    name: row.name,
    disabledAt: ts(row.disabledAt),
    createdAt: ts(row.createdAt),
  });
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return create(ApiKeySchema, {
    id: row.id,
    customerId: row.customerId,
    userId: row.userId,
    name: row.name,
    prefix: row.prefix,
    createdAt: ts(row.createdAt),
    lastUsedAt: ts(row.lastUsedAt),
    revokedAt: ts(row.revokedAt),
  });
}

export function toSeat(row: SeatRow): Seat {
  return create(SeatSchema, {
    id: row.id,
    customerId: row.customerId,
    name: row.name,
    platform: row.platform,
    track: TRACKS[row.track],
    capabilityAccountId: row.accountId ?? '',
    accountUsername: row.accountUsername ?? '',
    bound: row.accountId !== null,
    boundAt: ts(row.boundAt),
    authorizationStatus: AUTHORIZATION_STATUSES[row.authorizationStatus],
    createdAt: ts(row.createdAt),
  });
}

/**
 * The endpoint, with its delivery queue's figures when they were measured (the list does; a single
 * endpoint returned by a write does not, and its message then has no queue rather than zeros).
 */
export function toWebhookEndpoint(row: WebhookEndpointRow, figures?: QueueFiguresRow): WebhookEndpoint {
  const previousLive = row.previousKeyExpiresAt && row.previousKeyExpiresAt > new Date() ? row.previousKeyExpiresAt : null;
  return create(WebhookEndpointSchema, {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    createdAt: ts(row.createdAt),
    disabledAt: ts(row.disabledAt),
    disabledReason: row.disabledReason ?? '',
    description: row.description ?? '',
    previousSecretExpiresAt: ts(previousLive),
    queue: figures
      ? create(DeliveryQueueSchema, {
          backlog: figures.backlog,
          due: figures.due,
          inFlight: figures.inFlight,
          oldestDueAt: ts(figures.oldestDueAt),
          nextDueAt: ts(figures.nextDueAt),
        })
      : undefined,
  });
}
