import { and, asc, desc, eq, exists, gt, gte, inArray, like, lt, not, notInArray, or, sql, type SQL } from 'drizzle-orm';
import { EVENT_IN_NOTICE_BYTES, EVENT_ROWS_CHANNEL, eventNoticePrefix } from '../../events/stream-channel';
import { DELIVERIES_CHANNEL, deliveryNotice } from '../../events/delivery-channel';
import { newId } from '../../ids';
import { rawQuery, type Db, type Executor } from '../client';
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

/** What one input of a batch became: its event (stored now, or earlier under the same source key) and its deliveries. */
export interface StoredEvent {
  event: EventRow;
  created: boolean;
  deliveries: DeliveryRow[];
}

// $1: the customers' lock keys, $2: the events, $3: their deliveries (JSON); $4, $5: the channels;
// $6: the routes versions the outbox was chosen at (JSON); $7: the largest row an event notice
// carries (see stream-channel.ts). Fixed text, run for every batch taken in:
// building it as a query cost more than sending it.
const INSERT_EVENTS = `
  with input as (
    select * from jsonb_to_recordset($2::jsonb) as i(
      ord int, id text, customer_id text, seat_id text, platform text, type text, event text,
      occurred_at timestamptz, data jsonb, source_key text, notice_prefix text, seat_account text)
  ), stale_routes as (
    select x.customer_id from jsonb_to_recordset($6::jsonb) as x(customer_id text, version bigint)
    left join customers c on c.id = x.customer_id
    where c.routes_version is distinct from x.version
  ), moved_seats as (
    select i.ord from input i where i.seat_account is not null
      and not exists (select 1 from seats s where s.id = i.seat_id and s.account_id = i.seat_account)
  ), go as (
    select not exists (select 1 from stale_routes) and not exists (select 1 from moved_seats) as ok
  ), locks as (
    select count(pg_advisory_xact_lock(k)) as taken from (
      select distinct hashtext(key) as k from jsonb_array_elements_text($1::jsonb) as key, go where go.ok order by k offset 0
    ) as keys
  ), ins as (
    insert into events (id, customer_id, seat_id, platform, type, event, occurred_at, data, source_key)
    select id, customer_id, seat_id, platform, type, event, occurred_at, data, source_key from input, locks, go where go.ok order by ord
    on conflict (customer_id, source_key) do nothing
    returning *
  ), queued as (
    select * from jsonb_to_recordset($3::jsonb) as q(
      id text, event_id text, endpoint_id text, reason text, workflow_id text, task_queue text, notice text)
  ), outbox as (
    insert into deliveries (id, event_id, endpoint_id, customer_id, reason, workflow_id, task_queue, next_attempt_at)
    select queued.id, ins.id, queued.endpoint_id, ins.customer_id, queued.reason, queued.workflow_id, queued.task_queue, now()
    from queued join ins on ins.id = queued.event_id
    returning *
  ), notices as (
    select pg_notify($4, input.notice_prefix || ins.position || case when octet_length(r.j) <= $7 then ' ' || r.j else '' end)
    from ins join input on input.id = ins.id, lateral (select row_to_json(ins)::text as j) as r
    union all
    select pg_notify($5, queued.notice) from queued join ins on ins.id = queued.event_id
  )
  select (select coalesce(json_agg(ins), '[]'::json) from ins) as events,
         (select coalesce(json_agg(outbox), '[]'::json) from outbox) as deliveries,
         (select count(*) from notices) as notices,
         (select coalesce(json_agg(customer_id), '[]'::json) from stale_routes) as stale_customers,
         (select coalesce(json_agg(ord), '[]'::json) from moved_seats) as moved_seats`;

/** One event of a batch to store, with its deliveries, and what its routing assumed. */
export interface EventInput {
  event: NewEvent;
  outbox?: Outbox;
  /** The account the event's seat held when the event was routed to it: stored only while it still does. */
  seatAccount?: string;
}

/** What a batch became: stored, or (nothing written) routed by facts that have changed since. */
export type InsertOutcome =
  | { stored: StoredEvent[] }
  | {
      stale: {
        /** Customers whose routes version moved on since the outbox was chosen. */
        customers: string[];
        /** The inputs (by index) whose seat no longer holds the account. */
        movedSeats: number[];
      };
    };

/**
 * Stores events once, with their outbox rows and the notifications of both, in one statement (so
 * in one transaction, and one round trip: a batch's cost to Postgres is paid once). Inserts of one
 * customer are serialised by an advisory lock so that positions commit in increasing order: a
 * reader that has seen position N will never later find a committed event of that customer below
 * N. The statement takes its customers' locks first (the insert reads the row that taking them
 * produces, in a fixed order, so batches of two processes never deadlock) and holds them to its
 * commit. Events and their deliveries commit together or not at all; an input whose source key is
 * taken (earlier, or earlier in the batch) stores and enqueues nothing and gets the event stored first.
 *
 * `routesVersions` are the versions of customers.routes_version the outboxes were chosen at. When
 * one of them has moved on, or a seat no longer holds its input's `seatAccount`, the statement
 * writes nothing at all and says what is stale, for the caller to route the batch again.
 */
export async function insertEvents(
  db: Db,
  inputs: readonly EventInput[],
  routesVersions: ReadonlyMap<string, string> = new Map(),
): Promise<InsertOutcome> {
  if (inputs.length === 0) return { stored: [] };
  const rows = inputs.map(({ event: e, seatAccount }, ord) => ({
    ord,
    id: newId('evt'),
    customer_id: e.customerId,
    seat_id: e.seatId,
    platform: e.platform,
    type: e.type,
    event: e.event,
    occurred_at: e.occurredAt.toISOString(),
    data: e.data,
    source_key: e.sourceKey,
    notice_prefix: eventNoticePrefix(e.customerId),
    seat_account: seatAccount ?? null,
  }));
  const queued = inputs.flatMap(({ event: e, outbox }, i) =>
    (outbox?.endpointIds ?? []).map((endpointId) => ({
      id: newId('dlv'),
      event_id: rows[i]!.id,
      endpoint_id: endpointId,
      reason: outbox!.reason,
      workflow_id: outbox!.queueWorkflowId(endpointId),
      task_queue: outbox!.taskQueue,
      notice: deliveryNotice({ customerId: e.customerId, endpointId, taskQueue: outbox!.taskQueue }),
    })),
  );
  const lockKeys = [...new Set(inputs.map(({ event: e }) => `events:${e.customerId}`))];
  const expected = [...routesVersions].map(([customer_id, version]) => ({ customer_id, version }));
  const [written] = await rawQuery<{
    events: Array<Record<string, unknown>>;
    deliveries: Array<Record<string, unknown>>;
    stale_customers: string[];
    moved_seats: number[];
  }>(db, INSERT_EVENTS, [
    JSON.stringify(lockKeys),
    JSON.stringify(rows),
    JSON.stringify(queued),
    EVENT_ROWS_CHANNEL,
    DELIVERIES_CHANNEL,
    JSON.stringify(expected),
    EVENT_IN_NOTICE_BYTES,
  ]);
  if (written!.stale_customers.length > 0 || written!.moved_seats.length > 0)
    return { stale: { customers: written!.stale_customers, movedSeats: written!.moved_seats } };
  const stored = new Map(written!.events.map((raw) => readEvent(raw)).map((e) => [e.id, e]));
  const byEvent = new Map<string, DeliveryRow[]>();
  for (const d of written!.deliveries.map((raw) => readDelivery(raw))) byEvent.set(d.eventId, [...(byEvent.get(d.eventId) ?? []), d]);
  // Inputs whose source key was taken get the event that holds it (committed by now: the insert
  // waited for the holder's transaction to end before it skipped).
  const taken = inputs.filter((_, i) => !stored.has(rows[i]!.id)).map(({ event: e }) => e);
  const holders = new Map<string, EventRow>();
  if (taken.length > 0) {
    const found = await db
      .select()
      .from(events)
      .where(or(...taken.map((e) => and(eq(events.customerId, e.customerId), eq(events.sourceKey, e.sourceKey!)))));
    for (const e of found) holders.set(`${e.customerId}\n${e.sourceKey}`, e);
  }
  return {
    stored: inputs.map(({ event: e }, i) => {
      const event = stored.get(rows[i]!.id);
      if (event) return { event, created: true, deliveries: byEvent.get(event.id) ?? [] };
      return { event: holders.get(`${e.customerId}\n${e.sourceKey}`)!, created: false, deliveries: [] };
    }),
  };
}

/** The share of Postgres's notification queue in use, 0 to 1: what the event notices wait in. */
export async function notificationQueueUsage(db: Db): Promise<number> {
  const [row] = await rawQuery<{ usage: number }>(db, 'select pg_notification_queue_usage() as usage', []);
  return Number(row?.usage ?? 0);
}

/** An event from the row an event notice carries (row_to_json of the stored row; see stream-channel.ts). */
export function eventFromNotice(json: string): EventRow {
  return readEvent(JSON.parse(json) as Record<string, unknown>);
}

/**
 * Whether listEventsAfter's filter keeps an event of this type: its twin in memory, for events a
 * stream takes from notices instead of reading them. It must keep exactly what EVENTS_AFTER keeps.
 */
export function keptByEventsAfter(q: { types: readonly string[]; hiddenTypes: readonly string[] }, type: string): boolean {
  const types = q.types.includes('*') ? [] : q.types;
  const named = types.length === 0 || types.some((p) => p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
  return named && !q.hiddenTypes.includes(type);
}

/** One event; see insertEvents. */
export async function insertEvent(db: Db, input: NewEvent, outbox?: Outbox): Promise<StoredEvent> {
  // Nothing assumed about routes or seats, so never stale.
  const outcome = await insertEvents(db, [{ event: input, ...(outbox ? { outbox } : {}) }]);
  if (!('stored' in outcome)) throw new Error('an insert that checks nothing was found stale');
  return outcome.stored[0]!;
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
  /** Exact types left out whatever the patterns say. */
  hiddenTypes?: readonly string[];
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
        q.hiddenTypes?.length ? notInArray(events.type, [...q.hiddenTypes]) : undefined,
        q.seatId ? eq(events.seatId, q.seatId) : undefined,
        q.since ? gte(events.occurredAt, q.since) : undefined,
        q.until ? lt(events.occurredAt, q.until) : undefined,
      ),
    )
    .orderBy(asc(events.position))
    .limit(q.limit);
}

/**
 * The customer's events after a position, oldest first, of the types the patterns name (none: all)
 * minus the hidden ones: listEvents's answer for an event stream, which reads it on every new
 * event, so fixed text rather than a built query. The patterns as typeFilter reads them.
 */
export async function listEventsAfter(
  db: Db,
  q: { customerId: string; afterPosition: number; types: readonly string[]; hiddenTypes: readonly string[]; limit: number },
): Promise<EventRow[]> {
  const types = q.types.includes('*') ? [] : [...q.types];
  const rows = await rawQuery<Record<string, unknown>>(db, EVENTS_AFTER, [
    q.customerId,
    q.afterPosition,
    types,
    [...q.hiddenTypes],
    q.limit,
  ]);
  return rows.map(readEvent);
}

const EVENTS_AFTER = `
  select * from events
  where customer_id = $1 and position > $2
    and (cardinality($3::text[]) = 0 or type = any($3::text[])
      or exists (select 1 from unnest($3::text[]) p where right(p, 2) = '.*' and starts_with(type, left(p, -1))))
    and type <> all($4::text[])
  order by position
  limit $5`;

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

export async function listDeliveries(
  db: Executor,
  q: DeliveryQuery,
): Promise<Array<DeliveryRow & { eventType: string; attempts: DeliveryAttemptRow[] }>> {
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
