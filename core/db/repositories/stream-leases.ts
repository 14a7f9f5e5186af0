/**
 * Leases of open event streams (see the `event_stream_leases` table): taken under a cap per
 * credential and per customer, renewed by the core that serves the stream, deleted when it ends.
 * Every time is the database's clock, so instances with drifting clocks agree on expiry.
 */
import { sql } from 'drizzle-orm';
import { queryRows, rawQuery, type Db } from '../client';

export interface StreamCaps {
  perCredential: number;
  perCustomer: number;
}

/** What a refused stream is told: which cap it met, and when the soonest lease of that scope lapses if not renewed. */
export interface LeaseRefusal {
  scope: 'credential' | 'customer';
  open: number;
  cap: number;
  /** Milliseconds until the soonest lease counted against the cap expires, if its stream has vanished. */
  soonestExpiryMs: number;
}

interface HeldRow {
  customer_streams: number;
  credential_streams: number;
  customer_soonest_ms: number | string | null;
  credential_soonest_ms: number | string | null;
  granted: number;
}

/**
 * Takes a lease for a new stream unless the credential or the customer already holds its cap of
 * live ones. A transaction-scoped advisory lock per customer makes count-then-insert atomic across
 * every instance: two streams opening at once on two gateways cannot both take the last slot. The
 * customer's lapsed leases (a crashed core's) are removed first, so they count no longer.
 */
export async function takeStreamLease(
  db: Db,
  lease: { id: string; customerId: string; credential: string; ttlMs: number },
  caps: StreamCaps,
): Promise<LeaseRefusal | undefined> {
  const { id, customerId, credential, ttlMs } = lease;
  return db.transaction(async (tx) => {
    // Its own statement: under READ COMMITTED the count below then sees every lease committed
    // before this lock was granted, which one statement's snapshot, taken before the lock, would not.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`event_stream_leases:${customerId}`}, 0))`);
    await tx.execute(sql`delete from event_stream_leases where customer_id = ${customerId} and expires_at <= clock_timestamp()`);
    const [held] = await queryRows<HeldRow>(
      tx,
      sql`with held as (
            select count(*)::int as customer_streams,
              (count(*) filter (where credential = ${credential}))::int as credential_streams,
              extract(epoch from (min(expires_at) - clock_timestamp())) * 1000 as customer_soonest_ms,
              extract(epoch from (min(expires_at) filter (where credential = ${credential}) - clock_timestamp())) * 1000 as credential_soonest_ms
            from event_stream_leases where customer_id = ${customerId}
          ),
          granted as (
            insert into event_stream_leases (id, customer_id, credential, expires_at)
            select ${id}, ${customerId}, ${credential}, clock_timestamp() + ${ttlMs}::float8 * interval '1 millisecond'
            from held where credential_streams < ${caps.perCredential} and customer_streams < ${caps.perCustomer}
            returning 1
          )
          select held.*, (select count(*) from granted)::int as granted from held`,
    );
    if (!held || held.granted === 1) return undefined;
    const byCredential = held.credential_streams >= caps.perCredential;
    return byCredential
      ? {
          scope: 'credential',
          open: held.credential_streams,
          cap: caps.perCredential,
          soonestExpiryMs: Number(held.credential_soonest_ms ?? 0),
        }
      : { scope: 'customer', open: held.customer_streams, cap: caps.perCustomer, soonestExpiryMs: Number(held.customer_soonest_ms ?? 0) };
  });
}

const RENEW = `update event_stream_leases set expires_at = clock_timestamp() + $2::float8 * interval '1 millisecond'
  where id = any($1::text[]) and expires_at > clock_timestamp()
  returning id`;
const DROP_LAPSED = 'delete from event_stream_leases where expires_at <= clock_timestamp()';

/**
 * Moves the expiry of the given leases to `ttlMs` from now and returns the ids still held: a lease
 * missing from the answer lapsed (its core could not renew it in time) and another instance may
 * have given its slot away. Also removes every lapsed lease, so customers who never come back do
 * not leave rows behind.
 */
export async function renewStreamLeases(db: Db, ids: readonly string[], ttlMs: number): Promise<Set<string>> {
  const rows = await rawQuery<{ id: string }>(db, RENEW, [[...ids], ttlMs]);
  await rawQuery(db, DROP_LAPSED, []);
  return new Set(rows.map((r) => r.id));
}

/** Ends a lease; ending it twice is not an error. */
export async function dropStreamLease(db: Db, id: string): Promise<void> {
  await db.execute(sql`delete from event_stream_leases where id = ${id}`);
}
