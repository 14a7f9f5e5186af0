import { and, asc, count, eq, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { queryRows, rawQuery, type Db, type Executor } from '../client';
import { rowReader } from '../row-reader';
import { customers, seats, type SeatTrack } from '../schema';
import { newId } from '../../ids';

export type SeatRow = typeof seats.$inferSelect;

const readSeat = rowReader(seats);
const SEATS_OF_CUSTOMER = 'select * from seats where customer_id = $1 order by id';

/** On the path of GET /v1/seats: fixed text, prepared once per connection, rows read without drizzle's per-row checks. */
export async function listSeatsOfCustomer(db: Db, customerId: string): Promise<SeatRow[]> {
  return (await rawQuery<Record<string, unknown>>(db, SEATS_OF_CUSTOMER, [customerId])).map(readSeat);
}

export async function findSeat(db: Executor, id: string): Promise<SeatRow | undefined> {
  const [row] = await db.select().from(seats).where(eq(seats.id, id));
  return row;
}

/** Locks the customer row so that concurrent creations cannot both pass the quota check. */
export async function countSeatsForUpdate(db: Executor, customerId: string): Promise<{ quota: number; used: number } | undefined> {
  const [customer] = await db.select({ quota: customers.seatQuota }).from(customers).where(eq(customers.id, customerId)).for('update');
  if (!customer) return undefined;
  const [used] = await db.select({ n: count() }).from(seats).where(eq(seats.customerId, customerId));
  return { quota: customer.quota, used: used?.n ?? 0 };
}

export async function insertSeat(db: Executor, input: { customerId: string; name: string; track: SeatTrack }): Promise<SeatRow> {
  const [row] = await db
    .insert(seats)
    .values({ id: newId('seat'), ...input })
    .returning();
  return row!;
}

/**
 * The caller's seat that holds an account, named by its account id or, where the platform has
 * one, its username; on one track, or on either when the caller's purpose does not fix the track.
 * Undefined when none of the caller's seats holds it.
 */
export async function findCustomerSeatByAccount(
  db: Executor,
  customerId: string,
  account: string,
  track?: SeatTrack,
): Promise<SeatRow | undefined> {
  const [row] = await db
    .select()
    .from(seats)
    .where(
      and(
        eq(seats.customerId, customerId),
        isNotNull(seats.accountId),
        track ? eq(seats.track, track) : undefined,
        or(eq(seats.accountId, account), eq(seats.accountUsername, account)),
      ),
    )
    .orderBy(asc(seats.id))
    .limit(1);
  return row;
}

/** On the path of every platform webhook (and of binding, in its transaction): rows read without drizzle's per-row checks. */
export async function findSeatByAccount(db: Executor, track: SeatTrack, accountId: string): Promise<SeatRow | undefined> {
  const [row] = await queryRows<Record<string, unknown>>(
    db,
    sql`select * from seats where platform = 'vplat' and track = ${track} and account_id = ${accountId}`,
  );
  return row ? readSeat(row) : undefined;
}

const SEATS_OF_ACCOUNTS = "select * from seats where platform = 'vplat' and track = $1 and account_id = any($2::text[])";

/**
 * The seats holding each of `accountIds` on `track`, in the order given (undefined where none
 * does): one statement for a batch of platform webhooks (see ingest.service.ts).
 */
export async function findSeatsByAccounts(db: Db, track: SeatTrack, accountIds: readonly string[]): Promise<Array<SeatRow | undefined>> {
  const rows = (await rawQuery<Record<string, unknown>>(db, SEATS_OF_ACCOUNTS, [track, [...new Set(accountIds)]])).map(readSeat);
  const byAccount = new Map(rows.map((row) => [row.accountId, row]));
  return accountIds.map((id) => byAccount.get(id));
}

/**
 * Binds the account unless the seat holds another one: the condition is in the UPDATE itself, so
 * of two concurrent binds of different accounts only one can match. Undefined means the seat is
 * taken (rule 1008) or gone.
 */
export async function bindSeat(
  db: Executor,
  id: string,
  binding: Pick<SeatRow, 'accountId' | 'accountUsername' | 'credentialsSealed' | 'accessTokenExpiresAt' | 'refreshTokenExpiresAt'> & {
    accountId: string;
  },
): Promise<SeatRow | undefined> {
  const [row] = await db
    .update(seats)
    .set({ ...binding, boundAt: new Date(), authorizationStatus: 'active' })
    .where(and(eq(seats.id, id), or(isNull(seats.accountId), eq(seats.accountId, binding.accountId))))
    .returning();
  return row;
}

export async function unbindSeat(db: Executor, id: string): Promise<SeatRow | undefined> {
  const [row] = await db
    .update(seats)
    .set({
      accountId: null,
      accountUsername: null,
      boundAt: null,
      credentialsSealed: null,
      accessTokenExpiresAt: null,
      refreshTokenExpiresAt: null,
      authorizationStatus: 'unbound',
    })
    .where(eq(seats.id, id))
    .returning();
  return row;
}

/** Bound seats, for starting their token refresh on start-up. */
export async function listBoundSeatIds(db: Executor): Promise<string[]> {
  const rows = await db.select({ id: seats.id }).from(seats).where(isNotNull(seats.accountId));
  return rows.map((r) => r.id);
}

/**
 * Stores refreshed credentials, but only while the seat still holds the account they belong to:
 * a refresh racing an unbind or a rebind must not resurrect or overwrite a binding.
 */
export async function replaceSeatCredentials(
  db: Executor,
  id: string,
  accountId: string,
  update: Pick<SeatRow, 'credentialsSealed' | 'accessTokenExpiresAt' | 'refreshTokenExpiresAt'>,
): Promise<boolean> {
  const rows = await db
    .update(seats)
    .set({ ...update, authorizationStatus: 'active' })
    .where(and(eq(seats.id, id), eq(seats.accountId, accountId)))
    .returning({ id: seats.id });
  return rows.length > 0;
}

/** The platform refused the seat's credentials: publishing fails with a clear message until reconnected. */
export async function markReauthorizationRequired(db: Executor, id: string, accountId: string): Promise<void> {
  await db
    .update(seats)
    .set({ authorizationStatus: 'reauthorization_required' })
    .where(and(eq(seats.id, id), eq(seats.accountId, accountId)));
}

/**
 * Up to `limit` seats after `afterId` (by id) whose sealed credentials do not start with `prefix`,
 * the start of what the current key seals: the re-seal sweep's pages.
 */
export async function seatCredentialsNotUnder(
  db: Executor,
  prefix: string,
  afterId: string,
  limit: number,
): Promise<Array<{ id: string; credentialsSealed: string }>> {
  const rows = await db
    .select({ id: seats.id, credentialsSealed: seats.credentialsSealed })
    .from(seats)
    .where(
      and(
        isNotNull(seats.credentialsSealed),
        sql`left(${seats.credentialsSealed}, ${prefix.length}) <> ${prefix}`,
        sql`${seats.id} > ${afterId}`,
      ),
    )
    .orderBy(asc(seats.id))
    .limit(limit);
  return rows as Array<{ id: string; credentialsSealed: string }>;
}

/**
 * The same credentials sealed anew, stored only if the row still holds the value that was opened:
 * a refresh or a rebind meanwhile wrote newer ones, which win. True when stored.
 */
export async function replaceSealedCredentials(db: Executor, id: string, from: string, to: string): Promise<boolean> {
  const rows = await db
    .update(seats)
    .set({ credentialsSealed: to })
    .where(and(eq(seats.id, id), eq(seats.credentialsSealed, from)))
    .returning({ id: seats.id });
  return rows.length > 0;
}
