import { boolean, doublePrecision, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** One token bucket per API key (and per console user), shared by every gateway and core instance. */
export const rateLimitBuckets = pgTable('rate_limit_buckets', {
  bucketKey: text('bucket_key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  /** Tokens the last statement drew: how many of its requests it let through. */
  drawn: integer('drawn').notNull().default(0),
  /**
   * Unused since `drawn` replaced it. Kept, nullable, so that instances of the release before it,
   * which still write it, keep working during a rolling upgrade; a later migration drops it.
   */
  allowed: boolean('allowed'),
});
