import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { customers } from './tenancy';

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    url: text('url').notNull(),
    eventTypes: text('event_types').array().notNull(),
    /** The customer's own note on the endpoint; null when none was given. */
    description: text('description'),
    /**
     * The lower-case hex SHA-256 of the secret, exactly the HMAC key of the spec's signature scheme;
     * sealed (core/events/signing-keys.ts); rows from before sealing hold it plain until re-sealed.
     */
    signingKey: text('signing_key').notNull(),
    /**
     * The secret itself (`whsec_` + base64), sealed, whose bytes are the Standard Webhooks key; null
     * for secrets issued before those headers, whose key is then the digest's bytes. A column of its
     * own, so that signing_key means what it always did to every release that reads it.
     */
    standardKey: text('standard_key'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Deleted endpoints are kept so that delivery logs keep their reference. */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
    /** A disabled endpoint receives nothing until it is enabled again. */
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    disabledReason: text('disabled_reason'),
    /** After a rotation, the old key keeps signing until this time, beside the new one. */
    previousSigningKey: text('previous_signing_key'),
    /** The previous secret's standard_key, for as long as previous_signing_key signs. */
    previousStandardKey: text('previous_standard_key'),
    previousKeyExpiresAt: timestamp('previous_key_expires_at', { withTimezone: true }),
    /** Since when every attempt to this endpoint has failed; null after any success. */
    failingSince: timestamp('failing_since', { withTimezone: true }),
  },
  (t) => [index('webhook_endpoints_customer_idx').on(t.customerId)],
);
