import { bigserial, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
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
    /** The official event name, or the service's own source of the event. */
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
    workflowId: text('workflow_id').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('deliveries_event_idx').on(t.eventId),
    index('deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    uniqueIndex('deliveries_workflow_key').on(t.workflowId),
  ],
);

export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => deliveries.id),
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
 * Slots of the per-endpoint concurrency limit: a delivery attempt holds one while its POST is in
 * flight. A lease that outlives its holder (a crashed worker) expires by itself.
 */
export const deliveryLeases = pgTable(
  'delivery_leases',
  {
    endpointId: text('endpoint_id').notNull(),
    slot: integer('slot').notNull(),
    deliveryId: text('delivery_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.slot] })],
);
