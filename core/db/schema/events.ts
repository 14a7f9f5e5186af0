import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers } from './tenancy';
import { webhookEndpoints } from './webhooks';

export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    /** Increases in the order events were stored (inserts of one customer are serialised). */
    position: bigserial('position', { mode: 'number' }).notNull(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    seatId: text('seat_id'),
    platform: text('platform').notNull(),
    type: text('type').notNull(),
    /**
     * The official event name; the type for an event the service makes itself. Rows of earlier
     * releases may hold a former name, presented as today's (core/events/event-types.ts).
     */
    event: text('event').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    /** What makes a source event unique (the official push, a publish status change): stored once. */
    sourceKey: text('source_key'),
  },
  (t) => [
    uniqueIndex('events_position_key').on(t.position),
    uniqueIndex('events_source_key').on(t.customerId, t.sourceKey),
    index('events_customer_position_idx').on(t.customerId, t.position),
  ],
);

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The outbox and the queue at once: one row per (event, endpoint) push, written in the event's own
 * transaction, drained by the endpoint's delivery workflow. A pending row is due at
 * `next_attempt_at`; a drain claims it by setting a lease, so no two workers send it at once, and a
 * lease left by a killed worker lapses by itself. Stored with fillfactor 70 (migration 0017): the
 * lease touches no indexed column, so with room on the page the claim's update is HOT.
 */
export const deliveries = pgTable(
  'deliveries',
  {
    id: text('id').primaryKey(),
    eventId: text('event_id')
      .notNull()
      .references(() => events.id),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    customerId: text('customer_id').notNull(),
    /** initial or redeliver. */
    reason: text('reason').notNull(),
    /** The workflow that carries it: the endpoint's queue, or for older rows their own workflow. */
    workflowId: text('workflow_id').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
    /** Attempts made so far; the next one is number attempts + 1. */
    attemptsMade: integer('attempts_made').notNull().default(0),
    /** When a pending delivery is due for its next attempt; null once it has ended. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }),
    /** While set and in the future, a drain is sending this row and no other may claim it. */
    leaseUntil: timestamp('lease_until', { withTimezone: true, precision: 3 }),
    leaseOwner: text('lease_owner'),
    /** The task queue of the workers that drain it; null (rows of the previous release) for any. */
    taskQueue: text('task_queue'),
  },
  (t) => [
    index('deliveries_event_idx').on(t.eventId),
    index('deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    // An event's first delivery to an endpoint exists once, however often its intake is retried.
    uniqueIndex('deliveries_initial_key')
      .on(t.eventId, t.endpointId)
      .where(sql`reason = 'initial'`),
    // The queue: an endpoint's pending rows in due order, ties by id, so a claim reads its rows in
    // the index's order and stops at its limit instead of sorting every due row of the endpoint.
    index('deliveries_due_idx')
      .on(t.endpointId, t.nextAttemptAt, t.id)
      .where(sql`status = 'pending'`),
  ],
);

export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /**
     * No foreign key: attempts are written only for rows a drain claimed, and the check cost every
     * attempt a lookup and a lock on its delivery's row, the row the same statement updates.
     */
    deliveryId: text('delivery_id').notNull(),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, precision: 3 }).notNull(),
    durationMs: integer('duration_ms').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    succeeded: boolean('succeeded').notNull(),
  },
  (t) => [uniqueIndex('delivery_attempts_key').on(t.deliveryId, t.attempt)],
);

/**
 * One row per open event stream (GET /v1/events/stream), whichever core serves it: the count of a
 * key's and a customer's streams that every instance checks before opening another. The core
 * serving a stream renews its lease while the stream is open; a lease whose core died lapses at
 * `expires_at` by itself, so a crashed process holds its streams' slots for one lease at most.
 */
export const eventStreamLeases = pgTable(
  'event_stream_leases',
  {
    id: text('id').primaryKey(),
    customerId: text('customer_id').notNull(),
    /** The stream's credential: `key:<api key id>` or `session:<console session id>`. */
    credential: text('credential').notNull(),
    /** Set from the database clock, so every instance judges expiry by the same clock. */
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('event_stream_leases_customer_idx').on(t.customerId), index('event_stream_leases_expires_idx').on(t.expiresAt)],
);
