/**
 * The event object as customers see it (snake_case, the spec's "Event object"): the push body, an
 * SSE `data:` line and an item of GET /v1/events all carry exactly this shape. One definition here;
 * the proto message and the JSON body are both built from a stored row. A row an earlier release
 * stored under a former `event` name is shown with today's (the catalogue keeps both).
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { EventSchema, type Event } from '../../gen/vps/event/v1/event_pb';
import type { EventRow } from '../db/repositories/events';
import { presentedEventName } from './event-types';

export type EventBody = {
  id: string;
  platform: string;
  type: string;
  event: string;
  occurred_at: string;
  received_at: string;
  seat_id: string | null;
  data: Record<string, unknown>;
};

export function eventBody(row: EventRow): EventBody {
  return {
    id: row.id,
    platform: row.platform,
    type: row.type,
    event: presentedEventName(row.type, row.event),
    occurred_at: row.occurredAt.toISOString(),
    received_at: row.receivedAt.toISOString(),
    seat_id: row.seatId,
    data: row.data,
  };
}

export function toEventMessage(row: EventRow): Event {
  return create(EventSchema, {
    id: row.id,
    platform: row.platform,
    type: row.type,
    event: presentedEventName(row.type, row.event),
    occurredAt: timestampFromDate(row.occurredAt),
    receivedAt: timestampFromDate(row.receivedAt),
    seatId: row.seatId ?? '',
    data: row.data as JsonObject,
    position: BigInt(row.position),
  });
}

/** Back from the proto message to the body shape, on the gateway side of Connect. */
export function bodyFromMessage(message: Event): EventBody {
  const iso = (t: Event['occurredAt']) => (t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString() : '');
  return {
    id: message.id,
    platform: message.platform,
    type: message.type,
    event: message.event,
    occurred_at: iso(message.occurredAt),
    received_at: iso(message.receivedAt),
    seat_id: message.seatId || null,
    data: (message.data ?? {}) as Record<string, unknown>,
  };
}
