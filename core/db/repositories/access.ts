import { Batcher } from '../batcher';
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

// The bucket, refilled continuously up to its capacity ($2 per minute). `excluded.updated_at` is
// this statement's clock reading. A statement that waited for the row lock read the clock before
// the one that held it, so elapsed time is floored at zero and the bucket's time never moves back.
const REFILLED = `least($2::float8, b.tokens + greatest(0, extract(epoch from (excluded.updated_at - b.updated_at))) * ($2::float8 / 60))`;

/**
 * The one rule of the token bucket, for every credential: an insert of (bucket_key, tokens, drawn,
 * updated_at) that draws `wanted` tokens. A new bucket starts full; an existing one gives as many
 * whole tokens as it holds, up to `wanted`. `drawn` carries `wanted` into the conflict branch and
 * comes back as what was given.
 */
export function bucketDraw(wanted: string): { values: string; onConflict: string } {
  const capped = `least(${wanted}, floor($2::float8))`;
  return {
    values: `$2::float8 - ${capped}, ${capped}::int, clock_timestamp()`,
    onConflict: `on conflict (bucket_key) do update set
      drawn = least(excluded.drawn, floor(${REFILLED}))::int,
      tokens = ${REFILLED} - least(excluded.drawn, floor(${REFILLED})),
      updated_at = greatest(b.updated_at, excluded.updated_at)
    returning bucket_key, tokens, drawn`,
  };
}

const KEY_DRAW = bucketDraw('wanted');

// $1: the distinct key hashes, $3: how many requests each has in this statement.
const AUTHENTICATE_AND_METER_KEYS = `
  with k as (
    select r.key_hash, r.wanted, k.id as key_id, k.customer_id, k.user_id, u.disabled_at is not null as user_disabled, c.plan_expires_at,
      coalesce(c.plan_expires_at <= clock_timestamp(), false) as plan_expired,
      k.last_used_at is null or k.last_used_at < clock_timestamp() - interval '1 minute' as unused_lately
    from unnest($1::text[], $3::int4[]) as r(key_hash, wanted)
    -- Planned generically for about ten hashes: at 20,000 keys that is a probe of the hash index each;
    -- only a table a few pages long is scanned instead, where a scan is the cheaper plan.
    join api_keys k on k.key_hash = r.key_hash and k.revoked_at is null
    join users u on u.id = k.user_id
    join customers c on c.id = k.customer_id
  ),
  bucket as (
    insert into rate_limit_buckets as b (bucket_key, tokens, drawn, updated_at)
    select key_id, ${KEY_DRAW.values} from k where not user_disabled
    -- Every statement locks its buckets in one order, so two statements sharing keys cannot deadlock.
    order by key_id
    ${KEY_DRAW.onConflict}
  ),
  touched as (
    -- Best effort, at most once a minute: a row another statement holds is left to a later one.
    update api_keys set last_used_at = clock_timestamp()
    where id in (
      select a.id from api_keys a
      where a.id in (select key_id from k where unused_lately and not user_disabled)
      order by a.id
      for update skip locked)
    returning 1
  )
  select k.key_hash, k.key_id, k.customer_id, k.user_id, k.user_disabled, k.plan_expires_at, k.plan_expired, bucket.drawn, bucket.tokens
  from k left join bucket on bucket.bucket_key = k.key_id`;

/**
 * One atomic statement for a batch of requests: finds each live key with its user and customer,
 * draws from each key's bucket (refilled continuously at `perMinute`, capped at `perMinute`) one
 * token per request of that key, and touches `last_used_at` at most once a minute. The bucket row
 * lock serialises the statements drawing from one key across every instance, so the limit holds
 * however many gateways and cores there are. Answers each hash in the order given, and the requests
 * of one key are served in that order. Fixed text, so it is planned once per connection.
 */
export async function authenticateAndMeterKeys(
  db: Db,
  keyHashes: readonly string[],
  perMinute: number,
): Promise<Array<AccessRow | undefined>> {
  const wanted = new Map<string, number>();
  for (const hash of keyHashes) wanted.set(hash, (wanted.get(hash) ?? 0) + 1);
  const rows = await rawQuery<MeteredRow & { key_hash: string; key_id: string }>(db, AUTHENTICATE_AND_METER_KEYS, [
    [...wanted.keys()],
    perMinute,
    [...wanted.values()],
  ]);
  const rowOf = new Map(rows.map((row) => [row.key_hash, row]));
  const served = new Map<string, number>();
  return keyHashes.map((hash) => {
    const row = rowOf.get(hash);
    if (!row) return undefined;
    const position = served.get(hash) ?? 0;
    served.set(hash, position + 1);
    return { keyId: row.key_id, ...meteredAccess(row, position) };
  });
}

// One statement in flight per process, as in a group commit: the next batch gathers while it runs.
// Two in flight drew from the same hot bucket at once, and the second then waited on the first's
// row lock: measured on GET /v1/seats, that cost Postgres up to 40 µs of CPU per request more. 256
// keeps a statement's arrays small. A statement normally takes a few milliseconds; one still
// running after a second lets the next batch start beside it.
const METER_BATCHING = { maxBatch: 256, maxInFlight: 1, stallMs: 1_000 };

/**
 * Authenticates and meters API keys with one statement per batch of concurrent requests (see
 * ../batcher): under load, every request waiting shares one authentication and rate-limit write.
 */
export function apiKeyMeter(db: Db, perMinute: number): (keyHash: string) => Promise<AccessRow | undefined> {
  const batcher = new Batcher<string, AccessRow | undefined>((hashes) => authenticateAndMeterKeys(db, hashes, perMinute), METER_BATCHING);
  return (keyHash) => batcher.call(keyHash);
}

/** The columns every authenticate-and-meter statement returns, whatever the credential. */
export interface MeteredRow {
  customer_id: string;
  user_id: string;
  user_disabled: boolean;
  plan_expires_at: string | Date | null;
  plan_expired: boolean;
  /** Tokens the statement gave the credential's requests; null when the user is disabled. */
  drawn: number | null;
  tokens: number | string | null;
}

/** The access of the request at `position` (0-based, arrival order) among its statement's requests of one credential. */
export function meteredAccess(row: MeteredRow, position: number): Omit<AccessRow, 'keyId'> {
  return { ...callerOf(row), ...shareOfDraw(row.drawn, row.tokens === null ? null : Number(row.tokens), position) };
}

/** Who the credential belongs to and the state of its user and plan, as both the draw and the peek read them. */
function callerOf(row: Omit<MeteredRow, 'drawn' | 'tokens'>): Omit<AccessRow, 'keyId' | 'allowed' | 'tokensLeft'> {
  return {
    customerId: row.customer_id,
    userId: row.user_id,
    userDisabled: row.user_disabled,
    planExpiresAt: row.plan_expires_at === null ? null : new Date(row.plan_expires_at),
    planExpired: row.plan_expired,
  };
}

/**
 * Shares what one statement drew among its requests of one bucket, in order: the first `drawn` are
 * let through, each seeing the tokens its successors will still take; the rest are refused and see
 * what the bucket holds.
 */
export function shareOfDraw(drawn: number | null, tokensAfter: number | null, position: number): Pick<AccessRow, 'allowed' | 'tokensLeft'> {
  if (drawn === null || tokensAfter === null) return { allowed: null, tokensLeft: null };
  return position < drawn
    ? { allowed: true, tokensLeft: tokensAfter + (drawn - position - 1) }
    : { allowed: false, tokensLeft: tokensAfter };
}

/**
 * What a bucket holds now, refilled by the same rule as a draw but written nowhere ($2 per minute):
 * a bucket never drawn from is full. For a look that must not spend the token it checks.
 */
export const TOKENS_NOW = `least($2::float8, coalesce(b.tokens + greatest(0, extract(epoch from (clock_timestamp() - b.updated_at))) * ($2::float8 / 60), $2::float8))`;

const PEEK_KEY = `
  select k.id as key_id, k.customer_id, k.user_id, u.disabled_at is not null as user_disabled, c.plan_expires_at,
    coalesce(c.plan_expires_at <= clock_timestamp(), false) as plan_expired, ${TOKENS_NOW} as tokens
  from api_keys k
  join users u on u.id = k.user_id
  join customers c on c.id = k.customer_id
  left join rate_limit_buckets b on b.bucket_key = k.id
  where k.key_hash = $1 and k.revoked_at is null`;

/** The access of a request that draws nothing: let through while the bucket holds a whole token. */
export function peekedAccess(row: Omit<MeteredRow, 'drawn'>): Omit<AccessRow, 'keyId'> {
  const tokens = row.tokens === null ? null : Number(row.tokens);
  return {
    ...callerOf(row),
    allowed: row.user_disabled || tokens === null ? null : tokens >= 1,
    tokensLeft: row.user_disabled ? null : tokens,
  };
}

/**
 * Authenticates an API key as authenticateAndMeterKeys does, without drawing from its bucket or
 * touching the key: for the check before a write, which draws itself. One statement, unbatched:
 * it runs once per upload, not once per request.
 */
export async function peekKey(db: Db, keyHash: string, perMinute: number): Promise<AccessRow | undefined> {
  const [row] = await rawQuery<Omit<MeteredRow, 'drawn'> & { key_id: string }>(db, PEEK_KEY, [keyHash, perMinute]);
  return row ? { keyId: row.key_id, ...peekedAccess(row) } : undefined;
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
  const rows =
    'sessionId' in credential
      ? await rawQuery(db, SESSION_ADMITTED, [credential.sessionId])
      : await rawQuery(db, KEY_ADMITTED, [credential.apiKeyId]);
  return rows.length > 0;
}
