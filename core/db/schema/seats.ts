import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers } from './tenancy';

export const SEAT_TRACKS = ['video', 'shop'] as const;
export type SeatTrack = (typeof SEAT_TRACKS)[number];
export const AUTHORIZATION_STATUSES = ['unbound', 'active', 'reauthorization_required'] as const;
export type AuthorizationStatusValue = (typeof AUTHORIZATION_STATUSES)[number];

export const seats = pgTable(
  'seats',
  {
    id: text('id').primaryKey(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    name: text('name').notNull().default(''),
    platform: text('platform').notNull().default('vplat'),
    track: text('track').$type<SeatTrack>().notNull(),
    /** businessId (video track) or creatorUserOpenId (shop track); null while unbound. */
    accountId: text('account_id'),
    accountUsername: text('account_username'),
    boundAt: timestamp('bound_at', { withTimezone: true }),
    authorizationStatus: text('authorization_status').$type<AuthorizationStatusValue>().notNull().default('unbound'),
    /** AES-256-GCM sealed JSON of the upstream tokens (see core/crypto/sealed-box.ts). */
    credentialsSealed: text('credentials_sealed'),
    accessTokenExpiresAt: timestamp('access_token_expires_at', { withTimezone: true }),
    refreshTokenExpiresAt: timestamp('refresh_token_expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // One account, one seat: the database enforces rule 1006 even between concurrent binds.
    uniqueIndex('seats_account_key').on(t.platform, t.track, t.accountId),
    index('seats_customer_idx').on(t.customerId),
    check('seats_track_check', sql`${t.track} in ('video', 'shop')`),
    check('seats_binding_check', sql`(${t.accountId} is null) = (${t.boundAt} is null)`),
  ],
);
