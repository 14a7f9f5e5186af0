import { Type, type Static } from '@sinclair/typebox';
import type { EventBody } from '../../core/events/present';
import { NullableTimestamp, Timestamp } from './common';

/** The event object, snake_case as the spec defines it: the same shape as a push body. */
export const EventJson = Type.Object(
  {
    id: Type.String({ description: 'Unique event id: the idempotency key; a push can be repeated, so deduplicate by it' }),
    platform: Type.String({
      description:
        'The namespace of the type: vplat for what happens to the account on the platform, service for your setup in this service',
    }),
    type: Type.String({
      description:
        'Normalized type, prefixed by the platform namespace, e.g. vplat.comment.created; the catalogue is the `webhooks` of this document',
    }),
    event: Type.String({
      description:
        'The official original event name, e.g. im_receive_msg; an event the service makes itself has none, and carries its type here',
    }),
    occurred_at: Type.String({ ...Timestamp, description: 'When the event happened (UTC)' }),
    received_at: Type.String({ ...Timestamp, description: 'When the service received it (UTC), for reconciliation' }),
    seat_id: Type.Union([Type.String(), Type.Null()], { description: 'The seat the event belongs to' }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'Event content; field names follow the official documentation' }),
  },
  { description: 'An account event: the body of a push, an item of GET /v1/events and the data of a streamed event' },
);

/** An event as the documentation shows one (the example frame of the stream). */
export const EXAMPLE_EVENT: EventBody = {
  id: 'evt_01kbdhq0w8m3x6v2c9t4r7n5pe',
  platform: 'vplat',
  type: 'vplat.comment.created',
  event: 'comment.update',
  occurred_at: '2026-11-28T09:15:02.431Z',
  received_at: '2026-11-28T09:15:03.007Z',
  seat_id: 'seat_01kb9s2f4q7w1e5r8t3y6v9h0n',
  data: {
    comment_id: '7441026588305474322',
    video_id: '7440971830227668241',
    parent_comment_id: 0,
    comment_type: 'comment',
    comment_action: 'insert',
    unique_identifier: 'creator_handle',
    timestamp: 1795857302431,
  },
};

export const EventPageJson = Type.Object({
  items: Type.Array(EventJson),
  nextCursor: Type.String({ description: 'Continue from here; given on the last page too, to read events stored later' }),
  hasMore: Type.Boolean(),
});

const Cursor = Type.String({ maxLength: 200 });

/** Test events are read only when asked for: a consumer of the log never mistakes one for account activity. */
export const IncludeTest = Type.Boolean({
  description:
    'Also the test events (service.endpoint.test, sent by POST /v1/webhook-endpoints/{id}/test); default false. `types` naming service.endpoint.test asks for them too',
});
const Limit = Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, default 50' });

export const ListEventsQuery = Type.Object(
  {
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
    types: Type.Optional(Type.String({ maxLength: 1000, description: 'Comma-separated patterns: "*", "vplat.*" or exact types' })),
    seatId: Type.Optional(Type.String({ maxLength: 64 })),
    since: Type.Optional(Timestamp),
    until: Type.Optional(Timestamp),
    includeTest: Type.Optional(IncludeTest),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

export const EventIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const RedeliverBody = Type.Object(
  {
    endpointId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Only this endpoint; all matching endpoints when absent' }),
    ),
  },
  { additionalProperties: false },
);
export type RedeliverBody = Static<typeof RedeliverBody>;

export const DeliveryAttemptJson = Type.Object(
  {
    attempt: Type.Integer(),
    startedAt: Timestamp,
    durationMs: Type.Integer(),
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'Null when the receiver did not answer' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed; null when it succeeded' }),
  },
  { description: 'One POST of an event to an endpoint' },
);

export const DeliveryJson = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String(),
    eventType: Type.String(),
    endpointId: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]),
    reason: Type.Union([Type.Literal('initial'), Type.Literal('redeliver')]),
    workflowId: Type.String(),
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
    attempts: Type.Array(DeliveryAttemptJson),
  },
  {
    description: 'The delivery of one event to one endpoint: its outcome and every attempt, with status code, duration and failure reason',
  },
);
export type DeliveryJson = Static<typeof DeliveryJson>;

/** What a redelivery started: one delivery per endpoint it went to. */
export const RedeliveriesJson = Type.Object({ items: Type.Array(DeliveryJson) });

export const DeliveryPageJson = Type.Object({ items: Type.Array(DeliveryJson), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const ListDeliveriesQuery = Type.Object(
  {
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]),
    ),
    types: Type.Optional(
      Type.String({
        maxLength: 1000,
        description: 'Only deliveries of events matching these comma-separated patterns: "*", "vplat.*" or exact types',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;
