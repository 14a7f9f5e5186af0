import { and, eq, sql } from 'drizzle-orm';
import { queryRows, type Executor } from '../client';
import { idempotencyKeys } from '../schema';

const PURGE_CHANCE = 0.01;

/**
 * A claim still without a response after this long belongs to a request whose process died before
 * it could answer or free the key: the next request with the key may take it over.
 */
export const ABANDONED_AFTER_MS = 10 * 60_000;

export type IdempotencyClaim = { claimed: true } | { claimed: false; fingerprint: string; response: string | null };

/**
 * Claims a key for a request, atomically: the first claim (or one after the key expired) wins and
 * runs the request; every other sees the first one's fingerprint and, once stored, its response.
 */
export async function claimIdempotencyKey(
  db: Executor,
  q: { customerId: string; key: string; fingerprint: string; ttlMs: number },
): Promise<IdempotencyClaim> {
  const claimed = await queryRows<{ key: string }>(
    db,
    sql`insert into idempotency_keys (customer_id, key, fingerprint)
        values (${q.customerId}, ${q.key}, ${q.fingerprint})
        on conflict (customer_id, key) do update set fingerprint = excluded.fingerprint, response = null, created_at = now()
          where idempotency_keys.created_at < now() - ${q.ttlMs} * interval '1 millisecond'
            or (idempotency_keys.response is null and idempotency_keys.created_at < now() - ${ABANDONED_AFTER_MS} * interval '1 millisecond')
        returning key`,
  );
  if (claimed.length > 0) {
    // Now and then, keys past their time are cleared out; each one is also replaced when reused.
    if (Math.random() < PURGE_CHANCE)
      await db.delete(idempotencyKeys).where(sql`${idempotencyKeys.createdAt} < now() - ${q.ttlMs} * interval '1 millisecond'`);
    return { claimed: true };
  }
  const [row] = await db
    .select({ fingerprint: idempotencyKeys.fingerprint, response: idempotencyKeys.response })
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.customerId, q.customerId), eq(idempotencyKeys.key, q.key)));
  // Released between the insert and this read: the caller may simply try again.
  return row ? { claimed: false, ...row } : { claimed: false, fingerprint: q.fingerprint, response: null };
}

export async function storeIdempotentResponse(db: Executor, customerId: string, key: string, response: string): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ response })
    .where(and(eq(idempotencyKeys.customerId, customerId), eq(idempotencyKeys.key, key)));
}

/** A failed request leaves its key free, so the corrected request can use it. */
export async function releaseIdempotencyKey(db: Executor, customerId: string, key: string): Promise<void> {
  await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.customerId, customerId), eq(idempotencyKeys.key, key)));
}
