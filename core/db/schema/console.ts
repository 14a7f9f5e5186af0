import { index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
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
