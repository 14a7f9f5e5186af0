import { rawQuery, type Db } from '../client';

export interface AccessRow {
  keyId: string;
  customerId: string;
  userId: string;
  userDisabled: boolean;
  planExpiresAt: Date | null;
  /** Decided by the database clock, the same clock as the rate limit. */
  planExpired: boolean;
  /** Null when the user is disabled: a refused caller does not draw from the bucket. */
  allowed: boolean | null;
  tokensLeft: number | null;
}

/**
 * One atomic statement per request: finds the live key with its user and customer, draws one token
 * from the key's bucket (refilled continuously at `perMinute`, capped at `perMinute`), and touches
 * `last_used_at` at most once a minute. The bucket row lock serialises concurrent requests of one
 * key across every instance, so the limit holds however many gateways and cores there are.
 */
// The bucket, refilled continuously up to its capacity ($2 per minute). `excluded.updated_at` is
// this request's clock reading. A request that waited for the row lock read the clock before the
// request that held it, so elapsed time is floored at zero and the bucket's time never moves back.
export const REFILLED = `least($2::float8, b.tokens + greatest(0, extract(epoch from (excluded.updated_at - b.updated_at))) * ($2::float8 / 60))`;

const AUTHENTICATE_AND_METER = `
  with k as (
    select k.id as key_id, k.customer_id, k.user_id, u.disabled_at is not null as user_disabled, c.plan_expires_at,
      coalesce(c.plan_expires_at <= clock_timestamp(), false) as plan_expired
    from api_keys k
    join users u on u.id = k.user_id
    join customers c on c.id = k.customer_id
    where k.key_hash = $1 and k.revoked_at is null
  ),
  bucket as (
    insert into rate_limit_buckets as b (bucket_key, tokens, updated_at, allowed)
    select key_id, $2::float8 - 1, clock_timestamp(), true from k where not user_disabled
    on conflict (bucket_key) do update set
      tokens = case when ${REFILLED} >= 1 then ${REFILLED} - 1 else ${REFILLED} end,
      allowed = ${REFILLED} >= 1,
      updated_at = greatest(b.updated_at, excluded.updated_at)
    returning tokens, allowed
  ),
  touched as (
    update api_keys set last_used_at = clock_timestamp()
    from k
    where api_keys.id = k.key_id and not k.user_disabled
      and (api_keys.last_used_at is null or api_keys.last_used_at < clock_timestamp() - interval '1 minute')
    returning 1
  )
  select k.*, bucket.allowed, bucket.tokens from k left join bucket on true`;

/**
 * One atomic statement per request: finds the live key with its user and customer, draws one token
 * from the key's bucket, and touches `last_used_at` at most once a minute. The bucket row lock
 * serialises concurrent requests of one key across every instance, so the limit holds however many
 * gateways and cores there are. Fixed text, so it is planned once per connection and built never.
 */
export async function authenticateAndMeter(db: Db, keyHash: string, perMinute: number): Promise<AccessRow | undefined> {
  const rows = await rawQuery<MeteredRow & { key_id: string }>(db, AUTHENTICATE_AND_METER, [keyHash, perMinute]);
  const row = rows[0];
  return row ? { keyId: row.key_id, ...meteredAccess(row) } : undefined;
}

/** The columns every authenticate-and-meter statement returns, whatever the credential. */
export interface MeteredRow {
  customer_id: string;
  user_id: string;
  user_disabled: boolean;
  plan_expires_at: string | Date | null;
  plan_expired: boolean;
  allowed: boolean | null;
  tokens: number | string | null;
}

export function meteredAccess(row: MeteredRow): Omit<AccessRow, 'keyId'> {
  return {
    customerId: row.customer_id,
    userId: row.user_id,
    userDisabled: row.user_disabled,
    planExpiresAt: row.plan_expires_at === null ? null : new Date(row.plan_expires_at),
    planExpired: row.plan_expired,
    allowed: row.allowed,
    tokensLeft: row.tokens === null ? null : Number(row.tokens),
  };
}

/** Seconds until one token is back, never less than 1 (Retry-After is a whole number). */
export function retryAfterSeconds(tokensLeft: number, perMinute: number): number {
  return Math.max(1, Math.ceil(((1 - tokensLeft) * 60) / perMinute));
}

const KEY_ADMITTED = `
  select 1 from api_keys k join users u on u.id = k.user_id
  where k.id = $1 and k.revoked_at is null and u.disabled_at is null`;
const SESSION_ADMITTED = `
  select 1 from console_sessions s join users u on u.id = s.user_id
  where s.id = $1 and s.expires_at > clock_timestamp() and s.absolute_expires_at > clock_timestamp() and u.disabled_at is null`;

/**
 * Whether a caller authenticated earlier is still admitted: the key not revoked (or the console
 * session not ended or expired) and the user not disabled. For calls that outlive the request that
 * authenticated them, the event stream; it draws nothing from the rate limit.
 */
export async function credentialAdmitted(db: Db, credential: { apiKeyId: string } | { sessionId: string }): Promise<boolean> {
  const rows = 'sessionId' in credential ? await rawQuery(db, SESSION_ADMITTED, [credential.sessionId]) : await rawQuery(db, KEY_ADMITTED, [credential.apiKeyId]);
  return rows.length > 0;
}
