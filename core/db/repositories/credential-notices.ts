/**
 * Tells every core instance that one of a customer's credentials was withdrawn, on the event
 * stream channel (stream-channel.ts), so the customer's open streams check theirs at once. Sent
 * at commit when inside a transaction, so the check sees the withdrawal.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../client';
import { credentialsNotice, EVENTS_CHANNEL } from '../../events/stream-channel';

export async function notifyCredentialsWithdrawn(db: Executor, customerId: string): Promise<void> {
  await db.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${credentialsNotice(customerId)})`);
}
