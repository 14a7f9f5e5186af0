/**
 * Console sessions and the console credentials behind them. The cookie's token is 256 random bits;
 * only its SHA-256 is stored, so the table can leak without letting anyone sign in.
 */
import { and, eq, lt, or, sql } from 'drizzle-orm';
import { rawQuery, type Db, type Executor } from '../client';
import { consoleSessions, users } from '../schema';
import { newId } from '../../ids';
import { bucketDraw, meteredAccess, peekedAccess, TOKENS_NOW, type AccessRow, type MeteredRow } from './access';
import { notifyCredentialsWithdrawn } from './credential-notices';
import type { UserRow } from './tenancy';

export interface SessionLifetime {
  /** Idle lifetime: a session unused this long ends. */
  ttlMs: number;
  /** However active, a session ends this long after sign-in. */
  maxAgeMs: number;
}

/** Used where no configuration is given (tests, benchmarks); `vps serve` passes its own. */
export const DEFAULT_SESSION_LIFETIME: SessionLifetime = { ttlMs: 12 * 3_600_000, maxAgeMs: 7 * 86_400_000 };

export async function insertSession(
  db: Executor,
  input: { userId: string; tokenHash: string; lifetime: SessionLifetime },
): Promise<{ id: string }> {
  const { ttlMs, maxAgeMs } = input.lifetime;
  const [row] = await db
    .insert(consoleSessions)
    .values({
      id: newId('ses'),
      userId: input.userId,
      tokenHash: input.tokenHash,
      expiresAt: sql`clock_timestamp() + ${Math.min(ttlMs, maxAgeMs)}::float8 * interval '1 millisecond'`,
      absoluteExpiresAt: sql`clock_timestamp() + ${maxAgeMs}::float8 * interval '1 millisecond'`,
    })
    .returning({ id: consoleSessions.id });
  return row!;
}

/** Ends one session; ending it twice is not an error. */
export async function deleteSession(db: Executor, id: string): Promise<void> {
  const [gone] = await db.delete(consoleSessions).where(eq(consoleSessions.id, id)).returning({ userId: consoleSessions.userId });
  if (gone) await notifySessionsEnded(db, gone.userId);
}

/** The open streams of the user's customer check their credentials now (a session's streams end). */
async function notifySessionsEnded(db: Executor, userId: string): Promise<void> {
  const [user] = await db.select({ customerId: users.customerId }).from(users).where(eq(users.id, userId));
  if (user) await notifyCredentialsWithdrawn(db, user.customerId);
}

/**
 * Ends a user's expired sessions (all of them with `all`), so the table holds live sessions only:
 * run at each sign-in, and on a password change, which must sign out every browser.
 */
export async function deleteUserSessions(db: Executor, userId: string, opts: { all: boolean }): Promise<void> {
  const which = opts.all
    ? undefined
    : or(lt(consoleSessions.expiresAt, sql`clock_timestamp()`), lt(consoleSessions.absoluteExpiresAt, sql`clock_timestamp()`));
  await db.delete(consoleSessions).where(and(eq(consoleSessions.userId, userId), which));
  if (opts.all) await notifySessionsEnded(db, userId);
}

export async function setUserPassword(db: Executor, userId: string, passwordHash: string): Promise<UserRow | undefined> {
  const [row] = await db.update(users).set({ passwordHash }).where(eq(users.id, userId)).returning();
  return row;
}

export type SessionAccessRow = Omit<AccessRow, 'keyId'> & { sessionId: string };

// As the key's statement in ./access, with the user id as the bucket: a console user's requests
// share one bucket whichever sessions (browser tabs, devices) they come from, and never draw from
// the buckets of the customer's API keys (keys ids and user ids never collide, by their prefixes).
// The expiry moves forward on use, at most once a minute (or half the idle lifetime, if shorter),
// never past the absolute expiry.
const SESSION_DRAW = bucketDraw('1');
const NEXT_EXPIRY = `least(console_sessions.absolute_expires_at, clock_timestamp() + $3::float8 * interval '1 millisecond')`;
const AUTHENTICATE_SESSION_AND_METER = `
  with s as (
    select s.id as session_id, s.user_id, u.customer_id, u.disabled_at is not null as user_disabled, c.plan_expires_at,
      coalesce(c.plan_expires_at <= clock_timestamp(), false) as plan_expired
    from console_sessions s
    join users u on u.id = s.user_id
    join customers c on c.id = u.customer_id
    where s.token_hash = $1 and s.expires_at > clock_timestamp() and s.absolute_expires_at > clock_timestamp()
  ),
  bucket as (
    insert into rate_limit_buckets as b (bucket_key, tokens, drawn, updated_at)
    select user_id, ${SESSION_DRAW.values} from s where not user_disabled
    ${SESSION_DRAW.onConflict}
  ),
  touched as (
    update console_sessions set expires_at = ${NEXT_EXPIRY}
    from s
    where console_sessions.id = s.session_id and not s.user_disabled
      and console_sessions.expires_at < ${NEXT_EXPIRY} - least(interval '1 minute', $3::float8 * interval '0.5 millisecond')
    returning 1
  )
  select s.*, bucket.drawn, bucket.tokens from s left join bucket on true`;

/**
 * One atomic statement per request, with the bucket rule of API keys: finds the live session with
 * its user and customer, draws one token from the user's bucket and extends the idle expiry.
 */
export async function authenticateSessionAndMeter(
  db: Db,
  tokenHash: string,
  perMinute: number,
  ttlMs: number,
): Promise<SessionAccessRow | undefined> {
  const rows = await rawQuery<MeteredRow & { session_id: string }>(db, AUTHENTICATE_SESSION_AND_METER, [tokenHash, perMinute, ttlMs]);
  const row = rows[0];
  return row ? { sessionId: row.session_id, ...meteredAccess(row, 0) } : undefined;
}

const PEEK_SESSION = `
  select s.id as session_id, s.user_id, u.customer_id, u.disabled_at is not null as user_disabled, c.plan_expires_at,
    coalesce(c.plan_expires_at <= clock_timestamp(), false) as plan_expired, ${TOKENS_NOW} as tokens
  from console_sessions s
  join users u on u.id = s.user_id
  join customers c on c.id = u.customer_id
  left join rate_limit_buckets b on b.bucket_key = s.user_id
  where s.token_hash = $1 and s.expires_at > clock_timestamp() and s.absolute_expires_at > clock_timestamp()`;

/**
 * Authenticates a session as authenticateSessionAndMeter does, without drawing from the user's
 * bucket or moving the expiry: for the check before a write, which does both itself.
 */
export async function peekSession(db: Db, tokenHash: string, perMinute: number): Promise<SessionAccessRow | undefined> {
  const [row] = await rawQuery<Omit<MeteredRow, 'drawn'> & { session_id: string }>(db, PEEK_SESSION, [tokenHash, perMinute]);
  return row ? { sessionId: row.session_id, ...peekedAccess(row) } : undefined;
}
