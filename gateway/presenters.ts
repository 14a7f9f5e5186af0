/**
 * Protobuf messages to the flat camelCase JSON of the HTTP API: one function per resource, reused
 * by every route that returns it. Enum names come from the core's tables, never restated here.
 */
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Seat } from '../gen/vps/seat/v1/seat_pb';
import type { DeliveryQueue, WebhookEndpoint } from '../gen/vps/webhook/v1/webhook_pb';
import { AUTHORIZATION_STATUSES, TRACKS } from '../core/mappers/messages';
import type { SeatJson } from './schemas/seats';
import type { DeliveryQueueJson, ListedWebhookEndpointJson, WebhookEndpointJson } from './schemas/webhook-endpoints';

function invert<K extends string, V>(table: Record<K, V>): Map<V, K> {
  return new Map((Object.entries(table) as [K, V][]).map(([k, v]) => [v, k]));
}
const trackNames = invert(TRACKS);
const authorizationNames = invert(AUTHORIZATION_STATUSES);

/** The track's name in JSON; a message without one (never sent by core) reads as the video track. */
export function trackName(track: Seat['track']): SeatJson['track'] {
  return trackNames.get(track) ?? 'video';
}

export function isoOrNull(t: Timestamp | undefined): string | null {
  return t ? timestampDate(t).toISOString() : null;
}

function iso(t: Timestamp | undefined): string {
  return isoOrNull(t) ?? new Date(0).toISOString();
}

export function seatJson(seat: Seat): SeatJson {
  return {
    id: seat.id,
    name: seat.name,
    platform: 'vplat',
    track: trackName(seat.track),
    capabilityAccountId: seat.capabilityAccountId || null,
    accountUsername: seat.accountUsername || null,
    bound: seat.bound,
    boundAt: isoOrNull(seat.boundAt),
    authorizationStatus: authorizationNames.get(seat.authorizationStatus) ?? 'unbound',
    createdAt: iso(seat.createdAt),
  };
}

export function webhookEndpointJson(endpoint: WebhookEndpoint): WebhookEndpointJson {
  return {
    id: endpoint.id,
    url: endpoint.url,
    eventTypes: [...endpoint.eventTypes],
    createdAt: iso(endpoint.createdAt),
    disabledAt: isoOrNull(endpoint.disabledAt),
    disabledReason: endpoint.disabledReason || null,
    previousSecretExpiresAt: isoOrNull(endpoint.previousSecretExpiresAt),
  };
}

/** A queue message without figures (never sent by core's list) reads as an empty queue. */
export function deliveryQueueJson(queue: DeliveryQueue | undefined): DeliveryQueueJson {
  return {
    backlog: queue?.backlog ?? 0,
    due: queue?.due ?? 0,
    inFlight: queue?.inFlight ?? 0,
    oldestDueAt: isoOrNull(queue?.oldestDueAt),
    nextDueAt: isoOrNull(queue?.nextDueAt),
  };
}

export function listedWebhookEndpointJson(endpoint: WebhookEndpoint): ListedWebhookEndpointJson {
  return { ...webhookEndpointJson(endpoint), queue: deliveryQueueJson(endpoint.queue) };
}
