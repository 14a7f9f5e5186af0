import { doublePrecision, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './tenancy';

/**
 * Signed-in console sessions. Only the SHA-256 of the cookie's token is kept, so a read of this
 * table does not let anyone sign in; the CSRF token is derived from the token, never stored.
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Lower-case hex SHA-256 of the session token. */
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Moved forward on use (idle expiry), never beyond `absoluteExpiresAt`. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** However active, a session ends here and the user signs in again. */
    absoluteExpiresAt: timestamp('absolute_expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('console_sessions_token_key').on(t.tokenHash),
    index('console_sessions_user_idx').on(t.userId),
    index('console_sessions_expires_idx').on(t.expiresAt),
  ],
);

/**
 * The sign-in throttle's token buckets, one per client address group and one per account (e-mail),
 * shared by every core instance. Keys are SHA-256 hashes (`addr:<hex>`, `acct:<hex>`), so the table
 * holds no address or e-mail in clear. A bucket untouched long enough to be full again means the
 * same as no row, and is deleted.
 */
export const signInBuckets = pgTable(
  'sign_in_buckets',
  {
    bucketKey: text('bucket_key').primaryKey(),
    tokens: doublePrecision('tokens').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('sign_in_buckets_updated_idx').on(t.updatedAt)],
);

/**
 * Address groups an account was signed in to from: failed tries from them do not draw from the
 * account's bucket, so someone guessing from elsewhere cannot keep the account's owner out. The key
 * is the SHA-256 of the e-mail and the address group together.
 */
export const signInKnownAddresses = pgTable(
  'sign_in_known_addresses',
  {
    key: text('key').primaryKey(),
    signedInAt: timestamp('signed_in_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('sign_in_known_addresses_signed_in_idx').on(t.signedInAt)],
);
