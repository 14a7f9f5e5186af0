import { and, asc, desc, eq, exists, gt, gte, inArray, like, lt, not, or, sql, type SQL } from 'drizzle-orm';
import { EVENTS_CHANNEL, eventNoticePrefix } from '../../events/stream-channel';
import { DELIVERIES_CHANNEL, deliveryNotice } from '../../events/delivery-channel';
import { newId } from '../../ids';
import { queryRows, type Db, type Executor } from '../client';
import { rowReader } from '../row-reader';
import { deliveries, deliveryAttempts, events, type DeliveryStatus } from '../schema';

export type EventRow = typeof events.$inferSelect;
export type DeliveryRow = typeof deliveries.$inferSelect;
export type DeliveryAttemptRow = typeof deliveryAttempts.$inferSelect;

export interface NewEvent {
  customerId: string;
  seatId: string | null;
  platform: string;
  type: string;
  event: string;
  occurredAt: Date;
  data: Record<string, unknown>;
  /** Stored once per customer: a second insert with the same key returns the first event. */
  sourceKey: string | null;
}

/** Deliveries to enqueue with a newly stored event (the outbox): one per endpoint, due now. */
export interface Outbox {
  endpointIds: readonly string[];
  reason: 'initial' | 'redeliver';
  /** The deployment's task queue: its workers are told, and its sweep finds the rows. */
  taskQueue: string;
  queueWorkflowId: (endpointId: string) => string;
}

const readEvent = rowReader(events);
const readDelivery = rowReader(deliveries);

/**
 * Stores an event once, with its outbox rows and the notifications of both, in one transaction.
 * Inserts of one customer are serialised by an advisory lock so that positions commit in
 * increasing order: a reader that has seen position N will never later find a committed event of
 * that customer below N. Under the lock there is one statement (the event, its deliveries and the
 * notices together), because the lock's hold time bounds one customer's intake rate. The event and
 * its deliveries commit together or not at all; a repeated source key stores and enqueues nothing.
 */
export async function insertEvent(db: Db, input: NewEvent, outbox?: Outbox): Promise<{ event: EventRow; created: boolean; deliveries: DeliveryRow[] }> {
  const queued = (outbox?.endpointIds ?? []).map((endpointId) => ({
    id: newId('dlv'),
    endpoint_id: endpointId,
    workflow_id: outbox!.queueWorkflowId(endpointId),
    notice: deliveryNotice({ customerId: input.customerId, endpointId, taskQueue: outbox!.taskQueue }),
  }));
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`events:${input.customerId}`}))`);
    const [row] = await queryRows<{ event: Record<string, unknown> | null; deliveries: Array<Record<string, unknown>> }>(
      tx,
      sql`with ins as (
            insert into events (id, customer_id, seat_id, platform, type, event, occurred_at, data, source_key)
            values (${newId('evt')}, ${input.customerId}, ${input.seatId}, ${input.platform}, ${input.type}, ${input.event},
                    ${input.occurredAt.toISOString()}::timestamptz, ${JSON.stringify(input.data)}::jsonb, ${input.sourceKey})
            on conflict (customer_id, source_key) do nothing
            returning *
          ), queued as (
            select * from jsonb_to_recordset(${JSON.stringify(queued)}::jsonb) as q(id text, endpoint_id text, workflow_id text, notice text)
          ), outbox as (
            insert into deliveries (id, event_id, endpoint_id, customer_id, reason, workflow_id, task_queue, next_attempt_at)
            select queued.id, ins.id, queued.endpoint_id, ins.customer_id, ${outbox?.reason ?? 'initial'}, queued.workflow_id, ${outbox?.taskQueue ?? null}, now()
            from ins, queued
            returning *
          ), notices as (
            select pg_notify(${EVENTS_CHANNEL}, ${eventNoticePrefix(input.customerId)} || ins.position) from ins
            union all
            select pg_notify(${DELIVERIES_CHANNEL}, queued.notice) from ins, queued
          )
          select (select row_to_json(ins) from ins) as event,
                 (select coalesce(json_agg(outbox), '[]'::json) from outbox) as deliveries,
                 (select count(*) from notices) as notices`,
    );
    if (row?.event) return { event: readEvent(row.event), created: true, deliveries: row.deliveries.map(readDelivery) };
    // The source key is taken: the event stored first is the one, and it set off its own deliveries.
    const [existing] = await tx
      .select()
      .from(events)
      .where(and(eq(events.customerId, input.customerId), eq(events.sourceKey, input.sourceKey!)));
    return { event: existing!, created: false, deliveries: [] };
  });
}

/** SQL for subscription patterns ("*", "vplat.*", exact types); undefined means no filter. */
function typeFilter(patterns: readonly string[]): SQL | undefined {
  if (patterns.length === 0 || patterns.includes('*')) return undefined;
  const exact = patterns.filter((p) => !p.endsWith('.*'));
  const prefixes = patterns.filter((p) => p.endsWith('.*')).map((p) => like(events.type, `${p.slice(0, -1)}%`));
  return or(...(exact.length > 0 ? [inArray(events.type, exact)] : []), ...prefixes);
}

export interface EventQuery {
  customerId: string;
  afterPosition?: number;
  types?: readonly string[];
  seatId?: string;
  since?: Date;
  until?: Date;
  limit: number;
}

/** The customer's events after a position, oldest first. */
export async function listEvents(db: Executor, q: EventQuery): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(
      and(
        eq(events.customerId, q.customerId),
        q.afterPosition !== undefined ? gt(events.position, q.afterPosition) : undefined,
        typeFilter(q.types ?? []),
        q.seatId ? eq(events.seatId, q.seatId) : undefined,
        q.since ? gte(events.occurredAt, q.since) : undefined,
        q.until ? lt(events.occurredAt, q.until) : undefined,
      ),
    )
    .orderBy(asc(events.position))
    .limit(q.limit);
}

/** The position of the customer's newest event, 0 before the first. */
/** The customer's latest event's position and id; undefined before the first event. */
export async function lastEvent(db: Executor, customerId: string): Promise<{ position: number; id: string } | undefined> {
  const [row] = await db
    .select({ position: events.position, id: events.id })
    .from(events)
    .where(eq(events.customerId, customerId))
    .orderBy(desc(events.position))
    .limit(1);
  return row;
}

export async function findEvent(db: Executor, customerId: string, id: string): Promise<EventRow | undefined> {
  const [row] = await db
    .select()
    .from(events)
    .where(and(eq(events.customerId, customerId), eq(events.id, id)));
  return row;
}

export async function findEventById(db: Executor, id: string): Promise<EventRow | undefined> {
  const [row] = await db.select().from(events).where(eq(events.id, id));
  return row;
}

export async function findDelivery(db: Executor, id: string): Promise<DeliveryRow | undefined> {
  const [row] = await db.select().from(deliveries).where(eq(deliveries.id, id));
  return row;
}

export async function finishDelivery(db: Executor, id: string, status: Exclude<DeliveryStatus, 'pending'>): Promise<void> {
  await db
    .update(deliveries)
    .set({ status, completedAt: new Date(), nextAttemptAt: null, leaseUntil: null, leaseOwner: null })
    .where(and(eq(deliveries.id, id), eq(deliveries.status, 'pending')));
}

export interface DeliveryQuery {
  customerId: string;
  eventId?: string;
  endpointId?: string;
  status?: DeliveryStatus;
  /** Subscription patterns the delivered event's type matches; empty for all. */
  types?: readonly string[];
  /** Created before this delivery (newest first paging). */
  beforeId?: string;
  limit: number;
}

export async function listDeliveries(db: Executor, q: DeliveryQuery): Promise<Array<DeliveryRow & { eventType: string; attempts: DeliveryAttemptRow[] }>> {
  const rows = await db
    .select({ delivery: deliveries, eventType: events.type })
    .from(deliveries)
    .innerJoin(events, eq(events.id, deliveries.eventId))
    .where(
      and(
        eq(deliveries.customerId, q.customerId),
        q.eventId ? eq(deliveries.eventId, q.eventId) : undefined,
        q.endpointId ? eq(deliveries.endpointId, q.endpointId) : undefined,
        q.status ? eq(deliveries.status, q.status) : undefined,
        typeFilter(q.types ?? []),
        q.beforeId ? lt(deliveries.id, q.beforeId) : undefined,
      ),
    )
    .orderBy(desc(deliveries.id))
    .limit(q.limit);
  if (rows.length === 0) return [];
  const attempts = await db
    .select()
    .from(deliveryAttempts)
    .where(
      inArray(
        deliveryAttempts.deliveryId,
        rows.map((r) => r.delivery.id),
      ),
    )
    .orderBy(asc(deliveryAttempts.deliveryId), asc(deliveryAttempts.attempt));
  return rows.map((r) => ({ ...r.delivery, eventType: r.eventType, attempts: attempts.filter((a) => a.deliveryId === r.delivery.id) }));
}

/** Events since a time, matching an endpoint's patterns, that never reached it successfully. */
export async function listUndeliveredEvents(
  db: Executor,
  q: { customerId: string; endpointId: string; types: readonly string[]; since: Date; limit: number },
): Promise<EventRow[]> {
  const delivered = db
    .select({ one: sql`1` })
    .from(deliveries)
    .where(and(eq(deliveries.eventId, events.id), eq(deliveries.endpointId, q.endpointId), eq(deliveries.status, 'succeeded')));
  return db
    .select()
    .from(events)
    .where(and(eq(events.customerId, q.customerId), gte(events.occurredAt, q.since), typeFilter(q.types), not(exists(delivered))))
    .orderBy(asc(events.position))
    .limit(q.limit);
}
