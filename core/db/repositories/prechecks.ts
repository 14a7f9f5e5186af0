import { and, eq, inArray, isNull, not, notInArray, sql } from 'drizzle-orm';
import { queryRows, type Db, type Executor } from '../client';
import { prechecks } from '../schema';
import { TERMINAL_PRECHECK_STATUSES, quotaDayOf } from '../../publishing/prechecks';

export type PrecheckRow = typeof prechecks.$inferSelect;
export type NewPrecheck = Omit<typeof prechecks.$inferInsert, 'quotaDay'>;

export type QuotaDecision = { accepted: true; row: PrecheckRow } | { accepted: false; used: number; at: Date };

/**
 * Pre-checks that use the account's daily quota: all of that UTC day except those that ended
 * without an official task id, i.e. the shop never accepted them (it refused them, or never
 * answered), as the shop itself counts only accepted submissions. Counted across customers: the
 * quota belongs to the account, which may have been bound elsewhere earlier that day.
 */
function countedOnDay(accountId: string, day: string) {
  return and(
    eq(prechecks.track, 'shop'),
    eq(prechecks.accountId, accountId),
    eq(prechecks.quotaDay, day),
    not(and(inArray(prechecks.status, ['failed', 'service_error']), isNull(prechecks.officialTaskId))!),
  );
}

/**
 * Stores a pre-check if the account has quota left today, in one transaction under a lock on the
 * account, so two concurrent requests cannot both take the last slot. The day is the database's
 * clock, read after the lock is held, so every instance counts the same day.
 */
export async function insertWithinQuota(db: Db, row: NewPrecheck, dailyQuota: number): Promise<QuotaDecision> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`precheck-quota:${row.accountId}`}))`);
    const [clock] = await queryRows<{ ms: string }>(tx, sql`select floor(extract(epoch from clock_timestamp()) * 1000)::text as ms`);
    const at = new Date(Number(clock!.ms));
    const day = quotaDayOf(at);
    const [counted] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(prechecks)
      .where(countedOnDay(row.accountId, day));
    const used = counted?.n ?? 0;
    if (used >= dailyQuota) return { accepted: false, used, at };
    const [inserted] = await tx
      .insert(prechecks)
      .values({ ...row, quotaDay: day })
      .returning();
    return { accepted: true, row: inserted! };
  });
}

export async function findPrecheck(db: Executor, id: string): Promise<PrecheckRow | undefined> {
  const [row] = await db.select().from(prechecks).where(eq(prechecks.id, id));
  return row;
}

/** The caller's pre-check; another customer's is not found. */
export async function findCustomerPrecheck(db: Executor, customerId: string, id: string): Promise<PrecheckRow | undefined> {
  const [row] = await db
    .select()
    .from(prechecks)
    .where(and(eq(prechecks.id, id), eq(prechecks.customerId, customerId)));
  return row;
}

export type PrecheckChange = Partial<
  Pick<PrecheckRow, 'status' | 'officialTaskId' | 'violation' | 'quality' | 'issues' | 'reason' | 'completedAt'>
>;

/**
 * Applies a change to a pre-check that has not ended; an ended one is returned as it stands, so a
 * late retry can never overwrite a verdict. Undefined only when the record does not exist.
 */
export async function updateOpenPrecheck(db: Executor, id: string, change: PrecheckChange): Promise<PrecheckRow | undefined> {
  const [row] = await db
    .update(prechecks)
    .set({ ...change, updatedAt: sql`now()` })
    .where(and(eq(prechecks.id, id), notInArray(prechecks.status, [...TERMINAL_PRECHECK_STATUSES])))
    .returning();
  return row ?? (await findPrecheck(db, id));
}
