/**
 * Batched intake on the real Postgres: events recorded together are written in one transaction, yet
 * each keeps its own outcome: one stored event per source key, positions in the order recorded,
 * and an event the database refuses fails alone.
 */
import { asc, eq } from 'drizzle-orm';
import { bindSeat, findSeatsByAccounts, insertSeat } from '../../core/db/repositories/seats';
import { events } from '../../core/db/schema';
import { createTenant, messageEvent, startStack, type Stack } from '../helpers/stack';

describe('event intake', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ taskQueue: `vps-intake-${process.pid}-${Date.now()}` });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  const message = messageEvent;

  it('stores each source key once, even when the same push arrives twice in one batch, with positions in the order recorded', async () => {
    const tenant = await createTenant(stack);
    const inputs = Array.from({ length: 60 }, (_, n) => message(tenant, n, `intake-${tenant.customerId}-${n % 40}`));
    const results = await Promise.all(inputs.map((input) => stack.events.record(input)));
    expect(results.filter((r) => r.created)).toHaveLength(40);
    // A repeat gets the event its first push stored.
    for (let n = 40; n < 60; n++) expect(results[n]!.event.id).toBe(results[n - 40]!.event.id);
    const stored = await stack.database.db
      .select()
      .from(events)
      .where(eq(events.customerId, tenant.customerId))
      .orderBy(asc(events.position));
    expect(stored.map((e) => (e.data as { n: number }).n)).toEqual(Array.from({ length: 40 }, (_, n) => n));
  });

  it('looks up the seats of pushes that arrive together in one statement, each account to its own customer’s seat', async () => {
    const db = stack.database.db;
    const bound = [];
    for (const tenant of [await createTenant(stack), await createTenant(stack)]) {
      const seat = await insertSeat(db, { customerId: tenant.customerId, name: 'intake', track: 'video' });
      const accountId = `intake-account-${seat.id}`;
      await bindSeat(db, seat.id, {
        accountId,
        accountUsername: accountId,
        credentialsSealed: null,
        accessTokenExpiresAt: null,
        refreshTokenExpiresAt: null,
      });
      bound.push({ accountId, seatId: seat.id, customerId: tenant.customerId });
    }
    const [x, y] = bound;
    const found = await findSeatsByAccounts(db, 'video', [y!.accountId, 'intake-account-nobody', x!.accountId, y!.accountId]);
    expect(found.map((seat) => seat && { seatId: seat.id, customerId: seat.customerId })).toEqual([
      { seatId: y!.seatId, customerId: y!.customerId },
      undefined,
      { seatId: x!.seatId, customerId: x!.customerId },
      { seatId: y!.seatId, customerId: y!.customerId },
    ]);
    // The shop track's seats are other seats: the same accounts hold none there.
    expect(await findSeatsByAccounts(db, 'shop', [x!.accountId])).toEqual([undefined]);
  });

  it('fails only the event the database refuses, not the others written with it', async () => {
    const tenant = await createTenant(stack);
    const good = Array.from({ length: 10 }, (_, n) => message(tenant, n, null));
    // Postgres cannot hold a NUL character in jsonb text.
    const bad = message(tenant, 99, null, 'nul \u0000 inside');
    const outcomes = await Promise.allSettled([...good.slice(0, 5), bad, ...good.slice(5)].map((input) => stack.events.record(input)));
    expect(outcomes.map((o) => o.status)).toEqual([...Array(5).fill('fulfilled'), 'rejected', ...Array(5).fill('fulfilled')]);
    const stored = await stack.database.db.select().from(events).where(eq(events.customerId, tenant.customerId));
    expect(stored).toHaveLength(10);
  });
});
