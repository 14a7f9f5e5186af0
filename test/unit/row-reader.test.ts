import { seats } from '../../core/db/schema';
import { rowReader } from '../../core/db/row-reader';

describe('rowReader', () => {
  const read = rowReader(seats);
  const raw = {
    id: 'seat_1',
    customer_id: 'cus_1',
    name: 'Main',
    platform: 'vplat',
    track: 'video',
    account_id: 'biz-1',
    account_username: 'shop_one',
    bound_at: '2026-11-22 08:00:00.5+00',
    authorization_status: 'active',
    credentials_sealed: 'sealed',
    access_token_expires_at: null,
    refresh_token_expires_at: null,
    created_at: '2026-11-01 00:00:00+00',
  };

  it('keys each column by its schema name and decodes it as drizzle does', () => {
    expect(read(raw)).toEqual({
      id: 'seat_1',
      customerId: 'cus_1',
      name: 'Main',
      platform: 'vplat',
      track: 'video',
      accountId: 'biz-1',
      accountUsername: 'shop_one',
      boundAt: new Date('2026-11-22T08:00:00.500Z'),
      authorizationStatus: 'active',
      credentialsSealed: 'sealed',
      accessTokenExpiresAt: null,
      refreshTokenExpiresAt: null,
      createdAt: new Date('2026-11-01T00:00:00.000Z'),
    });
  });

  it('keeps a driver that already parsed timestamps (the embedded database) and reads a missing column as null', () => {
    const parsed = new Date('2026-11-22T08:00:00.000Z');
    const { account_username: _dropped, ...partial } = raw;
    const row = read({ ...partial, bound_at: parsed });
    expect(row.boundAt).toEqual(parsed);
    expect(row.accountUsername).toBeNull();
  });
});
