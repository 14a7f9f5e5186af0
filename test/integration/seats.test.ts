import { sql } from 'drizzle-orm';
import { ConnectError } from '@connectrpc/connect';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { queryRows } from '../../core/db/client';
import { call } from '../helpers/http';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack } from '../helpers/stack';

/** The spec code a core refusal carries, as an internal Connect client sees it. */
async function codeOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectError) return Number(err.metadata.get('vps-code'));
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('seats', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it("lists the caller's seats with their binding and track", async () => {
    const tenant = await createTenant(stack);
    const business = uniqueAccount('biz');
    const creator = uniqueAccount('creator');
    const video = await createBoundSeat(stack, tenant, Track.VIDEO, business);
    const shop = await createBoundSeat(stack, tenant, Track.SHOP, creator);
    const { seat: spare } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'spare' });

    const res = await call<{ items: Record<string, unknown>[] }>(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(res.body.code).toBe(0);
    expect(res.body.data.items).toEqual([
      expect.objectContaining({
        id: video.id,
        track: 'video',
        capabilityAccountId: business,
        bound: true,
        authorizationStatus: 'active',
        platform: 'vplat',
      }),
      expect.objectContaining({
        id: shop.id,
        track: 'shop',
        capabilityAccountId: creator,
        bound: true,
        accountUsername: `user_${creator}`,
      }),
      expect.objectContaining({ id: spare!.id, capabilityAccountId: null, bound: false, boundAt: null, authorizationStatus: 'unbound' }),
    ]);
  });

  it('never shows one customer the seats of another', async () => {
    const mine = await createTenant(stack);
    const theirs = await createTenant(stack);
    await createBoundSeat(stack, theirs, Track.VIDEO, uniqueAccount('biz'));
    const res = await call<{ items: unknown[] }>(stack.baseUrl, 'GET', '/v1/seats', { key: mine.apiKey });
    expect(res.body.data.items).toEqual([]);
  });

  it('refuses to bind an account that another seat holds with 1006, even across customers', async () => {
    const account = uniqueAccount('biz');
    const first = await createTenant(stack);
    await createBoundSeat(stack, first, Track.VIDEO, account);
    const second = await createTenant(stack);
    const { seat } = await stack.admin.createSeat({ customerId: second.customerId, track: Track.VIDEO, name: 'second' });
    expect(await codeOf(stack.admin.bindSeat({ seatId: seat!.id, accountId: account, credentials: { accessToken: 't' } }))).toBe(1006);
  });

  it('decides concurrent binds of one account with exactly one winner', async () => {
    const tenant = await createTenant(stack, { seatQuota: 5 });
    const account = uniqueAccount('biz');
    const seats = await Promise.all(
      [1, 2, 3].map(
        async (n) => (await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: `s${n}` })).seat!,
      ),
    );
    const outcomes = await Promise.allSettled(
      seats.map((s) => stack.admin.bindSeat({ seatId: s.id, accountId: account, credentials: { accessToken: 't' } })),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
      expect(Number((o.reason as ConnectError).metadata.get('vps-code'))).toBe(1006);
    }
  });

  it('lets exactly one of several different accounts bind one seat concurrently; the others get 1008', async () => {
    const tenant = await createTenant(stack);
    const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'contested' });
    const accounts = [1, 2, 3, 4].map(() => uniqueAccount('biz'));
    const outcomes = await Promise.allSettled(
      accounts.map((accountId) => stack.admin.bindSeat({ seatId: seat!.id, accountId, credentials: { accessToken: 't' } })),
    );
    const winners = outcomes.filter(
      (o): o is PromiseFulfilledResult<Awaited<ReturnType<Stack['admin']['bindSeat']>>> => o.status === 'fulfilled',
    );
    expect(winners).toHaveLength(1);
    for (const o of outcomes.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
      expect(Number((o.reason as ConnectError).metadata.get('vps-code'))).toBe(1008);
    }
    const { seats } = await stack.admin.listSeats({ customerId: tenant.customerId });
    expect(seats[0]!.capabilityAccountId).toBe(winners[0]!.value.seat!.capabilityAccountId);
  });

  it('refuses a second account on a bound seat with 1008, and rebinding the same account reconnects it', async () => {
    const tenant = await createTenant(stack);
    const account = uniqueAccount('biz');
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, account);
    expect(
      await codeOf(stack.admin.bindSeat({ seatId: seat.id, accountId: uniqueAccount('biz'), credentials: { accessToken: 't' } })),
    ).toBe(1008);
    const again = await stack.admin.bindSeat({ seatId: seat.id, accountId: account, credentials: { accessToken: 'renewed' } });
    expect(again.seat!.capabilityAccountId).toBe(account);
  });

  it("refuses a seat beyond the customer's quota with 1004", async () => {
    const tenant = await createTenant(stack, { seatQuota: 1 });
    await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'one' });
    expect(await codeOf(stack.admin.createSeat({ customerId: tenant.customerId, track: Track.SHOP, name: 'two' }))).toBe(1004);
    await stack.admin.updateCustomer({ id: tenant.customerId, seatQuota: 2 });
    const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.SHOP, name: 'two' });
    expect(seat!.id).toMatch(/^seat_/);
  });

  it('frees the account on unbind so another seat can take it', async () => {
    const tenant = await createTenant(stack);
    const account = uniqueAccount('creator');
    const seat = await createBoundSeat(stack, tenant, Track.SHOP, account);
    const { seat: unbound } = await stack.admin.unbindSeat({ seatId: seat.id });
    expect(unbound!.bound).toBe(false);
    const other = await createBoundSeat(stack, tenant, Track.SHOP, account);
    expect(other.capabilityAccountId).toBe(account);
  });

  it('keeps upstream credentials only in encrypted form, bound to their seat', async () => {
    const tenant = await createTenant(stack);
    const account = uniqueAccount('biz');
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, account);
    const [row] = await queryRows<{ credentials_sealed: string }>(
      stack.database.db,
      sql`select credentials_sealed from seats where id = ${seat.id}`,
    );
    expect(row!.credentials_sealed).not.toContain(`at-${account}`);
    expect(JSON.parse(stack.sealedBox.open(row!.credentials_sealed, seat.id))).toMatchObject({
      accessToken: `at-${account}`,
      refreshToken: `rt-${account}`,
    });
    expect(() => stack.sealedBox.open(row!.credentials_sealed, 'seat_other')).toThrow();
  });

  it('answers 1005 for an unknown seat and refuses admin calls without the admin token', async () => {
    expect(await codeOf(stack.admin.unbindSeat({ seatId: 'seat_missing' }))).toBe(1005);
    const tenant = await createTenant(stack);
    const res = await fetch(`${stack.coreUrl}/vps.admin.v1.AdminService/ListCustomers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('vps-code')).toBe('1001');
  });

  it("serves internal callers on core's Connect endpoint with a customer API key", async () => {
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    const res = await fetch(`${stack.coreUrl}/vps.seat.v1.SeatService/ListSeats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: '{}',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { seats: { id: string; track: string }[] };
    expect(body.seats).toEqual([expect.objectContaining({ id: seat.id, track: 'TRACK_VIDEO' })]);
  });
});
