import { index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Idempotency keys of write requests: the first request's fingerprint and, once it succeeded, its
 * response, so a repeat returns that response instead of doing the work again.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    customerId: text('customer_id').notNull(),
    key: text('key').notNull(),
    /** The RPC and the SHA-256 of its request message: a reused key must name the same request. */
    fingerprint: text('fingerprint').notNull(),
    /** Base64 of the response message; null while the first request is still running. */
    response: text('response'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.customerId, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
);
