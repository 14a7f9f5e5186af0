/**
 * Batched intake on the real Postgres: events recorded together are written in one transaction, yet
 * each keeps its own outcome: one stored event per source key, positions in the order recorded,
 * and an event the database refuses fails alone. The endpoints and seats intake keeps in memory
 * never route an event by what has changed in the database since.
 */
import { asc, eq } from 'drizzle-orm';
import { bindSeat, findSeatsByAccounts, insertSeat, unbindSeat } from '../../core/db/repositories/seats';
import { deleteEndpoint, insertEndpoint } from '../../core/db/repositories/webhook-endpoints';
import { customers, events, webhookEndpoints } from '../../core/db/schema';
import { SeatMovedError } from '../../core/events/recorder';
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

  it('routes by endpoints kept in memory, yet follows endpoints another process adds, disables, resubscribes and deletes', async () => {
    const db = stack.database.db;
    const tenant = await createTenant(stack);
    const record = async (n: number) => (await stack.events.record(message(tenant, n, null))).deliveries.map((d) => d.endpointId).sort();
    const endpoint = (eventTypes: string[]) =>
      insertEndpoint(db, {
        customerId: tenant.customerId,
        url: 'https://example.com/hook',
        eventTypes,
        signingKey: 'k',
        standardKey: null,
      });
    expect(await record(0)).toEqual([]);
    // Written straight to the database, as another process would: this recorder is told nothing.
    const a = await endpoint(['vplat.message.*']);
    expect(await record(1)).toEqual([a.id]);
    const b = await endpoint(['vplat.comment.*']);
    expect(await record(2)).toEqual([a.id]);
    await db
      .update(webhookEndpoints)
      .set({ eventTypes: ['*'] })
      .where(eq(webhookEndpoints.id, b.id));
    expect(await record(3)).toEqual([a.id, b.id].sort());
    await db.update(webhookEndpoints).set({ disabledAt: new Date() }).where(eq(webhookEndpoints.id, a.id));
    expect(await record(4)).toEqual([b.id]);
    await deleteEndpoint(db, tenant.customerId, b.id);
    expect(await record(5)).toEqual([]);
    // A column that does not route (the failing streak, written after pushes) leaves the routes kept.
    await db.update(webhookEndpoints).set({ disabledAt: null }).where(eq(webhookEndpoints.id, a.id));
    const version = async () => (await db.select().from(customers).where(eq(customers.id, tenant.customerId)))[0]!.routesVersion;
    const before = await version();
    await db.update(webhookEndpoints).set({ failingSince: new Date() }).where(eq(webhookEndpoints.id, a.id));
    expect(await version()).toBe(before);
    expect(await record(6)).toEqual([a.id]);
  });

  it('stores an event routed by a seat only while the seat still holds the account', async () => {
    const db = stack.database.db;
    const tenant = await createTenant(stack);
    const seat = await insertSeat(db, { customerId: tenant.customerId, name: 'moved', track: 'video' });
    const accountId = `intake-moved-${seat.id}`;
    const binding = { accountUsername: accountId, credentialsSealed: null, accessTokenExpiresAt: null, refreshTokenExpiresAt: null };
    await bindSeat(db, seat.id, { accountId, ...binding });
    const input = (n: number) => ({ ...message(tenant, n, null), seatId: seat.id });
    expect((await stack.events.record(input(0), { seatAccount: accountId })).created).toBe(true);
    await unbindSeat(db, seat.id);
    await expect(stack.events.record(input(1), { seatAccount: accountId })).rejects.toBeInstanceOf(SeatMovedError);
    // Bound again to another account: still not the one the event was routed by.
    await bindSeat(db, seat.id, { accountId: `${accountId}-other`, ...binding });
    await expect(stack.events.record(input(2), { seatAccount: accountId })).rejects.toBeInstanceOf(SeatMovedError);
    const stored = await db.select().from(events).where(eq(events.customerId, tenant.customerId));
    expect(stored.map((e) => (e.data as { n: number }).n)).toEqual([0]);
  });
});
