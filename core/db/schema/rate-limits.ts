import { boolean, doublePrecision, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** One token bucket per API key, shared by every gateway and core instance. */
export const rateLimitBuckets = pgTable('rate_limit_buckets', {
  bucketKey: text('bucket_key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  /** Whether the request that last touched the bucket was let through. */
  allowed: boolean('allowed').notNull(),
});
