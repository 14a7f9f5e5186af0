/**
 * Seats and webhook endpoints (protobuf messages) to the flat camelCase JSON of the HTTP API, one
 * function per resource, reused by every route that returns it.
 */
import type { Seat } from '../../gen/vps/seat/v1/seat_pb';
import type { DeliveryQueue, WebhookEndpoint } from '../../gen/vps/webhook/v1/webhook_pb';
import type { SeatJson } from '../schemas/seats';
import type { DeliveryQueueJson, ListedWebhookEndpointJson, WebhookEndpointJson } from '../schemas/webhook-endpoints';
import { authorizationName, iso, isoOrNull, trackName } from './shared';

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
    authorizationStatus: authorizationName(seat.authorizationStatus),
    createdAt: iso(seat.createdAt),
  };
}

export function webhookEndpointJson(endpoint: WebhookEndpoint): WebhookEndpointJson {
  return {
    id: endpoint.id,
    url: endpoint.url,
    eventTypes: [...endpoint.eventTypes],
    description: endpoint.description || null,
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
