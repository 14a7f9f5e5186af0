import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const customers = pgTable('customers', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  seatQuota: integer('seat_quota').notNull().default(0),
  /** Null: the plan never expires. */
  planExpiresAt: timestamp('plan_expires_at', { withTimezone: true }),
  /**
   * Raised (by a trigger, migration 0019) whenever an endpoint of the customer is added, removed,
   * enabled, disabled or resubscribed: intake keeps the endpoints it routes by in memory and stores
   * an event only while this still holds the value it read them with (core/events/event-routes.ts).
   */
  routesVersion: bigint('routes_version', { mode: 'number' }).notNull().default(0),
  createdAt: createdAt(),
});

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    email: text('email').notNull(),
    name: text('name').notNull().default(''),
    /** Set by the console's sign-up; keys work without it. */
    passwordHash: text('password_hash'),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`), index('users_customer_idx').on(t.customerId)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull().default(''),
    prefix: text('prefix').notNull(),
    /** Lower-case hex SHA-256 of the plaintext; the plaintext is never stored. */
    keyHash: text('key_hash').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_hash_key').on(t.keyHash), index('api_keys_customer_idx').on(t.customerId)],
);
