/**
 * The sign-in throttle's rows (see ../../sign-in/throttle.ts for the rule): a try's two
 * buckets are read and drawn under their row locks in one transaction, so concurrent tries on
 * every instance draw one token each, and the database's clock is the only clock.
 */
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../client';
import {
  admit,
  KNOWN_ADDRESS_TTL_MS,
  refilled,
  type Admission,
  type BucketSettings,
  type SignInThrottleSettings,
  throttleKeys,
} from '../../sign-in/throttle';

type Keys = ReturnType<typeof throttleKeys>;

interface BucketRow {
  bucket_key: string;
  tokens: number | string;
  elapsed_ms: number | string;
}

/**
 * Judges one try and, when it may go on, draws its tokens. Both rows are created full if missing
 * and then locked, always in key order, so two transactions sharing a bucket cannot deadlock. A
 * refused try writes nothing: its buckets refill as if it had not come.
 */
export async function admitSignIn(db: Db, keys: Keys, settings: SignInThrottleSettings): Promise<Admission> {
  const buckets: Array<[string, BucketSettings]> = [
    [keys.address, settings.address],
    [keys.account, settings.account],
  ];
  buckets.sort(([a], [b]) => (a < b ? -1 : 1));
  return db.transaction(async (tx) => {
    for (const [key, bucket] of buckets) {
      await tx.execute(
        sql`insert into sign_in_buckets (bucket_key, tokens, updated_at) values (${key}, ${bucket.burst}, clock_timestamp())
            on conflict (bucket_key) do nothing`,
      );
    }
    const rows = await queryRows<BucketRow>(
      tx,
      sql`select bucket_key, tokens, extract(epoch from (clock_timestamp() - updated_at)) * 1000 as elapsed_ms
          from sign_in_buckets where bucket_key in (${buckets[0]![0]}, ${buckets[1]![0]})
          order by bucket_key for update`,
    );
    const now = new Map(rows.map((r) => [r.bucket_key, r]));
    const state = (key: string, bucket: BucketSettings) => {
      const row = now.get(key);
      // Created just above, in this transaction: it cannot be missing.
      if (!row) throw new Error(`sign-in bucket ${key} vanished inside its transaction`);
      return { tokens: refilled(Number(row.tokens), Number(row.elapsed_ms), bucket) };
    };
    const address = state(keys.address, settings.address);
    const account = state(keys.account, settings.account);
    const [known] = await queryRows<{ known: number }>(
      tx,
      sql`select 1 as known from sign_in_known_addresses
          where key = ${keys.known} and signed_in_at > clock_timestamp() - ${KNOWN_ADDRESS_TTL_MS}::float8 * interval '1 millisecond'`,
    );
    const admission = admit({ address, account, known: known !== undefined }, settings);
    if (!admission.admitted) return admission;
    const draws: Array<[string, number]> = [[keys.address, address.tokens - 1]];
    if (admission.drawsAccount) draws.push([keys.account, account.tokens - 1]);
    for (const [key, tokens] of draws) {
      await tx.execute(sql`update sign_in_buckets set tokens = ${tokens}, updated_at = clock_timestamp() where bucket_key = ${key}`);
    }
    return admission;
  });
}

/**
 * After the right password: the address's bucket is full again (its failures are forgiven), the
 * account's token is given back if the try drew one, and the address group becomes known for the
 * account.
 */
export async function recordSignInSuccess(db: Db, keys: Keys, settings: SignInThrottleSettings, drewAccount: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    if (drewAccount) {
      await tx.execute(
        sql`update sign_in_buckets
            set tokens = least(${settings.account.burst}::float8,
                  tokens + 1 + greatest(0, extract(epoch from (clock_timestamp() - updated_at)) * 1000) / ${settings.account.refillMs}::float8),
                updated_at = clock_timestamp()
            where bucket_key = ${keys.account}`,
      );
    }
    // A full bucket is no row at all.
    await tx.execute(sql`delete from sign_in_buckets where bucket_key = ${keys.address}`);
    await tx.execute(
      sql`insert into sign_in_known_addresses (key, signed_in_at) values (${keys.known}, clock_timestamp())
          on conflict (key) do update set signed_in_at = excluded.signed_in_at`,
    );
  });
}

/** Rows swept per call: sign-ins sweep as they go, so each call has little to do. */
const SWEEP_BATCH = 100;

/**
 * Deletes buckets untouched long enough to be full again, and known addresses past their time, a
 * batch at a time, skipping rows a try holds: the tables stay as small as the recent traffic, and
 * guesses at many unknown e-mails leave nothing behind for long.
 */
export async function sweepSignInRows(db: Db, settings: SignInThrottleSettings): Promise<void> {
  const fullAfterMs = Math.max(settings.address.burst * settings.address.refillMs, settings.account.burst * settings.account.refillMs);
  await db.execute(
    sql`delete from sign_in_buckets where bucket_key in (
          select bucket_key from sign_in_buckets
          where updated_at < clock_timestamp() - ${fullAfterMs}::float8 * interval '1 millisecond'
          limit ${SWEEP_BATCH} for update skip locked)`,
  );
  await db.execute(
    sql`delete from sign_in_known_addresses where key in (
          select key from sign_in_known_addresses
          where signed_in_at < clock_timestamp() - ${KNOWN_ADDRESS_TTL_MS}::float8 * interval '1 millisecond'
          limit ${SWEEP_BATCH} for update skip locked)`,
  );
}
