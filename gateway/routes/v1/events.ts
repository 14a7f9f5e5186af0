import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { EventService, type Delivery } from '../../../gen/vps/event/v1/event_pb';
import { bodyFromMessage } from '../../../core/events/present';
import { isoOrNull } from '../../presenters/shared';
import { okEnvelope } from '../../schemas/common';
import { EndpointIdParams } from '../../schemas/webhook-endpoints';
import {
  DeliveryJson,
  DeliveryPageJson,
  EventIdParams,
  EventJson,
  EventPageJson,
  ListDeliveriesQuery,
  ListEventsQuery,
  RedeliverBody,
  RedeliveriesJson,
} from '../../schemas/events';
import { defineRoute } from '../../rpc-route';
import type { Static } from '@sinclair/typebox';

export function deliveryJson(d: Delivery): Static<typeof DeliveryJson> {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    endpointId: d.endpointId,
    status: d.status as Static<typeof DeliveryJson>['status'],
    reason: d.reason as Static<typeof DeliveryJson>['reason'],
    workflowId: d.workflowId,
    createdAt: isoOrNull(d.createdAt)!,
    completedAt: isoOrNull(d.completedAt),
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: isoOrNull(a.startedAt)!,
      durationMs: a.durationMs,
      statusCode: a.statusCode || null,
      error: a.error || null,
    })),
  };
}

/** `types` of a query: comma-separated patterns, as one list. */
const patternList = (types: string | undefined) =>
  types
    ? types
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean)
    : [];

const pageQuery = (req: { query: ListDeliveriesQuery }) => {
  const q = req.query;
  return { cursor: q.cursor ?? '', limit: q.limit ?? 0, status: q.status ?? '', types: patternList(q.types) };
};

export const eventRoutes = [
  defineRoute({
    method: 'GET',
    url: '/events',
    summary: 'Pull events, oldest first, in the same shape as pushes',
    rpc: EventService.method.listEvents,
    schema: { querystring: ListEventsQuery, response: { 200: okEnvelope(EventPageJson) } },
    toRequest: (req) => {
      const q = req.query;
      return {
        cursor: q.cursor ?? '',
        limit: q.limit ?? 0,
        types: patternList(q.types),
        seatId: q.seatId ?? '',
        includeTest: q.includeTest ?? false,
        ...(q.since ? { since: timestampFromDate(new Date(q.since)) } : {}),
        ...(q.until ? { until: timestampFromDate(new Date(q.until)) } : {}),
      };
    },
    toData: (res) => ({ items: res.events.map(bodyFromMessage), nextCursor: res.nextCursor, hasMore: res.hasMore }),
  }),
  defineRoute({
    method: 'GET',
    url: '/events/:id',
    summary: 'One event',
    rpc: EventService.method.getEvent,
    schema: { params: EventIdParams, response: { 200: okEnvelope(EventJson) } },
    toRequest: (req) => ({ id: req.params.id }),
    toData: (res) => bodyFromMessage(res.event!),
  }),
  defineRoute({
    method: 'POST',
    url: '/events/:id/redeliver',
    summary: 'Redeliver an event to one endpoint (endpointId) or to every matching endpoint',
    rpc: EventService.method.redeliverEvent,
    optionalBody: true,
    schema: { params: EventIdParams, body: RedeliverBody, response: { 200: okEnvelope(RedeliveriesJson) } },
    toRequest: (req) => ({ id: req.params.id, endpointId: req.body?.endpointId ?? '' }),
    toData: (res) => ({ items: res.deliveries.map(deliveryJson) }),
  }),
  defineRoute({
    method: 'GET',
    url: '/events/:id/deliveries',
    summary: 'The delivery log of an event: every attempt with time, status code, duration and failure reason',
    rpc: EventService.method.listDeliveries,
    schema: { params: EventIdParams, querystring: ListDeliveriesQuery, response: { 200: okEnvelope(DeliveryPageJson) } },
    toRequest: (req) => ({ eventId: req.params.id, ...pageQuery(req) }),
    toData: (res) => ({ items: res.deliveries.map(deliveryJson), nextCursor: res.nextCursor || null }),
  }),
  defineRoute({
    method: 'GET',
    url: '/deliveries',
    summary: 'The delivery log of every endpoint of the caller, deleted ones included, newest first',
    rpc: EventService.method.listDeliveries,
    schema: { querystring: ListDeliveriesQuery, response: { 200: okEnvelope(DeliveryPageJson) } },
    toRequest: pageQuery,
    toData: (res) => ({ items: res.deliveries.map(deliveryJson), nextCursor: res.nextCursor || null }),
  }),
  defineRoute({
    method: 'GET',
    url: '/webhook-endpoints/:id/deliveries',
    summary: 'The delivery log of an endpoint, newest first',
    rpc: EventService.method.listDeliveries,
    schema: { params: EndpointIdParams, querystring: ListDeliveriesQuery, response: { 200: okEnvelope(DeliveryPageJson) } },
    toRequest: (req) => ({ endpointId: req.params.id, ...pageQuery(req) }),
    toData: (res) => ({ items: res.deliveries.map(deliveryJson), nextCursor: res.nextCursor || null }),
  }),
];
