import { and, asc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../client';
import { apiKeys, customers, users } from '../schema';
import { newId } from '../../ids';
import { notifyCredentialsWithdrawn } from './credential-notices';

export type CustomerRow = typeof customers.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function insertCustomer(
  db: Executor,
  input: { name: string; seatQuota: number; planExpiresAt: Date | null },
): Promise<CustomerRow> {
  const [row] = await db
    .insert(customers)
    .values({ id: newId('cus'), ...input })
    .returning();
  return row!;
}

export async function findCustomer(db: Executor, id: string): Promise<CustomerRow | undefined> {
  const [row] = await db.select().from(customers).where(eq(customers.id, id));
  return row;
}

export async function listCustomers(db: Executor): Promise<CustomerRow[]> {
  return db.select().from(customers).orderBy(asc(customers.id));
}

/** Serialises writes that check a per-customer limit, until the transaction ends. */
export async function lockCustomer(db: Executor, id: string): Promise<void> {
  await db.select({ id: customers.id }).from(customers).where(eq(customers.id, id)).for('update');
}

export async function updateCustomer(
  db: Executor,
  id: string,
  patch: Partial<Pick<CustomerRow, 'name' | 'seatQuota' | 'planExpiresAt'>>,
): Promise<CustomerRow | undefined> {
  if (Object.keys(patch).length === 0) return findCustomer(db, id);
  const [row] = await db.update(customers).set(patch).where(eq(customers.id, id)).returning();
  return row;
}

/** Returns undefined when the e-mail is taken (case-insensitively). */
export async function insertUser(db: Executor, input: { customerId: string; email: string; name: string }): Promise<UserRow | undefined> {
  const [row] = await db
    .insert(users)
    .values({ id: newId('usr'), ...input })
    .onConflictDoNothing()
    .returning();
  return row;
}

export async function findUser(db: Executor, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id));
  return row;
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`);
  return row;
}

export async function listUsers(db: Executor, customerId: string): Promise<UserRow[]> {
  return db.select().from(users).where(eq(users.customerId, customerId)).orderBy(asc(users.id));
}

export async function setUserDisabled(db: Executor, id: string, disabled: boolean): Promise<UserRow | undefined> {
  // Keeps the first disable time when asked twice.
  const [row] = await db
    .update(users)
    .set({ disabledAt: disabled ? sql`coalesce(${users.disabledAt}, now())` : null })
    .where(eq(users.id, id))
    .returning();
  if (row && disabled) await notifyCredentialsWithdrawn(db, row.customerId);
  return row;
}

export async function insertApiKey(
  db: Executor,
  input: { customerId: string; userId: string; name: string; prefix: string; keyHash: string },
): Promise<ApiKeyRow> {
  const [row] = await db
    .insert(apiKeys)
    .values({ id: newId('key'), ...input })
    .returning();
  return row!;
}

export async function listApiKeys(db: Executor, customerId: string, userId?: string): Promise<ApiKeyRow[]> {
  const filter = userId ? and(eq(apiKeys.customerId, customerId), eq(apiKeys.userId, userId)) : eq(apiKeys.customerId, customerId);
  return db.select().from(apiKeys).where(filter).orderBy(asc(apiKeys.id));
}

/** Revoking twice keeps the first revocation time. */
export async function revokeApiKey(db: Executor, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(eq(apiKeys.id, id))
    .returning();
  if (row) await notifyCredentialsWithdrawn(db, row.customerId);
  return row;
}
