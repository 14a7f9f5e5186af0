import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import {
  DeliverySchema,
  type EventService,
  type GetEventRequest,
  type ListDeliveriesRequest,
  type ListEventsRequest,
  type RedeliverEventRequest,
  type WatchEventsRequest,
} from '../../gen/vps/event/v1/event_pb';
import { customerOf } from '../context';
import { credentialAdmitted } from '../db/repositories/access';
import { consoleSessionKey } from '../interceptors/access.interceptor';
import { whileAdmitted } from '../events/watch-events';
import type { Db } from '../db/client';
import { findEvent, listDeliveries, listEvents, type DeliveryAttemptRow, type DeliveryRow } from '../db/repositories/events';
import { findEndpoint } from '../db/repositories/webhook-endpoints';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../db/schema';
import { ApiError, invalidField } from '../errors';
import { checkPatterns, hiddenTypes } from '../events/event-types';
import { toEventMessage } from '../events/present';
import type { EventRecorder } from '../events/recorder';
import type { StreamCredential } from '../events/stream-leases';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/** Cursors are opaque to callers: the position (or id) they continue after, encoded. */
export function encodeCursor(value: string | number): string {
  return Buffer.from(`c:${value}`).toString('base64url');
}

export function decodeCursor(cursor: string, field = 'cursor'): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('c:') || text.length < 3) throw invalidField(field, 'is not a cursor this API returned');
  return text.slice(2);
}

export function pageSize(limit: number): number {
  if (limit === 0) return DEFAULT_PAGE_SIZE;
  if (limit < 1 || limit > MAX_PAGE_SIZE) throw invalidField('limit', `must be between 1 and ${MAX_PAGE_SIZE}`);
  return limit;
}

/** The Delivery message of a stored delivery; also what POST /v1/webhook-endpoints/{id}/test returns. */
export function toDelivery(row: DeliveryRow & { eventType?: string; attempts?: DeliveryAttemptRow[] }) {
  return create(DeliverySchema, {
    id: row.id,
    eventId: row.eventId,
    endpointId: row.endpointId,
    status: row.status,
    reason: row.reason,
    workflowId: row.workflowId,
    createdAt: timestampFromDate(row.createdAt),
    ...(row.completedAt ? { completedAt: timestampFromDate(row.completedAt) } : {}),
    eventType: row.eventType ?? '',
    attempts: (row.attempts ?? []).map((a) => ({
      attempt: a.attempt,
      startedAt: timestampFromDate(a.startedAt),
      durationMs: a.durationMs,
      statusCode: a.statusCode ?? 0,
      error: a.error ?? '',
    })),
  });
}

export type WatchEvents = (
  principal: ReturnType<typeof customerOf>,
  req: WatchEventsRequest,
  signal: AbortSignal,
  /** What the stream counts against under the per-credential cap. */
  credential: StreamCredential,
) => AsyncIterable<{ event?: ReturnType<typeof toEventMessage> }>;

export class EventHandlers implements ServiceImpl<typeof EventService> {
  constructor(private readonly deps: { db: Db; events: EventRecorder; watch: WatchEvents }) {}

  async listEvents(req: ListEventsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const limit = pageSize(req.limit);
    checkPatterns(req.types, 'types');
    let afterPosition: number | undefined;
    if (req.cursor) {
      afterPosition = Number(decodeCursor(req.cursor));
      if (!Number.isSafeInteger(afterPosition)) throw invalidField('cursor', 'is not a cursor this API returned');
    }
    const since = req.since ? timestampDate(req.since) : undefined;
    const until = req.until ? timestampDate(req.until) : undefined;
    if (since && until && since >= until) throw invalidField('until', 'must be after since');
    // One more than asked tells whether another page is already stored.
    const rows = await listEvents(this.deps.db, {
      customerId,
      afterPosition,
      types: req.types,
      hiddenTypes: hiddenTypes(req.types, req.includeTest),
      seatId: req.seatId || undefined,
      since,
      until,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    // The cursor is given even on the last page: events stored later are read by continuing from it.
    const next = last ? encodeCursor(last.position) : (req.cursor ?? '');
    return { events: page.map(toEventMessage), nextCursor: next, hasMore: rows.length > limit };
  }

  async getEvent(req: GetEventRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const row = await findEvent(this.deps.db, customerId, req.id);
    if (!row) throw new ApiError(1005, `event ${req.id} does not exist`);
    return { event: toEventMessage(row) };
  }

  async redeliverEvent(req: RedeliverEventRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const event = await findEvent(this.deps.db, customerId, req.id);
    if (!event) throw new ApiError(1005, `event ${req.id} does not exist`);
    if (req.endpointId) {
      const endpoint = await findEndpoint(this.deps.db, req.endpointId);
      if (!endpoint || endpoint.customerId !== customerId || endpoint.deletedAt)
        throw new ApiError(1005, `webhook endpoint ${req.endpointId} does not exist`);
      if (endpoint.disabledAt)
        throw invalidField('endpointId', `the endpoint is disabled (${endpoint.disabledReason ?? 'no reason recorded'})`);
    }
    const deliveries = await this.deps.events.redeliver(event, req.endpointId ? { endpointId: req.endpointId } : {});
    return { deliveries: deliveries.map((d) => toDelivery({ ...d, eventType: event.type })) };
  }

  async listDeliveries(req: ListDeliveriesRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (req.status && !DELIVERY_STATUSES.includes(req.status as DeliveryStatus))
      throw invalidField('status', `must be one of ${DELIVERY_STATUSES.join(', ')}`);
    checkPatterns(req.types, 'types');
    const limit = pageSize(req.limit);
    // An empty log would not tell a caller's quiet event from an id that is not theirs; the spec's answer for the latter is 1005.
    if (req.eventId && !(await findEvent(this.deps.db, customerId, req.eventId)))
      throw new ApiError(1005, `event ${req.eventId} does not exist`);
    if (req.endpointId) {
      // A deleted endpoint's log stays readable: its deliveries keep their reference.
      const endpoint = await findEndpoint(this.deps.db, req.endpointId);
      if (!endpoint || endpoint.customerId !== customerId) throw new ApiError(1005, `webhook endpoint ${req.endpointId} does not exist`);
    }
    const rows = await listDeliveries(this.deps.db, {
      customerId,
      types: req.types,
      ...(req.eventId ? { eventId: req.eventId } : {}),
      ...(req.endpointId ? { endpointId: req.endpointId } : {}),
      ...(req.status ? { status: req.status as DeliveryStatus } : {}),
      ...(req.cursor ? { beforeId: decodeCursor(req.cursor) } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return { deliveries: page.map(toDelivery), nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : '' };
  }

  watchEvents(req: WatchEventsRequest, ctx: HandlerContext) {
    const principal = customerOf(ctx);
    const session = ctx.values.get(consoleSessionKey);
    const credential = session ? { sessionId: session.sessionId } : { apiKeyId: principal.apiKeyId };
    return whileAdmitted(this.deps.watch(principal, req, ctx.signal, credential), () => credentialAdmitted(this.deps.db, credential));
  }
}
